"""Autograd: gradients of imperative code, with MXNet's mx.autograd API.

    x = nd.array([1, 2, 3])
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x)
    y.backward()
    x.grad          # exp(x)

Recording and training are flags of the calling thread, kept by the library (hn_autograd_*):
inside record() every op on arrays computed from attach_grad'ed arrays is kept on a tape, and
backward runs the recorded ops' gradients with the library's kernels.
"""
import threading

from . import _native
from ._ffi import NULL, ffi, lib
from .base import check, error

__all__ = ["set_recording", "set_training", "is_recording", "is_training", "record", "pause",
           "train_mode", "predict_mode", "mark_variables", "backward", "grad"]

_GRAD_REQS = {"null": lib.HN_GRAD_NULL, "write": lib.HN_GRAD_WRITE, "add": lib.HN_GRAD_ADD}


class _CallBuffers(threading.local):
    """Per-thread buffers for the previous flags, allocated once per thread (the flags are per
    thread, and read right after the call that writes them)."""

    def __init__(self):
        self.flag = ffi.new("int*")


_buffers = _CallBuffers()
_set_recording = lib.hn_autograd_set_recording
_set_training = lib.hn_autograd_set_training


def set_recording(is_recording):
    """Sets whether the calling thread records; returns the previous setting."""
    previous = _buffers.flag
    check(_set_recording(1 if is_recording else 0, previous))
    return bool(previous[0])


def set_training(train_mode):
    """Sets whether ops on the calling thread run in training mode; returns the previous
    setting."""
    previous = _buffers.flag
    check(_set_training(1 if train_mode else 0, previous))
    return bool(previous[0])


def is_recording():
    value = ffi.new("int*")
    check(lib.hn_autograd_is_recording(value))
    return bool(value[0])


def is_training():
    value = ffi.new("int*")
    check(lib.hn_autograd_is_training(value))
    return bool(value[0])


# The scopes a training step enters, from C (their __enter__/__exit__ too).
record = _native.record
pause = _native.pause
train_mode = _native.train_mode
predict_mode = _native.predict_mode


def _handles(arrays, what):
    from .ndarray import NDArray
    for a in arrays:
        if not isinstance(a, NDArray):
            raise error("HN_ERR_INVALID_ARGUMENT",
                        f"{what}: expected NDArrays, got {type(a).__name__}")
    return ffi.new("hn_tensor*[]", [a.handle for a in arrays])


def _as_list(arrays):
    return list(arrays) if isinstance(arrays, (list, tuple)) else [arrays]


def _grad_req(req):
    try:
        return _GRAD_REQS[req]
    except (KeyError, TypeError):
        raise error("HN_ERR_INVALID_ARGUMENT",
                    f"grad_req {req!r}: expected 'write', 'add' or 'null'") from None


def mark_variables(variables, gradients, grad_reqs="write"):
    """Marks arrays whose gradients backward computes into `gradients` (arrays of the same
    shapes, written in place); grad_reqs is one of 'write', 'add', 'null' or a list of them."""
    variables, gradients = _as_list(variables), _as_list(gradients)
    if len(variables) != len(gradients):
        raise error("HN_ERR_INVALID_ARGUMENT", f"mark_variables: {len(variables)} variables but "
                    f"{len(gradients)} gradients")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise error("HN_ERR_INVALID_ARGUMENT", f"mark_variables: {len(variables)} variables but "
                    f"{len(reqs)} grad_reqs")
    check(lib.hn_autograd_mark_variables(_handles(variables, "mark_variables"), len(variables),
                                         ffi.new("int[]", [_grad_req(r) for r in reqs]),
                                         _handles(gradients, "mark_variables")))


def _head_grads(heads, head_grads):
    if head_grads is None:
        return NULL, ()
    head_grads = _as_list(head_grads)
    if len(head_grads) != len(heads):
        raise error("HN_ERR_INVALID_ARGUMENT", f"{len(heads)} heads but {len(head_grads)} "
                    "head_grads")
    from .ndarray import NDArray
    for g in head_grads:
        if g is not None and not isinstance(g, NDArray):
            raise error("HN_ERR_INVALID_ARGUMENT",
                        f"head_grads: expected NDArrays or None, got {type(g).__name__}")
    return ffi.new("hn_tensor*[]", [NULL if g is None else g.handle for g in head_grads]), head_grads


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Computes the gradients of `heads` into the gradient arrays of the variables they were
    recorded from (head_grads: None for ones, or one array or None per head)."""
    heads = _as_list(heads)
    grads, _keep = _head_grads(heads, head_grads)
    check(lib.hn_autograd_backward(_handles(heads, "backward"), len(heads), grads,
                                   1 if retain_graph else 0, 1 if train_mode else 0))


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """The gradients of `heads` with respect to `variables`, as new arrays (the variables'
    gradient arrays are left as they are). With create_graph=True the gradients are recorded
    themselves, so a second backward gives second-order gradients; retain_graph then defaults to
    True, as in MXNet."""
    from .ndarray.ndarray import _wrap
    if retain_graph is None:
        retain_graph = create_graph
    heads = _as_list(heads)
    single = not isinstance(variables, (list, tuple))
    variables = _as_list(variables)
    grads, _keep = _head_grads(heads, head_grads)
    outs = ffi.new("hn_tensor*[]", len(variables))
    check(lib.hn_autograd_grad_v2(_handles(heads, "grad"), len(heads), grads,
                                  _handles(variables, "grad"), len(variables),
                                  1 if retain_graph else 0, 1 if train_mode else 0,
                                  1 if create_graph else 0, outs))
    results = [_wrap(outs[i]) for i in range(len(variables))]
    return results[0] if single else results
