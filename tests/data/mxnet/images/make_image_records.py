"""Writes the image RecordIO fixtures with real MXNet 1.9.1 (pip, which encodes and decodes JPEG
through its OpenCV):

    ~/.cache/hybridnet/mxnet-1.9.1/bin/python make_image_records.py OUT_DIR

images.rec / images.idx: 4 records written by mx.recordio.MXIndexedRecordIO with pack_img
(JPEG, quality 90), keys 0..3, labels 0.0, 1.0, 2.5 and the array [3, 4] (flag 2); the images
are smooth gradients plus noise of sizes 12x16, 20x9, 7x7 and 16x16. For each record i,
images-<i>-color.npy and images-<i>-gray.npy are MXNet's mx.image.imdecode of its JPEG
(RGB, flag 1) and (flag 0); color.jpg is record 0's JPEG alone.
"""
import os
import sys

import mxnet as mx
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.RandomState(35)
labels = [0.0, 1.0, 2.5, [3.0, 4.0]]
shapes = [(12, 16), (20, 9), (7, 7), (16, 16)]
writer = mx.recordio.MXIndexedRecordIO(os.path.join(out, "images.idx"),
                                       os.path.join(out, "images.rec"), "w")
for i, ((h, w), label) in enumerate(zip(shapes, labels)):
    y, x = np.mgrid[0:h, 0:w]
    image = np.stack([x * 255 / w, y * 255 / h, (x + y) * 127 / (w + h)], axis=-1)
    image = np.clip(image + rng.normal(0, 20, image.shape), 0, 255).astype(np.uint8)
    header = mx.recordio.IRHeader(0, label, i, 0)
    record = mx.recordio.pack_img(header, image, quality=90, img_fmt=".jpg")
    writer.write_idx(i, record)
    _, jpeg = mx.recordio.unpack(record)
    if i == 0:
        with open(os.path.join(out, "color.jpg"), "wb") as f:
            f.write(jpeg)
    np.save(os.path.join(out, f"images-{i}-color.npy"), mx.image.imdecode(jpeg, 1).asnumpy())
    np.save(os.path.join(out, f"images-{i}-gray.npy"), mx.image.imdecode(jpeg, 0).asnumpy())
writer.close()
