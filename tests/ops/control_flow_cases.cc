// Conformance cases: the control-flow ops _foreach, _while_loop and _cond, each with small
// subgraphs built here and a reference that runs the same loop in doubles.
#include <cmath>
#include <functional>
#include <string>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

Symbol V(const std::string& name) { return Symbol::Var(name); }
Symbol Op(const std::string& op, const std::vector<Symbol>& in, AttrDict attrs = {}) {
  static int counter = 0;
  return Symbol::Create(op, in, attrs, "sg" + std::to_string(counter++));
}

// Body y = tanh(x * w + h); its inputs in graph order are [x, w, h]. outputs [y, y'] where the
// state y' is y itself or a copy (MXNet's exports add a _copy).
Symbol ForeachBody(bool copy_state) {
  Symbol y = Op("tanh", {Op("elemwise_add", {Op("elemwise_mul", {V("x"), V("w")}), V("h")})});
  return Symbol::Group({y, copy_state ? Op("_copy", {y}) : y});
}

// Node inputs [X (T, 2, 3), H0 (2, 3), W (2, 3)]: outputs [Y (T, 2, 3), H_T].
RefFn ForeachRef() {
  return [](const std::vector<RefTensor>& in) {
    const RefTensor& x = in[0];
    RefTensor h = in[1];
    const RefTensor& w = in[2];
    const int64_t steps = x.shape[0], n = h.size();
    RefTensor y(x.shape);
    for (int64_t t = 0; t < steps; ++t) {
      for (int64_t i = 0; i < n; ++i) {
        const double v = F32(std::tanh(F32(F32(F32(x[t * n + i] * w[i]) + h[i]))));
        y[t * n + i] = v;
        h[i] = v;
      }
    }
    return std::vector<RefTensor>{y, h};
  };
}

AttrDict ForeachAttrs() {
  return {{"num_args", "4"},       {"num_outputs", "2"},     {"num_out_data", "1"},
          {"in_data_locs", "[0]"}, {"in_state_locs", "[2]"}, {"remain_locs", "[1]"}};
}

// cond: relu(sum(c)) (nonzero while c > 0); func: [x * c, c - 1] over inputs [x, c].
Symbol WhileCond() { return Op("relu", {Op("sum", {V("c")})}); }
Symbol WhileFunc() {
  Symbol c = V("c");
  return Symbol::Group(
      {Op("broadcast_mul", {V("x"), c}), Op("_minus_scalar", {c}, {{"scalar", "1"}})});
}

// Node inputs [c0 (1, 1), x (2, 3)].
RefFn WhileRef(int max_iterations) {
  return [max_iterations](const std::vector<RefTensor>& in) {
    double c = in[0][0];
    const RefTensor& x = in[1];
    RefTensor out(Shape{max_iterations, 2, 3});
    for (int step = 0; step < max_iterations && c > 0; ++step) {
      for (int64_t i = 0; i < 6; ++i) out[step * 6 + i] = F32(x[i] * c);
      c = F32(c - 1);
    }
    RefTensor final_c(Shape{1, 1});
    final_c[0] = c;
    return std::vector<RefTensor>{out, final_c};
  };
}

AttrDict WhileAttrs(int max_iterations) {
  return {{"num_args", "4"},          {"num_outputs", "2"},
          {"num_out_data", "1"},      {"max_iterations", std::to_string(max_iterations)},
          {"cond_input_locs", "[0]"}, {"func_input_locs", "[1, 0]"},
          {"func_var_locs", "[1]"}};
}

// cond relu(sum(a)); then a * b; else a - b.
RefFn CondRef() {
  return [](const std::vector<RefTensor>& in) {
    double total = 0;
    for (int64_t i = 0; i < in[0].size(); ++i) total += in[0][i];
    const bool take_then = F32(total) > 0;
    RefTensor out(in[0].shape);
    for (int64_t i = 0; i < out.size(); ++i)
      out[i] = take_then ? F32(in[0][i] * in[1][i]) : F32(in[0][i] - in[1][i]);
    return std::vector<RefTensor>{out};
  };
}

OpCase WithSubgraphs(OpCase c, std::function<std::vector<Symbol>()> subgraphs) {
  c.subgraphs = std::move(subgraphs);
  return c;
}

}  // namespace

HN_CONFORMANCE_CASES(ControlFlow) {
  cases->push_back(WithSubgraphs(
      Case("_foreach", ForeachAttrs(), {{4, 2, 3}, {2, 3}, {2, 3}}, ForeachRef(), "rnn_cell"),
      [] { return std::vector<Symbol>{ForeachBody(true)}; }));
  cases->push_back(WithSubgraphs(Case("_foreach", ForeachAttrs(), {{1, 2, 3}, {2, 3}, {2, 3}},
                                      ForeachRef(), "one_step_state_is_output"),
                                 [] { return std::vector<Symbol>{ForeachBody(false)}; }));

  // Counter c0 in [2, 3): three steps; with max_iterations 3 every step runs, so MXNet checks it.
  auto counter = [](std::mt19937& rng, size_t input, int64_t) {
    return input == 0 ? std::uniform_real_distribution<double>(2.2, 2.8)(rng)
                      : std::uniform_real_distribution<double>(-2.0, 2.0)(rng);
  };
  cases->push_back(WithSubgraphs(
      WithGen(Case("_while_loop", WhileAttrs(3), {{1, 1}, {2, 3}}, WhileRef(3), "full_length"),
              counter),
      [] {
        return std::vector<Symbol>{WhileCond(), WhileFunc()};
      }));
  cases->push_back(
      NotInMXNet(WithSubgraphs(WithGen(Case("_while_loop", WhileAttrs(5), {{1, 1}, {2, 3}},
                                            WhileRef(5), "stops_early_zero_padded"),
                                       counter),
                               [] {
                                 return std::vector<Symbol>{WhileCond(), WhileFunc()};
                               }),
                 "MXNet leaves the steps after the loop ends undefined; hybridnet writes zeros"));

  const AttrDict cond_attrs{{"num_args", "5"},
                            {"num_outputs", "1"},
                            {"cond_input_locs", "[0]"},
                            {"then_input_locs", "[0, 1]"},
                            {"else_input_locs", "[0, 1]"}};
  auto branches = [] {
    return std::vector<Symbol>{Op("relu", {Op("sum", {V("a")})}),
                               Op("elemwise_mul", {V("a"), V("b")}),
                               Op("elemwise_sub", {V("a"), V("b")})};
  };
  cases->push_back(WithSubgraphs(
      WithGen(Case("_cond", cond_attrs, {{2, 3}, {2, 3}}, CondRef(), "then"), Uniform(0.1, 2)),
      branches));
  cases->push_back(WithSubgraphs(
      WithGen(Case("_cond", cond_attrs, {{2, 3}, {2, 3}}, CondRef(), "else"), Uniform(-2, -0.1)),
      branches));
}

}  // namespace conformance
}  // namespace hybridnet
