"""NDArray: an n-dimensional array held by the library (an hn_tensor), with MXNet's API.

Values are shared, not copied, with NumPy through __array_interface__ / __array__ and DLPack
(__dlpack__, from_dlpack); nd.array and asnumpy copy, as in MXNet.
"""
import functools
import itertools
import numbers
import threading

import numpy as np

from .. import _dlpack, _native, _operators, autograd
from .._ffi import NULL, ffi, lib
from ..base import (DTYPE_TO_NUMPY, EMPTY_ATTRS, Handle, check, dtype_code, error, new_string,
                    raise_error)
from ..context import Context, cpu

__all__ = ["NDArray", "array", "zeros", "ones", "full", "empty", "arange", "from_numpy",
           "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write", "waitall", "load", "save",
           "invoke"]

_MAX_OUTPUTS = 256
_buffers = threading.local()
_new = object.__new__

# The op functions of hybridnet.ndarray by name (filled when the package generates them);
# operators and fluent methods call through it.
OPS = {}


def _outputs():
    outs = getattr(_buffers, "outs", None)
    if outs is None:
        outs = _buffers.outs = (ffi.new("hn_tensor*[]", _MAX_OUTPUTS), ffi.new("size_t*"))
    return outs


def invoke(op_name_c, inputs, attrs=EMPTY_ATTRS):
    """Runs an op (its C name) on NDArrays with AttrArrays; a list of new NDArrays."""
    n = len(inputs)
    handles = ffi.new("hn_tensor*[]", [x._h for x in inputs]) if n else NULL
    outs, count = _outputs()
    rc = lib.hn_op_invoke(op_name_c, handles, n, attrs.keys, attrs.values, attrs.count,
                          _MAX_OUTPUTS, outs, count)
    if rc != 0:
        raise_error(rc)
    return [_wrap(outs[i]) for i in range(count[0])]


def _wrap(handle):
    a = _new(NDArray)
    a._h = handle
    return a


def _op(name, *args, **kwargs):
    fn = OPS.get(name)
    if fn is None:
        raise error("HN_ERR_NOT_FOUND", f"this build of the library has no operator '{name}'")
    return fn(*args, **kwargs)


def _apply(lhs, rhs, array_op, scalar_op):
    """One arithmetic operator as MXNet's NDArray does it: the broadcast op with another array,
    the *_scalar op with a number."""
    if isinstance(rhs, numbers.Number):
        return _op(scalar_op, lhs, scalar=float(rhs))
    if array_op is None:
        return NotImplemented
    if isinstance(rhs, NDArray):
        return _op(array_op, lhs, rhs)
    if isinstance(rhs, np.ndarray):
        return _op(array_op, lhs, array(rhs, dtype=rhs.dtype))
    return NotImplemented


