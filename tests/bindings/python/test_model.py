"""Serving: Model (immutable, shared by threads) and Predictor (numpy in, numpy out)."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import gluon, nd

from helpers import same_bits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden"))
import tiny_bert  # noqa: E402 - the model the golden comparison with MXNet runs too


@pytest.fixture(scope="module")
def resnet(fixtures_dir):
    return os.path.join(fixtures_dir, "cifar_resnet20_v1")


def test_predictor_matches_the_imported_block(resnet):
    model = mx.Model.load(resnet, 0)
    assert model.input_names == ["data"] and len(model.output_names) == 1
    x = np.random.RandomState(3).standard_normal((2, 3, 32, 32)).astype(np.float32)
    y = model.predictor()(x)
    assert isinstance(y, np.ndarray) and y.shape == (2, 10) and y.dtype == np.float32
    block = gluon.SymbolBlock.imports(resnet + "-symbol.json", ["data"], resnet + "-0000.params")
    assert same_bits(block(nd.array(x)), y)
    assert "data" in model.symbol.list_arguments()
    assert "inputs=['data']" in repr(model)


def test_bfloat16_predictor_rounds_its_convolutions(resnet):
    model = mx.Model.load(resnet, 0)
    x = np.random.RandomState(5).standard_normal((2, 3, 32, 32)).astype(np.float32)
    exact = model.predictor()(x)
    bf16 = model.predictor(dtype="bfloat16")
    y = bf16(x)
    assert y.dtype == np.float32 and y.shape == exact.shape
    diff = float(np.max(np.abs(y - exact)))
    assert 0 < diff <= 2e-2 * float(np.max(np.abs(exact)))
    assert same_bits(bf16.clone()(x), y)
    bf16.set_dtype("float32")
    assert same_bits(bf16(x), exact)
    with pytest.raises(mx.InvalidArgumentError, match="'float32' or 'bfloat16'"):
        bf16.set_dtype("float16")


def test_batch_sizes_inputs_by_name_and_fresh_outputs(resnet):
    predictor = mx.Model.load(resnet, 0).predictor()
    x = np.random.RandomState(4).standard_normal((3, 3, 32, 32)).astype(np.float32)
    full = predictor(x)
    one = predictor(x[:1])
    assert one.shape == (1, 10)
    np.testing.assert_allclose(one[0], full[0], rtol=1e-5, atol=1e-6)
    again = predictor(data=x)
    assert same_bits(again, full) and again is not full
    again[:] = 0  # each call returns its own array
    assert not same_bits(again, predictor(x))
    assert predictor(x.astype(np.float64).astype(np.float32).tolist()).shape == (3, 10)
    fortran = np.asfortranarray(x)
    assert same_bits(predictor(fortran), full)


def test_numpy_inputs_are_read_in_place(resnet):
    predictor = mx.Model.load(resnet, 0).predictor()
    rng = np.random.RandomState(6)
    xs = [rng.standard_normal((2, 3, 32, 32)).astype(np.float32) for _ in range(2)]
    want = [predictor(np.asfortranarray(x)) for x in xs]  # not C-contiguous: copied
    for _ in range(2):  # alternating arrays: each forward reads the one it was given
        for x, y in zip(xs, want):
            assert same_bits(predictor(x), y) and same_bits(predictor(data=x), y)
    read_only = xs[0].copy()
    read_only.setflags(write=False)
    assert same_bits(predictor(read_only), want[0])
    unaligned = np.frombuffer(bytearray(xs[0].nbytes + 1), np.uint8)[1:].view(np.float32)
    unaligned = unaligned.reshape(xs[0].shape)
    unaligned[...] = xs[0]
    assert not unaligned.flags.aligned and same_bits(predictor(unaligned), want[0])
    x = xs[0].copy()
    predictor(data=x)
    x[...] = xs[1]  # not copied: the next forward without inputs reads the write
    assert same_bits(predictor(), want[1])
    del x
    assert same_bits(predictor(), want[1])  # the predictor keeps the array it reads alive


def test_multi_input_model_from_gluon_to_predictor(tmp_path):
    net = tiny_bert.model(mx)()
    net.initialize()
    tokens, types, valid = tiny_bert.inputs(mx)
    eager = net(tokens, types, valid)
    assert [y.shape for y in eager] == [(2, 5, 8), (2, 8)]
    net.hybridize()
    hybrid = net(tokens, types, valid)
    for a, b in zip(eager, hybrid):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    prefix = str(tmp_path / "tinybert")
    net.export(prefix)
    model = mx.Model.load(prefix, 0)
    assert model.input_names == ["data0", "data1", "data2"] and len(model.output_names) == 2
    arrays = [x.asnumpy() for x in (tokens, types, valid)]
    predictor = model.predictor()
    served = predictor(*arrays)
    for a, b in zip(hybrid, served):
        assert same_bits(a, b)
    by_name = predictor(data2=arrays[2], data0=arrays[0], data1=arrays[1])
    assert all(same_bits(a, b) for a, b in zip(served, by_name))
    block = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data0", "data1", "data2"],
                                      prefix + "-0000.params")
    assert all(same_bits(a, b) for a, b in zip(block(tokens, types, valid), served))
    # tokens past the valid length do not reach the pooled first token
    padded = arrays[0].copy()
    padded[0, 3:] = [11, 12]
    assert same_bits(predictor(padded, arrays[1], arrays[2])[1][0], served[1][0])
    longer = arrays[2] + np.float32(1)
    assert not same_bits(predictor(padded, arrays[1], longer)[1][0], served[1][0])
    with pytest.raises(mx.InvalidArgumentError, match="takes 3 inputs"):
        predictor(*arrays, arrays[0])
    with pytest.raises(mx.NotFoundError, match="no input 'tokens'"):
        predictor(tokens=arrays[0])


def test_models_with_label_inputs(fixtures_dir):
    prefix = os.path.join(fixtures_dir, "mnist-lenet-0")
    model = mx.Model.load(prefix, 10)
    assert model.input_names == ["data", "softmax_label"]
    x = np.random.RandomState(5).uniform(size=(2, 1, 28, 28)).astype(np.float32)
    p = model.predictor()
    y = p(x)  # the label is fed zeros, as MXNet's predictor does
    assert y.shape == (2, 10)
    np.testing.assert_allclose(y.sum(axis=1), 1, rtol=1e-5)
    assert same_bits(p(data=x, softmax_label=np.zeros(2, np.float32)), y)


def test_from_memory(resnet):
    with open(resnet + "-symbol.json") as f:
        text = f.read()
    with open(resnet + "-0000.params", "rb") as f:
        params = f.read()
    x = np.ones((1, 3, 32, 32), np.float32)
    assert same_bits(mx.Model.from_memory(text, params).predictor()(x),
                     mx.Model.load(resnet, 0).predictor()(x))
    with pytest.raises(mx.FormatError):
        mx.Model.from_memory("{not json", params)
    with pytest.raises(mx.FormatError):
        mx.Model.from_memory(text, params[:100])


def test_errors(resnet, tmp_path):
    predictor = mx.Model.load(resnet, 0).predictor()
    with pytest.raises(mx.ShapeError, match="Convolution"):
        predictor(np.ones((1, 4, 32, 32), np.float32))
    with pytest.raises(mx.NotFoundError, match="no input 'image'"):
        predictor(image=np.ones((1, 3, 32, 32), np.float32))
    with pytest.raises(mx.InvalidArgumentError, match="takes 1 inputs"):
        predictor(np.ones(1), np.ones(1))
    with pytest.raises(mx.DtypeError):
        predictor(np.ones((1, 3, 32, 32), np.complex64))
    with pytest.raises(mx.IoError, match="no-such-model-symbol.json"):
        mx.Model.load(str(tmp_path / "no-such-model"), 0)
    # after errors the predictor still works
    assert predictor(np.ones((1, 3, 32, 32), np.float32)).shape == (1, 10)


def test_one_predictor_per_thread(resnet):
    model = mx.Model.load(resnet, 0)
    xs = [np.random.RandomState(s).standard_normal((1, 3, 32, 32)).astype(np.float32)
          for s in range(4)]
    expected = [model.predictor()(x) for x in xs]
    results, errors = {}, []

    def work(i, predictor):
        try:
            for _ in range(5):
                results[i] = predictor(xs[i])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    first = model.predictor()
    threads = [threading.Thread(target=work, args=(i, first.clone() if i else first))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(same_bits(results[i], expected[i]) for i in range(4))
    # a predictor already running on another thread refuses instead of corrupting itself
    with first._lock:
        with pytest.raises(mx.InvalidArgumentError, match="one predictor per thread"):
            first(xs[0])


def test_predict_example(resnet, source_dir, tmp_path):
    x = np.random.RandomState(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    script = os.path.join(source_dir, "examples", "python", "predict.py")
    run = subprocess.run([sys.executable, script, resnet, "0", str(tmp_path / "x.npy"),
                          str(tmp_path / "y.npy")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "wrote" in run.stdout and "[2, 10]" in run.stdout
    assert same_bits(np.load(tmp_path / "y.npy"), mx.Model.load(resnet, 0).predictor()(x))
    bad = subprocess.run([sys.executable, script, resnet, "zero", "x", "y"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "EPOCH must be a number" in bad.stderr
    missing = subprocess.run([sys.executable, script, str(tmp_path / "none"), "0",
                              str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "none-symbol.json" in missing.stderr
