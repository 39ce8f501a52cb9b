"""Image transforms as blocks (mx.gluon.data.vision.transforms), on HWC images (NDArrays) or
batches of them, run by the library's image ops (nd.image.*).

    transform = transforms.Compose([transforms.Resize(32), transforms.ToTensor(),
                                    transforms.Normalize(0.13, 0.31)])
    dataset = dataset.transform_first(transform)

The random transforms draw from Python's `random` module (RandomResizedCrop's draws are
MXNet's: the same seed crops the same windows).
"""
import math
import numbers
import random

from .... import ndarray as nd
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "ToTensor", "Normalize", "Resize", "CenterCrop", "RandomResizedCrop",
           "RandomFlipLeftRight"]


class Compose(Sequential):
    """The transforms in order; consecutive hybrid ones are grouped and hybridized."""

    def __init__(self, transforms):
        super().__init__()
        group = []
        for transform in list(transforms) + [None]:
            if isinstance(transform, HybridBlock):
                group.append(transform)
                continue
            if len(group) == 1:
                self.add(group[0])
            elif len(group) > 1:
                hybrid = HybridSequential()
                for block in group:
                    hybrid.add(block)
                hybrid.hybridize()
                self.add(hybrid)
            group = []
            if transform is not None:
                self.add(transform)


class ToTensor(HybridBlock):
    """HWC (or NHWC) values in [0, 255] to CHW (NCHW) float32 in [0, 1]."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """(x - mean) / std per channel of a CHW (NCHW) tensor."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, mean=self._mean, std=self._std)


class Resize(HybridBlock):
    """Resizes HWC images to `size` (an int: a square, or (width, height)); keep_ratio scales
    the shorter side to `size` (an int) and the other in proportion. interpolation is OpenCV's
    flag (1: bilinear)."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._size = size
        self._keep = keep_ratio
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, size=self._size, keep_ratio=self._keep,
                              interp=self._interpolation)


def _pair(size):
    return (size, size) if isinstance(size, numbers.Number) else tuple(size)


def _crop_resized(x, x0, y0, width, height, size, interpolation):
    """The window (x0, y0, width, height) of an HWC image, resized to size (w, h) if needed."""
    out = nd.image.crop(x, x=x0, y=y0, width=width, height=height)
    if (width, height) != tuple(size):
        out = nd.image.resize(out, size=tuple(size), interp=interpolation)
    return out


def _center_window(image_width, image_height, size):
    """MXNet's center crop window: `size` scaled down (keeping its ratio) to fit the image."""
    width, height = size
    if image_height < height:
        width, height = float(width * image_height) / height, image_height
    if image_width < width:
        width, height = image_width, float(height * image_width) / width
    width, height = int(width), int(height)
    return int((image_width - width) / 2), int((image_height - height) / 2), width, height


class CenterCrop(Block):
    """The central window of an HWC image with the ratio of `size`, resized to `size` (an int:
    a square, or (width, height))."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size = _pair(size)
        self._interpolation = interpolation

    def forward(self, x):
        height, width = x.shape[0], x.shape[1]
        x0, y0, w, h = _center_window(width, height, self._size)
        return _crop_resized(x, x0, y0, w, h, self._size, self._interpolation)


class RandomResizedCrop(Block):
    """A random window of an HWC image (area a fraction in `scale` of the image's, aspect ratio
    in `ratio`, log-uniform) resized to `size`; after 10 draws that do not fit, the center
    crop."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._size = _pair(size)
        self._scale = scale
        self._ratio = ratio
        self._interpolation = interpolation

    def forward(self, x):
        height, width = x.shape[0], x.shape[1]
        area = height * width
        log_ratio = (math.log(self._ratio[0]), math.log(self._ratio[1]))
        for _ in range(10):
            target_area = random.uniform(self._scale[0], self._scale[1]) * area
            aspect = math.exp(random.uniform(*log_ratio))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if w <= width and h <= height:
                x0 = random.randint(0, width - w)
                y0 = random.randint(0, height - h)
                return _crop_resized(x, x0, y0, w, h, self._size, self._interpolation)
        x0, y0, w, h = _center_window(width, height, self._size)
        return _crop_resized(x, x0, y0, w, h, self._size, self._interpolation)


class RandomFlipLeftRight(Block):
    """Mirrors an HWC image left to right with probability 1/2."""

    def forward(self, x):
        return nd.image.flip_left_right(x) if random.random() < 0.5 else x
