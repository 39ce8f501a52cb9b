"""Symbol: a graph (an hn_symbol), MXNet's mx.sym.Symbol. Inside a hybridized block's
hybrid_forward the values are Symbols too; what cannot be recorded in a graph (reading values,
in-place updates, Python decisions on values) raises UntraceableError saying what to write."""
import numbers

from .. import _operators
from .._ffi import NULL, ffi, lib
from ..base import (EMPTY_ATTRS, Handle, c_str, check, error, new_string, py_str, raise_error,
                    string_array)
from ..ndarray.ndarray import NDArray

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json"]

_new = object.__new__

# The op functions of hybridnet.symbol by name (filled when the package generates them).
OPS = {}


def _wrap(handle):
    s = _new(Symbol)
    s._h = handle
    return s


def create(op_name_c, inputs, attrs=EMPTY_ATTRS, name=None):
    """A new Symbol: op (its C name) applied to Symbols with AttrArrays."""
    n = len(inputs)
    handles = ffi.new("hn_symbol*[]", [s._h for s in inputs]) if n else NULL
    out = ffi.new("hn_symbol**")
    rc = lib.hn_symbol_create(op_name_c, handles, n, attrs.keys, attrs.values, attrs.count,
                              c_str(name) if name else NULL, out)
    if rc != 0:
        raise_error(rc)
    return _wrap(out[0])


def _op(name, *args, **kwargs):
    fn = OPS.get(name)
    if fn is None:
        raise error("HN_ERR_NOT_FOUND", f"this build of the library has no operator '{name}'")
    return fn(*args, **kwargs)


def mixing_error(what):
    return error("HN_ERR_UNTRACEABLE",
                 f"{what} mixes a concrete NDArray with symbols: while hybridize() traces "
                 "hybrid_forward, only values computed from the block's inputs and parameters "
                 "can be recorded; make the constant a parameter (self.params.get(..., init=...)) "
                 "or build it with F's ops from the inputs")


def _untraceable(what, instead):
    return error("HN_ERR_UNTRACEABLE",
                 f"{what} is not possible on a Symbol: while hybridize() traces hybrid_forward "
                 f"there are no values, only the graph being recorded. {instead}")


def _apply(lhs, rhs, symbol_op, scalar_op):
    """One arithmetic operator as MXNet's Symbol does it: the elementwise op with another symbol,
    the *Scalar op with a number (passed as written: x + 1 records scalar "1")."""
    if isinstance(rhs, numbers.Number):
        return _op(scalar_op, lhs, scalar=rhs)
    if isinstance(rhs, NDArray):
        raise mixing_error("an operator")
    if symbol_op is not None and isinstance(rhs, Symbol):
        return _op(symbol_op, lhs, rhs)
    return NotImplemented


def _names(getter, handle):
    names, count = ffi.new("char***"), ffi.new("size_t*")
    check(getter(handle, names, count))
    return [py_str(names[0][i]) for i in range(count[0])]


