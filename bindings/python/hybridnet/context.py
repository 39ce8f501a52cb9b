"""Devices, as MXNet names them. hybridnet computes on the CPU: cpu() is the one context; the
ctx= arguments of MXNet's API are accepted for it, and gpu() contexts are refused when used."""

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus"]


class Context:
    """A device: ("cpu", 0) here."""

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        self.device_type = device_type
        self.device_id = device_id

    @staticmethod
    def from_any(ctx):
        if isinstance(ctx, Context):
            return ctx
        if isinstance(ctx, (list, tuple)) and len(ctx) == 1:
            return Context.from_any(ctx[0])
        if isinstance(ctx, str):
            kind, _, index = ctx.partition("(")
            return Context(kind, int(index.rstrip(")") or 0))
        raise TypeError(f"not a context: {ctx!r}")

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def cpu(device_id=0):
    return Context("cpu", device_id)


def cpu_pinned(device_id=0):
    return Context("cpu", device_id)


def gpu(device_id=0):
    return Context("gpu", device_id)


def current_context():
    return cpu(0)


def num_gpus():
    return 0
