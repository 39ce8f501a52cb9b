"""NDArray: creation, printing, arithmetic, views, NumPy and DLPack interop, files, random."""
import gc
import os
import sys
import threading
import weakref

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import nd, sym


def test_array_copies_and_keeps_dtype():
    src = np.arange(6, dtype=np.float64).reshape(2, 3)
    a = nd.array(src)
    assert a.shape == (2, 3) and a.dtype == np.float64 and a.size == 6 and a.ndim == 2
    src[0, 0] = 100
    assert a.asnumpy()[0, 0] == 0  # nd.array copies, as in MXNet
    assert nd.array([[1, 2], [3, 4]]).dtype == np.float32  # lists: float32
    assert nd.array([1, 2], dtype="int32").dtype == np.int32
    assert nd.array(a).asnumpy().tolist() == a.asnumpy().tolist()
    assert nd.array(memoryview(np.ones(3, np.float32))).asnumpy().tolist() == [1, 1, 1]
    assert nd.array(3.5).shape == (1,)  # MXNet 1.x has no 0-d arrays


def test_creation_functions():
    assert nd.zeros((2, 3)).asnumpy().tolist() == [[0] * 3] * 2
    assert nd.ones(4, dtype="int64").asnumpy().tolist() == [1, 1, 1, 1]
    assert nd.ones(4, dtype="int64").dtype == np.int64
    assert nd.full((2,), 7.5).asnumpy().tolist() == [7.5, 7.5]
    assert nd.arange(0, 3).asnumpy().tolist() == [0, 1, 2]
    assert nd.arange(0, 2, repeat=2).asnumpy().tolist() == [0, 0, 1, 1]
    assert nd.empty((0, 3)).shape == (0, 3)
    with pytest.raises(mx.UnsupportedError, match="CPU"):
        nd.zeros((2,), ctx=mx.gpu(0))
    assert nd.zeros((1,), ctx=mx.cpu()).context == mx.cpu(0)


def test_printing_like_mxnet():
    text = repr(nd.array([[0.25, -1.5]]))
    assert text == "\n[[ 0.25 -1.5 ]]\n<NDArray 1x2 @cpu(0)>"
    assert str(nd.zeros((2,), dtype="int32")).endswith("<NDArray 2 @cpu(0)>")
    assert "=== {}".format(nd.ones((1,))).startswith("=== \n[1.]")


def test_arithmetic_follows_mxnet_ops():
    a = nd.array([[1, 2], [3, 4]])
    b = nd.array([10, 20])
    assert (a + b).asnumpy().tolist() == [[11, 22], [13, 24]]  # broadcast_add
    assert (a - 1).asnumpy().tolist() == [[0, 1], [2, 3]]
    assert (1 - a).asnumpy().tolist() == [[0, -1], [-2, -3]]
    assert (a * a).asnumpy().tolist() == [[1, 4], [9, 16]]
    assert (2 * a).asnumpy().tolist() == [[2, 4], [6, 8]]
    assert (a / 2).asnumpy().tolist() == [[0.5, 1], [1.5, 2]]
    assert (4 / a).asnumpy()[0].tolist() == [4, 2]
    assert (a ** 2).asnumpy()[1].tolist() == [9, 16]
    assert (-a).asnumpy()[0].tolist() == [-1, -2]
    assert abs(nd.array([-3.0])).asscalar() == 3.0
    c = nd.array([1, 1])
    c += 1
    c *= 3
    assert c.asnumpy().tolist() == [6, 6]
    with pytest.raises(mx.ShapeError, match="broadcast"):
        nd.array([1, 2, 3]) + nd.array([1, 2])


def test_fluent_methods_and_reshape_views():
    a = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert a.sum(axis=1).asnumpy().tolist() == [3, 12]
    assert a.T.shape == (3, 2)
    assert a.relu().shape == (2, 3)
    view = a.reshape((3, -1))
    assert view.shape == (3, 2)
    view[0, 0] = 42  # a reshape is a view of the same storage
    assert a.asnumpy()[0, 0] == 42
    assert a.reshape(0, 3).shape == (2, 3)
    assert a.reshape((-3,)).shape == (6,)  # MXNet's special values through the Reshape op
    assert a.astype("int32").dtype == np.int32
    assert a.flatten().shape == (2, 3)
    assert a.copy().asnumpy().tolist() == a.asnumpy().tolist()
    with pytest.raises(mx.ShapeError):
        a.reshape((4, -1))
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        a.nonsense()


