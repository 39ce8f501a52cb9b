"""Helpers of mx.gluon.utils for training loops: splitting a batch over devices (CPU lists
here) and clipping gradients by their global norm."""
import warnings

import numpy as np

from .. import ndarray

__all__ = ["split_data", "split_and_load", "clip_global_norm"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """`data` cut into num_slice parts along batch_axis (the first parts one longer when the
    size does not divide and even_split is False); always a list."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(f"data with shape {data.shape} cannot be evenly split into {num_slice} "
                         f"slices along axis {batch_axis}. Use a batch size that's multiple of "
                         f"{num_slice} or set even_split=False to allow uneven partitioning of "
                         "data.")
    each, extras = divmod(size, num_slice)
    bounds = np.cumsum([0] + [each + 1] * extras + [each] * (num_slice - extras))
    return [ndarray.slice_axis(data, axis=batch_axis, begin=int(bounds[i]),
                               end=int(bounds[i + 1]))
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """`data` (an NDArray or array-like) split into one part per context of ctx_list."""
    if not isinstance(data, ndarray.NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    parts = split_data(data, len(ctx_list), batch_axis, even_split)
    return [part.as_in_context(ctx) for part, ctx in zip(parts, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scales `arrays` in place so that the 2-norm of all of them together is at most max_norm;
    returns that norm before scaling (a float, or a (1,) NDArray when check_isfinite is
    False). Computed with the library's float32 ops in MXNet's order."""
    if not arrays:
        raise ValueError("clip_global_norm: no arrays given")
    squares = []
    for array in arrays:
        flat = array.reshape((-1,))
        squares.append(ndarray.dot(flat, flat))
    total_norm = ndarray.sqrt(ndarray.add_n(*squares))
    if check_isfinite and not np.isfinite(total_norm.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."),
                      stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = ndarray.min(ndarray.concat(scale, ndarray.ones(1), dim=0))
    for array in arrays:
        array *= scale
    return total_norm.asscalar() if check_isfinite else total_norm
