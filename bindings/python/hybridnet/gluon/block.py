"""Block and HybridBlock in MXNet's shape, over the library's blocks.

Every Python block is a block of the library (hn_block): layers and containers are the
library's own kinds (hn_block_create), and a class written in Python is a custom block whose
forward the library calls back (hn_block_create_custom). So naming, parameters, deferred
initialization, hybridize (one trace, then the cached graph, without Python), export and
save/load are the library's, exactly as from C++, Java or R.

    class Residual(nn.HybridBlock):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.body = nn.Dense(units, flatten=False)

        def hybrid_forward(self, F, x):     # F: hybridnet.ndarray, or hybridnet.symbol when traced
            return F.relu(x + self.body(x))
"""
import re
import threading
import weakref
from collections import OrderedDict

from .. import _native
from .. import ndarray as _nd
from .. import symbol as _sym
from .._ffi import NULL, ffi, lib
from ..base import (HybridnetError, attr_arrays, c_str, check, dtype_code, error, new_string,
                    py_str, raise_error, set_pending, string_array, tree_lock)
from ..ndarray.ndarray import NDArray
from ..ndarray.ndarray import _wrap as _wrap_nd
from ..symbol.symbol import Symbol
from ..symbol.symbol import _wrap as _wrap_sym
from .parameter import Parameter, ParameterDict, _check_context, _snapshot, _wrap_value

__all__ = ["Block", "HybridBlock", "SymbolBlock"]

_MAX_OUTPUTS = _native.MAX_BLOCK_OUTPUTS
_forward = lib.hn_block_forward
_new = object.__new__
_native.bind(tree_lock=tree_lock)

# ---------------------------------------------------------------------------------------------
# Name scopes: MXNet 1.x names a block when it is constructed, from the block whose
# name_scope() is open (or a process-wide counter outside any scope).

_scopes = threading.local()


def _current_scope():
    stack = getattr(_scopes, "stack", None)
    return stack[-1] if stack else None


class _NameScope:
    def __init__(self, block):
        self._block = block

    def __enter__(self):
        if not hasattr(_scopes, "stack"):
            _scopes.stack = []
        _scopes.stack.append(self._block)
        return self

    def __exit__(self, *exc):
        _scopes.stack.pop()
        return False


# ---------------------------------------------------------------------------------------------
# The forward the library calls for blocks written in Python.


def _to_symbol(handle):
    out = ffi.new("hn_symbol**")
    rc = lib.hn_symbol_from_tensor(handle, out)
    lib.hn_tensor_free(handle)
    check(rc)
    return _wrap_sym(out[0])


@ffi.callback("int(void*, hn_tensor* const*, size_t, size_t, hn_tensor**, size_t*)")
def _python_forward(user_data, inputs, num_inputs, max_outputs, outputs, num_outputs):
    owned = [inputs[i] for i in range(num_inputs)]  # ours to free
    made = []
    try:
        block = ffi.from_handle(user_data)()
        if block is None:
            raise error("HN_ERR_INVALID_ARGUMENT", "the Python object of this block is gone")
        symbolic = ffi.new("int*")
        if owned:
            check(lib.hn_tensor_is_symbolic(owned[0], symbolic))
        args = []
        while owned:
            handle = owned.pop(0)
            args.append(_to_symbol(handle) if symbolic[0] else _wrap_nd(handle))
        result = block._run_python_forward(bool(symbolic[0]), args)
        results = result if isinstance(result, (tuple, list)) else (result,)
        if not 1 <= len(results) <= max_outputs:
            raise error("HN_ERR_INVALID_ARGUMENT", f"{type(block).__name__}: a forward returns 1 "
                        f"to {max_outputs} outputs, this one returned {len(results)}")
        out = ffi.new("hn_tensor**")
        for r in results:
            if isinstance(r, NDArray):
                check(lib.hn_tensor_share(r._h, out))
            elif isinstance(r, Symbol):
                check(lib.hn_tensor_from_symbol(r._h, out))
            else:
                raise error("HN_ERR_INVALID_ARGUMENT", f"{type(block).__name__}: the forward "
                            f"returned a {type(r).__name__}; return NDArrays (F's results)")
            made.append(out[0])
        for i, handle in enumerate(made):
            outputs[i] = handle
        num_outputs[0] = len(made)
        return 0
    except BaseException as e:  # noqa: BLE001 - raised again by the binding call that called C
        for handle in owned + made:
            lib.hn_tensor_free(handle)
        set_pending(e)
        return e.code if isinstance(e, HybridnetError) else lib.HN_ERR_INVALID_ARGUMENT


