"""A fast reader of GGUF (v2/v3) files: metadata parsed with ``struct``, tensors memory-mapped.

Used for the K-quant GGUFs that ``mx.load`` cannot read, whose bytes the ``gguf`` package dequantizes.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

# gguf.GGUFReader builds a numpy view per vocabulary entry (~14 s for Gemma's 262k-token vocabulary);
# this reader parses the same format with ``struct`` (~0.3 s) and hands tensor bytes to
# ``gguf.quants.dequantize``. tests/models/test_gemma3.py checks both readers agree on Gemma 3's file.

_SCALAR_FORMATS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_ARRAY_DTYPES = {0: "u1", 1: "i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?", 10: "<u8", 11: "<i8", 12: "<f8"}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor's bytes are. ``shape`` is numpy order (GGUF lists dimensions innermost first)."""

    name: str
    ggml_type: int
    shape: tuple[int, ...]
    offset: int
    nbytes: int

    @property
    def type_name(self) -> str:
        import gguf

        return gguf.GGMLQuantizationType(self.ggml_type).name


class GgufFile:
    """Metadata and tensors of a GGUF (v2/v3) file, memory-mapped.

    Attributes:
        fields: metadata key -> value (numbers, strings, lists; numeric arrays as numpy arrays).
        tensors: tensor name -> :class:`TensorInfo`, in file order.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        with open(self.path, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._pos = 0
        magic = self._map[:4]
        if magic != b"GGUF":
            raise ValueError(f"{self.path}: not a GGUF file (magic {magic!r})")
        self._pos = 4
        version = self._scalar(4)
        if version not in (2, 3):
            raise ValueError(f"{self.path}: GGUF version {version} is not supported; expected 2 or 3")
        tensor_count, field_count = self._scalar(10), self._scalar(10)
        self.fields: dict[str, Any] = {}
        for _ in range(field_count):
            key = self._string()
            self.fields[key] = self._value(self._scalar(4))
        infos = []
        for _ in range(tensor_count):
            name = self._string()
            dims = [self._scalar(10) for _ in range(self._scalar(4))]
            infos.append((name, dims, self._scalar(4), self._scalar(10)))
        alignment = int(self.fields.get("general.alignment", 32))
        data_start = -(-self._pos // alignment) * alignment
        import gguf

        self.tensors: dict[str, TensorInfo] = {}
        for name, dims, ggml_type, offset in infos:
            shape = tuple(int(d) for d in reversed(dims))
            byte_shape = gguf.quant_shape_to_byte_shape(shape, gguf.GGMLQuantizationType(ggml_type))
            nbytes = 1
            for d in byte_shape:
                nbytes *= d
            self.tensors[name] = TensorInfo(name, ggml_type, shape, data_start + offset, nbytes)

    def _scalar(self, kind: int) -> Any:
        fmt = _SCALAR_FORMATS[kind]
        (value,) = struct.unpack_from(fmt, self._map, self._pos)
        self._pos += struct.calcsize(fmt)
        return value

    def _string(self) -> str:
        length = self._scalar(10)
        raw = self._map[self._pos : self._pos + length]
        self._pos += length
        return raw.decode("utf-8")

    def _value(self, kind: int) -> Any:
        import numpy as np

        if kind == _STRING:
            return self._string()
        if kind != _ARRAY:
            return self._scalar(kind)
        item_kind, count = self._scalar(4), self._scalar(10)
        if item_kind in _ARRAY_DTYPES:
            dtype = np.dtype(_ARRAY_DTYPES[item_kind])
            values = np.frombuffer(self._map, dtype=dtype, count=count, offset=self._pos).copy()
            self._pos += dtype.itemsize * count
            return values
        return [self._value(item_kind) for _ in range(count)]

    def raw(self, name: str) -> np.ndarray:
        """The tensor's bytes as a read-only ``uint8`` array shaped ``(rows..., bytes per row)``."""
        import gguf
        import numpy as np

        info = self.tensors[name]
        qtype = gguf.GGMLQuantizationType(info.ggml_type)
        data = np.frombuffer(self._map, dtype=np.uint8, count=info.nbytes, offset=info.offset)
        return data.reshape(gguf.quant_shape_to_byte_shape(info.shape, qtype))

    def dequantize(self, name: str) -> np.ndarray:
        """The tensor as float32 numpy, in numpy shape order, via ``gguf.quants.dequantize``."""
        import gguf
        import numpy as np

        info = self.tensors[name]
        values = gguf.quants.dequantize(self.raw(name), gguf.GGMLQuantizationType(info.ggml_type))
        return np.ascontiguousarray(values, dtype=np.float32).reshape(info.shape)
