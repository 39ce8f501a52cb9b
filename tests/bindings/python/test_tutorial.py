"""The seed tutorial in Python prints what the C++ walkthrough prints, and the tutorials' own
code runs with `import hybridnet as mx`."""
import io
import os
import re
import subprocess
import sys
from contextlib import redirect_stdout

import numpy as np
import pytest

from helpers import same_bits

TIMINGS = re.compile(r"^(before hybridizing|after hybridizing|speed-up):.*$", re.M)


def test_python_tutorial_prints_the_cpp_walkthrough(source_dir, tmp_path):
    walkthrough = os.environ.get("HN_SEED_WALKTHROUGH")
    if not walkthrough or not os.path.exists(walkthrough):
        pytest.fail("HN_SEED_WALKTHROUGH (build/bin/seed_walkthrough) is missing")
    (tmp_path / "cpp").mkdir()
    (tmp_path / "py").mkdir()
    cpp = subprocess.run([walkthrough, "--out", "."], cwd=tmp_path / "cpp", capture_output=True,
                         text=True)
    py = subprocess.run([sys.executable, os.path.join(source_dir, "examples", "python",
                                                      "seed_tutorial.py"), "--out", "."],
                        cwd=tmp_path / "py", capture_output=True, text=True)
    assert cpp.returncode == 0, cpp.stderr
    assert py.returncode == 0, py.stderr
    assert len(TIMINGS.findall(py.stdout)) == 3
    assert TIMINGS.sub("", py.stdout) == TIMINGS.sub("", cpp.stdout)
    for name in ("seed_mlp-symbol.json", "seed_mlp-0000.params"):  # the same files, bit for bit
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cpp" / name).read_bytes()


def run_tutorial(code, tmp_path, monkeypatch):
    """Runs tutorial code with `mxnet` meaning hybridnet; returns what it printed."""
    import hybridnet

    monkeypatch.setitem(sys.modules, "mxnet", hybridnet)
    monkeypatch.setitem(sys.modules, "mxnet.gluon", hybridnet.gluon)
    monkeypatch.setitem(sys.modules, "mxnet.gluon.nn", hybridnet.gluon.nn)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "<tutorial>", "exec"), {"__name__": "tutorial"})
    return out.getvalue()


# The tutorials' code paths, written out as they use the API: a HybridSequential built with
# add() (with and without name_scope), nd.random_normal / nd.random.normal inputs, initialize()
# and collect_params().initialize(), hybridize(), the 1000-forward benchmark with nd.waitall(),
# net(sym.var('data')) and tojson(), export, and a HybridBlock whose prints show once.
TUTORIAL = '''
import mxnet as mx
from mxnet import nd, sym
from mxnet.gluon import nn
from time import time

def get_net(scoped):
    net = nn.HybridSequential()
    if scoped:
        with net.name_scope():
            net.add(nn.Dense(256, activation="relu"))
            net.add(nn.Dense(128, activation="relu"))
            net.add(nn.Dense(2))
        net.collect_params().initialize()
    else:
        net.add(nn.Dense(256, activation='relu'),
                nn.Dense(128, activation='relu'),
                nn.Dense(2))
        net.initialize()
    return net

x = nd.random_normal(shape=(1, 512))
net = get_net(True)
print('=== net(x) ==={}'.format(net(x)))
net.hybridize()
print('=== net(x) ==={}'.format(net(x)))

def bench(net, x):
    mx.nd.waitall()
    start = time()
    for i in range(1000):
        y = net(x)
    mx.nd.waitall()
    return time() - start

net = get_net(False)
print('before hybridizing: %.4f sec' % (bench(net, x)))
net.hybridize()
print('after hybridizing: %.4f sec' % (bench(net, x)))
net.export('my_mlp')

x = sym.var('data')
print(x)
y = net(x)
print(y)
y_json = y.tojson()

class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(HybridNet, self).__init__(**kwargs)
        self.hidden = nn.Dense(10)
        self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print('type(x): {}, F: {}'.format(type(x).__name__, F.__name__))
        x = F.relu(self.hidden(x))
        return self.output(x)

net = HybridNet()
net.initialize()
x = nd.random.normal(shape=(1, 4))
print('=== 1st forward ===')
y = net(x)
print('=== 2nd forward ===')
y = net(x)
net.hybridize()
print('=== hybridized 1st forward ===')
y = net(x)
print('=== hybridized 2nd forward ===')
y = net(x)
print(y)
'''


def test_tutorial_code_runs_unchanged(tmp_path, monkeypatch):
    out = run_tutorial(TUTORIAL, tmp_path, monkeypatch)
    first, second = re.findall(r"=== net\(x\) ===\n(\[\[.*\]\])\n<NDArray 1x2 @cpu\(0\)>", out)
    assert first == second  # the same output after hybridize()
    assert re.search(r"before hybridizing: \d+\.\d{4} sec\nafter hybridizing: \d+\.\d{4} sec", out)
    assert "<Symbol data>" in out
    # without name_scope the layers keep their MXNet 1.x global names ("dense5_fwd")
    assert re.search(r"<Symbol dense\d+_fwd>", out)
    forwards = out.split("=== 1st forward ===\n")[1]
    assert forwards.startswith(
        "type(x): NDArray, F: hybridnet.ndarray\n=== 2nd forward ===\n"
        "type(x): NDArray, F: hybridnet.ndarray\n=== hybridized 1st forward ===\n"
        "type(x): Symbol, F: hybridnet.symbol\n=== hybridized 2nd forward ===\n\n[[")
    assert (tmp_path / "my_mlp-symbol.json").exists() and (tmp_path / "my_mlp-0000.params").exists()


def test_imperative_and_symbolic_programs(tmp_path, monkeypatch):
    # The tutorials' opening example: Python's own compile() of a program text.
    code = '''
def add_str():
    return """
def add(A, B):
    return A + B
"""

def fancy_func_str():
    return """
def fancy_func(A, B, C, D):
    E = add(A, B)
    F = add(C, D)
    G = add(E, F)
    return G
"""

def evoke_str():
    return add_str() + fancy_func_str() + """
print(fancy_func(1, 2, 3, 4))
"""

y = compile(evoke_str(), "", "exec")
exec(y)
from mxnet import nd
print(nd.array([1]) + nd.array([2]) + nd.array([3]) + nd.array([4]))
'''
    out = run_tutorial(code, tmp_path, monkeypatch)
    assert out.startswith("10\n\n[10.]\n<NDArray 1 @cpu(0)>")
    assert np.float32(10) == 10 and same_bits(np.ones(1), np.ones(1))
