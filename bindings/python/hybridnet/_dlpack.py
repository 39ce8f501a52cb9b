"""DLPack (the unversioned DLManagedTensor capsule NumPy >= 1.22 and PyTorch exchange): exporting
a tensor's storage and wrapping another library's, both without copying.

The capsule itself is made with CPython's PyCapsule API through ctypes.pythonapi; the
DLPack structures are declared in the package's cffi module (build_cffi.DLPACK_CDEF)."""
import ctypes
import threading

import numpy as np

from ._ffi import NULL, ffi, lib
from .base import DTYPE_FROM_NUMPY, check, error

CPU = 1
_CPU_PINNED = 3
_NAME = b"dltensor"
_USED_NAME = b"used_dltensor"
_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}  # numpy kind -> DLDataTypeCode
_KINDS = {v: k for k, v in _CODES.items()}

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# The same call on a capsule being destroyed (a raw PyObject*: no new reference to it).
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

# Exported tensors until their consumer calls the deleter: address -> (struct, shape, handle).
_exported = {}
_exported_lock = threading.Lock()


@ffi.callback("void(DLManagedTensor*)")
def _delete_exported(managed):
    with _exported_lock:
        entry = _exported.pop(int(ffi.cast("uintptr_t", managed)), None)
    if entry is not None:
        lib.hn_tensor_free(entry[2])


_DESTRUCTOR_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_DESTRUCTOR_TYPE
def _capsule_destructor(capsule):
    # Never consumed (the name is still "dltensor"): the producer frees it.
    if _api.PyCapsule_IsValid(capsule, _NAME):
        _delete_exported(ffi.cast("DLManagedTensor*", _raw_get_pointer(capsule, _NAME)))


def export(handle):
    """A "dltensor" capsule sharing the storage of the hn_tensor `handle` (a new handle keeps
    it alive until the consumer's deleter call)."""
    shared = ffi.new("hn_tensor**")
    check(lib.hn_tensor_share(handle, shared))
    tensor = shared[0]
    try:
        dims, ndim, code, data = ffi.new("int64_t**"), ffi.new("int*"), ffi.new("int*"), ffi.new("void**")
        check(lib.hn_tensor_shape(tensor, dims, ndim))
        check(lib.hn_tensor_dtype(tensor, code))
        check(lib.hn_tensor_data(tensor, data))
        dtype = next((d for d, c in DTYPE_FROM_NUMPY.items() if c == code[0]), None)
        if dtype is None or dtype.kind not in _CODES:
            raise error("HN_ERR_DTYPE", f"dtype {code[0]} has no DLPack equivalent")
        managed = ffi.new("DLManagedTensor*")
        shape = ffi.new("int64_t[]", [dims[0][i] for i in range(ndim[0])] or [0])
        t = managed.dl_tensor
        t.data = data[0]
        t.device.device_type = CPU
        t.device.device_id = 0
        t.ndim = ndim[0]
        t.dtype.code = _CODES[dtype.kind]
        t.dtype.bits = dtype.itemsize * 8
        t.dtype.lanes = 1
        t.shape = shape
        t.strides = NULL  # C-contiguous
        t.byte_offset = 0
        managed.manager_ctx = NULL
        managed.deleter = _delete_exported
        address = int(ffi.cast("uintptr_t", managed))
        with _exported_lock:
            _exported[address] = (managed, shape, tensor)
    except BaseException:
        lib.hn_tensor_free(tensor)
        raise
    destructor = ctypes.cast(_capsule_destructor, ctypes.c_void_p)
    return _api.PyCapsule_New(address, _NAME, destructor)


class _Producer:
    """Holds a consumed DLManagedTensor; calls its deleter when the library releases it."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        if self.managed is not None and self.managed.deleter != NULL:
            self.managed.deleter(self.managed)
            self.managed = None


def import_tensor(source, wrap_memory):
    """An NDArray (made by wrap_memory) over the memory of a capsule or of source.__dlpack__()."""
    capsule = source.__dlpack__() if hasattr(source, "__dlpack__") else source
    try:
        pointer = _api.PyCapsule_GetPointer(capsule, _NAME)
    except (ValueError, TypeError):
        raise error("HN_ERR_INVALID_ARGUMENT", "from_dlpack: expected an object with __dlpack__ or "
                    "an unused 'dltensor' capsule (a capsule can be consumed once)") from None
    managed = ffi.cast("DLManagedTensor*", pointer)
    owner = _Producer(managed)
    _api.PyCapsule_SetName(capsule, _USED_NAME)
    t = managed.dl_tensor
    if t.device.device_type not in (CPU, _CPU_PINNED):
        raise error("HN_ERR_UNSUPPORTED", f"from_dlpack: the tensor is on device type "
                    f"{t.device.device_type}; hybridnet reads CPU memory only")
    if t.dtype.lanes != 1 or t.dtype.code not in _KINDS:
        raise error("HN_ERR_DTYPE", f"from_dlpack: DLPack dtype (code {t.dtype.code}, bits "
                    f"{t.dtype.bits}, lanes {t.dtype.lanes}) is not supported")
    dtype = np.dtype(f"{_KINDS[t.dtype.code]}{t.dtype.bits // 8}") if t.dtype.code != 6 else np.dtype(bool)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides != NULL:
        expected = 1
        for i in reversed(range(t.ndim)):
            if shape[i] != 1 and t.strides[i] != expected:
                raise error("HN_ERR_INVALID_ARGUMENT", "from_dlpack: the tensor is not "
                            "C-contiguous; make it contiguous first (a copy)")
            expected *= shape[i]
    code = DTYPE_FROM_NUMPY.get(dtype)
    if code is None:
        raise error("HN_ERR_DTYPE", f"from_dlpack: dtype {dtype} is not supported")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes == 0:
        from .ndarray import zeros
        return zeros(shape, dtype=dtype)
    data = ffi.cast("char*", t.data) + t.byte_offset
    return wrap_memory(data, code, shape, nbytes, owner)
