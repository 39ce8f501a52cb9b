"""Layers (mx.gluon.nn): the library's layer kinds behind MXNet's classes and argument names,
plus HybridLambda/Lambda for functions written in Python. Arguments left out (None) take the
library's defaults, which are MXNet's."""
import inspect

import numpy as np

from ... import initializer as _init
from ...base import error
from ..block import Block, HybridBlock, SymbolBlock

__all__ = []


class _LibraryLayer:
    """A layer the library implements: MXNet's positional and keyword arguments become the
    attributes of hn_block_create(_kind, ...), which checks them."""

    _kind = None
    _arg_names = ()

    def __init__(self, *args, prefix=None, params=None, dtype=None, **kwargs):
        if dtype is not None and np.dtype(dtype) != np.float32:
            raise error("HN_ERR_UNSUPPORTED", f"{type(self).__name__}: layers compute in float32, "
                        f"not {np.dtype(dtype).name}")
        if len(args) > len(self._arg_names):
            raise TypeError(f"{type(self).__name__} takes at most {len(self._arg_names)} "
                            f"positional arguments ({', '.join(self._arg_names)})")
        attrs = dict(zip(self._arg_names, args))
        for key, value in kwargs.items():
            if key in attrs:
                raise TypeError(f"{type(self).__name__} got '{key}' twice")
            attrs[key] = value
        for key in attrs:
            if key.endswith("_initializer"):
                attrs[key] = _init.spec(attrs[key])
        Block.__init__(self, prefix, params, _kind=self._kind, _attrs=attrs)


def _layer(name, kind, base, arg_names, doc, extra_bases=()):
    cls = type(name, extra_bases + (_LibraryLayer, base),
               {"_kind": kind, "_arg_names": tuple(arg_names), "__doc__": doc,
                "__module__": __name__})
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    parameters += [inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
                   for a in arg_names]
    parameters += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=None)
                   for a in ("prefix", "params")]
    cls.__init__ = _with_signature(_LibraryLayer.__init__, inspect.Signature(parameters))
    globals()[name] = cls
    __all__.append(name)
    return cls


def _with_signature(function, signature):
    def init(self, *args, **kwargs):
        function(self, *args, **kwargs)

    init.__signature__ = signature
    return init


class _Container:
    """add() and indexing of the library's containers."""

    def add(self, *blocks):
        from ..._ffi import lib
        from ...base import check, tree_lock

        for block in blocks:
            with tree_lock:
                check(lib.hn_block_add(self._h, block._h))
            self._children[str(len(self._children))] = block
        return self

    def __getitem__(self, key):
        if not isinstance(key, int):
            raise error("HN_ERR_UNSUPPORTED", f"index {type(self).__name__} with an int (a child "
                        "belongs to one container, so slices cannot be new containers)")
        return list(self._children.values())[key]

    def __len__(self):
        return len(self._children)

    def __iter__(self):
        return iter(self._children.values())


def _container(name, base, doc, arg_names=()):
    return _layer(name, name, base, arg_names, doc, extra_bases=(_Container,))


_HYBRID, _PLAIN = HybridBlock, Block
_container("Sequential", _PLAIN, "Runs its children one after another (add() them).")
_container("HybridSequential", _HYBRID, "Runs its hybrid children one after another; hybridizable.")
_container("HybridConcurrent", _HYBRID, "Feeds the input to every child and concatenates the "
           "outputs along `axis`.", ["axis"])
_container("Concurrent", _PLAIN, "Like HybridConcurrent, for plain Blocks.", ["axis"])
_layer("Dense", "Dense", _HYBRID,
       ["units", "activation", "use_bias", "flatten", "weight_initializer", "bias_initializer",
        "in_units"],
       "activation(dot(x, weight.T) + bias); in_units is inferred at the first forward.")
_layer("Activation", "Activation", _HYBRID, ["activation"],
       "An activation function: relu, sigmoid, tanh, softrelu or softsign.")
_layer("Flatten", "Flatten", _HYBRID, [], "Flattens the input to (batch, -1).")
_layer("Identity", "Identity", _HYBRID, [], "Passes the input through.")
_layer("BatchNorm", "BatchNorm", _HYBRID,
       ["axis", "momentum", "epsilon", "center", "scale", "use_global_stats", "beta_initializer",
        "gamma_initializer", "running_mean_initializer", "running_variance_initializer",
        "in_channels"],
       "Batch normalization with the running statistics at inference.")
