"""mx.viz (print_summary, plot_network) and Block.summary; their texts are compared with real
MXNet 1.9.1 byte for byte by golden/viz_programs.py (python.golden_viz)."""
import shutil

import pytest

import hybridnet as mx
from hybridnet import nd, sym
from hybridnet.gluon import nn


def mlp_symbol():
    fc = sym.FullyConnected(sym.var("data"), num_hidden=4, name="fc1")
    return sym.Activation(fc, act_type="relu", name="relu1")


def test_print_summary_counts_and_layout(capsys):
    mx.viz.print_summary(mlp_symbol(), shape={"data": (2, 8)})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "_" * 120 and lines[2] == "=" * 120
    assert lines[5] == f"{'fc1(FullyConnected)':<52}{'4':<24}{'36':<12}{'data':<32}"
    assert lines[-2] == "Total params: 36"
    mx.viz.print_summary(mlp_symbol(), line_length=40, positions=[.5, .7, .8, 1.])
    assert capsys.readouterr().out.splitlines()[0] == "_" * 40


def test_print_summary_errors():
    with pytest.raises(mx.MXNetError, match="data"):
        mx.viz.print_summary(mlp_symbol(), shape={"fc1_weight": (4, 8)})
    with pytest.raises(mx.MXNetError, match="'image'"):
        mx.viz.print_summary(mlp_symbol(), shape={"image": (2, 8)})
    with pytest.raises(TypeError, match="Symbol"):
        mx.viz.print_summary("not a symbol")


def test_plot_network_digraph(tmp_path, monkeypatch):
    dot = mx.viz.plot_network(mlp_symbol(), shape={"data": (2, 8)}, save_format="svg")
    assert dot.source.startswith("digraph plot {\n") and dot.source.endswith("\n}")
    assert '\tfc1 -> data [label=8 arrowtail=open dir=back]' in dot.source
    assert "fc1_weight" not in dot.source
    assert "fc1_weight" in mx.viz.plot_network(mlp_symbol(), hide_weights=False).source
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(mx.MXNetError, match="Graphviz's `dot` program"):
        dot.render(str(tmp_path / "mlp"))


def test_plot_network_renders_with_graphviz(tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz): no SVG to check")
    dot = mx.viz.plot_network(mlp_symbol(), save_format="svg")
    path = dot.render(str(tmp_path / "mlp"))
    with open(path) as f:
        svg = f.read()
    assert path.endswith(".svg") and "<svg" in svg and "FullyConnected" in svg


class Scaled(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x):
        return self.dense(x) * 2


def test_block_summary(capsys):
    net = nn.HybridSequential()
    net.add(Scaled(), nn.BatchNorm(in_channels=3))
    net.initialize()
    net.summary(nd.ones((2, 4)))
    lines = capsys.readouterr().out.splitlines()
    assert lines[3] == f"{'Input':>20}  {'(2, 4)':>42} {'0':>15}"
    assert lines[4] == f"{'Dense-1':>20}  {'(2, 3)':>42} {'15':>15}"
    assert lines[5] == f"{'Scaled-2':>20}  {'(2, 3)':>42} {'0':>15}"
    assert lines[6] == f"{'BatchNorm-3':>20}  {'(2, 3)':>42} {'12':>15}"
    assert "   Trainable params: 21" in lines and "   Non-trainable params: 6" in lines
    net.hybridize()
    with pytest.raises(mx.MXNetError, match="must not be hybridized to print summary"):
        net.summary(nd.ones((2, 4)))
