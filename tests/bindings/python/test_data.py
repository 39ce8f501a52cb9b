"""gluon.data (datasets, samplers, DataLoader, vision transforms), mx.io.NDArrayIter and
gluon.utils; python.golden_metrics_data compares the same with MXNet 1.9.1."""
import os

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import gluon, nd
from hybridnet.gluon import data
from hybridnet.gluon.data.vision import transforms


def labels_of(loader):
    return [batch[1].asnumpy().tolist() for batch in loader]


def test_loader_last_batch_modes_and_lengths():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    dataset = data.ArrayDataset(x, np.arange(10, dtype=np.float32))
    keep = data.DataLoader(dataset, batch_size=4)
    assert len(keep) == 3
    assert labels_of(keep) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    first = next(iter(keep))
    assert first[0].shape == (4, 2) and first[0].asnumpy().tolist() == x[:4].tolist()
    discard = data.DataLoader(dataset, batch_size=4, last_batch="discard")
    assert len(discard) == 2 and labels_of(discard) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    rollover = data.DataLoader(dataset, batch_size=4, last_batch="rollover")
    assert labels_of(rollover) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(rollover) == 3
    assert labels_of(rollover) == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]


def test_loader_of_one_and_of_three_arrays():
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    lone = [b.asnumpy().tolist() for b in data.DataLoader(nd.array(x), batch_size=2)]
    assert lone == [x[:2].tolist(), x[2:4].tolist(), x[4:].tolist()]
    three = data.ArrayDataset(nd.array(x), np.arange(5, dtype=np.float32), nd.array(-x))
    batches = list(data.DataLoader(three, batch_size=3, last_batch="discard"))
    assert len(batches) == 1 and len(batches[0]) == 3
    assert [f.asnumpy().tolist() for f in batches[0]] == [x[:3].tolist(), [0, 1, 2],
                                                          (-x[:3]).tolist()]


def test_loader_of_more_arrays_than_the_c_iterator_takes():
    fields = mx._native.MAX_LOADER_FIELDS + 1
    columns = data.ArrayDataset(*[np.full(4, i, np.float32) for i in range(fields)])
    batches = list(data.DataLoader(columns, batch_size=3))
    assert [len(b) for b in batches] == [fields, fields]
    assert [f.asnumpy().tolist() for f in batches[1][:3]] == [[0.0], [1.0], [2.0]]


def test_loader_shuffle_threads_and_transforms():
    dataset = data.ArrayDataset(nd.array(np.arange(12).reshape(6, 2)), np.arange(6))
    np.random.seed(1)
    shuffled = sum(labels_of(data.DataLoader(dataset, batch_size=4, shuffle=True)), [])
    assert sorted(shuffled) == list(range(6)) and shuffled != list(range(6))
    threaded = data.DataLoader(dataset, batch_size=2, num_workers=2)
    assert labels_of(threaded) == [[0, 1], [2, 3], [4, 5]]
    doubled = dataset.transform_first(lambda v: v * 2)
    assert doubled[1][0].asnumpy().tolist() == [4, 6] and doubled[1][1] == 1
    eager = dataset.transform(lambda v, label: label + 1, lazy=False)
    assert isinstance(eager, data.SimpleDataset) and eager[5] == 6


def test_loader_argument_errors():
    dataset = data.SimpleDataset([1, 2, 3])
    with pytest.raises(ValueError, match="batch_size must be specified"):
        data.DataLoader(dataset)
    with pytest.raises(ValueError, match="shuffle must not be specified"):
        data.DataLoader(dataset, batch_size=1, shuffle=True, sampler=data.SequentialSampler(3))
    with pytest.raises(ValueError, match="'keep', 'discard', or 'rollover'"):
        data.DataLoader(dataset, batch_size=2, last_batch="pad")
    with pytest.raises(ValueError, match="same length"):
        data.ArrayDataset(np.zeros(3), np.zeros(4))


def test_ndarrayiter_pad_discard_roll_over():
    x = np.arange(10, dtype=np.float32)
    pad = mx.io.NDArrayIter(x, x * 10, batch_size=4)
    batches = list(pad)
    assert [b.data[0].asnumpy().tolist() for b in batches][-1] == [8, 9, 0, 1]
    assert [b.pad for b in batches] == [0, 0, 2]
    assert pad.provide_data[0].name == "data" and pad.provide_data[0].shape == (4,)
    assert pad.provide_label[0].name == "softmax_label"
    discard = mx.io.NDArrayIter(x, batch_size=4, last_batch_handle="discard")
    assert len(list(discard)) == 2
    roll = mx.io.NDArrayIter(x, batch_size=4, last_batch_handle="roll_over")
    assert len(list(roll)) == 2
    roll.reset()
    batches = list(roll)
    assert batches[0].data[0].asnumpy().tolist() == [8, 9, 0, 1] and batches[0].pad == 2
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.io.NDArrayIter(x, last_batch_handle="keep")
    with pytest.raises(ValueError, match="has 3 samples"):
        mx.io.NDArrayIter(x, np.zeros(3))


