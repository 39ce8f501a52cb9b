"""Image decoding (mx.image.imdecode) through the library's JPEG decoder (libjpeg-turbo)."""
import numpy as np

from . import ndarray as nd
from ._ffi import ffi, lib
from .base import check
from .ndarray.ndarray import _wrap

__all__ = ["imdecode"]


def imdecode(buf, flag=1, to_rgb=1, out=None):
    """The JPEG image in `buf` (bytes, a bytearray or a uint8 numpy array) as an HWC uint8
    NDArray: 3 channels with flag 1 (RGB, or BGR with to_rgb=0), 1 channel (gray) with flag 0."""
    if isinstance(buf, np.ndarray):
        buf = buf.tobytes()
    data = ffi.from_buffer(bytes(buf))
    handle = ffi.new("hn_tensor**")
    check(lib.hn_image_decode(data, len(data), 1 if flag else 0, handle))
    image = _wrap(handle[0])
    if flag and not to_rgb:
        image = nd.reverse(image, axis=2)
    if out is not None:
        out[:] = image
        return out
    return image
