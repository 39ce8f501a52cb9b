// Block.summary of MXNet 1.9.1 (python/mxnet/gluon/block.py): forward hooks on every block but
// the sequential containers record each call's output shapes and parameter sizes, in the order
// the calls return; the table then prints them with the same column formats and totals.
#include "hybridnet/gluon/summary.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <set>
#include <typeinfo>

#include "gluon/block_calls.h"
#include "hybridnet/autograd.h"

namespace hybridnet {
namespace gluon {
namespace {

// The block's Python class name: its repr's first word, or, for a layer described by its alias
// alone ("flatten"), its C++ class ("Flatten").
std::string ClassName(Block& block, const std::string& description, const std::string& alias) {
  std::string name = description.substr(0, description.find('('));
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(typeid(block).name(), nullptr, nullptr, &status), std::free);
  if (status != 0 || name != alias) return name;
  std::string type = demangled.get();
  const size_t scope = type.rfind(':');
  if (scope != std::string::npos) type = type.substr(scope + 1);
  std::string lower;
  for (char c : type) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == alias ? type : name;
}

// Python's str() of the shapes: "(1, 10)" for one, "(1, 10), (1, 5)" for several (a list's
// text without its brackets). A symbolic output (a child called while its parent traces itself to
// complete deferred shapes, as MXNet does too) prints as MXNet prints a Symbol.
std::string ShapesText(const std::vector<NDArray>& arrays) {
  std::string text;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const NDArray& x = arrays[i];
    text += (i ? ", " : "") + (x.is_symbolic() ? x.ToString() : x.shape().ToString());
  }
  return text;
}

bool IsSequential(Block& block) {
  return dynamic_cast<SequentialOf<Block>*>(&block) != nullptr ||
         dynamic_cast<SequentialOf<HybridBlock>*>(&block) != nullptr;
}

struct Row {
  std::string layer, output_shape;
  int64_t params = 0, trainable = 0, shared = 0;
};

class SummaryHooks : public ::hybridnet::internal::BlockCallObserver {
 public:
  void Called(Block& block, const std::string& description, const std::string& alias,
              const std::vector<ParameterPtr>& own_params,
              const std::vector<NDArray>& outputs) override {
    if (IsSequential(block)) return;
    Row row;
    row.layer = ClassName(block, description, alias) + "-" + std::to_string(rows.size());
    row.output_shape = ShapesText(outputs);
    for (const auto& p : own_params) {
      const int64_t size = p->shape().Size();
      row.params += size;
      if (p->grad_req() != autograd::GradReq::kNull) row.trainable += size;
      if (!seen_.insert(p.get()).second) row.shared += size;
    }
    rows.push_back(row);
  }
  std::vector<Row> rows;

 private:
  std::set<const Parameter*> seen_;
};

// MXNet asserts before running that no block is hybridized, visiting children first.
void CheckNotHybridized(Block& block) {
  for (auto& child : block.children()) CheckNotHybridized(*child.second);
  HybridBlock* hybrid = block.AsHybrid();
  HN_CHECK(hybrid == nullptr || !hybrid->is_hybridized(), kInvalidArgument)
      << "\"" << block.name() << "\" must not be hybridized to print summary.";
}

// Python's '{:>W}'.format(text).
std::string Right(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string Line(const std::string& layer, const std::string& shape, const std::string& params) {
  return Right(layer, 20) + "  " + Right(shape, 42) + " " + Right(params, 15) + "\n";
}

}  // namespace

std::string Summary(Block& block, const std::vector<NDArray>& inputs) {
  CheckNotHybridized(block);
  SummaryHooks hooks;
  hooks.rows.push_back(Row{"Input", ShapesText(inputs)});
  auto& observer = ::hybridnet::internal::CurrentBlockCallObserver();
  ::hybridnet::internal::BlockCallObserver* previous = observer;
  observer = &hooks;
  try {
    block(inputs);
  } catch (...) {
    observer = previous;
    throw;
  }
  observer = previous;

  std::string out = std::string(80, '-') + "\n" + Line("Layer (type)", "Output Shape", "Param #") +
                    std::string(80, '=') + "\n";
  int64_t total = 0, trainable = 0, shared = 0;
  for (const Row& row : hooks.rows) {
    out += Line(row.layer, row.output_shape, std::to_string(row.params));
    total += row.params;
    trainable += row.trainable;
    shared += row.shared;
  }
  out += std::string(80, '=') + "\n";
  out += "Parameters in forward computation graph, duplicate included\n";
  out += "   Total params: " + std::to_string(total) + "\n";
  out += "   Trainable params: " + std::to_string(trainable) + "\n";
  out += "   Non-trainable params: " + std::to_string(total - trainable) + "\n";
  out += "Shared params in forward computation graph: " + std::to_string(shared) + "\n";
  out += "Unique parameters in model: " + std::to_string(total - shared) + "\n";
  return out + std::string(80, '-') + "\n";
}

}  // namespace gluon
}  // namespace hybridnet