def test_split_and_load_and_clip_global_norm():
    parts = gluon.utils.split_and_load(np.arange(10).reshape(5, 2), [mx.cpu(0)] * 2,
                                       even_split=False)
    assert [p.shape for p in parts] == [(3, 2), (2, 2)]
    with pytest.raises(ValueError, match="cannot be evenly split"):
        gluon.utils.split_data(nd.zeros((5, 2)), 2)
    arrays = [nd.array([3.0, 0.0]), nd.array([[4.0]])]
    norm = gluon.utils.clip_global_norm(arrays, 1.0)
    assert norm == pytest.approx(5.0)
    assert arrays[0].asnumpy() == pytest.approx([0.6, 0.0], rel=1e-6)
    assert arrays[1].asnumpy().ravel() == pytest.approx([0.8], rel=1e-6)


def test_vision_transforms():
    image = nd.array(np.random.RandomState(0).randint(0, 256, (8, 10, 3)), dtype=np.uint8)
    tensor = transforms.ToTensor()(image)
    assert tensor.shape == (3, 8, 10) and tensor.dtype == np.float32
    assert tensor.asnumpy()[:, 2, 3] == pytest.approx(image.asnumpy()[2, 3] / 255.0)
    composed = transforms.Compose([transforms.Resize((6, 4)), transforms.ToTensor(),
                                   transforms.Normalize(0.5, 0.5)])
    assert composed(image).shape == (3, 4, 6)
    crop = transforms.CenterCrop(4)(image)
    assert crop.asnumpy().tolist() == image.asnumpy()[2:6, 3:7].tolist()
    assert transforms.RandomResizedCrop((5, 3))(image).shape == (3, 5, 3)
    flipped = [transforms.RandomFlipLeftRight()(image).asnumpy() for _ in range(20)]
    assert any((f == image.asnumpy()[:, ::-1]).all() for f in flipped)
    assert any((f == image.asnumpy()).all() for f in flipped)


def test_recordio_round_trip_keeps_records_holding_the_magic(tmp_path):
    magic = (0xCED7230A).to_bytes(4, "little")
    records = [b"", b"abc", magic, b"12345678" + magic + b"x" + magic * 2 + b"tail", b"q" * 9]
    writer = mx.recordio.MXIndexedRecordIO(str(tmp_path / "r.idx"), str(tmp_path / "r.rec"), "w")
    for i, record in enumerate(records):
        writer.write_idx(i, record)
    writer.close()
    reader = mx.recordio.MXIndexedRecordIO(str(tmp_path / "r.idx"), str(tmp_path / "r.rec"), "r")
    assert reader.keys == list(range(len(records)))
    assert [reader.read_idx(i) for i in reversed(range(len(records)))] == records[::-1]
    sequential = mx.recordio.MXRecordIO(str(tmp_path / "r.rec"), "r")
    assert [sequential.read() for _ in records] == records and sequential.read() is None
    header = mx.recordio.IRHeader(0, [1.5, 2.5], 7, 0)
    unpacked, payload = mx.recordio.unpack(mx.recordio.pack(header, b"data"))
    assert unpacked.flag == 2 and unpacked.label.tolist() == [1.5, 2.5] and payload == b"data"
    with open(tmp_path / "r.rec", "r+b") as f:
        f.truncate(30)
    with pytest.raises(ValueError, match="truncated"):
        list(iter(mx.recordio.MXRecordIO(str(tmp_path / "r.rec"), "r").read, None))


def test_image_record_dataset_decodes_mxnet_records(fixtures_dir):
    images = os.path.join(fixtures_dir, "images")
    dataset = data.vision.ImageRecordDataset(os.path.join(images, "images.rec"))
    assert len(dataset) == 4
    for i in range(4):
        image, label = dataset[i]
        expected = np.load(os.path.join(images, f"images-{i}-color.npy"))
        assert np.array_equal(image.asnumpy(), expected)
        if i < 3:
            assert label == [0.0, 1.0, 2.5][i]
    assert dataset[3][1].tolist() == [3.0, 4.0]
    gray = data.vision.ImageRecordDataset(os.path.join(images, "images.rec"), flag=0)
    expected = np.load(os.path.join(images, "images-1-gray.npy"))
    assert np.array_equal(gray[1][0].asnumpy(), expected)
    loader = data.DataLoader(dataset.take(3).transform_first(transforms.Resize((4, 4))),
                             batch_size=3)
    batch_images, batch_labels = next(iter(loader))
    assert batch_images.shape == (3, 4, 4, 3) and batch_labels.asnumpy().tolist() == [0, 1, 2.5]
    with pytest.raises(mx.FormatError, match="not a JPEG image"):
        mx.image.imdecode(b"GIF89a....")


