// Every conformance case that reaches a kernel choice of the kernel layer (convolution, pooling,
// dense layers: kernels/kernel_choice.h) runs on every kernel that takes it, forced one at a time:
// each must match the case's reference, give the same bits eagerly and as a graph, and be the
// kernel that ran. A kernel that does not take a case, or cannot run on this CPU, is named as
// such; every kernel this CPU runs must run in some case.
#include "kernels/kernel_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "conformance.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace conformance {
namespace {

using internal::KernelChoice;
using internal::KernelChoices;
using testing_util::BitDifference;

// Every choice's run count of every kernel, in KernelChoices' order.
std::vector<std::vector<int64_t>> RunCounts() {
  std::vector<std::vector<int64_t>> counts;
  for (const KernelChoice* choice : KernelChoices()) {
    counts.emplace_back();
    for (size_t k = 0; k < choice->kernels().size(); ++k) {
      counts.back().push_back(choice->Runs(static_cast<int>(k)));
    }
  }
  return counts;
}

// Forces one kernel of one choice while it lives.
class ForcedKernel {
 public:
  ForcedKernel(KernelChoice* choice, int kernel) : choice_(choice) { choice_->Force(kernel); }
  ~ForcedKernel() { choice_->Force(-1); }
  ForcedKernel(const ForcedKernel&) = delete;
  ForcedKernel& operator=(const ForcedKernel&) = delete;

 private:
  KernelChoice* choice_;
};

// The graph of case `c` run on `inputs`, fused or not.
std::vector<NDArray> RunGraph(const OpCase& c, const std::vector<NDArray>& inputs, bool fuse) {
  const CaseGraph g = BuildGraph(c);
  ExecutorOptions options;
  options.fuse = fuse;
  GraphExecutor exec(g.symbol, g.data_names, {}, options);
  Seed(kCaseSeed);
  return exec.Forward(inputs);
}

bool IsForcedKernelRejection(const Error& e) {
  return e.code() == StatusCode::kUnsupported && std::string(e.what()).find("the forced") == 0;
}

TEST(KernelChoice, EveryCaseRunsOnEveryKernelThatTakesIt) {
  const std::vector<KernelChoice*>& choices = KernelChoices();
  std::map<std::pair<size_t, int>, int> cases_run;  // (choice, kernel) -> cases it ran
  size_t reaching = 0;
  for (size_t i = 0; i < AllCases().size(); ++i) {
    const OpCase& c = AllCases()[i];
    const std::string& name = CaseNames()[i];
    if (c.statistics || c.is_train) continue;  // random draws; training mode has no graph form
    const std::vector<NDArray> inputs = MakeInputs(c, name);
    // The choices this case reaches: those whose counts an unforced run moves.
    // Every run takes copies: an optimizer update changes its states in place.
    const auto before = RunCounts();
    Seed(kCaseSeed);
    RunEager(c, Copies(inputs));
    const auto after = RunCounts();
    std::vector<RefTensor> ref_in;
    for (const NDArray& a : inputs) ref_in.push_back(ToRef(a));
    std::vector<RefTensor> want;
    for (size_t ch = 0; ch < choices.size(); ++ch) {
      if (before[ch] == after[ch]) continue;
      if (want.empty()) want = c.reference(ref_in);
      ++reaching;
      KernelChoice* choice = choices[ch];
      std::ostringstream line;
      line << name << " (" << choice->family() << "):";
      for (size_t k = 0; k < choice->kernels().size(); ++k) {
        const int kernel = static_cast<int>(k);
        const std::string& kernel_name = choice->kernels()[k].name;
        SCOPED_TRACE(name + " on " + choice->family() + " kernel " + kernel_name);
        ForcedKernel forced(choice, kernel);
        const int64_t runs = choice->Runs(kernel);
        std::vector<NDArray> eager, updated = Copies(inputs);
        try {
          Seed(kCaseSeed);
          eager = RunEager(c, updated);
        } catch (const Error& e) {
          ASSERT_TRUE(IsForcedKernelRejection(e)) << e.what();
          // The kernel says why: it does not take the call, or this CPU cannot run it.
          line << " " << kernel_name << " "
               << (choice->kernels()[k].runs_here ? "does not take it;"
                                                  : "cannot run on this CPU;");
          continue;
        }
        ASSERT_GT(choice->Runs(kernel), runs) << kernel_name << " did not run";
        // An op that updates inputs in place has, after its outputs, their values after the call
        // in the reference.
        const bool updates_inputs = want.size() == eager.size() + inputs.size();
        ASSERT_EQ(eager.size() + (updates_inputs ? inputs.size() : 0), want.size());
        for (size_t j = 0; updates_inputs && j < inputs.size(); ++j) {
          EXPECT_TRUE(Near(want[eager.size() + j], updated[j], c.rtol, c.atol))
              << "input " << j << " after the call";
        }
        for (size_t o = 0; o < eager.size(); ++o) {
          // Winograd's kernels round relative to the largest value, not to each value
          // (testing_util::kWinogradRelativeBound).
          double atol = c.atol;
          if (kernel_name == "winograd") {
            double largest = 0.0;
            for (double v : want[o].v) largest = std::max(largest, std::abs(v));
            atol = std::max(atol, testing_util::kWinogradRelativeBound * largest);
          }
          EXPECT_TRUE(Near(want[o], eager[o], c.rtol, atol)) << "output " << o;
        }
        // As a graph the call may take another form (channel-last after the layout pass) that
        // the kernel does not take; where it takes both, the bits must agree.
        std::string graph_note;
        for (bool fuse : {false, true}) {
          std::vector<NDArray> graph;
          try {
            graph = RunGraph(c, Copies(inputs), fuse);
          } catch (const Error& e) {
            ASSERT_TRUE(IsForcedKernelRejection(e)) << e.what();
            graph_note = " (eagerly; not its graph form)";
            continue;
          }
          for (size_t o = 0; o < eager.size(); ++o) {
            EXPECT_EQ(BitDifference(eager[o], graph[o]), "")
                << "graph (fuse=" << fuse << ") output " << o;
          }
        }
        ++cases_run[{ch, kernel}];
        line << " " << kernel_name << " ran" << graph_note << ";";
      }
      std::cout << line.str() << "\n";
    }
  }
  EXPECT_GT(reaching, 0u) << "no case reached a kernel choice";
  for (size_t ch = 0; ch < choices.size(); ++ch) {
    for (size_t k = 0; k < choices[ch]->kernels().size(); ++k) {
      const auto& kernel = choices[ch]->kernels()[k];
      const int ran = cases_run[{ch, static_cast<int>(k)}];
      std::cout << choices[ch]->family() << " kernel " << kernel.name << ": " << ran << " cases"
                << (kernel.runs_here ? "" : " (cannot run on this CPU: needs " + kernel.needs + ")")
                << "\n";
      if (kernel.runs_here) {
        EXPECT_GT(ran, 0) << choices[ch]->family() << " kernel " << kernel.name
                          << " ran in no case";
      }
    }
  }
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
