"""Symbolic programs (mx.sym): Symbol, var, Group, load and one function per operator of the
library's registry, building graph nodes through hn_symbol_create."""
import sys

from .. import _op
from .._ffi import ffi
from ..base import attr_arrays, error
from ..ndarray.ndarray import NDArray
from .symbol import OPS, Group, Symbol, Variable, create, load, load_json, mixing_error, var


def _make_function(info, called_name):
    name_c = ffi.new("char[]", called_name.encode())
    var_key = info.key_var_num_args

    def op(*args, name=None, attr=None, out=None, **kwargs):
        if any(isinstance(a, NDArray) for a in args) or \
                any(isinstance(v, NDArray) for v in kwargs.values()):
            raise mixing_error(called_name)
        inputs, keyword, attrs = _op.split_arguments(info, called_name, args, kwargs, Symbol)
        if keyword or None in inputs:
            inputs = _op.order_inputs(info, called_name, inputs, keyword, attrs)
            if None in inputs:
                missing = info.input_names(attrs)[inputs.index(None)]
                if not name:
                    raise error("HN_ERR_INVALID_ARGUMENT", f"{called_name}: input '{missing}' is "
                                "missing; pass it, or a name= so it becomes a variable")
                inputs = [s if s is not None else var(f"{name}_{n}")
                          for s, n in zip(inputs, info.input_names(attrs))]
        if var_key and var_key not in attrs:
            attrs[var_key] = len(inputs)
        return create(name_c, inputs, attr_arrays(attrs), name)

    op.__name__ = op.__qualname__ = called_name
    op.__signature__, op.__doc__ = _op.signature_and_doc(info, "Symbol")
    return op


OPS.update(_op.install(sys.modules[__name__], _make_function))
