// Operator functions for writing forward code: each names a registered op and calls Invoke, so
// they work eagerly and, inside a hybridize() trace, record graph nodes. Any op without a helper
// here is reachable through op::Call("OpName", inputs, attrs).
//
//   NDArray h = op::relu(op::FullyConnected(x, w, b, 256));
//   NDArray y = h * 2.0f + 1.0f;
#pragma once

#include <string>
#include <vector>

#include "hybridnet/imperative.h"
#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace op {

/// Any registered op by name or alias; returns its first output.
NDArray Call(const std::string& op_name, const std::vector<NDArray>& inputs,
             const AttrDict& attrs = {});

NDArray relu(const NDArray& x);
NDArray sigmoid(const NDArray& x);
NDArray tanh(const NDArray& x);
NDArray Activation(const NDArray& x, const std::string& act_type);
NDArray softmax(const NDArray& x, int axis = -1);
NDArray log_softmax(const NDArray& x, int axis = -1);
NDArray FullyConnected(const NDArray& x, const NDArray& weight, const NDArray& bias,
                       int64_t num_hidden, bool flatten = true);
NDArray Flatten(const NDArray& x);
NDArray Reshape(const NDArray& x, const std::vector<int64_t>& shape);
NDArray Concat(const std::vector<NDArray>& xs, int dim = 1);
NDArray dot(const NDArray& a, const NDArray& b, bool transpose_a = false,
            bool transpose_b = false);
NDArray clip(const NDArray& x, float a_min, float a_max);
NDArray Cast(const NDArray& x, DType dtype);

}  // namespace op

NDArray operator+(const NDArray& a, const NDArray& b);
NDArray operator-(const NDArray& a, const NDArray& b);
NDArray operator*(const NDArray& a, const NDArray& b);
NDArray operator/(const NDArray& a, const NDArray& b);
NDArray operator+(const NDArray& a, float s);
NDArray operator-(const NDArray& a, float s);
NDArray operator*(const NDArray& a, float s);
NDArray operator/(const NDArray& a, float s);
NDArray operator+(float s, const NDArray& a);
NDArray operator-(float s, const NDArray& a);
NDArray operator*(float s, const NDArray& a);
NDArray operator/(float s, const NDArray& a);
/// In-place update: eager only. Inside a hybridize() trace it throws kUntraceable (write
/// `a = a + b` instead), because a graph value cannot be overwritten.
NDArray& operator+=(NDArray& a, const NDArray& b);
NDArray& operator-=(NDArray& a, const NDArray& b);
NDArray& operator*=(NDArray& a, const NDArray& b);

}  // namespace hybridnet
