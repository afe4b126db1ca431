"""Which ranks to show: ``0-3,7`` -> (0, 1, 2, 3, 7).  One syntax for the CLI's ``--ranks``
and the viewer's rank filter, so a selection typed in one works in the other."""

from __future__ import annotations

MAX_RANK = 1 << 20  # a selection names at most this many ranks (bounded work on any text)


class RankSpecError(ValueError):
    """A rank selection that is not ``N``, ``A-B`` or a comma list of them."""


def parse_ranks(text, known=None):
    """Rank numbers named by ``text``: comma-separated numbers and inclusive ranges
    (``0-3,7``); blanks ignored; an empty text is every rank (None).  With ``known`` (the
    profile's ranks) the result keeps only those, in order; a selection that names none of
    them is an error that says which ranks there are."""
    text = (text or "").replace(" ", "")
    if not text or text in ("*", "all"):
        return None
    out = set()
    for part in text.split(","):
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise RankSpecError(f"{part!r} is not a rank or a range of ranks "
                                "(e.g. 0-3,7)") from None
        if a < 0 or b < a:
            raise RankSpecError(f"{part!r}: ranks are numbers from 0, ranges low-high")
        if b - a >= MAX_RANK or len(out) + b - a >= MAX_RANK:
            raise RankSpecError(f"{part!r}: too many ranks in one selection")
        if known is not None:
            out.update(r for r in known if a <= r <= b)
        else:
            out.update(range(a, b + 1))
    if known is not None and not out:
        raise RankSpecError(f"{text!r} names none of this profile's ranks "
                            f"({format_ranks(known)})")
    return tuple(sorted(out))


def format_ranks(ranks):
    """(0, 1, 2, 3, 7) -> '0-3,7': the inverse of ``parse_ranks``."""
    ranks = sorted(set(int(r) for r in ranks))
    parts, k = [], 0
    while k < len(ranks):
        j = k
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(str(ranks[k]) if j == k else f"{ranks[k]}-{ranks[j]}")
        k = j + 1
    return ",".join(parts)
