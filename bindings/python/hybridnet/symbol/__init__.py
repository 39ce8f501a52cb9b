"""Symbolic programs (mx.sym): Symbol, var, Group, load and one function per operator of the
library's registry, building graph nodes through hn_symbol_create."""
import sys

from .. import _op
from .._ffi import ffi, lib
from ..base import attr_arrays, c_str, error, new_string
from ..ndarray.ndarray import NDArray
from . import random
from .symbol import OPS, Group, Symbol, Variable, create, load, load_json, mixing_error, var


def auto_name(hint):
    """The next automatic node name for the hint in the current scope (hn_symbol_auto_name)."""
    return new_string(lib.hn_symbol_auto_name, hint)


def _make_function(info, called_name):
    name_c = ffi.new("char[]", called_name.encode())
    var_key = info.key_var_num_args
    # MXNet names a node after the function: sym.contrib.arange_like makes "arange_like0"
    _, short = _op.location(called_name)
    hint = c_str(short.lower()) if short != called_name else None

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
        if not name and hint:
            name = auto_name(hint)
        return create(name_c, inputs, attr_arrays(attrs), name)

    op.__name__ = op.__qualname__ = called_name
    op.__signature__, op.__doc__ = _op.signature_and_doc(info, "Symbol")
    return op


OPS.update(_op.install(sys.modules[__name__], _make_function))