class Symbol(Handle):
    """A symbolic program: outputs of a graph of ops over variables (owns an hn_symbol)."""

    __slots__ = ()
    _free = lib.hn_symbol_free

    # ---- facts -------------------------------------------------------------------------------
    @property
    def name(self):
        """The node name of a single-output symbol (None for a group)."""
        if len(self.list_outputs()) != 1:
            return None
        count = ffi.new("size_t*")
        check(lib.hn_symbol_num_nodes(self._h, count))
        name = ffi.new("char**")
        check(lib.hn_symbol_node(self._h, count[0] - 1, NULL, name))  # the head comes last
        return py_str(name[0])

    def __repr__(self):
        name = self.name
        if name is None:
            return "<Symbol group [" + ", ".join(s.name for s in self) + "]>"
        return f"<Symbol {name}>"

    __str__ = __repr__

    def list_arguments(self):
        return _names(lib.hn_symbol_list_arguments, self._h)

    def list_outputs(self):
        return _names(lib.hn_symbol_list_outputs, self._h)

    def list_auxiliary_states(self):
        return _names(lib.hn_symbol_list_auxiliary_states, self._h)

    def list_inputs(self):
        """Every variable (arguments and auxiliary states) in graph order."""
        count = ffi.new("size_t*")
        check(lib.hn_symbol_num_nodes(self._h, count))
        op, name = ffi.new("char**"), ffi.new("char**")
        inputs = []
        for i in range(count[0]):
            check(lib.hn_symbol_node(self._h, i, op, name))
            if py_str(op[0]) == "null":
                inputs.append(py_str(name[0]))
        return inputs

    def __len__(self):
        return len(self.list_outputs())

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index):
        if isinstance(index, str):
            outputs = self.list_outputs()
            matches = [i for i, n in enumerate(outputs) if n == index]
            if not matches:
                raise error("HN_ERR_NOT_FOUND", f"no output named '{index}' (outputs: "
                            f"{', '.join(outputs)})")
            index = matches[0]
        if not isinstance(index, numbers.Integral):
            raise _untraceable("slicing with " + type(index).__name__,
                               "Use slice ops (F.slice, F.slice_axis) on symbols.")
        out = ffi.new("hn_symbol**")
        check(lib.hn_symbol_output(self._h, index, out))
        return _wrap(out[0])

    # ---- serialization -----------------------------------------------------------------------
    def tojson(self, remove_amp_cast=True):
        """MXNet 1.9 JSON text of the graph."""
        return new_string(lib.hn_symbol_to_json, self._h)

    def save(self, fname, remove_amp_cast=True):
        check(lib.hn_symbol_save(self._h, c_str(fname)))

    # ---- shape inference ---------------------------------------------------------------------
    def _infer_shape(self, args, kwargs):
        """Shapes of (arguments, outputs, auxiliary states), unknown ones as (), and whether
        every shape is known."""
        known = dict(kwargs)
        if args:
            for name, shape in zip(self.list_arguments(), args):
                if shape is not None:
                    known[name] = shape
        names, keep = string_array(list(known))
        shapes = [tuple(int(d) for d in s) for s in known.values()]
        ndims = [len(s) for s in shapes]
        dims = [d for s in shapes for d in s]
        info = ffi.new("hn_shape_info**")
        check(lib.hn_symbol_infer_shape(self._h, len(known), names, ndims, dims or [0],
                                        1, info))
        info = ffi.gc(info[0], lib.hn_shape_info_free)
        complete = ffi.new("int*")
        check(lib.hn_shape_info_complete(info, complete))
        groups = []
        count, name, sdims, sndim = ffi.new("size_t*"), ffi.new("char**"), ffi.new("int64_t**"), ffi.new("int*")
        for group in (lib.HN_SHAPES_ARGUMENTS, lib.HN_SHAPES_OUTPUTS, lib.HN_SHAPES_AUXILIARY_STATES):
            check(lib.hn_shape_info_count(info, group, count))
            shapes = []
            for i in range(count[0]):
                check(lib.hn_shape_info_get(info, group, i, name, sdims, sndim))
                shapes.append(tuple(sdims[0][j] for j in range(sndim[0])))
            groups.append(shapes)
        return groups, bool(complete[0])

    def infer_shape(self, *args, **kwargs):
        """(argument shapes, output shapes, auxiliary state shapes) from known input shapes
        (positional in list_arguments() order, or by name); (None, None, None) when the known
        shapes do not determine all of them (MXNet's behaviour; see infer_shape_partial)."""
        groups, complete = self._infer_shape(args, kwargs)
        return tuple(groups) if complete else (None, None, None)

    def infer_shape_partial(self, *args, **kwargs):
        """Like infer_shape, with () (or 0 dimensions) for what stays unknown."""
        return tuple(self._infer_shape(args, kwargs)[0])

    def __neg__(self):
        return self.__mul__(-1.0)

    def __pos__(self):
        return self

    def __abs__(self):
        return _op("abs", self)

    __hash__ = object.__hash__

    # ---- what a graph cannot hold ------------------------------------------------------------
    def _inplace(self, operator):
        raise _untraceable(f"the in-place update '{operator}'",
                           f"Write a new value instead: x = x {operator[0]} y.")

    def __iadd__(self, other):
        self._inplace("+=")

    def __isub__(self, other):
        self._inplace("-=")

    def __imul__(self, other):
        self._inplace("*=")

    def __itruediv__(self, other):
        self._inplace("/=")

    def __setitem__(self, key, value):
        raise _untraceable("assigning to a slice (x[...] = y)",
                           "Compute a new value with ops (e.g. F.where, F.concat) and use it.")

    def asnumpy(self):
        raise _untraceable("asnumpy()", "Read values outside hybrid_forward (on the NDArray the "
                           "block returns), or print(x) to see the graph node.")

    def asscalar(self):
        raise _untraceable("asscalar()", "Read values outside hybrid_forward, on the block's "
                           "NDArray output.")

    def __bool__(self):
        raise _untraceable("a Python decision on a value (if, while, and, or, bool())",
                           "Express the choice with ops (F.where), or keep the block eager "
                           "(do not hybridize it).")

    def __float__(self):
        raise _untraceable("float()", "Values exist only after the graph runs.")

    __int__ = __float__



