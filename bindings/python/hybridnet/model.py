"""Serving an export (ours or real MXNet's): Model (graph + weights, immutable, shared by any
number of threads) and Predictor (runs it; one per thread).

    model = hybridnet.Model.load("my_mlp", 0)
    predictor = model.predictor()
    y = predictor(x)              # numpy in, numpy out; other batch sizes re-plan once

A C-contiguous, aligned numpy input is read in place, not copied: the predictor keeps a reference
to it and reads it at each forward until that input is set again.
"""
import threading

import numpy as np

from ._ffi import NULL, ffi, lib
from .base import (DTYPE_FROM_NUMPY, DTYPE_TO_NUMPY, c_str, check, dtype_code, error, py_str,
                   raise_error)

__all__ = ["Model", "Predictor"]

_wrap_input = lib.hn_tensor_wrap
_set_input_tensor = lib.hn_predictor_set_input_tensor
_free_tensor = lib.hn_tensor_free
_forward = lib.hn_predictor_forward
_get_output = lib.hn_predictor_get_output
_from_buffer = ffi.from_buffer


def _names(getter, handle):
    names, count = ffi.new("char***"), ffi.new("size_t*")
    check(getter(handle, names, count))
    return [py_str(names[0][i]) for i in range(count[0])]


class Model:
    """A loaded model: immutable and thread-safe."""

    def __init__(self, handle):
        self._h = ffi.gc(handle, lib.hn_model_free)
        self.input_names = _names(lib.hn_model_input_names, self._h)
        self.output_names = _names(lib.hn_model_output_names, self._h)

    @classmethod
    def load(cls, prefix, epoch=0):
        """PREFIX-symbol.json + PREFIX-EEEE.params, as MXNet's export writes them."""
        out = ffi.new("hn_model**")
        check(lib.hn_model_load(c_str(prefix), int(epoch), out))
        return cls(out[0])

    @classmethod
    def from_memory(cls, symbol_json, params=b""):
        """A model from the symbol JSON text and the bytes of a .params file."""
        json_bytes = c_str(symbol_json)
        params = bytes(params)
        out = ffi.new("hn_model**")
        check(lib.hn_model_load_from_memory(json_bytes, len(json_bytes), params or NULL,
                                            len(params), out))
        return cls(out[0])

    @property
    def symbol(self):
        from .symbol.symbol import _wrap

        out = ffi.new("hn_symbol**")
        check(lib.hn_model_symbol(self._h, out))
        return _wrap(out[0])

    def predictor(self, dtype="float32"):
        """A new Predictor of this model (one per thread; they share the weights); dtype says
        what its convolutions and dense layers compute in (Predictor.set_dtype)."""
        predictor = Predictor(self)
        if dtype != "float32":
            predictor.set_dtype(dtype)
        return predictor

    def __repr__(self):
        return f"<Model inputs={self.input_names} outputs={self.output_names}>"