def test_array_dataset_batches_equal_sample_by_sample_stacking():
    rng = np.random.RandomState(2)
    fields = [nd.array(rng.normal(size=(9, 2, 3))), nd.array(rng.normal(size=9)),
              rng.randint(0, 5, size=9), rng.normal(size=(9, 4)).astype(np.float16)]
    dataset = data.ArrayDataset(*fields)
    fast = list(data.DataLoader(dataset, batch_size=4))
    one_by_one = list(data.DataLoader(data.SimpleDataset([dataset[i] for i in range(9)]),
                                      batch_size=4))
    assert len(fast) == len(one_by_one) == 3
    for a, b in zip(fast, one_by_one):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.shape == y.shape
            assert np.array_equal(x.asnumpy(), y.asnumpy())
    single = list(data.DataLoader(data.ArrayDataset(fields[0]), batch_size=5))
    assert isinstance(single[0], nd.NDArray) and single[1].shape == (4, 2, 3)


def same_batches(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        x, y = (x, y) if isinstance(x, list) else ([x], [y])
        assert len(x) == len(y)
        for u, v in zip(x, y):
            assert type(u) is nd.NDArray and u.dtype == v.dtype and u.shape == v.shape
            assert np.array_equal(u.asnumpy(), v.asnumpy())


def stacked_one_by_one(batch):
    return data.dataloader.default_batchify_fn(batch)


@pytest.mark.parametrize("last_batch", ["keep", "discard", "rollover"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_array_rows_batch_as_sample_stacking_in_every_mode(shuffle, last_batch):
    # The row path (the library's loader in order, numpy's order gathered when shuffled) gives
    # the batches, the numpy draws and the lengths of stacking the samples one by one.
    rng = np.random.RandomState(3)
    datasets = [
        data.ArrayDataset(nd.array(rng.normal(size=(11, 2, 3))), nd.array(rng.normal(size=11)),
                          rng.randint(0, 5, size=11), rng.normal(size=(11, 4)).astype(np.float16)),
        data.ArrayDataset(rng.normal(size=(11, 3))[:, ::2], np.arange(11.0)),  # not contiguous
        data.ArrayDataset(nd.array(rng.normal(size=(11, 3)))),
        nd.array(rng.normal(size=(11, 2))),
        rng.normal(size=(11,)),
    ]
    for dataset in datasets:
        rows = data.DataLoader(dataset, batch_size=4, shuffle=shuffle, last_batch=last_batch)
        samples = data.DataLoader(dataset, batch_size=4, shuffle=shuffle, last_batch=last_batch,
                                  batchify_fn=stacked_one_by_one)
        for epoch in range(3):
            np.random.seed(epoch)
            got = list(rows)
            next_draw = np.random.randint(1 << 30)
            np.random.seed(epoch)
            expected = list(samples)
            same_batches(got, expected)
            assert np.random.randint(1 << 30) == next_draw  # the same draws were taken
            assert len(rows) == len(samples)


def test_array_rows_follow_the_arrays_and_iterations_stay_apart():
    images = np.arange(12, dtype=np.float32).reshape(6, 2)
    loader = data.DataLoader(data.ArrayDataset(images, nd.array(np.arange(6))), batch_size=4)
    first = iter(loader)
    assert next(first)[0].asnumpy().tolist() == images[:4].tolist()
    images[4:] = -1  # the batches are of the arrays' values when read
    assert [b[1].asnumpy().tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]]
    assert next(first)[0].asnumpy().tolist() == [[-1, -1], [-1, -1]]
    for _ in range(2):  # an epoch over stays over
        with pytest.raises(StopIteration):
            next(first)
    empty = data.DataLoader(data.ArrayDataset(nd.zeros((0, 3)), np.zeros(0)), batch_size=2)
    assert list(empty) == [] and len(empty) == 0
    partial = data.DataLoader(nd.array(np.arange(10)), batch_size=3,
                              sampler=data.SequentialSampler(5))
    assert [b.asnumpy().tolist() for b in partial] == [[0, 1, 2], [3, 4]]
