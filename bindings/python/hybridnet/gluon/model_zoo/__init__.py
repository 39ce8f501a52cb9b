"""MXNet's model zoo (mx.gluon.model_zoo): the networks are built by the library."""
from . import vision

__all__ = ["vision", "get_model"]
get_model = vision.get_model
