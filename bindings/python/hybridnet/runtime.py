"""What the library can do on this CPU, in the shape of MXNet's mx.runtime:

    import hybridnet as mx
    features = mx.runtime.Features()
    features.is_enabled("MKLDNN")      # True
    features.is_enabled("CPU_AVX512")  # this CPU's answer
    mx.runtime.feature_list()          # [Feature, ...] in the library's order

The features are the library's one table (hn_runtime_feature_get); their names are MXNet's where
MXNet has the feature.
"""
import collections

from . import base
from ._ffi import ffi, lib


class Feature(collections.namedtuple("Feature", ["name", "enabled", "index", "description"])):
    """A runtime feature: its name, whether it is enabled, its index in the library's table and
    what it means."""

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def feature_list():
    """Every runtime feature, in the library's order."""
    count = ffi.new("size_t*")
    base.check(lib.hn_runtime_feature_count(count))
    features = []
    for index in range(count[0]):
        name, enabled, description = ffi.new("char**"), ffi.new("int*"), ffi.new("char**")
        base.check(lib.hn_runtime_feature_get(index, name, enabled, description))
        features.append(Feature(base.py_str(name[0]), bool(enabled[0]), index,
                                base.py_str(description[0])))
    return features


class Features(collections.OrderedDict):
    """The runtime features by name (one instance per process, as MXNet's)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            collections.OrderedDict.__init__(cls._instance,
                                             [(f.name, f) for f in feature_list()])
        return cls._instance

    def __init__(self):  # filled once, in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether the feature (any letter case) is enabled; RuntimeError naming the known ones
        for a name the library does not have."""
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError(f"unknown runtime feature '{feature_name}'; the features are: "
                               f"{', '.join(self)}")
        return self[name].enabled