def test_indexing_and_scalars():
    a = nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a[1].asnumpy().tolist() == [4, 5, 6, 7]
    assert a[:, 1].asnumpy().tolist() == [1, 5, 9]
    a[0] = 0
    a[1:, 0] = nd.array([-1, -2])
    assert a.asnumpy()[:, 0].tolist() == [0, -1, -2]
    assert nd.array([5]).asscalar() == 5 and float(nd.array([2.5])) == 2.5
    assert bool(nd.array([1])) and not bool(nd.array([0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(nd.array([1, 2]))
    with pytest.raises(mx.InvalidArgumentError, match="one element"):
        nd.array([1, 2]).asscalar()
    assert len(a) == 3 and [r.shape for r in a] == [(4,)] * 3


def test_numpy_views_share_memory():
    a = nd.array([[1, 2], [3, 4]])
    view = np.asarray(a)  # __array_interface__: no copy
    view[0, 0] = 9
    assert a.asnumpy()[0, 0] == 9
    a[1, 1] = -4
    assert view[1, 1] == -4
    del a
    gc.collect()
    assert view.tolist() == [[9, 2], [3, -4]]  # the view keeps the storage alive
    b = nd.array([1.5, 2.5])
    assert np.array(b, dtype=np.float64).dtype == np.float64
    assert (np.asarray(b) * 2).tolist() == [3, 5]
    assert np.asarray(nd.zeros((0, 2))).shape == (0, 2)


def test_from_numpy_zero_copy_and_lifetime():
    source = np.arange(4, dtype=np.float32)
    a = nd.from_numpy(source)
    source[0] = 10
    assert a.asnumpy()[0] == 10  # the same memory
    b = (a * 2).asnumpy()
    assert b.tolist() == [20, 2, 4, 6]
    source_id = id(source)
    del source
    gc.collect()
    assert a.asnumpy().tolist() == [10, 1, 2, 3]  # pinned while the library holds it
    copied = nd.from_numpy(np.ones(2), zero_copy=False)
    assert copied.dtype == np.float64
    with pytest.raises(mx.InvalidArgumentError, match="C-contiguous"):
        nd.from_numpy(np.ones((4, 4))[:, ::2])
    readonly = np.frombuffer(b"\0" * 16, dtype=np.float32)
    with pytest.raises(mx.InvalidArgumentError, match="read-only"):
        nd.from_numpy(readonly)
    assert nd.from_numpy(readonly, zero_copy=False).shape == (4,)
    assert source_id


def test_dlpack_round_trips():
    a = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    n = np.from_dlpack(a)  # numpy consumes our capsule without copying (a read-only view)
    a[0, 0] = 5
    assert n[0, 0] == 5
    assert a.__dlpack_device__() == (1, 0)
    back = nd.from_dlpack(np.arange(3, dtype=np.int64))
    assert back.dtype == np.int64 and back.asnumpy().tolist() == [0, 1, 2]
    src = np.zeros(3, dtype=np.float32)
    shared = nd.from_dlpack(src)
    src[2] = 7
    assert shared.asnumpy()[2] == 7
    capsule = a.to_dlpack_for_read()
    c = nd.from_dlpack(capsule)
    assert c.asnumpy().tolist() == a.asnumpy().tolist()
    with pytest.raises(mx.InvalidArgumentError, match="consumed once"):
        nd.from_dlpack(capsule)
    unused = a.to_dlpack_for_write()
    del unused  # an unconsumed capsule frees its tensor
    gc.collect()
    with pytest.raises(mx.InvalidArgumentError, match="C-contiguous"):
        nd.from_dlpack(np.ones((3, 4), np.float32)[:, ::2])


def test_buffer_protocol():
    # Consuming: any buffer; providing: memoryview(x) on Python >= 3.12, a numpy view before.
    x = nd.array(bytearray(b"\x00\x00\x80\x3f"), dtype="uint8")
    assert x.shape == (4,)
    a = nd.array([1.0, 2.0])
    mv = a.__buffer__(0)
    assert mv.tolist() == [1.0, 2.0] and mv.format == "f"


def test_save_and_load(tmp_path):
    path = str(tmp_path / "arrays.params")
    nd.save(path, {"w": nd.array([1, 2]), "b": nd.array([[3.0]])})
    loaded = nd.load(path)
    assert sorted(loaded) == ["b", "w"] and loaded["w"].asnumpy().tolist() == [1, 2]
    nd.save(path, [nd.array([1])])
    assert nd.load(path)[0].asnumpy().tolist() == [1]
    with pytest.raises(mx.IoError, match="nonexistent"):
        nd.load(str(tmp_path / "nonexistent.params"))
    bad = tmp_path / "bad.params"
    bad.write_bytes(b"not a params file")
    with pytest.raises(mx.FormatError, match="bad.params"):
        nd.load(str(bad))
    with pytest.raises(mx.InvalidArgumentError, match="not an NDArray"):
        nd.save(path, {"x": [1, 2]})


def test_random_is_seeded_by_the_library():
    mx.random.seed(7)
    a = nd.random.normal(shape=(2, 3))
    mx.random.seed(7)
    b = nd.random.normal(shape=(2, 3))
    assert a.asnumpy().tobytes() == b.asnumpy().tobytes()
    u = nd.random.uniform(-2, -1, shape=1000).asnumpy()
    assert u.min() >= -2 and u.max() < -1
    assert nd.random.uniform(shape=(2,), dtype="float64").dtype == np.float64
    assert nd.random.normal().shape == (1,)
    with pytest.raises(mx.InvalidArgumentError, match="stddev"):
        nd.random.normal(0, -1, shape=(2,))
    with pytest.raises(mx.DtypeError, match="int32"):
        nd.random.uniform(shape=(2,), dtype="int32")


def test_random_functions_are_mxnets_over_the_random_ops():
    mx.random.seed(11)
    first = [nd.random.exponential(2, shape=(3,)), nd.random.gamma(2, 3, shape=(2, 2)),
             nd.random_normal(loc=1, shape=(4,)), nd.random.randint(-3, 3, shape=(50,))]
    mx.random.seed(11)
    again = [nd.random.exponential(2, shape=(3,)), nd.random.gamma(2, 3, shape=(2, 2)),
             nd.random_normal(loc=1, shape=(4,)), nd.random.randint(-3, 3, shape=(50,))]
    for x, y in zip(first, again):
        assert x.asnumpy().tobytes() == y.asnumpy().tobytes()
    assert (first[0].asnumpy() > 0).all() and first[1].shape == (2, 2)
    ints = first[3].asnumpy()
    assert ints.dtype == np.int32 and ints.min() >= -3 and ints.max() < 3
    # array parameters draw `shape` values per element (_sample_normal)
    per_element = nd.random.normal(nd.array([0, 1000]), nd.array([1, 1]), shape=5).asnumpy()
    assert per_element.shape == (2, 5) and (per_element[1] > 900).all()
    counts = nd.random.poisson(nd.array([0.0]), shape=4).asnumpy()
    assert counts.tolist() == [[0, 0, 0, 0]]
    picks = nd.random.multinomial(nd.array([[0, 1, 0], [0, 0, 1]]), shape=3).asnumpy()
    assert picks.tolist() == [[1, 1, 1], [2, 2, 2]]
    assert sorted(nd.random.shuffle(nd.arange(8)).asnumpy().tolist()) == list(range(8))
    assert nd.random.uniform_like(nd.zeros((3, 2))).shape == (3, 2)
    with pytest.raises(mx.InvalidArgumentError, match="all be numbers or all NDArrays"):
        nd.random.normal(nd.zeros((2,)), 1)
    assert nd.random.gamma(1, 1, (2, 3), "float64").dtype == np.float64  # MXNet's order
    with pytest.raises(mx.InvalidArgumentError, match="at most 6 positional arguments"):
        nd.random.gamma(1, 1, 2, None, None, None, 7)
    with pytest.raises(mx.UnsupportedError, match="gpu"):
        nd.random.gamma(1, 1, ctx=mx.gpu())
    # symbols: the same functions add the ops' nodes
    s = sym.random.uniform(0, 2, shape=(2, 3))
    assert '"op": "_random_uniform"' in s.tojson() and s.list_arguments() == []
    t = sym.random.normal(sym.var("mu"), sym.var("sigma"), shape=4)
    assert '"op": "_sample_normal"' in t.tojson() and t.list_arguments() == ["mu", "sigma"]


def test_arrays_are_freed():
    gc.collect()
    before = mx.live_handles()
    arrays = [nd.ones((4,)) * i for i in range(50)]
    views = [np.asarray(a) for a in arrays]
    del arrays
    gc.collect()
    assert mx.live_handles() - before == 50  # kept by the numpy views
    del views
    gc.collect()
    assert mx.live_handles() == before


def test_handles_are_released_by_their_class_free():
    released = []

    class Owner(mx.base.Handle):
        __slots__ = ()
        _free = released.append

    class Failing(mx.base.Handle):
        __slots__ = ()

        def _free(handle):
            raise ValueError(f"cannot free {handle}")

    Owner(1)
    ref = weakref.ref(Owner(2))
    assert ref() is None and released == [1, 2]
    with pytest.raises(AttributeError, match="_h"):
        object.__new__(Owner)._h  # made without a handle: nothing to release
    with pytest.raises(KeyError, match="kept"):
        try:
            raise KeyError("kept")
        finally:
            Owner(3)  # released while the KeyError propagates, which stays the one raised
    assert released == [1, 2, 3]
    seen = []
    hook, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        Failing(4)
    finally:
        sys.unraisablehook = hook
    assert [str(u.exc_value) for u in seen] == ["cannot free 4"]


def test_ops_from_several_threads():
    errors = []

    def work(seed):
        try:
            x = nd.array(np.full((8, 8), seed, np.float32))
            for _ in range(200):
                y = nd.relu(x - 1) * 2
            assert y.asnumpy()[0, 0] == max(seed - 1, 0) * 2
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_library_is_found_without_ld_library_path():
    assert os.environ.get("LD_LIBRARY_PATH", "").find("build/lib") < 0


def test_basic_slices_are_views_like_mxnet():
    a = nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    row = a[1]
    row[:] = 0  # a contiguous selection shares the storage
    assert a.asnumpy()[1].tolist() == [0, 0, 0, 0]
    block = a[0:2]
    block[0, 0] = -1
    assert a.asnumpy()[0, 0] == -1
    column = a[:, 1]  # not contiguous: a copy
    column[:] = 100
    assert a.asnumpy()[2, 1] == 9
    assert a[2, 3].shape == (1,) and a[2, 3].asscalar() == 11
