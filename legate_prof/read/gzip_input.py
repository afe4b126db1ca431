"""Gzipped inputs inflated within bounds: a log or a runtime stream gzipped by its user (a
run's folder gzipped whole) is read as the plain file, a gzip bomb refused before it fills
memory, and damage or a cut reads what precedes it, with the problem said."""

from __future__ import annotations

import zlib

from legate_prof.errors import ProfileError

GZIP_CHUNK = 1 << 16
# Legion's logs inflate 3.6x to 7.9x (docs/robustness.md); the first N bytes of a gzipped input
# may inflate to MAX_GZIP_RATIO times N (or MIN_GZIP_LIMIT, for the start of any file), no more.
MAX_GZIP_RATIO = 32
MIN_GZIP_LIMIT = 8 << 20


def gzip_limit(compressed):
    """The most bytes the first ``compressed`` bytes of a gzipped input may inflate to."""
    return max(MIN_GZIP_LIMIT, MAX_GZIP_RATIO * compressed)


def _salvage(d, data, at, step=256):
    """What the decompressor ``d`` inflates from ``data`` before the damage it raised on, fed
    ``step`` bytes and then one byte at a time: (bytes, compressed offset of the damage)."""
    got = bytearray()
    for i in range(0, len(data), step):
        before = d.copy()
        try:
            got += d.decompress(data[i:i + step])
        except zlib.error:
            if step == 1:
                return got, at + i
            more, where = _salvage(before, data[i:i + step], at + i, 1)
            return got + more, where
    return got, at + len(data)


def gzip_bomb_problem(compressed, limit):
    return (f"gzip data inflates to more than {limit:,} bytes from its first {compressed:,} "
            f"(over {MAX_GZIP_RATIO}x; Legion's logs and runtime streams inflate about 7x): "
            "refused as a likely gzip "
            "bomb (gunzip it yourself to read it anyway)")


def gunzip_bounded(path, f):
    """Inflate the gzipped file ``f`` (read from its start) a piece at a time into one buffer; what the first N compressed
    bytes inflate to may not pass ``gzip_limit(N)``: a gzip bomb (3 MB that inflate to
    3 GiB) is refused as soon as it outgrows what it has read, before it fills memory.
    Damaged or cut short: what precedes the damage, with a warning."""
    out, problem = bytearray(), None
    d, in_member, pos = zlib.decompressobj(16 + zlib.MAX_WBITS), False, 0
    while problem is None:
        data = f.read(GZIP_CHUNK)
        if not data:
            break
        at, pos = pos, pos + len(data)
        limit = gzip_limit(pos)
        while data:
            before = d.copy()
            try:
                out += d.decompress(data, limit + 1 - len(out))
            except zlib.error as e:
                got, where = _salvage(before, data, at)
                problem = (f"gzip data is damaged at compressed byte ~{where:,}"
                           + (" (its checksum fails)" if "data check" in str(e) else "")
                           if in_member or not out else
                           f"data after the gzip stream (at byte {at:,}) is not gzip")
                out += got[:limit + 1 - len(out)]
                break
            in_member = not d.eof
            if len(out) > limit:
                out.clear()  # (not kept alive by the traceback's frames)
                raise ProfileError(path, gzip_bomb_problem(pos, limit))
            if d.eof:  # another member may follow (``cat a.gz b.gz``)
                at += len(data) - len(d.unused_data)
                data, d = d.unused_data, zlib.decompressobj(16 + zlib.MAX_WBITS)
            else:
                at += len(data) - len(d.unconsumed_tail)
                data = d.unconsumed_tail
    if problem is None and in_member:
        problem = "gzip stream is truncated"
    if problem is None and not out:  # (read as a log "cut short inside its first line (0
        raise ProfileError(path, "an empty gzip: it inflates to nothing")  # bytes)", a fuzz)
    if problem is None:
        return out, None
    if len(out) > gzip_limit(pos):
        out.clear()
        raise ProfileError(path, gzip_bomb_problem(pos, gzip_limit(pos)))
    if not out:
        raise ProfileError(path, f"{problem}; nothing could be decompressed")
    return out, f"{problem}; reading the {len(out):,} bytes decompressed before it"
