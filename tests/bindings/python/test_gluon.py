"""Gluon: layers, containers, Python HybridBlocks (eager, traced once, cached), naming,
parameters, initializers, export/import, save/load, the model zoo."""
import gc
import json
import re
import threading

import pytest

import hybridnet as mx
from hybridnet import gluon, nd, sym
from hybridnet.gluon import nn

from helpers import mlp, same_bits


def test_mlp_eager_equals_hybridized_bit_for_bit():
    net = mlp((32, 16, 3))
    net.initialize()
    x = nd.random.normal(shape=(4, 10))
    eager = net(x)
    assert eager.shape == (4, 3)
    net.hybridize()
    assert same_bits(net(x), eager)
    assert same_bits(net(x), eager)
    x2 = nd.random.normal(shape=(7, 10))  # another batch size re-plans
    net.hybridize(False)
    y_eager = net(x2)
    net.hybridize(static_alloc=True, static_shape=True)
    assert same_bits(net(x2), y_eager)
    with pytest.raises(TypeError, match="unexpected arguments: bogus"):
        net.hybridize(bogus=1)
    assert "Dense(10 -> 32, Activation(relu))" in repr(net)


def test_same_seed_same_weights_as_every_language():
    def run():
        mx.random.seed(42)
        net = mlp((8, 2))
        net.initialize(mx.init.Uniform())
        return net(nd.ones((1, 5)))

    assert same_bits(run(), run())


def test_naming_follows_mxnet_name_scopes():
    with_scope = nn.HybridSequential()
    with with_scope.name_scope():
        with_scope.add(nn.Dense(4), nn.Dense(2, prefix="out_"))
    p = with_scope.prefix
    assert re.fullmatch(r"hybridsequential\d+_", p)
    assert list(with_scope.collect_params().keys()) == [
        p + "dense0_weight", p + "dense0_bias", p + "out_weight", p + "out_bias"]
    # outside any name_scope a layer keeps the process-wide name it got when constructed
    loose = nn.HybridSequential()
    d = nn.Dense(3)
    loose.add(d)
    assert re.fullmatch(r"dense\d+_", d.prefix) and d.name == d.prefix[:-1]
    assert list(loose.collect_params().keys())[0] == d.prefix + "weight"
    assert nn.Dense(1, prefix="mine_").prefix == "mine_"


class HybridNet(nn.HybridBlock):
    def __init__(self, log, **kwargs):
        super().__init__(**kwargs)
        self.log = log
        with self.name_scope():
            self.hidden = nn.Dense(10)
            self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        self.log.append((F.__name__, type(x).__name__))
        print("F: ", F)
        print("x: ", x)
        h = F.relu(self.hidden(x))
        print("hidden: ", h)
        return self.output(h)


def test_python_block_runs_eagerly_then_traces_once(capsys):
    log = []
    net = HybridNet(log)
    net.initialize()
    x = nd.random.normal(shape=(1, 4))
    eager = net(x)
    eager2 = net(x)
    assert log == [("hybridnet.ndarray", "NDArray")] * 2
    out = capsys.readouterr().out
    assert "F:  <module 'hybridnet.ndarray'" in out and "<NDArray 1x10 @cpu(0)>" in out
    net.hybridize()
    traced = net(x)
    out = capsys.readouterr().out
    assert log[2:] == [("hybridnet.symbol", "Symbol")]
    assert "x:  <Symbol data>" in out
    assert re.search(r"hidden:  <Symbol hybridnet\d+_relu0>", out)
    again = net(nd.random.normal(shape=(1, 4)))
    assert len(log) == 3 and capsys.readouterr().out == ""  # the cached graph ran: no print
    assert same_bits(eager, eager2) and same_bits(eager, traced) and again.shape == (1, 2)
    program = net(sym.var("data"))  # feeding a symbol gives the program
    assert isinstance(program, sym.Symbol)
    assert program.list_arguments()[0] == "data" and len(program.list_arguments()) == 5
    capsys.readouterr()


class SumOfInputs(nn.HybridBlock):
    def hybrid_forward(self, F, *xs):
        return F.add_n(*xs)