def _check_hybridize_kwargs(kwargs):
    # MXNet's graph-pass and bulking options: hints this library decides on by itself.
    accepted = {"backend", "backend_opts", "clear", "partition_if_dynamic", "inline_limit",
                "forward_bulk_size", "backward_bulk_size"}
    unknown = set(kwargs) - accepted
    if unknown:
        raise TypeError(f"hybridize() got unexpected arguments: {', '.join(sorted(unknown))}")


class Block(_native.CallableBlock):
    """A layer or a model: MXNet's gluon.Block. Subclass it and write forward(self, x, ...).

    Calling it: the C base type runs a call with up to _fast_inputs NDArrays by position as one
    hn_block_forward, under tree_lock, one output coming back as an NDArray; every other call
    comes to _call_general."""

    _hybrid = False
    _fast_inputs = 4

    def __init__(self, prefix=None, params=None, _kind=None, _attrs=None, _handle=None):
        if params is not None:
            raise error("HN_ERR_UNSUPPORTED", "sharing parameters between blocks (params=) is not "
                        "supported")
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        object.__setattr__(self, "_constants", {})
        object.__setattr__(self, "_own_params", None)
        out = ffi.new("hn_block**")
        if _handle is not None:
            out[0] = _handle
        elif _kind is not None:
            self._check_not_overridden(_kind)
            attrs = {k: v for k, v in (_attrs or {}).items() if v is not None}
            if prefix is not None:
                attrs["prefix"] = prefix
            arrays = attr_arrays(attrs)
            check(lib.hn_block_create(c_str(_kind), arrays.keys, arrays.values, arrays.count, out))
        else:
            ref = ffi.new_handle(weakref.ref(self))
            object.__setattr__(self, "_ref", ref)
            check(lib.hn_block_create_custom(c_str(type(self).__name__), int(self._hybrid),
                                             _python_forward, ref,
                                             c_str(prefix) if prefix is not None else NULL, out))
        object.__setattr__(self, "_h", ffi.gc(out[0], lib.hn_block_free))
        # Per-block call buffers (a block tree runs on one thread at a time: tree_lock).
        object.__setattr__(self, "_out", ffi.new("hn_tensor*[]", _MAX_OUTPUTS))
        object.__setattr__(self, "_nout", ffi.new("size_t*"))
        if _handle is None:  # blocks the library built (imports, the model zoo) name themselves
            scope = _current_scope()
            check(lib.hn_block_name_in_scope(self._h, scope._h if scope is not None else NULL))

    def _check_not_overridden(self, kind):
        cls = type(self)
        if cls.forward is not Block.forward or (issubclass(cls, HybridBlock) and
                                                cls.hybrid_forward is not HybridBlock.hybrid_forward):
            raise error("HN_ERR_UNSUPPORTED", f"{cls.__name__} overrides forward of the library's "
                        f"{kind} layer, which runs in the library; subclass HybridBlock and use "
                        f"{kind} as a child instead")

    # ---- names -------------------------------------------------------------------------------
    @property
    def prefix(self):
        out = ffi.new("char**")
        check(lib.hn_block_prefix(self._h, out))
        return py_str(out[0])

    @property
    def name(self):
        out = ffi.new("char**")
        check(lib.hn_block_name(self._h, out))
        return py_str(out[0])

    def name_scope(self):
        """Blocks constructed inside `with self.name_scope():` get this block's prefix."""
        return _NameScope(self)

    def __repr__(self):
        return new_string(lib.hn_block_to_string, self._h)

    # ---- children ----------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if isinstance(value, Block) and "_h" in self.__dict__:
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def register_child(self, block, name=None):
        """Makes `block` a child named `name` (its structural name in save_parameters)."""
        name = name if name is not None else str(len(self._children))
        with tree_lock:
            check(lib.hn_block_register_child(self._h, c_str(name), block._h))
        self._children[name] = block

    def __getattr__(self, name):
        # Layers' parameters as attributes (dense.weight): prefix + name in the tree.
        if "_h" not in self.__dict__:
            raise AttributeError(f"'{type(self).__name__}' has no attribute '{name}': its __init__ "
                                 "has not called super().__init__() (yet)")
        if name.startswith("_"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        full = self.prefix + name
        if any(entry[0] == full for entry in _snapshot(self)):
            return Parameter(self, full)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def apply(self, fn):
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    # ---- parameters --------------------------------------------------------------------------
    @property
    def params(self):
        """This block's own parameters (declare them with self.params.get(...))."""
        if self._own_params is None:
            object.__setattr__(self, "_own_params", ParameterDict(self.prefix, _owner=self))
        return self._own_params

    def collect_params(self, select=None):
        """The parameters of this block and its children (a regex `select` keeps the names it
        matches at their start, as in MXNet)."""
        pattern = re.compile(select) if select else None
        result = ParameterDict(self.prefix, _owner=self, _whole_tree=pattern is None)
        for name, *_ in _snapshot(self):
            if pattern is None or pattern.match(name):
                result._params[name] = Parameter(self, name)
        return result

    def _set_constants(self, params):
        for child in self._children.values():
            child._set_constants(params)
        for name, value in self._constants.items():
            if name in params:
                params[name].set_data(value)

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initializes every parameter of the tree (MXNet's Uniform() unless `init`, or a
        layer's own initializer, says otherwise); drawn from hybridnet.random.seed's sequence."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def save_parameters(self, filename, deduplicate=False):
        """Writes the parameters with structural names ("0.weight"), as MXNet does."""
        with tree_lock:
            check(lib.hn_block_save_parameters(self._h, c_str(filename)))

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Loads a save_parameters file, or an export's .params (`ctx`: the CPU only)."""
        _check_context(ctx)
        with tree_lock:
            check(lib.hn_block_load_parameters(self._h, c_str(filename), int(allow_missing),
                                               int(ignore_extra)))

    save_params = save_parameters
    load_params = load_parameters

    def cast(self, dtype):
        """Casts every parameter of the tree to `dtype` (MXNet's Block.cast); a hybridized block
        traces again at its next call."""
        with tree_lock:
            check(lib.hn_block_param_cast(self._h, NULL, dtype_code(dtype)))

    # ---- running -----------------------------------------------------------------------------
    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        """Hybridizes the HybridBlocks of this tree: the next call traces the forward once into a
        graph the library optimizes and caches; later calls run it without Python."""
        _check_hybridize_kwargs(kwargs)
        with tree_lock:
            check(lib.hn_block_hybridize(self._h, int(active), int(static_alloc),
                                         int(static_shape)))

    def _outputs(self):
        """The outputs of the last call, as a tuple of new NDArrays (under tree_lock)."""
        return tuple(_wrap_nd(self._out[i]) for i in range(self._nout[0]))

    def _call_general(self, args, kwargs):
        """A call the C fast path of __call__ does not take: Symbols, numpy arrays, more than
        _fast_inputs inputs (losses also bind keyword and None arguments here)."""
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}' (a block takes its inputs by position)")
        if any(isinstance(a, Symbol) for a in args):
            return self._call_symbols(args)
        inputs = [a if isinstance(a, NDArray) else _nd.array(a) for a in args]
        with tree_lock:
            handles = ffi.new("hn_tensor*[]", [a._h for a in inputs])
            rc = _forward(self._h, handles, len(inputs), _MAX_OUTPUTS, self._out, self._nout)
            if rc != 0:
                raise_error(rc)
            outputs = self._outputs()
        return outputs[0] if len(outputs) == 1 else outputs

    def _call_symbols(self, args):
        if not all(isinstance(a, Symbol) for a in args):
            raise error("HN_ERR_INVALID_ARGUMENT", f"{type(self).__name__}: call a block with "
                        "NDArrays or with Symbols, not both")
        handles = ffi.new("hn_symbol*[]", [a._h for a in args])
        outs = ffi.new("hn_symbol*[]", _MAX_OUTPUTS)
        count = ffi.new("size_t*")
        with tree_lock:
            check(lib.hn_block_forward_symbols(self._h, handles, len(args), _MAX_OUTPUTS, outs,
                                               count))
        outputs = [_wrap_sym(outs[i]) for i in range(count[0])]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def summary(self, *inputs):
        """Prints MXNet 1.9.1's summary of this block (byte for byte): runs it once on `inputs`
        and lists every block called but the sequential containers, with its output shapes and
        the size of its own parameters, then the parameter totals. The block must be initialized
        and not hybridized."""
        arrays = [a if isinstance(a, NDArray) else _nd.array(a) for a in inputs]
        out = ffi.new("char**")
        with tree_lock:
            handles = ffi.new("hn_tensor*[]", [a._h for a in arrays] or [NULL])
            check(lib.hn_block_summary(self._h, handles, len(arrays), out))
        try:
            print(ffi.string(out[0]).decode("utf-8"), end="")
        finally:
            lib.hn_string_free(out[0])

    def forward(self, *args):
        """Override: the computation of a Block written in Python."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def _run_python_forward(self, symbolic, args):
        return self.forward(*args)


class HybridBlock(Block):
    """A block hybridize() can trace (MXNet's gluon.HybridBlock). Subclass it and write
    hybrid_forward(self, F, x, ...): F is hybridnet.ndarray when the block runs eagerly and
    hybridnet.symbol while it is traced, and its parameters (attributes assigned from
    self.params.get) come as keyword arguments."""

    _hybrid = True

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define hybrid_forward")

    def _run_python_forward(self, symbolic, args):
        if type(self).forward is not Block.forward:
            return self.forward(*args)
        params = {}
        for attr, param in self._reg_params.items():
            out = ffi.new("hn_tensor**")
            check(lib.hn_block_param_data(self._h, c_str(param.name), out))
            params[attr] = _wrap_value(out[0])
        return self.hybrid_forward(_sym if symbolic else _nd, *args, **params)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Writes PATH-symbol.json and PATH-EPOCH.params (MXNet 1.x format); needs a hybridized
        block that ran a forward."""
        with tree_lock:
            check(lib.hn_block_export(self._h, c_str(path), int(epoch)))
        return f"{path}-symbol.json", f"{path}-{epoch:04d}.params"

    def infer_shape(self, *args):
        """Completes deferred parameter shapes from example inputs (runs one forward)."""
        self(*args)


class SymbolBlock(HybridBlock):
    """A block running a symbol (MXNet's SymbolBlock): SymbolBlock(outputs, inputs[, params]),
    or SymbolBlock.imports(symbol_file, input_names, param_file) for an export."""

    def __init__(self, outputs, inputs, params=None, _handle=None):
        if _handle is None:
            if isinstance(outputs, (list, tuple)):
                outputs = _sym.Group(outputs)
            inputs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
            names = [i.name if isinstance(i, Symbol) else i for i in inputs]
            name_array, keep = string_array(names)
            values = self._param_list(params)
            out = ffi.new("hn_block**")
            check(lib.hn_block_from_symbol(outputs._h, name_array, len(names),
                                           values if values is not None else NULL, out))
            _handle = out[0]
        super().__init__(_handle=_handle)

    @staticmethod
    def _param_list(params):
        if params is None:
            return None
        items = params.items() if hasattr(params, "items") else params
        lst = ffi.new("hn_tensor_list**")
        check(lib.hn_tensor_list_create(lst))
        handle = ffi.gc(lst[0], lib.hn_tensor_list_free)
        for name, value in items:
            if isinstance(value, Parameter):
                value = value.data()
            if not isinstance(value, NDArray):
                value = _nd.array(value)
            check(lib.hn_tensor_list_append(handle, c_str(name), value._h))
        return handle

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """Loads PREFIX-symbol.json (+ its .params) as a block, as MXNet's SymbolBlock.imports
        (`ctx`: the CPU only)."""
        _check_context(ctx)
        names = [input_names] if isinstance(input_names, str) else list(input_names)
        name_array, keep = string_array(names)
        load_now = param_file if param_file and not (allow_missing or ignore_extra) else None
        out = ffi.new("hn_block**")
        check(lib.hn_block_import(c_str(symbol_file), name_array, len(names),
                                  c_str(load_now) if load_now else NULL, out))
        block = SymbolBlock(None, None, _handle=out[0])
        if param_file and load_now is None:
            block.load_parameters(param_file, allow_missing=allow_missing, ignore_extra=ignore_extra)
        return block
