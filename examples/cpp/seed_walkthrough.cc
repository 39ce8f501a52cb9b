// The seed tutorials ("Hybridize: faster and better"), step by step, in C++:
// imperative vs symbolic programs, an MLP run eagerly and hybridized with the same output, the
// 1000-forward benchmark before and after, a block whose print shows once, the symbolic program,
// and export -> import with the same output again.
//
//   seed_walkthrough [--out DIR]     (the export goes to DIR, default: the current folder)
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>

#include "hybridnet/executor.h"
#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/imperative.h"
#include "hybridnet/operators.h"

using namespace hybridnet;
using namespace hybridnet::gluon;

namespace {

void Step(const std::string& title) { std::cout << "\n== " << title << "\n"; }

bool BitEqual(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

std::shared_ptr<HybridSequential> GetNet() {
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<Dense>(256, "relu"), std::make_shared<Dense>(128, "relu"),
           std::make_shared<Dense>(2));
  net->Initialize();
  return net;
}

double Bench(Block& net, const NDArray& x) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) net(x);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The tutorial's HybridNet: prints F, its input and an intermediate value.
class HybridNet : public HybridBlock {
 public:
  HybridNet() : HybridBlock("hybridnet") {
    fc1_ = RegisterChild(std::make_shared<Dense>(10), "fc1");
    fc2_ = RegisterChild(std::make_shared<Dense>(2), "fc2");
  }
  NDArray HybridForward(const F& f, const NDArray& x) override {
    std::cout << f.name() << "\n" << x << "\n";
    NDArray h = op::relu((*fc1_)(x));
    std::cout << h << "\n";
    return (*fc2_)(h);
  }

 private:
  std::shared_ptr<Dense> fc1_, fc2_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir = ".";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_dir = argv[++i];
    } else {
      std::cerr << "usage: seed_walkthrough [--out DIR]\n";
      return 2;
    }
  }
  try {
    SetNumThreads(1);
    Seed(1);

    Step("1. Imperative vs symbolic: fancy_func(1, 2, 3, 4)");
    auto scalar = [](float v) { return NDArray::Full({1}, v); };
    auto add = [](const NDArray& a, const NDArray& b) { return a + b; };
    NDArray g = add(add(scalar(1), scalar(2)), add(scalar(3), scalar(4)));
    std::cout << "imperative: each add runs now -> " << g.ToFloatVector()[0] << "\n";
    Symbol a = Symbol::Var("a"), b = Symbol::Var("b"), c = Symbol::Var("c"), d = Symbol::Var("d");
    Symbol e = Symbol::Create("elemwise_add", {a, b}, {}, "e");
    Symbol f = Symbol::Create("elemwise_add", {c, d}, {}, "f");
    Symbol prog = Symbol::Create("elemwise_add", {e, f}, {}, "g");
    GraphExecutor compiled(prog, {"a", "b", "c", "d"}, {});
    NDArray sym_g = compiled.Forward({scalar(1), scalar(2), scalar(3), scalar(4)})[0];
    std::cout << "symbolic: the program is built first, compiled once, then run -> "
              << sym_g.ToFloatVector()[0] << "\n";

    Step("2. HybridSequential MLP 512 -> 256 -> 128 -> 2, run eagerly");
    NDArray x = NDArray::RandomNormal({1, 512});
    auto net = GetNet();
    NDArray eager = (*net)(x);
    std::cout << *net << "\n" << eager << "\n";

    Step("3. After hybridize(): the same output");
    net->Hybridize();
    NDArray hybrid = (*net)(x);
    std::cout << hybrid << "\n";
    std::cout << "bit-identical to eager: " << (BitEqual(eager, hybrid) ? "yes" : "NO") << "\n";

    Step("4. 1000 forwards before and after hybridizing");
    auto bench_net = GetNet();
    double before = Bench(*bench_net, x);
    bench_net->Hybridize();
    double after = Bench(*bench_net, x);
    std::printf("before hybridizing: %.4f sec\nafter hybridizing:  %.4f sec\nspeed-up: %.2fx\n",
                before, after, before / after);

    Step("5. HybridNet: user code runs eagerly on every call, once when hybridized");
    auto hnet = std::make_shared<HybridNet>();
    hnet->Initialize();
    NDArray x4 = NDArray::RandomNormal({1, 4});
    std::cout << "-- eager call:\n";
    std::cout << (*hnet)(x4) << "\n";
    hnet->Hybridize();
    std::cout << "-- first call after hybridize() (traced with symbols):\n";
    NDArray y1 = (*hnet)(x4);
    std::cout << "-- second call (the cached graph runs; nothing prints):\n";
    NDArray y2 = (*hnet)(x4);
    std::cout << y2 << "\n";

    Step("6. Feeding a symbol returns the symbolic program");
    Symbol program = (*net)(Symbol::Var("data"));
    std::cout << program.ToJSON() << "\n";

    Step("7. export, then import and run again");
    std::string prefix = out_dir + "/seed_mlp";
    net->Export(prefix);
    std::cout << "wrote " << prefix << "-symbol.json and " << prefix << "-0000.params\n";
    auto imported =
        SymbolBlock::Imports(prefix + "-symbol.json", {"data"}, prefix + "-0000.params");
    NDArray reloaded = (*imported)(x);
    std::cout << reloaded << "\n";
    std::cout << "imported output bit-identical: " << (BitEqual(eager, reloaded) ? "yes" : "NO")
              << "\n";
    imported->Hybridize();
    std::cout << "imported + hybridized bit-identical: "
              << (BitEqual(eager, (*imported)(x)) ? "yes" : "NO") << "\n";
    return BitEqual(eager, hybrid) && BitEqual(eager, reloaded) ? 0 : 1;
  } catch (const Error& err) {
    std::cerr << "seed_walkthrough: " << StatusCodeName(err.code()) << ": " << err.what() << "\n";
    return 1;
  }
}
