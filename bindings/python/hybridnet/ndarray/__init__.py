"""Imperative arrays (mx.nd): NDArray, creation functions, random, file I/O and one function per
operator of the library's registry, run immediately through hn_op_invoke."""
import sys

from .. import _op
from .._ffi import ffi
from ..base import attr_arrays, error
from . import random
from .ndarray import (OPS, NDArray, arange, array, empty, from_dlpack, from_numpy, full, invoke,
                      load, ones, save, to_dlpack_for_read, to_dlpack_for_write, waitall, zeros)


def _make_function(info, called_name):
    name_c = ffi.new("char[]", called_name.encode())
    var_key = info.key_var_num_args

    def op(*args, out=None, name=None, **kwargs):
        inputs, keyword, attrs = _op.split_arguments(info, called_name, args, kwargs, NDArray)
        if keyword or None in inputs:
            inputs = _op.order_inputs(info, called_name, inputs, keyword, attrs)
            if None in inputs:
                missing = info.input_names(attrs)[inputs.index(None)]
                raise error("HN_ERR_INVALID_ARGUMENT", f"{called_name}: input '{missing}' is missing")
        if var_key and var_key not in attrs:
            attrs[var_key] = len(inputs)
        results = invoke(name_c, inputs, attr_arrays(attrs))
        if out is not None:
            if len(results) != 1:
                raise error("HN_ERR_INVALID_ARGUMENT", f"{called_name}: out= takes one output, "
                            f"the op made {len(results)}")
            out[:] = results[0]
            return out
        return results[0] if len(results) == 1 else results

    op.__name__ = op.__qualname__ = called_name
    op.__signature__, op.__doc__ = _op.signature_and_doc(info, "NDArray")
    return op


OPS.update(_op.install(sys.modules[__name__], _make_function))
