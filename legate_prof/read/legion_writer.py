"""Writer of Legion Prof binary logs in the format legate 26.06 writes.

Used for synthetic multi-rank profiles (PyPI legate runs one rank only) and for damaged-file
tests.  The header and preamble are legate 26.06's own (``data/legion_26_06_preamble.txt``);
records are packed by the same preamble-derived layouts the reader uses, so reader and writer
cannot disagree silently.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from legate_prof.read.legion_log import LegionProfReader, scalar_dtype

PREAMBLE_26_06 = Path(__file__).parent.parent / "data" / "legion_26_06_preamble.txt"


class LegionProfWriter:
    """Writes one rank's log: header + preamble, then records in the order given."""

    def __init__(self, path, preamble_path=PREAMBLE_26_06, max_dim=3):
        self.path = Path(path)
        self.text = Path(preamble_path).read_bytes()
        reader = LegionProfReader(preamble_path)
        # parse the preamble with the reader's own parser (body is empty)
        _, _, layouts, _ = reader.parse_header(self.text + b"\n")
        self.layouts = {lay.name: lay for lay in layouts.values()}
        self.max_dim = max_dim
        self.counts = {}  # records written, by type
        self.f = open(self.path, "wb")
        self.f.write(self.text + b"\n")
        self.write("MaxDimDesc", max_dim=max_dim)

    def close(self):
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def write(self, record, **fields):
        """One record, any type (strings, points, uuids and the conditional redop included)."""
        lay = self.layouts[record]
        self.counts[record] = self.counts.get(record, 0) + 1
        out = [struct.pack("<i", lay.rid)]
        uuid_size = 16
        for fname, ftype, size in lay.fields:
            if lay.condition is not None and fname == lay.condition_field_name():
                if fields.get(lay.condition[0]) != lay.condition[1]:
                    continue
            v = fields.get(fname, 0)
            if ftype == "string" or size < 0:
                out.append(str(v).encode() + b"\0")
            elif ftype == "point":
                vals = list(v) + [0] * self.max_dim
                out.append(struct.pack(f"<{self.max_dim}q", *vals[: self.max_dim]))
            elif ftype == "array":
                vals = list(v) + [0] * (2 * self.max_dim)
                out.append(struct.pack(f"<{2 * self.max_dim}q", *vals[: 2 * self.max_dim]))
            elif ftype == "uuid":
                out.append(bytes(v or b"\0" * uuid_size)[:uuid_size].ljust(uuid_size, b"\0"))
            else:
                if ftype == "uuid_size":
                    uuid_size = int(v) if v else 16
                    v = uuid_size
                out.append(np.array([v], dtype=scalar_dtype(ftype, size)).tobytes())
        self.f.write(b"".join(out))

    def write_many(self, record, columns: dict, n=None):
        """A run of fixed-size records from numpy columns, packed in one go."""
        lay = self.layouts[record]
        if not lay.fixed:
            raise ValueError(f"{record} has variable-size fields; use write()")
        if n is None:
            n = max(len(v) for v in columns.values() if np.ndim(v) > 0)
        self.counts[record] = self.counts.get(record, 0) + n
        arr = np.zeros(n, dtype=lay.dtype)
        arr["_id"] = lay.rid
        for k, v in columns.items():
            arr[k] = v
        if lay.condition is not None:
            cfield, cvalue = lay.condition[0], lay.condition[1]
            if np.any(arr[cfield] == cvalue):
                raise ValueError(f"{record} rows with {cfield}=={cvalue} need write()")
        self.f.write(arr.tobytes())
