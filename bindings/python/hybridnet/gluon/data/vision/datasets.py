"""Image datasets (mx.gluon.data.vision.datasets) read from files users already hold."""
from .... import image, recordio
from ..dataset import RecordFileDataset

__all__ = ["ImageRecordDataset"]


class ImageRecordDataset(RecordFileDataset):
    """(image, label) samples of an image RecordIO file (.rec with its .idx, as MXNet's im2rec
    writes): the JPEG decoded to an HWC uint8 NDArray (RGB with flag 1, gray with flag 0) and
    the header's label (a float, or a float32 array). `transform`, when given, is called with
    (image, label) and returns the sample."""

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, payload = recordio.unpack(super().__getitem__(idx))
        decoded = image.imdecode(payload, self._flag)
        if self._transform is not None:
            return self._transform(decoded, header.label)
        return decoded, header.label
