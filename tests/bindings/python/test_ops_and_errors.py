"""The op namespaces are generated from the library's registry; errors are the library's
categories."""
import inspect

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import _op, nd, sym
from hybridnet._ffi import ffi, lib


def registry():
    """Every op name and alias, straight from the C API."""
    count = ffi.new("size_t*")
    assert lib.hn_op_count(count) == 0
    name, aliases = ffi.new("char**"), ffi.new("size_t*")
    names = []
    for i in range(count[0]):
        assert lib.hn_op_name(i, name) == 0
        op = ffi.string(name[0]).decode()
        names.append(op)
        assert lib.hn_op_info(name[0], ffi.NULL, ffi.NULL, aliases) == 0
        alias = ffi.new("char**")
        for j in range(aliases[0]):
            assert lib.hn_op_alias(name[0], j, alias) == 0
            names.append(ffi.string(alias[0]).decode())
    return names


def test_every_registered_op_and_alias_is_a_function_where_mxnet_puts_it():
    names = registry()
    assert len(names) > 400
    for name in names:
        sub, short = _op.location(name)
        for module, ops in ((nd, nd.ndarray.OPS), (sym, sym.symbol.OPS)):
            fn = ops[name]
            assert callable(fn) and fn.__name__ == name
            assert fn.__doc__ and "Parameters" in fn.__doc__
            assert getattr(getattr(module, sub) if sub else module, short) is fn, name
    # MXNet 1.x's places (python.golden_mxnet compares every name with real MXNet's)
    assert _op.location("FullyConnected") == (None, "FullyConnected")
    assert _op.location("_plus_scalar") == ("_internal", "_plus_scalar")
    assert _op.location("_contrib_box_nms") == ("contrib", "box_nms")
    assert _op.location("_linalg_gemm2") == ("linalg", "gemm2")
    assert _op.location("_sparse_abs") == ("sparse", "abs")
    assert _op.location("_image_resize") == ("image", "resize")
    assert _op.location("_random_normal") == ("_internal", "_random_normal")
    assert _op.location("_random_normal_like") == ("random", "normal_like")
    assert nd.random.normal_like is nd.ndarray.OPS["_random_normal_like"]
    assert sym.linalg.gemm2 is sym.symbol.OPS["_linalg_gemm2"]


def test_docstrings_and_signatures_come_from_the_registry():
    doc = nd.FullyConnected.__doc__
    assert doc.startswith("Applies a linear transformation")
    assert "num_hidden : int, required" in doc and "flatten : boolean, default True" in doc
    sig = inspect.signature(nd.FullyConnected)
    assert list(sig.parameters)[:1] == ["data"]  # its inputs depend on num_hidden: *data
    assert sig.parameters["num_hidden"].default is inspect.Parameter.empty
    assert repr(sig.parameters["no_bias"].default) == "False"
    relu = inspect.signature(sym.relu)
    assert list(relu.parameters)[:1] == ["data"]
    assert relu.parameters["data"].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
    dot = inspect.signature(nd.dot)
    assert list(dot.parameters)[:2] == ["lhs", "rhs"]
    assert "Also called: _add, _plus, _Plus" in nd.elemwise_add.__doc__
    assert "contrib" in dir(nd) and callable(nd.contrib.AdaptiveAvgPooling2D)
    assert callable(nd._internal._plus_scalar)


def test_nd_ops_run_now():
    x = nd.array([[1, -2], [3, -4]])
    assert nd.relu(x).asnumpy().tolist() == [[1, 0], [3, 0]]
    assert nd.Activation(x, act_type="sigmoid").shape == (2, 2)
    w = nd.array([[1, 0], [0, 1], [1, 1]])
    y = nd.FullyConnected(data=x, weight=w, num_hidden=3, no_bias=True)
    assert y.asnumpy().tolist() == [[1, -2, -1], [3, -4, -1]]
    assert nd.dot(x, x, transpose_b=True).shape == (2, 2)
    assert nd.concat(x, x, dim=0).shape == (4, 2)
    assert nd.Concat(*[x, x, x], dim=1).shape == (2, 6)
    parts = nd.split(x, num_outputs=2, axis=1)
    assert isinstance(parts, list) and [p.shape for p in parts] == [(2, 1), (2, 1)]
    out = nd.zeros((2, 2))
    assert nd.relu(x, out=out) is out and out.asnumpy()[0].tolist() == [1, 0]
    assert nd.sum(x, axis=0).asnumpy().tolist() == [4, -6]
    assert nd.softmax(x).asnumpy().sum(axis=1).round(5).tolist() == [1, 1]


def test_nd_op_errors_name_the_op():
    x = nd.ones((2, 3))
    with pytest.raises(mx.ShapeError, match="FullyConnected"):
        nd.FullyConnected(x, nd.ones((4, 5)), nd.ones((4,)), num_hidden=4)
    with pytest.raises(mx.InvalidArgumentError, match="num_hidden"):
        nd.FullyConnected(x, nd.ones((4, 3)), num_hidden="four")
    with pytest.raises(mx.InvalidArgumentError, match="expects 3 inputs, got 1"):
        nd.FullyConnected(data=x, num_hidden=4)
    with pytest.raises(mx.InvalidArgumentError, match="'weight' is missing"):
        nd.FullyConnected(data=x, bias=nd.ones((4,)), num_hidden=4)
    with pytest.raises(mx.InvalidArgumentError, match="has no input 'bias'"):
        nd.relu(x, bias=x)
    with pytest.raises(mx.InvalidArgumentError, match="too many positional"):
        nd.relu(x, 1, 2)
    with pytest.raises(mx.InvalidArgumentError, match="out= takes one output"):
        nd.split(x, num_outputs=3, axis=1, out=x)


def test_error_classes_are_the_c_categories():
    codes = {}
    code = -1
    while True:
        status = ffi.string(lib.hn_status_name(code)).decode()
        if status == "HN_ERR_UNKNOWN":
            break
        codes[status] = code
        code -= 1
    assert len(codes) >= 10
    for status, code in codes.items():
        cls = mx.base.ERRORS[code]
        assert cls.status == status and cls.code == code and issubclass(cls, mx.HybridnetError)
        name = "".join(w.capitalize() for w in status[7:].split("_")) + "Error"
        assert getattr(mx, name) is cls
    assert mx.MXNetError is mx.HybridnetError and issubclass(mx.HybridnetError, RuntimeError)
    with pytest.raises(mx.HybridnetError) as info:
        mx.Model.load("/nonexistent/model", 0)
    assert info.value.status == "HN_ERR_IO" and info.value.code == codes["HN_ERR_IO"]
    assert "/nonexistent/model-symbol.json" in str(info.value)


def test_dtype_table_comes_from_the_library():
    assert mx.base.DTYPE_TO_NUMPY[lib.HN_DTYPE_FLOAT32] == np.float32
    assert mx.base.DTYPE_TO_NUMPY[lib.HN_DTYPE_INT64] == np.int64
    with pytest.raises(mx.DtypeError, match="complex64"):
        nd.array(np.ones(2, np.complex64))
