"""Parameters of a block tree, held by the library: Parameter is a view of one of them by its
full name ("hybridsequential0_dense0_weight"), ParameterDict a collection of those (MXNet's
collect_params() and self.params)."""
import re
from collections import OrderedDict

import numpy as np

from .. import initializer as _init
from .._ffi import NULL, ffi, lib
from ..base import (DTYPE_TO_NUMPY, c_str, check, dtype_code, error, new_string, py_str,
                    tree_lock)
from ..context import cpu

__all__ = ["Parameter", "ParameterDict", "Constant"]

def _check_context(ctx):
    from ..ndarray.ndarray import _check_context as check_ndarray_context

    for c in ctx if isinstance(ctx, (list, tuple)) else [ctx]:
        check_ndarray_context(c)


def _snapshot(block):
    """[(full name, shape, dtype, initialized)] of the parameters of block's tree, in order."""
    count = ffi.new("size_t*")
    name, dims, ndim, code, initialized = (ffi.new("char**"), ffi.new("int64_t**"),
                                           ffi.new("int*"), ffi.new("int*"), ffi.new("int*"))
    with tree_lock:
        check(lib.hn_block_param_count(block._h, count))
        result = []
        for i in range(count[0]):
            check(lib.hn_block_param_info(block._h, i, name, dims, ndim, code, initialized))
            result.append((py_str(name[0]), tuple(dims[0][j] for j in range(ndim[0])),
                           DTYPE_TO_NUMPY[code[0]].type, bool(initialized[0])))
    return result


def _wrap_value(handle):
    """A parameter value handle: an NDArray, or a Symbol while the block is traced."""
    from ..ndarray.ndarray import _wrap as wrap_nd
    from ..symbol.symbol import _wrap as wrap_sym

    symbolic = ffi.new("int*")
    check(lib.hn_tensor_is_symbolic(handle, symbolic))
    if not symbolic[0]:
        return wrap_nd(handle)
    out = ffi.new("hn_symbol**")
    rc = lib.hn_symbol_from_tensor(handle, out)
    lib.hn_tensor_free(handle)
    check(rc)
    return wrap_sym(out[0])


class Parameter:
    """One parameter of a block tree (the library owns its value)."""

    def __init__(self, block, name):
        self._block = block
        self.name = name

    def _get_attr(self, key):
        with tree_lock:
            return new_string(lambda h, out: lib.hn_block_param_get_attr(
                h, c_str(self.name), c_str(key), out), self._block._h)

    def _set_attr(self, key, value):
        with tree_lock:
            check(lib.hn_block_param_set_attr(self._block._h, c_str(self.name), c_str(key),
                                              c_str(str(value))))

    @property
    def grad_req(self):
        """'write', 'add' or 'null' (MXNet's grad_req): how backward stores the gradient."""
        return self._get_attr("grad_req")

    @grad_req.setter
    def grad_req(self, req):
        self._set_attr("grad_req", req)

    @property
    def lr_mult(self):
        """The Trainer multiplies this parameter's learning rate by it."""
        return float(self._get_attr("lr_mult"))

    @lr_mult.setter
    def lr_mult(self, mult):
        self._set_attr("lr_mult", float(mult))

    @property
    def wd_mult(self):
        """The Trainer multiplies this parameter's weight decay by it."""
        return float(self._get_attr("wd_mult"))

    @wd_mult.setter
    def wd_mult(self, mult):
        self._set_attr("wd_mult", float(mult))

    def _info(self):
        for entry in _snapshot(self._block):
            if entry[0] == self.name:
                return entry
        raise error("HN_ERR_NOT_FOUND", f"parameter '{self.name}' is no longer part of its block")

    @property
    def shape(self):
        """The shape; 0 marks dimensions only the first forward will know (as in MXNet)."""
        return self._info()[1]

    @property
    def dtype(self):
        return self._info()[2]

    @property
    def initialized(self):
        return self._info()[3]

    def data(self, ctx=None):
        """The value (shares the library's storage: writing it changes the weight)."""
        out = ffi.new("hn_tensor**")
        with tree_lock:
            check(lib.hn_block_param_data(self._block._h, c_str(self.name), out))
        return _wrap_value(out[0])

    def list_data(self):
        return [self.data()]

    def list_ctx(self):
        return [cpu()]

    def set_data(self, data):
        """Replaces the value by a copy of `data` (an NDArray or anything numpy takes)."""
        from ..ndarray.ndarray import NDArray, array

        value = data if isinstance(data, NDArray) else array(np.asarray(data, dtype=self.dtype))
        with tree_lock:
            check(lib.hn_block_param_set_data(self._block._h, c_str(self.name), value._h))

    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        """Draws the value now (or at the first forward when the shape is not known yet) with the
        parameter's own initializer, else `init`, else `default_init` (MXNet's Uniform)."""
        spec = _init.spec(init if init is not None else default_init)
        with tree_lock:
            check(lib.hn_block_param_initialize(self._block._h, c_str(self.name),
                                                c_str(spec) if spec else NULL, int(force_reinit)))

    def reset_ctx(self, ctx):
        """Parameters live on the CPU: any other context is an error."""
        _check_context(ctx)

    def cast(self, dtype):
        """Casts the value and the gradient, keeping their values, to `dtype` (MXNet's
        Parameter.cast); before initialization, the dtype the value will be drawn in."""
        with tree_lock:
            check(lib.hn_block_param_cast(self._block._h, c_str(self.name), dtype_code(dtype)))

    def grad(self, ctx=None):
        """The gradient buffer (shared: backward writes into it); zeros until a backward."""
        out = ffi.new("hn_tensor**")
        with tree_lock:
            check(lib.hn_block_param_grad(self._block._h, c_str(self.name), out))
        from ..ndarray.ndarray import _wrap

        return _wrap(out[0])

    def list_grad(self):
        return [self.grad()]

    def zero_grad(self):
        """Sets the gradient buffer to zeros (MXNet's zero_grad)."""
        with tree_lock:
            check(lib.hn_block_param_zero_grad(self._block._h, c_str(self.name)))

    def __repr__(self):
        name, shape, dtype, _ = self._info()
        return f"Parameter {name} (shape={shape}, dtype={np.dtype(dtype).name})"