_layer("LeakyReLU", "LeakyReLU", _HYBRID, ["alpha"], "x if x > 0 else alpha * x.")
_layer("PReLU", "PReLU", _HYBRID, ["alpha_initializer", "in_channels"],
       "Leaky ReLU with a learned slope.")
_layer("ELU", "ELU", _HYBRID, ["alpha"], "Exponential linear unit.")
_layer("SELU", "SELU", _HYBRID, [], "Scaled exponential linear unit.")
_layer("GELU", "GELU", _HYBRID, [], "Gaussian error linear unit.")

_CONV_ARGS = ["channels", "kernel_size", "strides", "padding", "dilation", "groups", "layout",
              "activation", "use_bias", "weight_initializer", "bias_initializer", "in_channels"]
_CONV_T_ARGS = ["channels", "kernel_size", "strides", "padding", "output_padding", "dilation",
                "groups", "layout", "activation", "use_bias", "weight_initializer",
                "bias_initializer", "in_channels"]
for _rank in (1, 2, 3):
    _layer(f"Conv{_rank}D", f"Conv{_rank}D", _HYBRID, _CONV_ARGS, f"{_rank}-D convolution.")
    _layer(f"Conv{_rank}DTranspose", f"Conv{_rank}DTranspose", _HYBRID, _CONV_T_ARGS,
           f"{_rank}-D transposed convolution.")
    _layer(f"MaxPool{_rank}D", f"MaxPool{_rank}D", _HYBRID,
           ["pool_size", "strides", "padding", "layout", "ceil_mode"], f"{_rank}-D max pooling.")
    _layer(f"AvgPool{_rank}D", f"AvgPool{_rank}D", _HYBRID,
           ["pool_size", "strides", "padding", "ceil_mode", "layout", "count_include_pad"],
           f"{_rank}-D average pooling.")
    _layer(f"GlobalMaxPool{_rank}D", f"GlobalMaxPool{_rank}D", _HYBRID, ["layout"],
           f"{_rank}-D max pooling over the whole input.")
    _layer(f"GlobalAvgPool{_rank}D", f"GlobalAvgPool{_rank}D", _HYBRID, ["layout"],
           f"{_rank}-D average pooling over the whole input.")


class Dropout(_LibraryLayer, HybridBlock):
    """Dropout with probability `rate` during training: the identity at inference."""

    _kind = "Dropout"
    _arg_names = ("rate",)

    def __init__(self, rate, axes=(), prefix=None, params=None, **kwargs):
        if axes:
            raise error("HN_ERR_UNSUPPORTED", "Dropout(axes=...) is not supported (it is the "
                        "identity at inference anyway)")
        super().__init__(rate, prefix=prefix, params=params, **kwargs)


class Embedding(HybridBlock):
    """Rows of a learned (input_dim, output_dim) table looked up by integer indices (the
    Embedding op over the block's weight, as MXNet's layer)."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, prefix=None, params=None):
        if sparse_grad:
            raise error("HN_ERR_UNSUPPORTED", "Embedding(sparse_grad=True): hybridnet has no "
                        "sparse gradients (inference only)")
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), dtype=dtype,
                                      init=weight_initializer)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)


class LayerNorm(HybridBlock):
    """Normalization over `axis` of each sample, scaled by gamma and shifted by beta (the
    LayerNorm op over the block's parameters, as MXNet's layer); in_channels=0 takes the size
    of that axis at the first forward."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._axis, self._epsilon = axis, epsilon
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class HybridLambda(HybridBlock):
    """A function of F and the inputs as a hybridizable block: HybridLambda('tanh') or
    HybridLambda(lambda F, x: F.relu(x))."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if not (isinstance(function, str) or callable(function)):
            raise TypeError("HybridLambda takes an op name or a function of (F, x, ...)")
        self._function = function

    def hybrid_forward(self, F, x, *args):
        if isinstance(self._function, str):
            return getattr(F, self._function)(x, *args)
        return self._function(F, x, *args)


class Lambda(Block):
    """A function of NDArrays as a (plain) block: Lambda('tanh') or Lambda(lambda x: x * 2)."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if not (isinstance(function, str) or callable(function)):
            raise TypeError("Lambda takes an op name or a function of NDArrays")
        self._function = function

    def forward(self, *args):
        from ... import ndarray

        if isinstance(self._function, str):
            return getattr(ndarray, self._function)(*args)
        return self._function(*args)


__all__ += ["Dropout", "Embedding", "LayerNorm", "HybridLambda", "Lambda", "Block", "HybridBlock", "SymbolBlock"]
