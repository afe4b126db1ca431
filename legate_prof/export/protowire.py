"""Protocol-buffer wire encoding over whole columns (numpy), for the Perfetto export.

A *segment* is one field for every record: a padded byte matrix ``(n, width)`` and the
number of bytes each record uses (0 = field absent).  Records are assembled by scattering
segments into one flat buffer, so no Python code runs per record.
"""

from __future__ import annotations

import numpy as np

VARINT, FIXED64, LEN = 0, 1, 2


class Segment:
    __slots__ = ("data", "lens")

    def __init__(self, data, lens):
        self.data = data  # uint8 (n, width)
        self.lens = lens  # int64 (n,)


def varint_bytes(value: int) -> bytes:
    out = bytearray()
    v = int(value)
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def tag(field, wire) -> bytes:
    return varint_bytes((field << 3) | wire)


def field_bytes(field, value) -> bytes:
    """One scalar field, encoded once (for constants and small tables)."""
    if isinstance(value, (bytes, bytearray)):
        return tag(field, LEN) + varint_bytes(len(value)) + bytes(value)
    if isinstance(value, str):
        return field_bytes(field, value.encode())
    if isinstance(value, float):
        return tag(field, FIXED64) + np.float64(value).tobytes()
    return tag(field, VARINT) + varint_bytes(value)


def const(n, raw: bytes) -> Segment:
    data = np.broadcast_to(np.frombuffer(raw, np.uint8), (n, len(raw)))
    return Segment(data, np.full(n, len(raw), np.int64))


def varints(values) -> Segment:
    """LEB128 of each uint64 value."""
    v = np.asarray(values).astype(np.uint64)
    n = len(v)
    data = np.empty((n, 10), np.uint8)
    lens = np.ones(n, np.int64)
    for k in range(10):
        data[:, k] = ((v >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        if k:
            lens += (v >> np.uint64(7 * k)) > 0
    cont = np.arange(10)[None, :] < (lens[:, None] - 1)
    data |= (cont * 0x80).astype(np.uint8)
    return Segment(data, lens)


def varint_field(field, values, present=None) -> Segment:
    s = concat([const(len(values), tag(field, VARINT)), varints(values)])
    return _only(s, present)


def fixed64_field(field, values, present=None) -> Segment:
    v = np.ascontiguousarray(np.asarray(values).astype("<u8")).view(np.uint8).reshape(-1, 8)
    s = concat([const(len(v), tag(field, FIXED64)), Segment(v, np.full(len(v), 8, np.int64))])
    return _only(s, present)


def double_field(field, values) -> Segment:
    return fixed64_field(field, np.asarray(values, np.float64).view(np.uint64))


def message_field(field, parts, present=None) -> Segment:
    """A length-delimited field whose payload is the concatenation of ``parts``."""
    body = concat(parts)
    n = len(body.lens)
    s = concat([const(n, tag(field, LEN)), varints(body.lens), body])
    return _only(s, present)


def table(encoded: list) -> tuple:
    """Padded matrix + lengths for a small table of pre-encoded byte strings (index -> bytes)."""
    width = max([len(b) for b in encoded] + [1])
    data = np.zeros((len(encoded), width), np.uint8)
    lens = np.array([len(b) for b in encoded], np.int64)
    for i, b in enumerate(encoded):
        data[i, :len(b)] = np.frombuffer(b, np.uint8)
    return data, lens


def pick(tab, index) -> Segment:
    data, lens = tab
    return Segment(data[index], lens[index])


def _only(s, present):
    if present is not None:
        s.lens = np.where(present, s.lens, 0)
    return s


def concat(parts) -> Segment:
    """Records made of the parts one after another."""
    parts = [p for p in parts if p is not None]
    n = len(parts[0].lens)
    lens = np.zeros(n, np.int64)
    for p in parts:
        lens += p.lens
    width = int(lens.max()) if n else 0
    out = np.zeros((n, max(width, 1)), np.uint8)
    pos = np.zeros(n, np.int64)
    for p in parts:
        w = p.data.shape[1]
        if w == 0:
            continue
        cols = np.arange(w)[None, :]
        mask = cols < p.lens[:, None]
        dst = pos[:, None] + cols
        r, c = np.nonzero(mask)
        out[r, dst[r, c]] = p.data[r, c]
        pos += p.lens
    return Segment(out, lens)


def flatten(s: Segment) -> bytes:
    """The records' bytes back to back."""
    mask = np.arange(s.data.shape[1])[None, :] < s.lens[:, None]
    return s.data[mask].tobytes()