class NDArray(Handle):
    """An n-dimensional array on the CPU (MXNet's mx.nd.NDArray): owns an hn_tensor."""

    __slots__ = ()
    __array_priority__ = 1000.0  # numpy defers arithmetic with NDArrays to us
    _free = lib.hn_tensor_free

    # ---- facts ---------------------------------------------------------------------------------
    @property
    def shape(self):
        dims, ndim = ffi.new("int64_t**"), ffi.new("int*")
        check(lib.hn_tensor_shape(self._h, dims, ndim))
        d = dims[0]
        return tuple(d[i] for i in range(ndim[0]))

    @property
    def dtype(self):
        code = ffi.new("int*")
        check(lib.hn_tensor_dtype(self._h, code))
        dtype = DTYPE_TO_NUMPY.get(code[0])
        if dtype is None:
            raise error("HN_ERR_DTYPE", f"dtype {code[0]} has no numpy equivalent")
        return dtype.type

    @property
    def size(self):
        n = ffi.new("int64_t*")
        check(lib.hn_tensor_size(self._h, n))
        return n[0]

    @property
    def ndim(self):
        n = ffi.new("int*")
        check(lib.hn_tensor_ndim(self._h, n))
        return n[0]

    @property
    def context(self):
        return cpu(0)

    ctx = context

    @property
    def stype(self):
        return "default"

    @property
    def nbytes(self):
        n = ffi.new("size_t*")
        check(lib.hn_tensor_nbytes(self._h, n))
        return n[0]

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d NDArray")
        return shape[0]

    def __repr__(self):
        return new_string(lib.hn_tensor_to_string, self._h)

    __str__ = __repr__

    # ---- NumPy: copies and zero-copy views ---------------------------------------------------
    def _data_pointer(self):
        p = ffi.new("void**")
        check(lib.hn_tensor_data(self._h, p))
        return p[0]

    @property
    def __array_interface__(self):
        """Zero-copy: numpy.asarray(x) views this array's storage (and keeps x alive)."""
        dtype = np.dtype(self.dtype)
        shape = self.shape
        address = int(ffi.cast("uintptr_t", self._data_pointer())) if self.size else 0
        if address == 0:  # numpy wants a valid pointer even for no elements
            address = _EMPTY.__array_interface__["data"][0]
        return {"version": 3, "shape": shape, "typestr": dtype.str, "data": (address, False)}

    def __array__(self, dtype=None, copy=None):
        view = np.asarray(_View(self))
        if dtype is not None and np.dtype(dtype) != view.dtype:
            return view.astype(dtype)
        return view.copy() if copy else view

    def __buffer__(self, flags):  # Python >= 3.12 (PEP 688): memoryview(x) shares the storage
        return memoryview(np.asarray(_View(self)))

    def asnumpy(self):
        """A copy of the values as a numpy array."""
        out = np.empty(self.shape, dtype=self.dtype)
        if out.size:
            check(lib.hn_tensor_copy_to(self._h, ffi.from_buffer(out), out.nbytes))
        return out

    def asscalar(self):
        if self.size != 1:
            raise error("HN_ERR_INVALID_ARGUMENT",
                        f"asscalar() needs an array of one element, this one has shape {self.shape}")
        return self.asnumpy().reshape(()).item()

    def __float__(self):
        return float(self.asscalar())

    def __int__(self):
        return int(self.asscalar())

    def __bool__(self):
        size = self.size
        if size == 0:
            return False
        if size == 1:
            return bool(self.asscalar())
        raise ValueError("The truth value of an NDArray with more than one element is ambiguous.")

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # ---- DLPack ------------------------------------------------------------------------------
    def __dlpack__(self, stream=None):
        return _dlpack.export(self._h)

    def __dlpack_device__(self):
        return (_dlpack.CPU, 0)

    def to_dlpack_for_read(self):
        return _dlpack.export(self._h)

    def to_dlpack_for_write(self):
        return _dlpack.export(self._h)

    # ---- copies, views, conversions ----------------------------------------------------------
    def copy(self):
        return _op("_copy", self)

    def copyto(self, other):
        if isinstance(other, Context):
            return self.copy()
        if not isinstance(other, NDArray):
            raise error("HN_ERR_INVALID_ARGUMENT", f"copyto: expected an NDArray or a Context, got "
                        f"{type(other).__name__}")
        if other.shape != self.shape:
            raise error("HN_ERR_SHAPE", f"copyto: shape {self.shape} into {other.shape}")
        other[:] = self
        return other

    def as_in_context(self, context):
        return self

    def as_in_ctx(self, ctx):
        return self

    def astype(self, dtype, copy=True):
        if not copy and np.dtype(dtype) == np.dtype(self.dtype):
            return self
        return _op("Cast", self, dtype=np.dtype(dtype).name)

    def reshape(self, *shape, **kwargs):
        """A view with another shape (MXNet's 0 keeps a dimension, -1 infers one); the other
        special values of MXNet's Reshape give a copy through the op."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = kwargs.pop("shape", shape)
        if kwargs.get("reverse") or any(d < -1 for d in shape):
            return _op("Reshape", self, shape=tuple(shape), **kwargs)
        old = self.shape
        dims = [old[i] if d == 0 else d for i, d in enumerate(shape)]
        if dims.count(-1) > 1:
            raise error("HN_ERR_SHAPE", f"reshape {shape}: more than one -1")
        if -1 in dims:
            known = int(np.prod([d for d in dims if d != -1]))
            if known == 0 or self.size % known:
                raise error("HN_ERR_SHAPE", f"cannot reshape {old} to {tuple(shape)}")
            dims[dims.index(-1)] = self.size // known
        out = ffi.new("hn_tensor**")
        check(lib.hn_tensor_reshape(self._h, dims, len(dims), out))
        return _wrap(out[0])

    def flatten(self):
        return _op("Flatten", self)

    @property
    def T(self):
        return _op("transpose", self)

    def wait_to_read(self):
        """Values are ready when an op returns (the library runs synchronously)."""

    def wait_to_write(self):
        """Values are ready when an op returns (the library runs synchronously)."""

    # ---- autograd (hybridnet.autograd) ----------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        """Attaches a zero-filled gradient array (read it as .grad) that backward writes
        ('write'), adds to ('add') or leaves alone ('null')."""
        if stype not in (None, "default"):
            raise error("HN_ERR_UNSUPPORTED", f"attach_grad: stype={stype!r} (only dense "
                        "gradients are supported)")
        autograd.mark_variables([self], [zeros(self.shape, dtype=self.dtype)], grad_req)

    @property
    def grad(self):
        """The gradient array attached by attach_grad, or None."""
        out = ffi.new("hn_tensor**")
        check(lib.hn_tensor_grad(self._h, out))
        return None if out[0] == NULL else _wrap(out[0])

    # backward(out_grad=None, retain_graph=False, train_mode=True): from C, loss.backward() of a
    # training step being one call.
    backward = _native.array_backward

    def detach(self):
        """The same values (shared storage) without autograd history: gradients stop here."""
        out = ffi.new("hn_tensor**")
        check(lib.hn_tensor_detach(self._h, out))
        return _wrap(out[0])

    # ---- indexing: through a numpy view of the storage ---------------------------------------
    def __getitem__(self, key):
        """x[i], x[a:b], ...: a view sharing the storage where the selection is contiguous (as
        MXNet's basic slicing), else a copy. Inside autograd.record() basic indexing runs the
        slice op instead, so it is recorded (a copy, as gradients need)."""
        if autograd.is_recording():
            return self._recorded_index(key)
        if isinstance(key, NDArray):
            key = key.asnumpy()
        value = np.asarray(_View(self))[key]
        if isinstance(value, np.ndarray) and value.size and value.flags.c_contiguous and \
                value.base is not None:
            return from_numpy(value)
        return array(value, dtype=value.dtype)

    def _recorded_index(self, key):
        """Integers and slices per axis as slice (+ Reshape dropping the integer axes)."""
        keys = key if isinstance(key, tuple) else (key,)
        shape = self.shape
        if len(keys) > len(shape) or not all(
                isinstance(k, slice) or (isinstance(k, numbers.Integral) and
                                         not isinstance(k, bool)) for k in keys):
            raise error("HN_ERR_UNSUPPORTED", f"indexing with {key!r} inside autograd.record() "
                        "is not recorded: integers and slices are (use nd.take or nd.pick for "
                        "the rest)")
        begin, end, step, dropped = [], [], [], set()
        for axis, k in enumerate(keys):
            if isinstance(k, slice):
                begin.append(k.start)
                end.append(k.stop)
                step.append(k.step)
                continue
            n = shape[axis]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            i = int(k) + n if k < 0 else int(k)
            begin.append(i)
            end.append(i + 1)
            step.append(None)
            dropped.add(axis)
        out = _op("slice", self, begin=tuple(begin), end=tuple(end), step=tuple(step))
        if dropped:
            kept = [d for axis, d in enumerate(out.shape) if axis not in dropped]
            out = _op("Reshape", out, shape=tuple(kept) or (1,))
        return out

    def __setitem__(self, key, value):
        view = np.asarray(_View(self))
        if isinstance(value, NDArray):
            value = np.asarray(_View(value))
        view[key] = value

    def __neg__(self):
        return _op("_mul_scalar", self, scalar=-1.0)

    def __pos__(self):
        return self

    def __abs__(self):
        return _op("abs", self)

    __hash__ = object.__hash__

    def _inplace(self, result):
        if result is NotImplemented:
            return result
        self[:] = result
        return self

    def __iadd__(self, other):
        return self._inplace(self.__add__(other))

    def __isub__(self, other):
        return self._inplace(self.__sub__(other))

    def __imul__(self, other):
        return self._inplace(self.__mul__(other))

    def __itruediv__(self, other):
        return self._inplace(self.__truediv__(other))



_operators.install_fluent(NDArray, OPS)
_operators.install(
    NDArray, _apply,
    {"add": ("broadcast_add", "_plus_scalar"), "sub": ("broadcast_sub", "_minus_scalar"),
     "mul": ("broadcast_mul", "_mul_scalar"), "truediv": ("broadcast_div", "_div_scalar"),
     "mod": ("broadcast_mod", "_mod_scalar"), "pow": ("broadcast_power", "_power_scalar"),
     "eq": ("broadcast_equal", "_equal_scalar"), "ne": ("broadcast_not_equal", "_not_equal_scalar"),
     "gt": ("broadcast_greater", "_greater_scalar"),
     "ge": ("broadcast_greater_equal", "_greater_equal_scalar"),
     "lt": ("broadcast_lesser", "_lesser_scalar"),
     "le": ("broadcast_lesser_equal", "_lesser_equal_scalar")},
    {"radd": "_plus_scalar", "rsub": "_rminus_scalar", "rmul": "_mul_scalar",
     "rtruediv": "_rdiv_scalar", "rmod": "_rmod_scalar", "rpow": "_rpower_scalar"})
# The C paths of a training step (block calls, loader batches) make and take NDArrays: by
# address, made into cffi pointers when Python reads _h.
_native.bind(ndarray=NDArray, raise_error=raise_error, tensor_free=NDArray._free,
             autograd_backward=autograd.backward,
             tensor_pointer=functools.partial(ffi.cast, "hn_tensor*"),
             address_of=lambda pointer: int(ffi.cast("uintptr_t", pointer)))


class _View:
    """Presents an NDArray's storage to numpy; the numpy array keeps it (and the NDArray) alive."""

    __slots__ = ("_array", "__array_interface__")

    def __init__(self, nd):
        self._array = nd
        self.__array_interface__ = nd.__array_interface__


_EMPTY = np.empty(1, dtype=np.uint8)


def _from_numpy_copy(source, dtype):
    source = np.ascontiguousarray(source, dtype=dtype)
    code = dtype_code(source.dtype)
    shape = source.shape
    out = ffi.new("hn_tensor**")
    data = ffi.from_buffer(source) if source.size else NULL
    check(lib.hn_tensor_create(code, shape, len(shape), data, source.nbytes if source.size else 0,
                               out))
    return _wrap(out[0])


def array(source_array, ctx=None, dtype=None):
    """An NDArray holding a copy of `source_array` (an NDArray, numpy array, list, number or
    any buffer). The dtype is the source's for arrays, float32 for lists and numbers."""
    _check_context(ctx)
    if isinstance(source_array, NDArray):
        source_array = np.asarray(_View(source_array))
    elif not isinstance(source_array, np.ndarray):
        if dtype is None:
            dtype = np.float32
        source_array = np.asarray(source_array, dtype=dtype)
    return _from_numpy_copy(source_array, dtype if dtype is not None else source_array.dtype)


def _shape_tuple(shape):
    return (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)


def _check_context(ctx):
    if ctx is not None and (Context.from_any(ctx).device_type != "cpu"):
        raise error("HN_ERR_UNSUPPORTED", f"hybridnet runs on the CPU; context {ctx} is not available")


def zeros(shape, ctx=None, dtype=None, **kwargs):
    _check_context(ctx)
    shape = _shape_tuple(shape)
    out = ffi.new("hn_tensor**")
    check(lib.hn_tensor_create(dtype_code(dtype or np.float32), shape, len(shape), NULL, 0, out))
    return _wrap(out[0])


def empty(shape, ctx=None, dtype=None):
    return zeros(shape, ctx, dtype)


def full(shape, val, ctx=None, dtype=None, out=None):
    _check_context(ctx)
    result = _from_numpy_copy(np.full(_shape_tuple(shape), val, dtype=dtype or np.float32),
                              dtype or np.float32)
    if out is not None:
        out[:] = result
        return out
    return result


def ones(shape, ctx=None, dtype=None, **kwargs):
    return full(shape, 1, ctx, dtype)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=None):
    _check_context(ctx)
    values = np.arange(start, stop, step, dtype=dtype or np.float32)
    if repeat != 1:
        values = np.repeat(values, repeat)
    return _from_numpy_copy(values, dtype or np.float32)


