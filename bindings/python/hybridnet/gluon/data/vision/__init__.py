"""Vision data helpers (mx.gluon.data.vision): image datasets and transforms."""
from . import transforms
from .datasets import ImageRecordDataset

__all__ = ["transforms", "ImageRecordDataset"]
