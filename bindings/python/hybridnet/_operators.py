"""Python's operators (+, -, ==, ...) on NDArray and Symbol, installed from each class's table
of the ops MXNet calls for them (NDArray: broadcast_add / _plus_scalar; Symbol: _Plus /
_PlusScalar, ...), and every other op as a method with the value first (x.sum(axis=1))."""


def install(cls, apply, operators, reflected):
    """Adds cls.__<name>__ for each operator: `operators` maps a name ("add") to (the op between
    two values, the op with a number on the right); `reflected` maps a name ("rsub") to the op
    with a number on the left. apply(self, other, values_op, number_op) makes one call, or
    returns NotImplemented."""
    for name, (values_op, number_op) in operators.items():
        setattr(cls, f"__{name}__", _operator(name, apply, values_op, number_op))
    for name, number_op in reflected.items():
        setattr(cls, f"__{name}__", _operator(name, apply, None, number_op))


def _operator(name, apply, values_op, number_op):
    def method(self, other):
        return apply(self, other, values_op, number_op)

    method.__name__ = f"__{name}__"
    method.__doc__ = f"{values_op or number_op}" + (f" ({number_op} with a number)"
                                                    if values_op else "")
    return method


def install_fluent(cls, ops):
    """cls.<op>(...) calls ops[<op>](self, ...) for the op functions generated into `ops`."""

    def __getattr__(self, name):
        fn = ops.get(name) if not name.startswith("_") else None
        if fn is None:
            raise AttributeError(f"'{cls.__name__}' object has no attribute '{name}'")

        def method(*args, **kwargs):
            return fn(self, *args, **kwargs)

        method.__name__ = name
        method.__doc__ = fn.__doc__
        return method

    cls.__getattr__ = __getattr__