class Predictor:
    """Runs a Model: predictor(x) or predictor(data=x) with numpy arrays (or anything
    numpy.asarray takes) gives the output as a numpy array (a list for several outputs).
    Use one predictor per thread (Model.predictor() or clone()); a predictor used by two threads
    at once raises instead of corrupting its state."""

    def __init__(self, model, _handle=None):
        self.model = model
        if _handle is None:
            out = ffi.new("hn_predictor**")
            check(lib.hn_predictor_create(model._h, out))
            _handle = out[0]
        self._p = ffi.gc(_handle, lib.hn_predictor_free)
        self._lock = threading.Lock()
        self._inputs = [ffi.new("char[]", c_str(n)) for n in model.input_names]
        self._index = {n: i for i, n in enumerate(model.input_names)}
        self._outputs = {}  # input shapes and dtypes -> [(shape, dtype, nbytes)] of the outputs
        self._shapes = {}   # input shape -> its C array
        self._fast = {}     # (shape, dtype) of a lone input -> what its fast path passes
        self._last = (None, None, None)  # the last (shape, dtype, fast) used
        self._input0 = self._inputs[0] if self._inputs else NULL
        self._name0 = model.input_names[0] if model.input_names else None
        self._shared = [None] * len(self._inputs)  # the numpy inputs the predictor reads in place
        self._tensor = ffi.new("hn_tensor**")

    def clone(self):
        """A predictor of the same model for another thread (weights shared)."""
        out = ffi.new("hn_predictor**")
        check(lib.hn_predictor_clone(self._p, out))
        return Predictor(self.model, out[0])

    def set_dtype(self, dtype):
        """What this predictor's convolutions and dense layers compute in: "float32" (the
        default) or "bfloat16", MXNet AMP's conversion at load (data and weights rounded to
        bfloat16, float32 sums, BatchNorm folded; every other op and every tensor float32). README.md's compatibility
        section gives the error against float32 per model. Clones made afterwards inherit it."""
        codes = {"float32": lib.HN_DTYPE_FLOAT32, "bfloat16": lib.HN_DTYPE_BFLOAT16}
        if dtype not in codes:
            raise error("HN_ERR_INVALID_ARGUMENT",
                        f"dtype must be 'float32' or 'bfloat16', got {dtype!r}")
        with self._lock:
            check(lib.hn_predictor_set_dtype(self._p, codes[dtype]))

    def _set(self, index, x):
        if type(x) is not np.ndarray:
            x = np.asarray(x, dtype=np.float32 if not hasattr(x, "dtype") else None)
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
        try:
            code = DTYPE_FROM_NUMPY[x.dtype]
        except KeyError:
            code = dtype_code(x.dtype)
        shape = x.shape
        dims = self._shapes.get(shape)
        if dims is None:
            dims = self._shapes[shape] = ffi.new("int64_t[]", list(shape) or [0])
        if x.size and x.flags.aligned:
            check(self._share(index, x, code, dims, len(shape), x.nbytes))
        else:
            check(lib.hn_predictor_set_input(self._p, self._inputs[index], code, dims, len(shape),
                                             ffi.from_buffer(x) if x.size else NULL, x.nbytes))
            self._shared[index] = None  # the predictor holds a copy now
        return shape, code

    def _share(self, index, x, code, dims, ndim, nbytes):
        """Sets input `index` to the memory of the contiguous, aligned array x without copying
        it; x stays referenced while the predictor may read it. Returns the C status."""
        rc = _wrap_input(code, dims, ndim, _from_buffer(x), nbytes, NULL, NULL, self._tensor)
        if rc == 0:
            rc = _set_input_tensor(self._p, self._inputs[index], self._tensor[0])
            _free_tensor(self._tensor[0])
            if rc == 0:  # the array the predictor read before may go now
                self._shared[index] = x
        return rc

    def _output_layout(self):
        count = ffi.new("size_t*")
        check(lib.hn_predictor_num_outputs(self._p, count))
        layout = []
        tensor, dims, ndim, code = ffi.new("hn_tensor**"), ffi.new("int64_t**"), ffi.new("int*"), ffi.new("int*")
        for i in range(count[0]):
            check(lib.hn_predictor_output(self._p, i, tensor))
            try:
                check(lib.hn_tensor_shape(tensor[0], dims, ndim))
                check(lib.hn_tensor_dtype(tensor[0], code))
                shape = tuple(dims[0][j] for j in range(ndim[0]))  # dims live with the tensor
            finally:
                lib.hn_tensor_free(tensor[0])
            dtype = DTYPE_TO_NUMPY[code[0]]
            layout.append((shape, dtype, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize))
        return layout

    def __call__(self, *inputs, **named):
        # The serving case, kept short: one C-contiguous, aligned numpy input (positional or
        # named as the first input) of a shape seen before and one output (what the general path
        # below learned about it is in self._fast).
        if len(inputs) + len(named) == 1:
            x = inputs[0] if inputs else named.get(self._name0)
            if type(x) is np.ndarray and x.flags.c_contiguous and x.flags.aligned:
                last = self._last
                if x.shape == last[0] and x.dtype is last[1]:  # the same as last time
                    fast = last[2]
                else:
                    fast = self._fast.get((x.shape, x.dtype))
                    if fast is not None:
                        self._last = (x.shape, x.dtype, fast)
                if fast is not None and self._lock.acquire(False):
                    try:
                        code, dims, ndim, nbytes, out_shape, out_dtype, out_nbytes = fast
                        p = self._p
                        rc = self._share(0, x, code, dims, ndim, nbytes)
                        if rc == 0:
                            rc = _forward(p)
                        if rc == 0:
                            y = np.empty(out_shape, out_dtype)
                            rc = _get_output(p, 0, _from_buffer(y), out_nbytes)
                        if rc != 0:
                            raise_error(rc)
                        return y
                    finally:
                        self._lock.release()
        return self._call(inputs, named)

    def _call(self, inputs, named):
        if not self._lock.acquire(False):
            raise error("HN_ERR_INVALID_ARGUMENT", "this Predictor is running on another thread; "
                        "use one predictor per thread (Model.predictor() or clone())")
        try:
            if named:
                unknown = [k for k in named if k not in self._index]
                if unknown:
                    raise error("HN_ERR_NOT_FOUND", f"the model has no input '{unknown[0]}' "
                                f"(inputs: {', '.join(self.model.input_names)})")
                ordered = [None] * len(self._inputs)
                ordered[:len(inputs)] = inputs
                for k, v in named.items():
                    ordered[self._index[k]] = v
                inputs = ordered
            if len(inputs) > len(self._inputs):
                raise error("HN_ERR_INVALID_ARGUMENT", f"the model takes {len(self._inputs)} "
                            f"inputs ({', '.join(self.model.input_names)}), got {len(inputs)}")
            key = tuple(self._set(i, x) for i, x in enumerate(inputs) if x is not None)
            check(lib.hn_predictor_forward(self._p))
            layout = self._outputs.get(key)
            if layout is None:
                layout = self._outputs[key] = self._output_layout()
            results = []
            for i, (shape, dtype, nbytes) in enumerate(layout):
                y = np.empty(shape, dtype)
                if nbytes:
                    check(lib.hn_predictor_get_output(self._p, i, ffi.from_buffer(y), nbytes))
                results.append(y)
            if len(inputs) == 1 and len(layout) == 1 and layout[0][2] and \
                    isinstance(inputs[0], np.ndarray) and inputs[0].flags.c_contiguous:
                (x_shape, x_code), = key
                self._fast[(x_shape, inputs[0].dtype)] = (
                    x_code, self._shapes[x_shape], len(x_shape), inputs[0].nbytes) + layout[0]
            return results[0] if len(results) == 1 else results
        finally:
            self._lock.release()
