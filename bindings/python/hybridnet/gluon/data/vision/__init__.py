"""Vision data helpers (mx.gluon.data.vision): image transforms."""
from . import transforms

__all__ = ["transforms"]
