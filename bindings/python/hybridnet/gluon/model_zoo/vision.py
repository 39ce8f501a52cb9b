"""The vision networks of MXNet's model zoo, built by the library with MXNet's block
structure, prefixes and parameter names (get_model names from hn_block_model_names). No
weights are downloaded: initialize the network, or load_parameters a file MXNet's zoo saved."""
import sys

from ..._ffi import NULL, ffi, lib
from ...base import attr_arrays, c_str, check, error, py_str
from ..block import HybridBlock, _current_scope

__all__ = ["get_model", "MODEL_NAMES"]


def _model_names():
    names, count = ffi.new("char***"), ffi.new("size_t*")
    check(lib.hn_block_model_names(names, count))
    return [py_str(names[0][i]) for i in range(count[0])]


MODEL_NAMES = _model_names()


class ZooModel(HybridBlock):
    """A model-zoo network (the library's block tree)."""

    def __init__(self, handle):
        super().__init__(_handle=handle)


def get_model(name, pretrained=False, ctx=None, root=None, **kwargs):
    """The network `name` (resnet18_v1, vgg16_bn, mobilenetv2_1.0, ...; case-insensitive) with
    MXNet's keyword arguments classes and thumbnail."""
    if pretrained:
        raise error("HN_ERR_UNSUPPORTED", f"pretrained weights are not downloaded: build "
                    f"get_model('{name}') and load_parameters() the .params file MXNet's model zoo "
                    "saved")
    out = ffi.new("hn_block**")
    arrays = attr_arrays(kwargs)
    check(lib.hn_block_get_model(c_str(name), arrays.keys, arrays.values, arrays.count, out))
    block = ZooModel(out[0])
    scope = _current_scope()
    check(lib.hn_block_name_in_scope(block._h, scope._h if scope is not None else NULL))
    return block


def _zoo_function(model_name):
    def build(pretrained=False, ctx=None, root=None, **kwargs):
        return get_model(model_name, pretrained, ctx, root, **kwargs)

    build.__name__ = build.__qualname__ = model_name.replace(".", "_")
    build.__doc__ = f"get_model('{model_name}', ...)"
    return build


for _name in MODEL_NAMES:
    _fn = _zoo_function(_name)
    setattr(sys.modules[__name__], _fn.__name__, _fn)
    __all__.append(_fn.__name__)
