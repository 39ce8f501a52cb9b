"""The same metric and data-loading code run by real MXNet 1.9.1 and by hybridnet
(metrics_data_golden.py runs it with both and compares what each wrote):

    HN_GOLDEN_BACKEND=mxnet|hybridnet python metrics_data_programs.py OUT.json

Inputs come from numpy generators seeded per case, so both backends see the same values;
shuffles use numpy's global generator (RandomSampler, NDArrayIter) and Python's `random`
(RandomResizedCrop), seeded the same way on both. HN_RECORDIO_WRITTEN is the path prefix of
the RecordIO file the hybridnet run writes and both runs read; HN_FIXTURES_DIR holds MXNet's
image records (tests/data/mxnet).
"""
import json
import os
import random
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
if os.environ.get("HN_GOLDEN_BACKEND") == "mxnet":
    import mxnet as mx
else:
    import hybridnet as mx
nd, gluon = mx.nd, mx.gluon
data = gluon.data

RESULTS = {}


def record(name, value):
    if name in RESULTS:
        raise AssertionError(f"case {name} recorded twice")
    RESULTS[name] = value


def plain(value):
    """NDArrays, numpy values and nested lists/tuples as JSON-ready lists and floats."""
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    if isinstance(value, np.ndarray):
        return {"shape": list(value.shape), "dtype": str(value.dtype),
                "values": value.astype(np.float64).ravel().tolist()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (np.floating, np.integer)):
        return float(value)
    return value


def readings(metric):
    return {"get": plain(metric.get()), "global": plain(metric.get_global()),
            "name_value": plain(metric.get_name_value())}


# ---- metrics ------------------------------------------------------------------------------

def classification_batches(seed, classes, shapes=((8,), (5,), (6,))):
    rng = np.random.RandomState(seed)
    batches = []
    for shape in shapes:
        n = shape[0]
        pred = rng.uniform(size=(n, classes)).astype(np.float32)
        label = rng.randint(0, classes, size=shape).astype(np.float32)
        batches.append((label, pred))
    return batches


def run_updates(metric, batches, name):
    """Updates with each batch; records the readings after each, a reset_local in the middle."""
    steps = []
    for i, (label, pred) in enumerate(batches):
        metric.update([nd.array(label)], [nd.array(pred)])
        steps.append(readings(metric))
        if i == 1:
            metric.reset_local()
            steps.append(readings(metric))
    record(name, steps)


