"""RecordIO (mx.recordio): MXNet's .rec files of records and their .idx indexes, read and
written in MXNet's format, and the image record header (IRHeader, pack, unpack, unpack_img).

A record on disk is the magic 0xced7230a, a 32-bit word holding the length (low 29 bits) and a
continuation flag (high 3 bits), the bytes, and zero padding to 4 bytes. A record whose bytes
hold the magic at a 4-byte boundary is stored in parts split there (flags 1, 2, ..., 3), the
magic left out and put back when read. An .idx file has one "key<TAB>offset" line per record.
"""
import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from . import image

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "unpack_img"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LENGTH_MASK = (1 << 29) - 1


class MXRecordIO:
    """Sequential reading ("r") or writing ("w") of a .rec file."""

    def __init__(self, uri, flag):
        if flag not in ("r", "w"):
            raise ValueError(f"Invalid flag {flag!r}: 'r' reads, 'w' writes")
        self.uri = str(uri)
        self.flag = flag
        self.is_open = False
        self.open()

    def open(self):
        try:
            self._file = open(self.uri, "rb" if self.flag == "r" else "wb")
        except OSError as e:
            raise OSError(f"RecordIO: cannot open {self.uri}: {e.strerror}") from e
        self.writable = self.flag == "w"
        self.is_open = True

    def close(self):
        if self.is_open:
            self._file.close()
            self.is_open = False

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def reset(self):
        """Back to the first record."""
        self.close()
        self.open()

    def tell(self):
        """The offset of the next record."""
        return self._file.tell()

    def _seek(self, pos):
        self._file.seek(pos)

    def write(self, buf):
        """Appends one record (bytes shorter than 2**29)."""
        if not self.writable:
            raise ValueError(f"RecordIO: {self.uri} is open for reading")
        buf = bytes(buf)
        if len(buf) >= 1 << 29:
            raise ValueError(f"RecordIO: a record holds less than 2**29 bytes, got {len(buf)}")
        parts, start = [], 0
        for i in range(0, len(buf) - len(buf) % 4, 4):
            if buf[i:i + 4] == _MAGIC_BYTES:
                parts.append(buf[start:i])
                start = i + 4
        parts.append(buf[start:])
        for n, part in enumerate(parts):
            if len(parts) == 1:
                flag = 0
            else:
                flag = 1 if n == 0 else (3 if n == len(parts) - 1 else 2)
            self._file.write(struct.pack("<II", _MAGIC, (flag << 29) | len(part)))
            self._file.write(part + b"\0" * (-len(part) % 4))

    def read(self):
        """The next record's bytes, or None at the end of the file."""
        if self.writable:
            raise ValueError(f"RecordIO: {self.uri} is open for writing")
        parts = []
        while True:
            offset = self._file.tell()
            head = self._file.read(8)
            if not head and not parts:
                return None
            if len(head) < 8:
                raise ValueError(f"RecordIO: {self.uri} is truncated at byte {offset} (a record "
                                 "header needs 8 bytes)")
            magic, word = struct.unpack("<II", head)
            if magic != _MAGIC:
                raise ValueError(f"RecordIO: {self.uri} has no record at byte {offset} (magic "
                                 f"{magic:#010x}, expected {_MAGIC:#010x})")
            length, flag = word & _LENGTH_MASK, word >> 29
            data = self._file.read(length + (-length % 4))
            if len(data) < length:
                raise ValueError(f"RecordIO: {self.uri} is truncated in the record at byte "
                                 f"{offset} ({length} bytes announced, {len(data)} there)")
            parts.append(data[:length])
            if flag in (0, 3):
                return _MAGIC_BYTES.join(parts)
            if flag not in (1, 2):
                raise ValueError(f"RecordIO: {self.uri}: bad continuation flag {flag} at byte "
                                 f"{offset}")


class MXIndexedRecordIO(MXRecordIO):
    """A .rec file with its .idx index: records read and written by key."""

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = str(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        if self.flag == "w":
            self.fidx = open(self.idx_path, "w")
            return
        self.fidx = None
        if not os.path.isfile(self.idx_path):
            raise OSError(f"RecordIO: the index {self.idx_path} of {self.uri} does not exist")
        with open(self.idx_path) as f:
            for number, line in enumerate(f, 1):
                fields = line.strip().split("\t")
                if not fields or fields == [""]:
                    continue
                if len(fields) != 2:
                    raise ValueError(f"RecordIO: {self.idx_path} line {number} is not "
                                     "'key<TAB>offset'")
                key = self.key_type(fields[0])
                self.idx[key] = int(fields[1])
                self.keys.append(key)

    def close(self):
        if self.is_open and self.fidx is not None:
            self.fidx.close()
            self.fidx = None
        super().close()

    def seek(self, idx):
        """Moves to the record of key `idx`."""
        if idx not in self.idx:
            raise KeyError(f"RecordIO: no record with key {idx!r} in {self.idx_path}")
        self._seek(self.idx[idx])

    def read_idx(self, idx):
        """The bytes of the record of key `idx`."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Appends a record under key `idx`."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
"""The header of an image record: flag (0, or the number of float labels that follow), label
(a float, or the labels), id and id2."""

_IR_FORMAT = "<IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """The record bytes of `header` (an IRHeader) followed by `s`; an array label is stored
    after the header as float32 values (flag = their count)."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
        labels = b""
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        labels = label.tobytes()
    return struct.pack(_IR_FORMAT, *header) + labels + bytes(s)


def unpack(s):
    """(IRHeader, payload bytes) of an image record."""
    if len(s) < _IR_SIZE:
        raise ValueError(f"RecordIO: a record of {len(s)} bytes is too short for the "
                         f"{_IR_SIZE}-byte image header")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < header.flag * 4:
            raise ValueError(f"RecordIO: the header announces {header.flag} labels, the record "
                             f"holds {len(s) // 4}")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s, iscolor=-1):
    """(IRHeader, image as a numpy HWC uint8 array) of an image record; iscolor 0 decodes to
    gray, anything else to color. The channels are BGR, as MXNet's (OpenCV's) unpack_img."""
    header, payload = unpack(s)
    pixels = image.imdecode(payload, flag=0 if iscolor == 0 else 1).asnumpy()
    return header, pixels if iscolor == 0 else pixels[:, :, ::-1]
