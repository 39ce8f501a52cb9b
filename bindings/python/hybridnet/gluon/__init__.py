"""Gluon (mx.gluon): blocks, parameters, layers, the model zoo."""
from . import data, loss, model_zoo, nn, utils
from .block import Block, HybridBlock, SymbolBlock
from .parameter import Constant, Parameter, ParameterDict
from .trainer import Trainer

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "ParameterDict", "Constant", "nn",
           "model_zoo", "loss", "Trainer", "data", "utils"]
