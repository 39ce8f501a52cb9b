"""Gluon (mx.gluon): blocks, parameters, layers, the model zoo."""
from . import model_zoo, nn
from .block import Block, HybridBlock, SymbolBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "ParameterDict", "Constant",
           "DeferredInitializationError", "nn", "model_zoo"]