class Constant(Parameter):
    """A parameter whose value is fixed (MXNet's params.get_constant)."""


class ParameterDict:
    """Parameters by full name. collect_params() gives the tree's; a block's `params` holds
    the ones it declares with get()."""

    def __init__(self, prefix="", shared=None, _owner=None, _whole_tree=False):
        if shared is not None:
            raise error("HN_ERR_UNSUPPORTED", "sharing parameters between blocks (shared=/params=) "
                        "is not supported")
        self._prefix = prefix
        self._params = OrderedDict()
        self._owner = _owner
        self._whole_tree = _whole_tree

    @property
    def prefix(self):
        return self._prefix

    # ---- mapping -----------------------------------------------------------------------------
    def __getitem__(self, key):
        return self._params[key]

    def __contains__(self, key):
        return key in self._params

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    def items(self):
        return self._params.items()

    def update(self, other):
        for k, v in other.items():
            self._params[k] = v

    def __repr__(self):
        body = "\n".join(f"  {p!r}" for p in self._params.values())
        return f"{self._prefix} (\n{body}\n)"

    # ---- declaring (a Python block's own parameters) -----------------------------------------
    def get(self, name, shape=None, dtype=np.float32, init=None, allow_deferred_init=False,
            differentiable=True, grad_req="write", lr_mult=1.0, wd_mult=1.0, **kwargs):
        """The parameter `name` of this block, declared on first call: shape with 0 for
        dimensions the first forward completes, an initializer (else the one initialize gets)."""
        full = self._prefix + name
        if full in self._params:
            return self._params[full]
        if self._owner is None:
            raise error("HN_ERR_INVALID_ARGUMENT", "parameters are declared through a block's "
                        "params (self.params.get(...)) inside its __init__")
        if shape is None:
            raise error("HN_ERR_INVALID_ARGUMENT", f"parameter '{name}' needs a shape (0 for "
                        "dimensions the first forward completes)")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        spec = _init.spec(init)
        with tree_lock:
            check(lib.hn_block_add_parameter(
                self._owner._h, c_str(name), dtype_code(dtype), list(shape) or [0], len(shape),
                c_str(spec) if spec else NULL, int(differentiable)))
        param = self._params[full] = Parameter(self._owner, full)
        for key, value, default in (("grad_req", grad_req if differentiable else "null", "write"),
                                    ("lr_mult", lr_mult, 1.0), ("wd_mult", wd_mult, 1.0)):
            if value != default:
                param._set_attr(key, value)
        return param

    def get_constant(self, name, value=None):
        """A parameter fixed to `value` (set when the block is initialized)."""
        full = self._prefix + name
        if full in self._params:
            return self._params[full]
        value = np.asarray(value, dtype=np.float32)
        param = self.get(name, shape=value.shape, init="zeros", differentiable=False,
                         grad_req="null")
        constant = Constant(param._block, full)
        self._params[full] = constant
        self._owner._constants[full] = value
        return constant

    # ---- acting on every parameter -----------------------------------------------------------
    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initializes every parameter (MXNet's Uniform() unless `init` or their own say
        otherwise); draws from the generator hybridnet.random.seed sets, without reseeding."""
        _check_context(ctx)
        spec = _init.spec(init)
        if self._whole_tree:
            with tree_lock:
                check(lib.hn_block_param_initialize(self._owner._h, NULL, c_str(spec) if spec else NULL,
                                                    int(force_reinit)))
        else:
            for param in self._params.values():
                param.initialize(init, default_init=None, force_reinit=force_reinit)
        owners = {id(p._block): p._block for p in self._params.values()}
        for owner in owners.values():
            owner._set_constants(self._params)

    def setattr(self, name, value):
        for param in self._params.values():
            setattr(param, name, value)

    def reset_ctx(self, ctx):
        """Parameters live on the CPU: any other context is an error."""
        _check_context(ctx)

    def zero_grad(self):
        """Sets every gradient buffer to zeros."""
        for param in self._params.values():
            param.zero_grad()

    def save(self, filename, strip_prefix=""):
        from ..ndarray import save

        arrays = {}
        for name, param in self._params.items():
            if not name.startswith(strip_prefix):
                raise error("HN_ERR_INVALID_ARGUMENT", f"parameter '{name}' does not start with "
                            f"strip_prefix '{strip_prefix}'")
            arrays[name[len(strip_prefix):]] = param.data()
        save(filename, arrays)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False, restore_prefix=""):
        from ..ndarray import load

        loaded = {restore_prefix + re.sub(r"^(arg|aux):", "", k): v for k, v in load(filename).items()}
        for name, param in self._params.items():
            if name not in loaded:
                if allow_missing:
                    continue
                raise error("HN_ERR_NOT_FOUND", f"parameter '{name}' is missing in '{filename}'")
            param.set_data(loaded[name])
        if not ignore_extra:
            extra = [k for k in loaded if k not in self._params]
            if extra:
                raise error("HN_ERR_NOT_FOUND", f"'{filename}' has '{extra[0]}', which is not a "
                            "parameter here (pass ignore_extra=True)")
