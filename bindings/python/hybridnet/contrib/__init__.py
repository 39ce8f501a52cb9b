"""Contributed APIs, as mxnet.contrib: quantization."""
from . import quantization
