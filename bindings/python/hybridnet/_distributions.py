"""MXNet's random functions (nd.random.* and sym.random.*) over the library's random ops: with
numbers as the distribution's parameters they run the _random_<name> op (shape= draws), with
arrays (NDArrays or Symbols) the _sample_<name> op (shape= draws per parameter element), as
MXNet's _random_helper does. One table for both namespaces."""
import numbers

from .base import error

# function -> (its parameters with MXNet's defaults, op for numbers, op for arrays,
#              the ops' names of those parameters)
DISTRIBUTIONS = {
    "uniform": ((("low", 0), ("high", 1)), "_random_uniform", "_sample_uniform",
                ("low", "high")),
    "normal": ((("loc", 0), ("scale", 1)), "_random_normal", "_sample_normal", ("loc", "scale")),
    "exponential": ((("scale", 1),), "_random_exponential", "_sample_exponential", ("lam",)),
    "gamma": ((("alpha", 1), ("beta", 1)), "_random_gamma", "_sample_gamma", ("alpha", "beta")),
    "poisson": ((("lam", 1),), "_random_poisson", "_sample_poisson", ("lam",)),
    "negative_binomial": ((("k", 1), ("p", 1)), "_random_negative_binomial",
                          "_sample_negative_binomial", ("k", "p")),
    "generalized_negative_binomial": ((("mu", 1), ("alpha", 1)),
                                      "_random_generalized_negative_binomial",
                                      "_sample_generalized_negative_binomial", ("mu", "alpha")),
}


def install(module, ops, tensor_type, imperative, check_context=None):
    """Adds the random functions to `module` (and returns them by name): `ops` maps op names to
    the namespace's generated functions; `imperative` adds MXNet's ctx= (checked by
    `check_context`) and out= arguments and shape (1,) by default."""
    module_name = module.__name__
    functions = {}

    def op(name):
        fn = ops.get(name)
        if fn is None:
            raise error("HN_ERR_NOT_FOUND", f"this build of the library has no operator '{name}'")
        return fn

    def draw(function, params, shape, dtype, ctx, out, kwargs):
        values = [v for _, v in params]
        if function == "exponential":  # MXNet's exponential takes a scale; its ops a rate
            values = [1.0 / values[0]]
        _, random_op, sample_op, op_keys = DISTRIBUTIONS[function]
        arrays = [isinstance(v, tensor_type) for v in values]
        if any(arrays) and not all(arrays) or not any(arrays) and \
                not all(isinstance(v, numbers.Real) for v in values):
            raise error("HN_ERR_INVALID_ARGUMENT", f"random.{function}: the parameters "
                        f"({', '.join(k for k, _ in params)}) must all be numbers or all "
                        f"{tensor_type.__name__}s, got "
                        f"{', '.join(type(v).__name__ for v in values)}")
        attrs = dict(kwargs)
        if shape is not None:
            attrs["shape"] = shape
        if dtype is not None:
            attrs["dtype"] = dtype
        if imperative:
            attrs["out"] = out
        if all(arrays):
            return op(sample_op)(*values, **attrs)
        if imperative:
            check_context(ctx)
            if shape is None and out is None:
                attrs["shape"] = (1,)
        return op(random_op)(**dict(zip(op_keys, values)), **attrs)

    trailing = ("shape", "dtype", "ctx", "out") if imperative else ("shape", "dtype")
    for function, (params, _, _, _) in DISTRIBUTIONS.items():
        def sampler(*args, _function=function, _params=params, **kwargs):
            # MXNet's order: the distribution's parameters, then shape, dtype[, ctx, out]
            names = [k for k, _ in _params] + list(trailing)
            if len(args) > len(names):
                raise error("HN_ERR_INVALID_ARGUMENT", f"random.{_function} takes at most "
                            f"{len(names)} positional arguments ({', '.join(names)}), "
                            f"got {len(args)}")
            values = dict(_params)
            values.update(zip(names, args))
            for k in names:
                if k in kwargs:
                    values[k] = kwargs.pop(k)
            shape, dtype, ctx, out = (values.pop(k, None) for k in ("shape", "dtype", "ctx", "out"))
            return draw(_function, list(values.items()), shape, dtype, ctx, out, kwargs)

        sampler.__name__ = sampler.__qualname__ = function
        sampler.__module__ = module_name
        sampler.__doc__ = (f"Samples of the {function.replace('_', ' ')} distribution "
                           f"({', '.join(f'{k}={v}' for k, v in params)}): numbers draw `shape` "
                           f"values ({params and '(1,) by default' if imperative else 'op default'}"
                           f"), {tensor_type.__name__} parameters draw `shape` values per element.")
        functions[function] = sampler

    def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Integers drawn uniformly from [low, high) (int32 by default)."""
        attrs = dict(kwargs, low=low, high=high)
        if shape is not None or imperative:
            attrs["shape"] = shape if shape is not None else (1,)
        attrs["dtype"] = dtype if dtype is not None else "int32"
        if imperative:
            check_context(ctx)
            attrs["out"] = out
        return op("_random_randint")(**attrs)

    def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
        """Indices drawn from the categorical distributions in the last axis of `data`."""
        attrs = dict(kwargs, get_prob=get_prob, dtype=dtype)
        if shape is not None:
            attrs["shape"] = shape
        if imperative:
            attrs["out"] = out
        return op("_sample_multinomial")(data, **attrs)

    def shuffle(data, **kwargs):
        """`data` with its first axis randomly permuted."""
        return op("_shuffle")(data, **kwargs)

    for fn in (randint, multinomial, shuffle):
        fn.__module__ = module_name
        functions[fn.__name__] = fn
    for name, fn in functions.items():
        setattr(module, name, fn)
    return functions
