"""Symbols: composition, names, JSON, files, shape inference, and what cannot be traced."""
import json

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import nd, sym


def test_compose_and_list():
    data = sym.var("data")
    fc = sym.FullyConnected(data, num_hidden=4, name="fc1")
    act = sym.Activation(fc, act_type="relu", name="relu1")
    assert repr(data) == "<Symbol data>" and repr(act) == "<Symbol relu1>"
    assert act.name == "relu1"
    assert act.list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    assert act.list_outputs() == ["relu1_output"]
    assert act.list_inputs() == ["data", "fc1_weight", "fc1_bias"]
    assert act.list_auxiliary_states() == []
    bn = sym.BatchNorm(act, name="bn")
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert sym.Variable("x").name == "x"


def test_auto_names_follow_mxnet():
    x = sym.var("x")
    assert sym.relu(x).name.startswith("relu")
    total = x + x  # Symbol arithmetic calls _Plus: MXNet names the node after it
    assert total.name.startswith("_plus") and "elemwise_add" in total.tojson()
    assert (x * 2).name.startswith("_mulscalar")
    assert (1 - x).name.startswith("_rminusscalar")
    assert (-x).name.startswith("_mulscalar")
    named = sym.elemwise_add(x, x, name="sum")
    assert named.name == "sum"


def test_keyword_inputs_and_positional_attributes():
    x = sym.var("x")
    w = sym.var("w")
    fc = sym.FullyConnected(data=x, weight=w, num_hidden=3, no_bias=True, name="fc")
    assert fc.list_arguments() == ["x", "w"]
    r = sym.reshape(x, (2, -1))  # a positional value after the inputs is the first attribute
    assert json.loads(r.tojson())["nodes"][-1]["attrs"]["shape"] == "(2, -1)"
    cat = sym.Concat(x, w, x, dim=0)  # variadic: num_args is set from the inputs
    assert json.loads(cat.tojson())["nodes"][-1]["attrs"]["num_args"] == "3"
    with pytest.raises(mx.InvalidArgumentError, match="has no input 'bogus'"):
        sym.relu(bogus=x)
    with pytest.raises(mx.InvalidArgumentError, match="'weight' is missing"):
        sym.FullyConnected(data=x, bias=w, num_hidden=2)
    with_name = sym.FullyConnected(data=x, bias=w, num_hidden=2, name="fc2")
    assert with_name.list_arguments() == ["x", "fc2_weight", "w"]
    with pytest.raises(mx.InvalidArgumentError, match="num_hidden"):
        sym.FullyConnected(x, num_hidden="many")
    with pytest.raises(mx.InvalidArgumentError, match="unknown attribute 'not_an_attribute'"):
        sym.Convolution(x, kernel=(3, 3), num_filter=2, not_an_attribute=1)


def test_json_round_trip_and_files(tmp_path):
    data = sym.var("data")
    net = sym.SoftmaxOutput(sym.FullyConnected(data, num_hidden=2, name="fc"), name="softmax")
    text = net.tojson()
    parsed = json.loads(text)
    assert parsed["attrs"]["mxnet_version"] == ["int", 10901]
    assert sym.load_json(text).tojson() == text
    path = str(tmp_path / "net-symbol.json")
    net.save(path)
    assert sym.load(path).tojson() == text
    with pytest.raises(mx.FormatError):
        sym.load_json('{"nodes": [')
    with pytest.raises(mx.IoError, match="missing-symbol.json"):
        sym.load(str(tmp_path / "missing-symbol.json"))


def test_group_and_outputs():
    a, b = sym.var("a"), sym.var("b")
    g = sym.Group([sym.relu(a, name="r"), sym.sigmoid(b, name="s")])
    assert len(g) == 2 and repr(g) == "<Symbol group [r, s]>"
    assert g[1].name == "s" and g["r_output"].name == "r"
    assert [s.name for s in g] == ["r", "s"]
    split = sym.SliceChannel(a, num_outputs=3, name="split")
    assert len(split) == 3 and split[2].name == "split"
    with pytest.raises(mx.NotFoundError, match="no output named"):
        g["nothing"]
    with pytest.raises(mx.InvalidArgumentError):
        g[5]


def test_infer_shape():
    data = sym.var("data")
    net = sym.FullyConnected(sym.Flatten(data), num_hidden=10, name="fc")
    args, outs, auxs = net.infer_shape(data=(2, 3, 4))
    assert args == [(2, 3, 4), (10, 12), (10,)] and outs == [(2, 10)] and auxs == []
    assert net.infer_shape((2, 3, 4))[1] == [(2, 10)]
    assert net.infer_shape() == (None, None, None)  # MXNet: unknown without inputs
    partial = net.infer_shape_partial()
    assert partial[1] == [()]
    with pytest.raises(mx.ShapeError):
        net.infer_shape(data=(2, 3), fc_weight=(10, 7))


def test_what_cannot_be_traced_says_what_to_write():
    x = sym.var("x")
    with pytest.raises(mx.UntraceableError, match="asnumpy"):
        x.asnumpy()
    with pytest.raises(mx.UntraceableError, match="x = x \\+ y"):
        x += 1
    with pytest.raises(mx.UntraceableError, match="F.where"):
        if x:
            pass
    with pytest.raises(mx.UntraceableError, match="slice"):
        x[0:1]
    with pytest.raises(mx.UntraceableError, match="concrete NDArray"):
        x + nd.ones((1,))
    with pytest.raises(mx.UntraceableError, match="concrete NDArray"):
        sym.elemwise_add(x, nd.ones((1,)))
    with pytest.raises(mx.UnsupportedError, match="shape"):
        sym.var("data", shape=(1, 2))


def test_symbol_runs_as_a_block():
    a, b = sym.var("a"), sym.var("b")
    prog = sym.elemwise_add(sym.relu(a), b, name="out")
    block = mx.gluon.SymbolBlock(prog, [a, b])
    y = block(nd.array([-1, 2]), nd.array([10, 10]))
    assert y.asnumpy().tolist() == [10, 12]
    block.hybridize()
    assert block(nd.array([-1, 2]), nd.array([1, 1])).asnumpy().tolist() == [1, 3]
    assert np.asarray(y).dtype == np.float32
