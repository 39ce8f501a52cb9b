"""Random arrays from the library's global generator (seeded by hybridnet.random.seed): the
same draws as the C++ NDArray::RandomNormal/RandomUniform and the initializers make."""
import numbers

import numpy as np

from .._ffi import ffi, lib
from ..base import check, dtype_code, error
from .ndarray import NDArray, _check_context, _wrap

__all__ = ["normal", "uniform", "randn"]


def _shape(shape):
    if shape is None:
        return (1,)
    return (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)


def _draw(function, a, b, shape, dtype, ctx, out):
    _check_context(ctx)
    if isinstance(a, NDArray) or isinstance(b, NDArray):
        raise error("HN_ERR_UNSUPPORTED", "drawing with per-element NDArray parameters "
                    "(MXNet's sample_* ops) is not supported; pass numbers")
    shape = _shape(shape) if out is None else out.shape
    dtype = dtype if dtype is not None else (out.dtype if out is not None else np.float32)
    result = ffi.new("hn_tensor**")
    check(function(dtype_code(dtype), shape, len(shape), float(a), float(b), result))
    value = _wrap(result[0])
    if out is not None:
        out[:] = value
        return out
    return value


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples of N(loc, scale^2), shape `shape` ((1,) when not given), float32 by default."""
    return _draw(lib.hn_tensor_random_normal, loc, scale, shape, dtype, ctx, out)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples of U[low, high), shape `shape` ((1,) when not given), float32 by default."""
    return _draw(lib.hn_tensor_random_uniform, low, high, shape, dtype, ctx, out)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, **kwargs):
    return normal(loc, scale, shape or None, dtype, ctx)
