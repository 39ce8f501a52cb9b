"""hybridnet.profiler: MXNet's mx.profiler calls on a hybridized ResNet-18 and on eager code."""
import collections
import json
import os
import re
import sys

import pytest

import hybridnet as mx
from hybridnet import autograd, nd, profiler
from hybridnet.gluon.model_zoo import vision


@pytest.fixture
def trace_path(tmp_path):
    yield str(tmp_path / "trace.json")
    # Leave the profiler stopped, with nothing recorded, for the next test.
    profiler.set_state("stop")
    profiler.resume()
    profiler.set_config(profile_all=False, aggregate_stats=False,
                        filename=str(tmp_path / "drain.json"))
    profiler.dump()
    profiler.dumps(reset=True)


def check_trace_module(source_dir):
    sys.path.insert(0, os.path.join(source_dir, "tests", "common"))
    try:
        import check_trace
    finally:
        sys.path.pop(0)
    return check_trace


def table_counts(table, group="operator"):
    lines = table.splitlines()
    start = lines.index(group) + 4  # the title, ====, the header, ----
    counts = {}
    for line in lines[start:]:
        if not line.strip():
            break
        name, count, total, low, high, avg = line.split()
        counts[name] = int(count)
        assert float(low) <= float(avg) <= float(high) <= float(total) + 1e-4
    return counts


def test_resnet18_trace_and_table(trace_path, source_dir):
    net = vision.get_model("resnet18_v1")
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.random.uniform(shape=(1, 3, 64, 64))
    net(x)
    profiler.set_config(profile_symbolic=True, aggregate_stats=True, filename=trace_path)
    profiler.set_state("run")
    assert profiler.state() == "run"
    net(x).wait_to_read()
    profiler.set_state("stop")
    profiler.dump()
    table = profiler.dumps()
    with open(trace_path) as f:
        trace = json.load(f)
    assert check_trace_module(source_dir).problems(trace, 20, ["_hn_convolution"]) == []
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    per_op = collections.Counter(e["cat"] for e in complete)
    assert per_op["_hn_convolution"] == 20
    assert all(e["args"]["fused"].startswith("Convolution") for e in complete
               if e["cat"] == "_hn_convolution")
    assert table_counts(table) == dict(per_op)
    assert re.search(r"Name +Total Count +Time \(ms\) +Min Time \(ms\)", table)
    stats = json.loads(profiler.dumps(format="json", sort_by="count"))
    assert stats["Time"]["operator"]["_hn_convolution"]["Count"] == 20
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}


def test_eager_backward_scope_and_user_events(trace_path):
    profiler.set_config(profile_imperative=True, aggregate_stats=True, filename=trace_path)
    profiler.set_state("run")
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with profiler.scope("step"):
        with autograd.record():
            y = nd.exp(x)
        y.backward()
    domain = profiler.Domain("loop")
    with domain.new_task("epoch"):
        nd.relu(x)
    counter = domain.new_counter("batches", 1)
    counter += 2
    domain.new_marker("done").mark("thread")
    profiler.pause()
    nd.relu(x)  # not recorded
    profiler.resume()
    profiler.set_state("stop")
    profiler.dump()
    counts = table_counts(profiler.dumps())
    assert counts["step:exp"] == 1
    assert counts["relu"] == 1
    # The backward ran exp's gradient, the head gradient times exp(x), inside the scope.
    assert counts["step:elemwise_mul"] == 1
    assert table_counts(profiler.dumps(reset=True), "loop") == {"epoch": 1}
    assert "loop" not in profiler.dumps()
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    assert [e["args"]["batches"] for e in events if e["ph"] == "C"] == [1, 3]
    assert [e["name"] for e in events if e["ph"] == "i"] == ["done"]


def test_errors_name_the_problem(trace_path):
    with pytest.raises(mx.MXNetError, match="unknown profiler option 'profile_everything'"):
        profiler.set_config(profile_everything=True)
    with pytest.raises(mx.MXNetError, match="expected 'run' or 'stop'"):
        profiler.set_state("go")
    with pytest.raises(mx.MXNetError, match="format 'xml'"):
        profiler.dumps(format="xml")
    with pytest.raises(ValueError, match="only 'worker'"):
        profiler.set_state("run", profile_process="server")
    with pytest.raises(RuntimeError, match="stopped without being started"):
        profiler.Event("e").stop()
    profiler.set_config(filename="/nonexistent-hybridnet-dir/trace.json")
    with pytest.raises(mx.MXNetError, match="cannot open the trace file "
                                            "'/nonexistent-hybridnet-dir/trace.json'"):
        profiler.dump()
