#include "hybridnet/operators.h"

#include "hybridnet/autograd.h"
#include "imperative/autograd_tape.h"

namespace hybridnet {
namespace op {

namespace {

NDArray Apply(const std::string& op_name, const std::vector<NDArray>& inputs,
              const AttrDict& attrs = {}) {
  return Invoke(internal::CachedNodeAttrs(op_name, attrs), inputs)[0];
}

std::string ScalarText(float s) { return internal::ValueText(s); }

}  // namespace

NDArray Call(const std::string& op_name, const std::vector<NDArray>& inputs,
             const AttrDict& attrs) {
  return Apply(op_name, inputs, attrs);
}

NDArray relu(const NDArray& x) { return Apply("relu", {x}); }
NDArray sigmoid(const NDArray& x) { return Apply("sigmoid", {x}); }
NDArray tanh(const NDArray& x) { return Apply("tanh", {x}); }
NDArray Activation(const NDArray& x, const std::string& act_type) {
  return Apply("Activation", {x}, {{"act_type", act_type}});
}
NDArray softmax(const NDArray& x, int axis) {
  return Apply("softmax", {x}, {{"axis", std::to_string(axis)}});
}
NDArray log_softmax(const NDArray& x, int axis) {
  return Apply("log_softmax", {x}, {{"axis", std::to_string(axis)}});
}
NDArray FullyConnected(const NDArray& x, const NDArray& weight, const NDArray& bias,
                       int64_t num_hidden, bool flatten) {
  AttrDict attrs{{"num_hidden", std::to_string(num_hidden)},
                 {"flatten", flatten ? "True" : "False"}};
  if (bias.is_none()) {
    attrs["no_bias"] = "True";
    return Apply("FullyConnected", {x, weight}, attrs);
  }
  return Apply("FullyConnected", {x, weight, bias}, attrs);
}
NDArray Flatten(const NDArray& x) { return Apply("Flatten", {x}); }
NDArray Reshape(const NDArray& x, const std::vector<int64_t>& shape) {
  return Apply("Reshape", {x}, {{"shape", Shape(shape).ToString()}});
}
NDArray Concat(const std::vector<NDArray>& xs, int dim) {
  return Apply("Concat", xs,
               {{"dim", std::to_string(dim)}, {"num_args", std::to_string(xs.size())}});
}
NDArray dot(const NDArray& a, const NDArray& b, bool transpose_a, bool transpose_b) {
  return Apply("dot", {a, b},
               {{"transpose_a", transpose_a ? "True" : "False"},
                {"transpose_b", transpose_b ? "True" : "False"}});
}
NDArray clip(const NDArray& x, float a_min, float a_max) {
  return Apply("clip", {x}, {{"a_min", ScalarText(a_min)}, {"a_max", ScalarText(a_max)}});
}
NDArray Cast(const NDArray& x, DType dtype) {
  return Apply("Cast", {x}, {{"dtype", DTypeName(dtype)}});
}

}  // namespace op

namespace {

NDArray Scalar(const char* op_name, const NDArray& a, float s) {
  return op::Call(op_name, {a}, {{"scalar", internal::ValueText(s)}});
}

NDArray& InPlace(const char* op_name, const char* spelling, NDArray& a, const NDArray& b) {
  HN_CHECK(!a.is_symbolic() && !b.is_symbolic(), kUntraceable)
      << "in-place update 'a " << spelling << " b' cannot be traced by hybridize(): a graph value "
      << "is never overwritten. Write 'a = a " << std::string(spelling, 1) << " b' instead";
  // As MXNet: while recording, an array on the tape keeps the values its gradient reads, so it
  // is never overwritten; an array off the tape takes the result's place on it.
  const bool recorded = autograd::IsRecording() && (internal::TapeAccess::Node(a) != nullptr ||
                                                    internal::TapeAccess::Node(b) != nullptr);
  HN_CHECK(!recorded || internal::TapeAccess::Node(a) == nullptr, kInvalidArgument)
      << "in-place update 'a " << spelling << " b' of an array on the autograd tape while "
      << "recording: gradients need its old value. Write 'a = a " << std::string(spelling, 1)
      << " b' instead";
  NDArray result = op::Call(op_name, {a, b});
  a.CopyFrom(result);
  if (recorded) {
    internal::TapeAccess::Set(&a, internal::TapeAccess::Node(result),
                              internal::TapeAccess::Output(result));
  }
  return a;
}

}  // namespace

NDArray operator+(const NDArray& a, const NDArray& b) { return op::Call("elemwise_add", {a, b}); }
NDArray operator-(const NDArray& a, const NDArray& b) { return op::Call("elemwise_sub", {a, b}); }
NDArray operator*(const NDArray& a, const NDArray& b) { return op::Call("elemwise_mul", {a, b}); }
NDArray operator/(const NDArray& a, const NDArray& b) { return op::Call("elemwise_div", {a, b}); }
NDArray operator+(const NDArray& a, float s) { return Scalar("_plus_scalar", a, s); }
NDArray operator-(const NDArray& a, float s) { return Scalar("_minus_scalar", a, s); }
NDArray operator*(const NDArray& a, float s) { return Scalar("_mul_scalar", a, s); }
NDArray operator/(const NDArray& a, float s) { return Scalar("_div_scalar", a, s); }
NDArray operator+(float s, const NDArray& a) { return Scalar("_plus_scalar", a, s); }
NDArray operator-(float s, const NDArray& a) { return Scalar("_rminus_scalar", a, s); }
NDArray operator*(float s, const NDArray& a) { return Scalar("_mul_scalar", a, s); }
NDArray operator/(float s, const NDArray& a) { return Scalar("_rdiv_scalar", a, s); }
NDArray& operator+=(NDArray& a, const NDArray& b) { return InPlace("elemwise_add", "+=", a, b); }
NDArray& operator-=(NDArray& a, const NDArray& b) { return InPlace("elemwise_sub", "-=", a, b); }
NDArray& operator*=(NDArray& a, const NDArray& b) { return InPlace("elemwise_mul", "*=", a, b); }

}  // namespace hybridnet
