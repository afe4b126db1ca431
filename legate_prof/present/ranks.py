"""Rank lists as users write them (``--ranks 0-3,7``), parsed and printed back.

The reference's ``--nodes`` syntax: parts separated by commas, each a rank or an inclusive
range ``a-b``.  Pure (no Qt): the command line and the viewer's rank filter share it.
"""

from __future__ import annotations

MAX_RANK = (1 << 16) - 1  # Legion numbers nodes in 16 bits


def parse_ranks(text) -> tuple:
    """``"0-3,7"`` → ``(0, 1, 2, 3, 7)``: sorted, each once.  Spaces are allowed around parts;
    ``ValueError`` with a message for a user otherwise (an empty part, a negative or too big
    rank, a range that runs backwards, anything not a number)."""
    text = str(text).strip()
    if not text:
        raise ValueError("no ranks given (e.g. 0-3,7)")
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ValueError(f"{text!r}: an empty part between commas")
        lo, dash, hi = part.partition("-")
        lo, hi = lo.strip(), hi.strip()
        if not lo.isdigit() or (dash and not hi.isdigit()):
            raise ValueError(f"{part!r} is not a rank or a range of ranks (e.g. 0-3,7)")
        a, b = int(lo), int(hi) if dash else int(lo)
        if a > b:
            raise ValueError(f"{part!r} runs backwards (write {b}-{a})")
        if b > MAX_RANK:
            raise ValueError(f"{part!r}: ranks go up to {MAX_RANK}")
        out.update(range(a, b + 1))
    return tuple(sorted(out))


def format_ranks(ranks) -> str:
    """``(0, 1, 2, 3, 7)`` → ``"0-3,7"`` (runs of three or more as ranges)."""
    rs = sorted(set(int(r) for r in ranks))
    parts, k = [], 0
    while k < len(rs):
        j = k
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        if j - k >= 2:
            parts.append(f"{rs[k]}-{rs[j]}")
        else:
            parts.extend(str(r) for r in rs[k:j + 1])
        k = j + 1
    return ",".join(parts)
