// The binary float functions shared by elementwise, broadcast and scalar ops, so each
// operation (and its NaN rule) is written once.
#pragma once

namespace hybridnet {
namespace op_functors {

struct Add {
  float operator()(float a, float b) const { return a + b; }
};
struct Sub {
  float operator()(float a, float b) const { return a - b; }
};
struct Mul {
  float operator()(float a, float b) const { return a * b; }
};
struct Div {
  float operator()(float a, float b) const { return a / b; }
};
// NaN in the first operand propagates (MXNet's mshadow_op::maximum/minimum test IsNan(a) first).
struct Maximum {
  float operator()(float a, float b) const { return (a > b || a != a) ? a : b; }
};
struct Minimum {
  float operator()(float a, float b) const { return (a < b || a != a) ? a : b; }
};

}  // namespace op_functors
}  // namespace hybridnet
