"""Gluon (mx.gluon): blocks, parameters, layers, the model zoo."""
from . import data, model_zoo, nn, utils
from .block import Block, HybridBlock, SymbolBlock
from .parameter import Constant, Parameter, ParameterDict

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "ParameterDict", "Constant", "nn",
           "model_zoo", "data", "utils"]
