"""The profiler, with MXNet 1.9.1's mx.profiler API (hn_profiler_*).

    from hybridnet import profiler
    profiler.set_config(profile_all=True, aggregate_stats=True, filename="trace.json")
    profiler.set_state("run")
    net(x)
    profiler.set_state("stop")
    profiler.dump()              # trace.json: load it in chrome://tracing or Perfetto
    print(profiler.dumps())      # count, total, min, max, average ms per op type

Every op call of a hybridized graph (fused kernels under their own names) and every eager op
call (autograd's backward among them) is one complete event of the trace.
"""
import contextlib

from ._ffi import ffi, lib
from .base import attr_arrays, c_str, check

__all__ = ["set_config", "set_state", "state", "dump", "dumps", "pause", "resume", "scope",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker"]


def set_config(**kwargs):
    """Sets options by MXNet's keywords: profile_all, profile_symbolic, profile_imperative,
    profile_memory, profile_api, aggregate_stats, continuous_dump, filename, dump_period,
    profile_process (keyword arguments only; booleans as MXNet writes them)."""
    arrays = attr_arrays(kwargs)
    check(lib.hn_profiler_set_config(arrays.keys, arrays.values, arrays.count))


def set_state(state="stop", profile_process="worker"):
    """'run' starts recording, 'stop' stops it."""
    _worker_only(profile_process)
    check(lib.hn_profiler_set_state(c_str(state)))


def state():
    """'run' or 'stop'."""
    out = ffi.new("const char**")
    check(lib.hn_profiler_state(out))
    return ffi.string(out[0]).decode()


def dump(finished=True, profile_process="worker"):
    """Writes the events recorded since the last dump to the trace file; `finished` completes
    it (with continuous_dump, later dumps before that append)."""
    _worker_only(profile_process)
    check(lib.hn_profiler_dump(1 if finished else 0))


def dumps(reset=False, format="table", sort_by="total", ascending=False):  # noqa: A002 (MXNet's)
    """The aggregate statistics as MXNet prints them ('table') or as JSON ('json'), sorted by
    'total', 'avg', 'min', 'max' or 'count'; `reset` clears them afterwards."""
    out = ffi.new("char**")
    check(lib.hn_profiler_dumps(1 if reset else 0, c_str(format), c_str(sort_by),
                                1 if ascending else 0, out))
    try:
        return ffi.string(out[0]).decode("utf-8")
    finally:
        lib.hn_string_free(out[0])


def pause(profile_process="worker"):
    """Stops recording until resume(), the state staying 'run'."""
    _worker_only(profile_process)
    check(lib.hn_profiler_pause())


def resume(profile_process="worker"):
    _worker_only(profile_process)
    check(lib.hn_profiler_resume())


@contextlib.contextmanager
def scope(name="<unk>:"):
    """Prefixes the names of the ops recorded on this thread inside the block with `name`
    (MXNet 2's profiler.scope; ':' appended when missing)."""
    check(lib.hn_profiler_scope_push(c_str(name)))
    try:
        yield
    finally:
        check(lib.hn_profiler_scope_pop())


def _worker_only(profile_process):
    if profile_process != "worker":
        raise ValueError("profile_process %r: only 'worker' exists (no parameter server)"
                         % (profile_process,))


class Domain:
    """A named group of tasks, frames, counters and markers (their trace category)."""

    def __init__(self, name):
        self.name = name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)

    def __str__(self):
        return self.name


class _Duration:
    _kind = None

    def __init__(self, domain_name, name):
        self.name = name
        self._domain = domain_name
        self._start = None

    def start(self):
        """Starts timing."""
        out = ffi.new("int64_t*")
        check(lib.hn_profiler_clock(out))
        self._start = out[0]

    def stop(self):
        """Records the duration since start() (one complete event)."""
        if self._start is None:
            raise RuntimeError("%s %r stopped without being started" % (self._kind, self.name))
        start, self._start = self._start, None
        check(lib.hn_profiler_record_duration(c_str(self._kind), c_str(self._domain),
                                              c_str(self.name), start))

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def __str__(self):
        return self.name


class Task(_Duration):
    """A timed task of a domain."""

    _kind = "task"

    def __init__(self, domain, name):
        super().__init__(domain.name, name)


class Frame(_Duration):
    """A timed frame (an iteration) of a domain."""

    _kind = "frame"

    def __init__(self, domain, name):
        super().__init__(domain.name, name)


class Event(_Duration):
    """A timed event (category 'event')."""

    _kind = "event"

    def __init__(self, name):
        super().__init__("event", name)


class Counter:
    """A value tracked over time (a counter event at each change)."""

    def __init__(self, domain, name, value=None):
        self.name = name
        self._domain = domain.name
        self.value = 0
        if value is not None:
            self.set_value(value)

    def set_value(self, value):
        self.value = int(value)
        check(lib.hn_profiler_set_counter(c_str(self._domain), c_str(self.name), self.value))

    def increment(self, delta=1):
        self.set_value(self.value + int(delta))

    def decrement(self, delta=1):
        self.set_value(self.value - int(delta))

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


class Marker:
    """An instant in time of a domain."""

    def __init__(self, domain, name):
        self.name = name
        self.domain = domain

    def mark(self, scope="process"):  # noqa: F811 (MXNet's argument name)
        """Records the instant; scope 'global', 'process', 'thread', 'task' or 'marker'."""
        check(lib.hn_profiler_mark(c_str(self.domain.name), c_str(self.name), c_str(scope)))
