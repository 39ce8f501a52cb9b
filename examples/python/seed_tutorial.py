"""The seed tutorials ("Hybridize: faster and better") in their own language, step by step:
imperative vs symbolic programs, an MLP run eagerly and hybridized with the same output, the
1000-forward benchmark before and after, a block whose print shows once, the symbolic program,
and export -> import with the same output again. It prints what examples/cpp/seed_walkthrough.cc
prints (the same numbers: the same seed draws the same weights), apart from the timings.

    python3 seed_tutorial.py [--out DIR]      (the export goes to DIR, default: the current folder)
"""
import argparse
import sys
from time import time

import hybridnet as mx
from hybridnet import nd, sym
from hybridnet.gluon import nn


def step(title):
    print(f"\n== {title}")


def bit_equal(a, b):
    a, b = a.asnumpy(), b.asnumpy()
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def get_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    return net


def bench(net, x):
    start = time()
    for _ in range(1000):
        net(x)
    nd.waitall()
    return time() - start


class HybridNet(nn.HybridBlock):
    """The tutorial's block: prints F, its input and an intermediate value."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.fc1 = nn.Dense(10)
            self.fc2 = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print(F.__name__)
        print(x)
        h = F.relu(self.fc1(x))
        print(h)
        return self.fc2(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".", help="folder of the export")
    out_dir = parser.parse_args().out
    mx.set_num_threads(1)
    mx.random.seed(1)

    step("1. Imperative vs symbolic: fancy_func(1, 2, 3, 4)")

    def add(a, b):
        return a + b

    def scalar(v):
        return nd.full((1,), v)

    g = add(add(scalar(1), scalar(2)), add(scalar(3), scalar(4)))
    print(f"imperative: each add runs now -> {g.asscalar():g}")
    a, b, c, d = (sym.var(n) for n in "abcd")
    e = sym.elemwise_add(a, b, name="e")
    f = sym.elemwise_add(c, d, name="f")
    program = sym.elemwise_add(e, f, name="g")
    compiled = mx.gluon.SymbolBlock(program, [a, b, c, d])
    compiled.hybridize()
    sym_g = compiled(scalar(1), scalar(2), scalar(3), scalar(4))
    print(f"symbolic: the program is built first, compiled once, then run -> {sym_g.asscalar():g}")

    step("2. HybridSequential MLP 512 -> 256 -> 128 -> 2, run eagerly")
    x = nd.random.normal(shape=(1, 512))
    net = get_net()
    eager = net(x)
    print(net)
    print(eager)

    step("3. After hybridize(): the same output")
    net.hybridize()
    hybrid = net(x)
    print(hybrid)
    print("bit-identical to eager:", "yes" if bit_equal(eager, hybrid) else "NO")

    step("4. 1000 forwards before and after hybridizing")
    bench_net = get_net()
    before = bench(bench_net, x)
    bench_net.hybridize()
    after = bench(bench_net, x)
    print("before hybridizing: %.4f sec\nafter hybridizing:  %.4f sec\nspeed-up: %.2fx"
          % (before, after, before / after))

    step("5. HybridNet: user code runs eagerly on every call, once when hybridized")
    hnet = HybridNet()
    hnet.initialize()
    x4 = nd.random.normal(shape=(1, 4))
    print("-- eager call:")
    print(hnet(x4))
    hnet.hybridize()
    print("-- first call after hybridize() (traced with symbols):")
    hnet(x4)
    print("-- second call (the cached graph runs; nothing prints):")
    print(hnet(x4))

    step("6. Feeding a symbol returns the symbolic program")
    print(net(sym.var("data")).tojson())

    step("7. export, then import and run again")
    prefix = out_dir + "/seed_mlp"
    net.export(prefix)
    print(f"wrote {prefix}-symbol.json and {prefix}-0000.params")
    imported = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    reloaded = imported(x)
    print(reloaded)
    print("imported output bit-identical:", "yes" if bit_equal(eager, reloaded) else "NO")
    imported.hybridize()
    print("imported + hybridized bit-identical:", "yes" if bit_equal(eager, imported(x)) else "NO")
    return 0 if bit_equal(eager, hybrid) and bit_equal(eager, reloaded) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except mx.HybridnetError as err:
        print(f"seed_tutorial: {err.status}: {err}", file=sys.stderr)
        sys.exit(1)