_operators.install_fluent(Symbol, OPS)
_operators.install(
    Symbol, _apply,
    {"add": ("_Plus", "_PlusScalar"), "sub": ("_Minus", "_MinusScalar"),
     "mul": ("_Mul", "_MulScalar"), "truediv": ("_Div", "_DivScalar"),
     "mod": ("_Mod", "_ModScalar"), "pow": ("_Power", "_PowerScalar"),
     "eq": ("_equal", "_equal_scalar"), "ne": ("_not_equal", "_not_equal_scalar"),
     "gt": ("_greater", "_greater_scalar"), "ge": ("_greater_equal", "_greater_equal_scalar"),
     "lt": ("_lesser", "_lesser_scalar"), "le": ("_lesser_equal", "_lesser_equal_scalar")},
    {"radd": "_PlusScalar", "rsub": "_RMinusScalar", "rmul": "_MulScalar",
     "rtruediv": "_RDivScalar", "rmod": "_RModScalar", "rpow": "_RPowerScalar"})


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, **kwargs):
    """A variable (a graph input) named `name`. The MXNet attribute arguments (shape, dtype,
    init, lr_mult, ...) are hints this binding does not record: pass shapes to infer_shape."""
    given = {k: v for k, v in dict(attr=attr, shape=shape, lr_mult=lr_mult, wd_mult=wd_mult,
                                    dtype=dtype, init=init, stype=stype, **kwargs).items()
             if v is not None}
    if given:
        raise error("HN_ERR_UNSUPPORTED", f"var('{name}'): the attribute arguments "
                    f"{', '.join(given)} are not supported; give shapes to infer_shape instead")
    out = ffi.new("hn_symbol**")
    check(lib.hn_symbol_var(c_str(name), out))
    return _wrap(out[0])


Variable = var


def Group(symbols):
    """One symbol with the outputs of all of `symbols`."""
    symbols = list(symbols)
    if not all(isinstance(s, Symbol) for s in symbols):
        raise error("HN_ERR_INVALID_ARGUMENT", "Group takes a list of Symbols")
    handles = ffi.new("hn_symbol*[]", [s._h for s in symbols])
    out = ffi.new("hn_symbol**")
    check(lib.hn_symbol_group(handles, len(symbols), out))
    return _wrap(out[0])


def load(fname):
    """A symbol from an MXNet -symbol.json file (0.8 to 1.9 formats)."""
    out = ffi.new("hn_symbol**")
    check(lib.hn_symbol_load(c_str(fname), out))
    return _wrap(out[0])


def load_json(json_str):
    out = ffi.new("hn_symbol**")
    check(lib.hn_symbol_from_json(c_str(json_str), out))
    return _wrap(out[0])