@pytest.mark.parametrize("hybridize", [False, True])
def test_block_calls_with_arrays_numpy_and_more_inputs_than_the_call_buffer(hybridize):
    net = SumOfInputs()
    if hybridize:
        net.hybridize(static_alloc=True)
    rows = [[float(i), 10.0 * i] for i in range(1, 7)]
    arrays = [nd.array([r]) for r in rows]
    for count in (1, 2, 4, 5, 6):  # up to 4 go through the block's buffer
        expected = [[sum(r[0] for r in rows[:count]), sum(r[1] for r in rows[:count])]]
        assert net(*arrays[:count]).asnumpy().tolist() == expected
        mixed = [a.asnumpy() if i % 2 else a for i, a in enumerate(arrays[:count])]
        assert net(*mixed).asnumpy().tolist() == expected
    with pytest.raises(mx.base.HybridnetError, match="NDArrays or with Symbols"):
        net(arrays[0], sym.var("x"))

class Affine(nn.HybridBlock):
    """Own parameters, passed to hybrid_forward by attribute name; several inputs/outputs."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.scale = self.params.get("scale", shape=(1, 3), init=mx.init.Constant(2.0))
            self.shift = self.params.get("shift", shape=(1, 0))  # completed at the first forward
            self.offset = self.params.get_constant("offset", [[1.0, 2.0, 3.0]])

    def hybrid_forward(self, F, x, y, scale, shift, offset):
        z = F.elemwise_add(F.broadcast_mul(x, scale), shift) + offset
        return z, z * y


def test_python_block_parameters_several_inputs_and_outputs(tmp_path):
    net = Affine()
    net.initialize(mx.init.Zero())
    x = nd.array([[1, 2, 3]])
    y = nd.array([[2, 2, 2]])
    z, zy = net(x, y)
    assert z.asnumpy().tolist() == [[3, 6, 9]]  # scale 2 (own init), shift 0, offset constant
    assert zy.asnumpy().tolist() == [[6, 12, 18]]
    params = net.collect_params()
    assert [k[len(net.prefix):] for k in params.keys()] == ["scale", "shift", "offset"]
    assert params[net.prefix + "shift"].shape == (1, 3)
    net.shift.set_data([[1, 1, 1]])
    net.hybridize()
    z2, _ = net(x, y)
    assert z2.asnumpy().tolist() == [[4, 7, 10]]
    net.scale.data()[:] = 0  # writing the shared storage reaches the cached graph
    assert net(x, y)[0].asnumpy().tolist() == [[2, 3, 4]]
    prefix = str(tmp_path / "affine")
    net.export(prefix)
    exported = json.load(open(prefix + "-symbol.json"))
    names = [n["name"] for n in exported["nodes"] if n["op"] == "null"]
    assert names[:2] == ["data0", net.prefix + "scale"] and "data1" in names
    back = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data0", "data1"],
                                     prefix + "-0000.params")
    assert same_bits(back(x, y)[0], net(x, y)[0])


def test_exceptions_in_python_forward_come_back_unchanged():
    class Broken(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            raise KeyError("my own error")

    net = Broken()
    with pytest.raises(KeyError, match="my own error"):
        net(nd.ones((1, 2)))

    class Outer(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.inner = Broken()

        def hybrid_forward(self, F, x):
            return self.inner(x) + 1

    with pytest.raises(KeyError, match="my own error"):
        Outer()(nd.ones((1, 2)))

    class ReturnsNumber(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return 3

    with pytest.raises(mx.InvalidArgumentError, match="returned a int"):
        ReturnsNumber()(nd.ones((1,)))


def test_untraceable_code_gets_told_what_to_write():
    class ReadsValues(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            x.asnumpy()
            return x

    net = ReadsValues()
    assert net(nd.ones((1, 2))).shape == (1, 2)  # eager: fine
    net.hybridize()
    with pytest.raises(mx.UntraceableError, match="asnumpy\\(\\) is not possible on a Symbol"):
        net(nd.ones((1, 2)))

    class InPlace(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            x += 1
            return x

    net = InPlace()
    net.hybridize()
    with pytest.raises(mx.UntraceableError, match="x = x \\+ y"):
        net(nd.ones((1, 2)))

    class Constant(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return x + nd.ones((1, 2))

    net = Constant()
    assert net(nd.ones((1, 2))).asnumpy().tolist() == [[2, 2]]
    net.hybridize()
    with pytest.raises(mx.UntraceableError, match="make the constant a parameter"):
        net(nd.ones((1, 2)))


def test_plain_blocks_and_containers():
    class Twice(nn.Block):
        def __init__(self):
            super().__init__()
            self.calls = 0
            with self.name_scope():
                self.dense = nn.Dense(2)

        def forward(self, x):
            self.calls += 1
            return self.dense(x) * 2

    net = nn.Sequential()
    with net.name_scope():
        net.add(Twice(), nn.Lambda(lambda x: x + 1), nn.Lambda("relu"))
    net.initialize()
    x = nd.ones((1, 3))
    y = net(x)
    net.hybridize()  # passed on to the hybrid Dense inside
    assert same_bits(net(x), y) and net[0].calls == 2 and len(net) == 3
    with pytest.raises(mx.UnsupportedError, match="an int"):
        net[0:2]
    seq = nn.HybridSequential()
    with pytest.raises(mx.InvalidArgumentError, match="hybrid blocks only"):
        seq.add(Twice())
    both = nn.HybridConcurrent(axis=1)
    both.add(nn.Dense(2), nn.Identity(), nn.HybridLambda(lambda F, x: F.sigmoid(x)))
    both.initialize()
    assert both(nd.ones((2, 3))).shape == (2, 8)
    with pytest.raises(mx.UnsupportedError, match="overrides forward"):
        class MyDense(nn.Dense):
            def hybrid_forward(self, F, x):
                return x

        MyDense(2)
    with pytest.raises(mx.UnsupportedError, match="params="):
        nn.Dense(2, params=net.collect_params())


def test_conv_pool_norm_layers_and_dense_weights():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1, use_bias=False), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(2), nn.Conv2DTranspose(2, (2, 2), strides=2), nn.AvgPool2D(),
                nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dropout(0.5), nn.Dense(3), nn.PReLU(),
                nn.LeakyReLU(0.1), nn.ELU(), nn.SELU(), nn.GELU())
    net.initialize(mx.init.Xavier(magnitude=2))
    x = nd.random.uniform(shape=(2, 3, 8, 8))
    eager = net(x)
    net.hybridize()
    assert eager.shape == (2, 3) and same_bits(net(x), eager)
    conv = net[0]
    assert conv.weight.shape == (4, 3, 3, 3)
    assert "Conv2D(3 -> 4, kernel_size=(3, 3)" in repr(net)
    assert net[1].running_var.data().asnumpy().tolist() == [1, 1, 1, 1]
    with pytest.raises(mx.InvalidArgumentError, match="kernel_size"):
        nn.Conv2D(4)
    with pytest.raises(mx.InvalidArgumentError, match="unknown attribute 'kernel'"):
        nn.Conv2D(4, 3, kernel=3)
    with pytest.raises(mx.UnsupportedError, match="float32"):
        nn.Dense(2, dtype="float16")


def test_parameters_initialize_save_load(tmp_path):
    net = mlp((6, 2))
    params = net.collect_params()
    assert all(not p.initialized for p in params.values())
    with pytest.raises(mx.InvalidArgumentError, match="initialize\\(\\)"):
        params[net.prefix + "dense0_weight"].data()
    net.initialize(mx.init.Normal(0.5))
    weight = net[0].weight
    assert weight.shape == (6, 0)  # known at the first forward
    with pytest.raises(mx.InvalidArgumentError, match="first forward"):
        weight.data()
    x = nd.ones((1, 4))
    y = net(x)
    assert weight.shape == (6, 4) and weight.initialized
    assert repr(weight) == f"Parameter {net.prefix}dense0_weight (shape=(6, 4), dtype=float32)"
    assert list(net.collect_params("dense1").keys()) == []
    assert list(net.collect_params(".*bias").keys()) == [net.prefix + "dense0_bias",
                                                          net.prefix + "dense1_bias"]
    path = str(tmp_path / "mlp.params")
    net.save_parameters(path)
    assert sorted(nd.load(path)) == ["0.bias", "0.weight", "1.bias", "1.weight"]
    twin = mlp((6, 2))
    twin.initialize(mx.init.One())
    twin(x)
    assert not same_bits(twin(x), y)
    twin.load_parameters(path)
    assert same_bits(twin(x), y)
    params.initialize(mx.init.One(), force_reinit=True)
    assert net[0].weight.data().asnumpy().min() == 1
    with pytest.raises(mx.NotFoundError, match="is missing"):
        mlp((6, 2, 2)).load_parameters(path)
    with pytest.raises(mx.ShapeError):
        bigger = mlp((7, 2))
        bigger.initialize()
        bigger(x)
        bigger.load_parameters(path)
    with pytest.raises(mx.IoError):
        net.load_parameters(str(tmp_path / "missing.params"))
    params.save(str(tmp_path / "dict.params"), strip_prefix=net.prefix)
    assert sorted(nd.load(str(tmp_path / "dict.params")))[0] == "dense0_bias"


def test_export_needs_a_traced_graph_and_imports_back(tmp_path):
    net = mlp((5, 3))
    net.initialize()
    x = nd.random.normal(shape=(2, 4))
    prefix = str(tmp_path / "exported")
    with pytest.raises(mx.InvalidArgumentError, match="hybridize\\(\\)"):
        net.export(prefix)
    net.hybridize()
    y = net(x)
    files = net.export(prefix, epoch=3)
    assert files == (prefix + "-symbol.json", prefix + "-0003.params")
    back = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0003.params")
    assert same_bits(back(x), y)
    back.hybridize()
    assert same_bits(back(x), y)
    lenient = gluon.SymbolBlock.imports(prefix + "-symbol.json", "data",
                                        prefix + "-0003.params", allow_missing=True)
    assert same_bits(lenient(x), y)
    with pytest.raises(mx.NotFoundError, match="nothing"):
        gluon.SymbolBlock.imports(prefix + "-symbol.json", ["nothing"])
    on_cpu = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                       prefix + "-0003.params", ctx=mx.cpu())
    assert same_bits(on_cpu(x), y)
    with pytest.raises(mx.UnsupportedError, match="CPU"):
        gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0003.params",
                                  ctx=mx.gpu(0))
    with pytest.raises(mx.UnsupportedError, match="CPU"):
        on_cpu.load_parameters(prefix + "-0003.params", ctx=[mx.gpu(0)])
    model = mx.Model.load(prefix, 3)
    assert same_bits(model.predictor()(x.asnumpy()), y)


def test_model_zoo():
    names = gluon.model_zoo.vision.MODEL_NAMES
    assert "resnet18_v1" in names and "mobilenetv2_1.0" in names
    net = gluon.model_zoo.vision.get_model("resnet18_v1", classes=10, thumbnail=True)
    assert re.fullmatch(r"resnetv1\d+_", net.prefix)
    net.initialize(mx.init.Xavier())
    x = nd.random.uniform(shape=(1, 3, 32, 32))
    y = net(x)
    net.hybridize()
    assert y.shape == (1, 10) and same_bits(net(x), y)
    assert callable(gluon.model_zoo.vision.squeezenet1_0)
    assert gluon.model_zoo.vision.mobilenet0_25(classes=5).prefix.startswith("mobilenet")
    with pytest.raises(mx.NotFoundError, match="resnet18_v1"):
        gluon.model_zoo.vision.get_model("resnet19_v9")
    with pytest.raises(mx.UnsupportedError, match="load_parameters"):
        gluon.model_zoo.get_model("alexnet", pretrained=True)
    with pytest.raises(mx.InvalidArgumentError, match="unknown attribute 'layers'"):
        gluon.model_zoo.get_model("alexnet", layers=3)


def test_blocks_are_freed():
    gc.collect()
    before = mx.live_handles()
    for _ in range(3):
        net = HybridNet([])
        net.initialize()
        net.hybridize()
        with_print = net(nd.ones((1, 4)))
        del net, with_print
    gc.collect()
    assert mx.live_handles() == before


def test_block_call_errors_free_the_tree_and_the_arrays():
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize()
    gc.collect()
    before = mx.live_handles()
    for _ in range(3):
        with pytest.raises(mx.ShapeError, match="4"):
            net(nd.ones((2, 5)))  # in_units 4: the library's error, raised by the C fast path
    with pytest.raises(TypeError, match="unexpected keyword argument 'data'"):
        net(data=nd.ones((2, 4)))
    results = []
    other = threading.Thread(target=lambda: results.append(net(nd.ones((2, 4))).shape))
    other.start()
    other.join(timeout=60)  # tree_lock was released after each error
    assert results == [(2, 3)]
    gc.collect()
    assert mx.live_handles() == before


def test_arrays_a_block_call_makes_hand_their_handle_to_python():
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize()
    gc.collect()
    before = mx.live_handles()
    x = nd.ones((2, 4))  # made by Python: its address is found when the C path takes it
    y = net(x)  # made by the C path: it holds the address, its cffi pointer made on first read
    handle = y._h
    assert mx.base.ffi.typeof(handle) is mx.base.ffi.typeof("hn_tensor*") and y._h is handle
    assert same_bits((y * 2).asnumpy(), 2 * net(x).asnumpy())
    outputs = [net(x) for _ in range(5)]  # never read from Python: released from their address
    assert mx.live_handles() - before == 1 + 1 + 5
    del x, y, handle, outputs
    gc.collect()
    assert mx.live_handles() == before


def test_gpu_contexts_are_refused():
    net = nn.Dense(2)
    with pytest.raises(mx.UnsupportedError, match="CPU"):
        net.initialize(ctx=[mx.gpu(0)])
    net.initialize(ctx=mx.cpu())