def metric_cases():
    mtr = mx.metric
    run_updates(mtr.Accuracy(), classification_batches(1, 4), "accuracy")
    run_updates(mtr.create("acc"), classification_batches(2, 3, ((6, 1), (4, 1))),
                "accuracy_label_column")
    rng = np.random.RandomState(3)
    same = [(rng.randint(0, 3, (7,)).astype(np.float32),
             rng.randint(0, 3, (7,)).astype(np.float32) + 0.4) for _ in range(2)]
    run_updates(mtr.Accuracy(), same, "accuracy_predicted_classes")
    axis0 = [(lab, pred.T.copy()) for lab, pred in classification_batches(4, 3)]
    run_updates(mtr.Accuracy(axis=0), axis0, "accuracy_axis0")
    run_updates(mtr.TopKAccuracy(top_k=3), classification_batches(5, 6), "top_k_accuracy")
    run_updates(mtr.create("top_k_acc", top_k=2), classification_batches(6, 2), "top_k_all")
    for average in ("macro", "micro"):
        run_updates(mtr.F1(average=average), classification_batches(7, 2), f"f1_{average}")
        run_updates(mtr.MCC(average=average), classification_batches(8, 2), f"mcc_{average}")
    no_positive = [(np.zeros(5, np.float32), np.tile([[0.9, 0.1]], (5, 1)).astype(np.float32))]
    run_updates(mtr.F1(), no_positive, "f1_no_positives")
    run_updates(mtr.MCC(), no_positive, "mcc_no_positives")
    rng = np.random.RandomState(9)
    for name in ("mae", "mse", "rmse"):
        for pred_shape in ((6,), (6, 1), (6, 2)):
            batches = [(rng.normal(size=(6,)).astype(np.float32),
                        rng.normal(size=pred_shape).astype(np.float32)) for _ in range(3)]
            run_updates(mtr.create(name), batches, f"{name}_{len(pred_shape)}_{pred_shape[-1]}")
        label_column = [(rng.normal(size=(4, 1)).astype(np.float32),
                         rng.normal(size=(4,)).astype(np.float32)) for _ in range(2)]
        run_updates(mtr.create(name), label_column, f"{name}_label_column")

    def softmax_batches(seed, shapes=((8,), (5,), (3,))):
        rng = np.random.RandomState(seed)
        out = []
        for shape in shapes:
            logits = rng.normal(size=shape + (5,))
            prob = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).astype(np.float32)
            out.append((rng.randint(0, 5, size=shape).astype(np.float32), prob))
        return out

    run_updates(mtr.CrossEntropy(), softmax_batches(10), "cross_entropy")
    run_updates(mtr.create("ce", eps=1e-3), softmax_batches(11), "cross_entropy_eps")
    run_updates(mtr.NegativeLogLikelihood(), softmax_batches(12), "nll_loss")
    run_updates(mtr.Perplexity(ignore_label=None), softmax_batches(13), "perplexity")
    run_updates(mtr.Perplexity(ignore_label=2), softmax_batches(14), "perplexity_ignore")
    for average in ("macro", "micro"):
        rng = np.random.RandomState(16)
        batches = []
        for n in (10, 7, 12):
            label = rng.normal(size=(n,)).astype(np.float32)
            batches.append((label, (label + rng.normal(size=(n,))).astype(np.float32)))
        metric = mtr.PearsonCorrelation(average=average)
        steps = []
        for label, pred in batches:
            metric.update([nd.array(label)], [nd.array(pred)])
            steps.append(plain(metric.get()))
        record(f"pearsonr_{average}", steps)
    loss = mtr.Loss()
    rng = np.random.RandomState(17)
    for shape in ((4,), (3, 2)):
        loss.update(None, [nd.array(rng.uniform(size=shape).astype(np.float32))])
    record("loss", readings(loss))

    composite = mtr.create(["acc", "f1", mtr.MAE()])
    for label, pred in classification_batches(18, 2):
        composite.update([nd.array(label)], [nd.array(pred)])
    record("composite", readings(composite))
    record("composite_names", [m.name for m in composite.metrics])

    # Statistics after updates, and updates with no arrays at all.
    acc = mtr.Accuracy()
    for label, pred in classification_batches(19, 3):
        acc.update([nd.array(label)], [nd.array(pred)])
    record("accuracy_stats", [float(acc.num_inst), float(acc.sum_metric),
                              float(acc.global_num_inst), float(acc.global_sum_metric)])
    for name in ("acc", "f1", "mcc", "mae", "ce", "loss", "pearsonr"):
        metric = mtr.create(name)
        metric.update([], [])
        record(f"empty_update_{name}", readings(metric))
    record("names", [mtr.create(n).name for n in
                     ("acc", "f1", "mcc", "mae", "mse", "rmse", "ce", "nll_loss",
                      "pearsonr", "loss")] + [mtr.TopKAccuracy(top_k=5).name])


# ---- data ---------------------------------------------------------------------------------

def epochs(loader, count):
    return [[plain(batch) for batch in loader] for _ in range(count)]


