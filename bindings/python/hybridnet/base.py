"""Errors, dtypes and the small helpers every module shares.

Error classes are made from the library's own status table (hn_status_name): one subclass of
HybridnetError per C category, named after it (HN_ERR_SHAPE -> ShapeError), carrying the C
status code and the library's message.
"""
import threading

import numpy as np

from . import _native
from ._ffi import NULL, ffi, lib

__all__ = ["HybridnetError", "MXNetError"]


class HybridnetError(RuntimeError):
    """An error reported by the hybridnet library (or by the binding, in the same categories).

    `code` is the C status (negative), `status` its name ("HN_ERR_SHAPE")."""

    code = None
    status = None

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code
            self.status = _status_name(code)


# MXNet code catches mxnet.base.MXNetError.
MXNetError = HybridnetError


def _status_name(code):
    return ffi.string(lib.hn_status_name(code)).decode()


def _class_name(status):
    words = status[len("HN_ERR_"):].split("_")
    return "".join(w.capitalize() for w in words) + "Error"


def _make_error_classes():
    classes = {}
    code = -1
    while True:
        status = _status_name(code)
        if status == "HN_ERR_UNKNOWN":
            return classes
        cls = type(_class_name(status), (HybridnetError,),
                   {"code": code, "status": status, "__module__": __name__,
                    "__doc__": f"The library's {status} category."})
        classes[code] = cls
        code -= 1


ERRORS = _make_error_classes()
ERRORS_BY_STATUS = {cls.status: cls for cls in ERRORS.values()}
for _cls in ERRORS.values():
    globals()[_cls.__name__] = _cls
    __all__.append(_cls.__name__)


def error(status, message):
    """An exception of the category named `status` ("HN_ERR_UNTRACEABLE")."""
    cls = ERRORS_BY_STATUS[status]
    return cls(message, cls.code)


# A Python exception raised inside a forward the library called back (a hybrid_forward): it
# travels through the C caller as an error code and is raised again, unchanged, by the
# binding function that made the C call.
_pending = threading.local()


def set_pending(exc):
    _pending.exc = exc


def raise_error(rc):
    """Raises the error of a failed C call (rc < 0) on this thread."""
    exc = getattr(_pending, "exc", None)
    if exc is not None:
        _pending.exc = None
        raise exc
    message = ffi.string(lib.hn_last_error()).decode("utf-8", "replace")
    cls = ERRORS.get(rc, HybridnetError)
    raise cls(message, rc)


def check(rc):
    if rc != 0:
        raise_error(rc)


def c_str(text):
    return text.encode("utf-8") if isinstance(text, str) else text


def py_str(cdata):
    return ffi.string(cdata).decode("utf-8") if cdata != NULL else None


def new_string(function, handle):
    """The text a C function returns through a char** (a new string, freed here)."""
    out = ffi.new("char**")
    check(function(handle, out))
    try:
        return ffi.string(out[0]).decode("utf-8")
    finally:
        lib.hn_string_free(out[0])


def string_array(strings):
    """A char*[] of `strings` and the buffers it points to (keep both alive)."""
    buffers = [ffi.new("char[]", c_str(s)) for s in strings]
    return ffi.new("char*[]", buffers), buffers


class Handle(_native.Handle):
    """A Python object owning one library handle (`_h`), released by the class's `_free` (the
    C base type calls it when the object goes: no __del__ frame per array)."""

    __slots__ = ()
    _free = None

    def __init__(self, handle):
        self._h = handle

    @property
    def handle(self):
        """The library handle (a cffi pointer) this object owns."""
        return self._h


# Block trees must be used by one thread at a time (the C API's rule); the library calls back
# into Python on the calling thread, so the lock is re-entrant.
tree_lock = threading.RLock()

# ---------------------------------------------------------------------------------------------
# dtypes: the library's table (hn_dtype_name gives numpy's names), mapped to numpy dtypes.


def _dtype_tables():
    to_numpy, from_numpy = {}, {}
    code = 0
    while True:
        name = lib.hn_dtype_name(code)
        if name == NULL:
            return to_numpy, from_numpy
        try:
            dtype = np.dtype(ffi.string(name).decode())
        except TypeError:  # bfloat16: no numpy dtype
            dtype = None
        if dtype is not None:
            to_numpy[code] = dtype
            from_numpy[dtype] = code
        code += 1


DTYPE_TO_NUMPY, DTYPE_FROM_NUMPY = _dtype_tables()
FLOAT32 = DTYPE_FROM_NUMPY[np.dtype("float32")]


def dtype_code(dtype):
    """The library's dtype number of a numpy dtype, type or name."""
    try:
        return DTYPE_FROM_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        known = ", ".join(sorted(d.name for d in DTYPE_FROM_NUMPY))
        raise error("HN_ERR_DTYPE", f"dtype {dtype!r} is not supported (supported: {known})") from None


# ---------------------------------------------------------------------------------------------
# Attribute values: MXNet passes every op and layer attribute as the string str() gives it.


def attr_text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(attr_text(v) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (np.dtype, type)):
        return np.dtype(value).name
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


class AttrArrays:
    """Parallel C arrays of attribute keys and values (cached: the same attributes recur)."""

    __slots__ = ("keys", "values", "count", "_keep")

    def __init__(self, items):
        self.keys, k = string_array([k for k, _ in items])
        self.values, v = string_array([v for _, v in items])
        self.count = len(items)
        self._keep = (k, v)


_attr_cache = {}
EMPTY_ATTRS = AttrArrays(())


def attr_arrays(attrs):
    """AttrArrays of a dict of attribute values (converted with attr_text)."""
    if not attrs:
        return EMPTY_ATTRS
    items = tuple((k, attr_text(v)) for k, v in attrs.items())
    arrays = _attr_cache.get(items)
    if arrays is None:
        if len(_attr_cache) > 4096:
            _attr_cache.clear()
        arrays = _attr_cache[items] = AttrArrays(items)
    return arrays