# ---- zero-copy from other libraries -----------------------------------------------------------

_pinned = {}
_pinned_keys = itertools.count(1)
_pinned_lock = threading.Lock()


@ffi.callback("void(void*, void*)")
def _release_pinned(data, arg):
    with _pinned_lock:
        _pinned.pop(int(ffi.cast("uintptr_t", arg)), None)


def _wrap_memory(pointer, dtype_number, shape, nbytes, owner):
    """A tensor over foreign memory: `owner` stays referenced until the library lets go of it."""
    with _pinned_lock:
        key = next(_pinned_keys)
        _pinned[key] = owner
    out = ffi.new("hn_tensor**")
    rc = lib.hn_tensor_wrap(dtype_number, shape, len(shape), pointer, nbytes, _release_pinned,
                            ffi.cast("void*", key), out)
    if rc != 0:
        with _pinned_lock:
            _pinned.pop(key, None)
        raise_error(rc)
    return _wrap(out[0])


def from_numpy(ndarray, zero_copy=True):
    """An NDArray over a numpy array's (or any buffer's) memory: with zero_copy (the default) no
    copy is made and writes are seen by both; the source must be C-contiguous and aligned."""
    source = np.asarray(ndarray)
    if not zero_copy:
        return array(source, dtype=source.dtype)
    if not source.flags.c_contiguous or not source.flags.aligned:
        raise error("HN_ERR_INVALID_ARGUMENT", "from_numpy(zero_copy=True) needs a C-contiguous, "
                    "aligned array; pass zero_copy=False (or numpy.ascontiguousarray) to copy it")
    if source.size == 0:
        return array(source, dtype=source.dtype)
    if not source.flags.writeable:
        raise error("HN_ERR_INVALID_ARGUMENT", "from_numpy(zero_copy=True) shares memory the "
                    "library may write, and this array is read-only; pass zero_copy=False")
    code = dtype_code(source.dtype)
    return _wrap_memory(ffi.from_buffer(source), code, source.shape, source.nbytes, source)


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule or of any object with __dlpack__
    (numpy >= 1.22, PyTorch, ...): no copy."""
    return _dlpack.import_tensor(dlpack, _wrap_memory)


def to_dlpack_for_read(data):
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    return data.to_dlpack_for_write()


def waitall():
    """Every op has finished when it returns: nothing to wait for."""


# ---- files ------------------------------------------------------------------------------------


def load(fname):
    """The arrays of an MXNet .params / .nd file: a dict by name, or a list when unnamed."""
    lst = ffi.new("hn_tensor_list**")
    check(lib.hn_tensor_list_load(fname.encode(), lst))
    handle = ffi.gc(lst[0], lib.hn_tensor_list_free)
    size = ffi.new("size_t*")
    check(lib.hn_tensor_list_size(handle, size))
    name, tensor = ffi.new("char**"), ffi.new("hn_tensor**")
    names, arrays = [], []
    for i in range(size[0]):
        check(lib.hn_tensor_list_name(handle, i, name))
        check(lib.hn_tensor_list_get(handle, i, tensor))
        names.append(ffi.string(name[0]).decode())
        arrays.append(_wrap(tensor[0]) if tensor[0] != NULL else None)
    if any(names):
        return dict(zip(names, arrays))
    return arrays


def save(fname, data):
    """Writes a dict (named) or list of NDArrays as an MXNet .params file."""
    if isinstance(data, NDArray):
        data = [data]
    items = list(data.items()) if isinstance(data, dict) else [("", a) for a in data]
    lst = ffi.new("hn_tensor_list**")
    check(lib.hn_tensor_list_create(lst))
    handle = ffi.gc(lst[0], lib.hn_tensor_list_free)
    for key, value in items:
        if not isinstance(value, NDArray):
            raise error("HN_ERR_INVALID_ARGUMENT", f"save: {key or 'an entry'} is a "
                        f"{type(value).__name__}, not an NDArray")
        check(lib.hn_tensor_list_append(handle, key.encode(), value._h))
    check(lib.hn_tensor_list_save(handle, fname.encode()))

