"""Printing a query result: an aligned text table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json


def _plain(v):
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return str(v)


def format_result(cols, rows, fmt="table") -> str:
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue()
    if fmt == "json":
        return json.dumps([{c: _plain(v) for c, v in zip(cols, r)} for r in rows], indent=1) + "\n"
    cells = [[("" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)) for v in r]
             for r in rows]
    width = [max([len(c)] + [len(r[j]) for r in cells]) for j, c in enumerate(cols)]
    line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, width)).rstrip()  # noqa: E731
    out = [line(cols), line(["-" * w for w in width])] + [line(r) for r in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out) + "\n"
