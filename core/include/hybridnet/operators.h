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
/// One function per registered operator, working on concrete and symbolic (traced) arrays alike.
namespace op {

/// Any registered op by name or alias; returns its first output.
NDArray Call(const std::string& op_name, const std::vector<NDArray>& inputs,
             const AttrDict& attrs = {});

/// max(x, 0).
NDArray relu(const NDArray& x);
/// 1 / (1 + exp(-x)).
NDArray sigmoid(const NDArray& x);
/// Hyperbolic tangent.
NDArray tanh(const NDArray& x);
/// MXNet's Activation: relu, sigmoid, tanh, softrelu or softsign.
NDArray Activation(const NDArray& x, const std::string& act_type);
/// Softmax along `axis`.
NDArray softmax(const NDArray& x, int axis = -1);
/// Log of the softmax along `axis`.
NDArray log_softmax(const NDArray& x, int axis = -1);
/// x W^T + b with `num_hidden` outputs; a none `bias` means no_bias. `flatten` collapses all but
/// the first axis of x first.
NDArray FullyConnected(const NDArray& x, const NDArray& weight, const NDArray& bias,
                       int64_t num_hidden, bool flatten = true);
/// Collapses every axis but the first.
NDArray Flatten(const NDArray& x);
/// MXNet's Reshape, with its special values (0 copies a dimension, -1 infers one, ...).
NDArray Reshape(const NDArray& x, const std::vector<int64_t>& shape);
/// Joins the arrays along `dim`.
NDArray Concat(const std::vector<NDArray>& xs, int dim = 1);
/// MXNet's dot (the matrix product for 2-D inputs), optionally of the transposes.
NDArray dot(const NDArray& a, const NDArray& b, bool transpose_a = false, bool transpose_b = false);
/// Each element limited to [a_min, a_max].
NDArray clip(const NDArray& x, float a_min, float a_max);
/// A copy converted to `dtype`.
NDArray Cast(const NDArray& x, DType dtype);

}  // namespace op

/// Elementwise arithmetic of two arrays of the same shape (elemwise_add, _sub, _mul, _div; no
/// broadcasting) or of an array and a scalar (_plus_scalar, ...). Traced like every op.
///@{
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
///@}
/// In-place update: eager only. Inside a hybridize() trace it throws kUntraceable (write
/// `a = a + b` instead), because a graph value cannot be overwritten.
///@{
NDArray& operator+=(NDArray& a, const NDArray& b);
NDArray& operator-=(NDArray& a, const NDArray& b);
NDArray& operator*=(NDArray& a, const NDArray& b);
///@}

}  // namespace hybridnet