def data_cases():
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10, dtype=np.float32) * 10
    dataset = data.ArrayDataset(nd.array(x), nd.array(y))
    for last_batch in ("keep", "discard", "rollover"):
        loader = data.DataLoader(dataset, batch_size=4, last_batch=last_batch)
        record(f"loader_{last_batch}_len", len(loader))
        record(f"loader_{last_batch}", epochs(loader, 3))
    np.random.seed(5)
    record("loader_shuffle", epochs(data.DataLoader(dataset, batch_size=3, shuffle=True), 2))
    record("loader_threads", epochs(data.DataLoader(dataset, batch_size=3, num_workers=2), 1))
    record("loader_transform_first", epochs(
        data.DataLoader(dataset.transform_first(lambda v: v * 2), batch_size=5), 1))
    record("loader_transform", epochs(
        data.DataLoader(dataset.transform(lambda v, w: (v + w, w), lazy=False), batch_size=5), 1))
    record("loader_numpy", epochs(data.DataLoader(data.ArrayDataset(x, y.astype(np.int32)),
                                                  batch_size=4), 1))
    record("loader_scalars", epochs(data.DataLoader(data.SimpleDataset(list(range(7))),
                                                    batch_size=3), 1))
    record("loader_nd_samples", epochs(data.DataLoader(
        data.SimpleDataset([nd.array(r) for r in x]), batch_size=6), 1))
    sampler = data.BatchSampler(data.SequentialSampler(7), 3, "rollover")
    record("batch_sampler_rollover", [list(map(int, b)) for _ in range(3) for b in sampler])
    record("dataset_ops", [len(dataset.take(4)), plain(list(dataset.shard(3, 1))),
                           plain(list(dataset.filter(lambda s: s[1] > 40)))])

    # NDArrayIter: every last_batch_handle over 3 epochs, with its descriptions and pads.
    data2 = np.arange(40, dtype=np.float32).reshape(10, 2, 2)
    for handle in ("pad", "discard", "roll_over"):
        it = mx.io.NDArrayIter(data2, y, batch_size=4, last_batch_handle=handle)
        batches = []
        for _ in range(3):
            batches.append([[plain(b.data), plain(b.label), b.pad] for b in it])
            it.reset()
        record(f"ndarrayiter_{handle}", batches)
        record(f"ndarrayiter_{handle}_desc",
               [[d.name, list(d.shape)] for d in it.provide_data + it.provide_label])
    np.random.seed(7)
    it = mx.io.NDArrayIter({"a": x, "b": x * 2}, {"lab": y}, batch_size=3, shuffle=True)
    record("ndarrayiter_shuffle", [[plain(b.data), plain(b.label), b.pad] for b in it])
    record("ndarrayiter_names", [[d.name for d in it.provide_data],
                                 [d.name for d in it.provide_label]])
    it = mx.io.NDArrayIter([x, x + 1], batch_size=20, last_batch_handle="pad")
    record("ndarrayiter_pad_more_than_data", [[plain(b.data), b.pad] for b in it])

    # gluon.utils.
    batch = nd.array(np.arange(14, dtype=np.float32).reshape(7, 2))
    record("split_uneven", plain(gluon.utils.split_and_load(batch, [mx.cpu(0)] * 3,
                                                             even_split=False)))
    record("split_axis1", plain(gluon.utils.split_data(batch, 2, batch_axis=1)))
    rng = np.random.RandomState(20)
    arrays = [nd.array(rng.normal(size=s).astype(np.float32)) for s in ((3, 4), (5,))]
    norm = gluon.utils.clip_global_norm(arrays, 1.0)
    record("clip_global_norm", [float(norm), plain(arrays)])
    small = [nd.array(np.full((2,), 0.1, np.float32))]
    record("clip_global_norm_below", [float(gluon.utils.clip_global_norm(small, 5.0)),
                                      plain(small)])

    # Vision transforms on an HWC uint8 image.
    transforms = data.vision.transforms
    image = nd.array(np.random.RandomState(21).randint(0, 256, (12, 16, 3)), dtype=np.uint8)
    record("to_tensor", plain(transforms.ToTensor()(image)))
    record("normalize", plain(transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.3))(
        transforms.ToTensor()(image))))
    record("resize", plain(transforms.Resize((8, 6))(image)))
    record("resize_keep_ratio", plain(transforms.Resize(6, keep_ratio=True)(image)))
    record("center_crop", plain(transforms.CenterCrop((10, 8))(image)))
    record("center_crop_larger", plain(transforms.CenterCrop(14)(image)))
    random.seed(3)
    record("random_resized_crop", [plain(transforms.RandomResizedCrop(6)(image))
                                   for _ in range(3)])
    composed = transforms.Compose([transforms.Resize(8), transforms.ToTensor(),
                                   transforms.Normalize(0.5, 0.25)])
    record("compose", plain(composed(image)))


def recordio_cases():
    """Records hybridnet wrote (HN_RECORDIO_WRITTEN, written by the hybridnet run, which goes
    first) read back by each backend, and MXNet's image fixture through ImageRecordDataset."""
    magic = (0xCED7230A).to_bytes(4, "little")
    prefix = os.environ["HN_RECORDIO_WRITTEN"]
    if os.environ.get("HN_GOLDEN_BACKEND") != "mxnet":
        writer = mx.recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "w")
        writer.write_idx(0, mx.recordio.pack(mx.recordio.IRHeader(0, 2.0, 5, 0), b"abc"))
        writer.write_idx(1, mx.recordio.pack(mx.recordio.IRHeader(0, [1, 2], 6, 0),
                                             b"1234" + magic + b"5" + magic))
        writer.write_idx(2, b"")
        writer.close()
    reader = mx.recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    read = []
    for key in reader.keys:
        raw = reader.read_idx(key)
        if raw:
            header, payload = mx.recordio.unpack(raw)
            read.append([plain(header.label), header.id, list(payload)])
        else:
            read.append([])
    record("recordio_written_by_hybridnet", read)
    images = os.path.join(os.environ["HN_FIXTURES_DIR"], "images", "images.rec")
    for flag in (1, 0):
        dataset = data.vision.ImageRecordDataset(images, flag=flag)
        record(f"image_record_dataset_{flag}", [[plain(img), plain(label)] for img, label in
                                                (dataset[i] for i in range(len(dataset)))])


metric_cases()
data_cases()
recordio_cases()
with open(sys.argv[1], "w") as f:
    json.dump(RESULTS, f)
