"""Protocol-buffer wire encoding over whole columns (numpy), for the Perfetto export.

A *segment* is one field for every record: the records' bytes back to back (ragged) and the
number of bytes each record uses (0 = field absent).  Records are assembled by scattering
segments into one flat buffer, so no Python code runs per record.
"""

from __future__ import annotations

import numpy as np

VARINT, FIXED64, LEN = 0, 1, 2


class Segment:
    __slots__ = ("flat", "lens")

    def __init__(self, flat, lens):
        self.flat = flat  # uint8: the records' bytes back to back
        self.lens = lens  # int64 (n,): bytes of each record (0 = field absent)


def _starts(lens):
    return np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64) if len(lens) else lens


def _within(lens):
    """For every byte of a ragged array, its offset inside its record."""
    total = int(lens.sum())
    return np.arange(total, dtype=np.int64) - np.repeat(_starts(lens), lens)


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
        # (a path not UTF-8, kept as the file system names it: "?" for its bytes here)
        return field_bytes(field, value.encode("utf-8", "replace"))
    if isinstance(value, float):
        return tag(field, FIXED64) + np.float64(value).tobytes()
    return tag(field, VARINT) + varint_bytes(value)


def const(n, raw: bytes) -> Segment:
    return Segment(np.tile(np.frombuffer(raw, np.uint8), n), np.full(n, len(raw), np.int64))


def varints(values) -> Segment:
    """LEB128 of each uint64 value."""
    v = np.asarray(values).astype(np.uint64)
    n = len(v)
    width = max(1, -(-int(v.max()).bit_length() // 7)) if n else 1
    data = np.empty((n, width), np.uint8)
    lens = np.ones(n, np.int64)
    for k in range(width):
        data[:, k] = ((v >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        if k:
            lens += (v >> np.uint64(7 * k)) > 0
    cols = np.arange(width)[None, :]
    data |= ((cols < (lens[:, None] - 1)) * 0x80).astype(np.uint8)
    return Segment(data[cols < lens[:, None]], lens)


def varint_field(field, values, present=None) -> Segment:
    s = concat([const(len(values), tag(field, VARINT)), varints(values)])
    return _only(s, present)


def fixed64_field(field, values, present=None) -> Segment:
    v = np.ascontiguousarray(np.asarray(values).astype("<u8")).view(np.uint8)
    n = len(v) // 8
    s = concat([const(n, tag(field, FIXED64)), Segment(v, np.full(n, 8, np.int64))])
    return _only(s, present)


def repeated_fixed64_field(field, n, records, values) -> Segment:
    """Records 0..n-1, record r holding one fixed64 ``field`` for each of ``values`` whose
    entry in ``records`` is r (``records`` sorted; a record may hold none, one or many)."""
    t = np.frombuffer(tag(field, FIXED64), np.uint8)
    one = np.empty((len(values), len(t) + 8), np.uint8)
    one[:, :len(t)] = t
    one[:, len(t):] = np.ascontiguousarray(np.asarray(values).astype("<u8")).view(
        np.uint8).reshape(-1, 8)
    lens = np.bincount(np.asarray(records, np.int64), minlength=n)[:n] * one.shape[1]
    return Segment(one.ravel(), lens.astype(np.int64))


def double_field(field, values) -> Segment:
    return fixed64_field(field, np.asarray(values, np.float64).view(np.uint64))


def message_field(field, parts, present=None) -> Segment:
    """A length-delimited field whose payload is the concatenation of ``parts``."""
    body = concat(parts)
    n = len(body.lens)
    s = concat([const(n, tag(field, LEN)), varints(body.lens), body])
    return _only(s, present)


def table(encoded: list) -> tuple:
    """A small table of pre-encoded byte strings (index -> bytes) as flat bytes + offsets."""
    lens = np.array([len(b) for b in encoded], np.int64)
    flat = np.frombuffer(b"".join(encoded), np.uint8)
    return flat, _starts(lens), lens


def pick(tab, index) -> Segment:
    flat, starts, lens = tab
    index = np.asarray(index, np.int64)
    out_lens = lens[index]
    return Segment(flat[np.repeat(starts[index], out_lens) + _within(out_lens)], out_lens)


def _only(s, present):
    if present is None:
        return s
    present = np.asarray(present, bool)
    return Segment(s.flat[np.repeat(present, s.lens)], np.where(present, s.lens, 0))


def concat(parts) -> Segment:
    """Records made of the parts one after another."""
    parts = [p for p in parts if p is not None]
    lens = np.zeros(len(parts[0].lens), np.int64)
    for p in parts:
        lens += p.lens
    out = np.empty(int(lens.sum()), np.uint8)
    pos = _starts(lens)
    for p in parts:
        if len(p.flat):
            out[np.repeat(pos - _starts(p.lens), p.lens) + np.arange(len(p.flat))] = p.flat
        pos = pos + p.lens
    return Segment(out, lens)


def flatten(s: Segment) -> bytes:
    """The records' bytes back to back."""
    return s.flat.tobytes()
