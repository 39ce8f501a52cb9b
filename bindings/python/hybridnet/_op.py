"""Operator functions generated at import from the library's op registry (hn_op_*): every
registered op and alias becomes hybridnet.ndarray.<name> and hybridnet.symbol.<name>, with the
registry's description, attributes, defaults and input names as docstring and signature.

Where a name goes is MXNet 1.x's rule (location()): names starting with _contrib_, _linalg_,
_sparse_ or _image_ go to that submodule without the prefix, _random_*_like to random, the other
names starting with "_" (_random_normal, _plus_scalar) to _internal, the rest to the top level.
"""
import inspect
import sys
import types

from ._ffi import ffi, lib
from .base import attr_arrays, check, error, py_str

SUBMODULE_PREFIXES = ("_contrib_", "_linalg_", "_sparse_", "_image_", "_random_")


class Attr:
    """One attribute of an op, as the registry declares it."""

    __slots__ = ("key", "type", "default", "required", "description")

    def __init__(self, key, type_text, default, required, description):
        self.key, self.type, self.default = key, type_text, default
        self.required, self.description = required, description


class OpInfo:
    """What the registry says about one op."""

    def __init__(self, name):
        self.name = name
        self.name_c = ffi.new("char[]", name.encode())
        description = ffi.new("const char**")
        num_attrs = ffi.new("size_t*")
        num_aliases = ffi.new("size_t*")
        check(lib.hn_op_info(self.name_c, description, num_attrs, num_aliases))
        self.description = py_str(description[0])
        self.attrs = []
        key, type_text, default = ffi.new("char**"), ffi.new("char**"), ffi.new("char**")
        required, attr_doc = ffi.new("int*"), ffi.new("char**")
        for i in range(num_attrs[0]):
            check(lib.hn_op_attr(self.name_c, i, key, type_text, default, required, attr_doc))
            self.attrs.append(Attr(py_str(key[0]), py_str(type_text[0]), py_str(default[0]),
                                   bool(required[0]), py_str(attr_doc[0])))
        alias = ffi.new("char**")
        self.aliases = []
        for i in range(num_aliases[0]):
            check(lib.hn_op_alias(self.name_c, i, alias))
            self.aliases.append(py_str(alias[0]))
        var_key = ffi.new("char**")
        check(lib.hn_op_key_var_num_args(self.name_c, var_key))
        self.key_var_num_args = py_str(var_key[0]) or None
        self.attr_keys = [a.key for a in self.attrs]
        self._input_names = {}
        # With the defaults (None when they depend on a required attribute).
        try:
            self.default_inputs = None if self.key_var_num_args else self.input_names({})
        except Exception:  # noqa: BLE001 - a required attribute decides them
            self.default_inputs = None

    def input_names(self, attrs):
        """The op's input names for these attributes (hn_op_input_names; cached)."""
        arrays = attr_arrays(attrs)
        names = self._input_names.get(arrays)
        if names is None:
            out, count = ffi.new("char***"), ffi.new("size_t*")
            check(lib.hn_op_input_names(self.name_c, arrays.keys, arrays.values, arrays.count,
                                        out, count))
            names = self._input_names[arrays] = [py_str(out[0][i]) for i in range(count[0])]
        return names


def list_ops():
    count = ffi.new("size_t*")
    check(lib.hn_op_count(count))
    name = ffi.new("char**")
    ops = []
    for i in range(count[0]):
        check(lib.hn_op_name(i, name))
        ops.append(OpInfo(py_str(name[0])))
    return ops


