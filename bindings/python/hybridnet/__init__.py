"""hybridnet: MXNet's Gluon workflow on today's Python and NumPy, over hybridnet's C API.

    import hybridnet as mx
    from hybridnet import nd, sym, gluon
    from hybridnet.gluon import nn

    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(2))
    net.initialize()
    y = net(nd.random.normal(shape=(1, 512)))   # eager
    net.hybridize()
    y = net(x)                                  # traced once, then the library's cached graph
    net.export("my_mlp")                        # my_mlp-symbol.json + my_mlp-0000.params

    x.attach_grad()                             # gradients, as mx.autograd
    with mx.autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()                             # x.grad

    model = mx.Model.load("my_mlp", 0)          # serving: numpy in, numpy out
    predictor = model.predictor()
    y = predictor(x_numpy)
"""
from . import base
from ._ffi import ffi as _ffi
from ._ffi import lib as _lib
from .base import ERRORS as _ERRORS
from .base import HybridnetError, MXNetError
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from . import autograd, ndarray, symbol
from . import ndarray as nd
from . import symbol as sym
from . import image, initializer, io, metric, random, recordio
from . import initializer as init
from . import gluon
from . import lr_scheduler, optimizer, profiler, runtime
from . import visualization
from . import visualization as viz
from . import contrib
from .model import Model, Predictor

__version__ = _ffi.string(_lib.hn_version()).decode()

for _cls in _ERRORS.values():
    globals()[_cls.__name__] = _cls


def set_num_threads(num_threads):
    """The number of threads the library's BLAS kernels use (1 is fastest for small models)."""
    base.check(_lib.hn_set_num_threads(int(num_threads)))


def get_num_threads():
    n = _ffi.new("int*")
    base.check(_lib.hn_get_num_threads(n))
    return n[0]


def live_handles():
    """Library objects (arrays, symbols, blocks, models, ...) alive now: a leak check."""
    n = _ffi.new("int64_t*")
    base.check(_lib.hn_debug_live_handles(n))
    return n[0]