class _Default:
    """A default shown in signatures as the registry writes it."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def signature_and_doc(info, kind):
    """The inspect.Signature and docstring of the generated function (kind "NDArray"/"Symbol")."""
    params = []
    lines = [info.description or info.name, "", "Parameters", "----------"]
    if info.default_inputs is not None:
        for n in info.default_inputs:
            params.append(inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None))
            lines.append(f"{n} : {kind}")
    else:
        params.append(inspect.Parameter("data", inspect.Parameter.VAR_POSITIONAL))
        lines.append(f"*data : {kind}" + (f" (their number sets {info.key_var_num_args})"
                                         if info.key_var_num_args else ""))
    for a in info.attrs:
        default = inspect.Parameter.empty if a.required else _Default(a.default or "None")
        params.append(inspect.Parameter(a.key, inspect.Parameter.KEYWORD_ONLY, default=default))
        lines.append(f"{a.key} : {a.type}, " + ("required" if a.required else f"default {a.default}"))
        if a.description:
            lines.append(f"    {a.description}")
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
    lines.append(f"out : {kind}, optional" if kind == "NDArray" else "out : unused")
    lines.append("name : str, optional (the graph node's name)")
    if info.aliases:
        lines += ["", "Also called: " + ", ".join(info.aliases)]
    lines += ["", "Returns", "-------", f"{kind} (a list for several outputs)"]
    return inspect.Signature(params), "\n".join(lines)


def split_arguments(info, call_name, args, kwargs, tensor_type):
    """(positional tensors, keyword tensors, attributes) of a call. Positional non-tensors are
    attributes in the registry's order, as in MXNet's generated functions."""
    inputs = []
    attrs = {}
    extra = 0
    for a in args:
        if isinstance(a, tensor_type):
            if extra:
                raise error("HN_ERR_INVALID_ARGUMENT",
                            f"{call_name}: a {tensor_type.__name__} input follows attribute values")
            inputs.append(a)
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, tensor_type) for x in a) \
                and info.key_var_num_args:
            inputs.extend(a)
        elif a is None and not extra:
            inputs.append(None)
        else:
            if extra >= len(info.attr_keys):
                raise error("HN_ERR_INVALID_ARGUMENT",
                            f"{call_name}: too many positional arguments ({a!r} has no attribute "
                            f"to go to; attributes: {', '.join(info.attr_keys) or 'none'})")
            attrs[info.attr_keys[extra]] = a
            extra += 1
    keyword = {}
    for k, v in kwargs.items():
        if isinstance(v, tensor_type):
            keyword[k] = v
        elif v is not None:
            attrs[k] = v
    return inputs, keyword, attrs


def order_inputs(info, call_name, inputs, keyword, attrs):
    """Positional and keyword inputs in the op's input order; trailing missing ones dropped."""
    while inputs and inputs[-1] is None:
        inputs.pop()
    if not keyword:
        return inputs
    names = info.input_names(attrs)
    slots = inputs + [None] * (len(names) - len(inputs))
    for k, v in keyword.items():
        if k not in names:
            raise error("HN_ERR_INVALID_ARGUMENT",
                        f"{call_name} has no input '{k}' (inputs: {', '.join(names)})")
        i = names.index(k)
        if slots[i] is not None:
            raise error("HN_ERR_INVALID_ARGUMENT", f"{call_name}: input '{k}' is given twice")
        slots[i] = v
    while slots and slots[-1] is None:
        slots.pop()
    return slots


def location(name):
    """(submodule or None, attribute name) of an op name in nd and sym, as MXNet places it:
    _random_ ops go to random only for the *_like ones (random.normal etc. are functions over
    the ops)."""
    for prefix in SUBMODULE_PREFIXES:
        if name.startswith(prefix) and (prefix != "_random_" or name.endswith("_like")):
            return prefix[1:-1], name[len(prefix):]
    return ("_internal" if name.startswith("_") else None), name


def install(module, make_function):
    """Adds a function for every op name and alias to `module` and its submodules."""
    made = {}
    for info in list_ops():
        for name in [info.name] + info.aliases:
            sub, short = location(name)
            target = submodule(module, sub) if sub else module
            fn = make_function(info, name)
            fn.__module__ = target.__name__
            made[name] = fn
            # The package's own MXNet-shaped functions (nd.random.normal, ...) keep their
            # names; every op stays reachable by its full name through OPS.
            existing = getattr(target, short, None)
            if existing is None or getattr(existing, "_hn_op", False):
                fn._hn_op = True
                setattr(target, short, fn)
    return made


def submodule(module, name):
    """module.<name>, a plain module registered in sys.modules (import-able)."""
    existing = getattr(module, name, None)
    if isinstance(existing, types.ModuleType):
        return existing
    full = f"{module.__name__}.{name}"
    sub = sys.modules.get(full) or types.ModuleType(full, f"{name} operators of {module.__name__}")
    sys.modules[full] = sub
    setattr(module, name, sub)
    return sub


__all__ = ["OpInfo", "list_ops", "location", "install"]
