"""One Qt-free door to a profile: what the viewer, screenshots, stats and reports read.

Modelled on prof-viewer's ``DataSource``: ``info()`` describes the lane tree once;
``lane_tile`` / ``summary_tile`` answer for a time window at a pixel width; ``item_details``
and ``search`` answer about items.  The rule "too narrow to draw" lives here only
(``MIN_PX``), and hit-testing answers from the last tile produced, so a click means what the
picture shows.  Callers never touch the model's tables.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from legate_prof.model.kinds import GROUP_COLOR, GROUP_KEYS, GROUPS, MEMORY_GROUPS, PROCESSOR_GROUPS, ItemKind, MemKind
from legate_prof.model.kinds import index_of_mem, node_of_id
from legate_prof.analyze.stats import format_bytes

GROUP_ORDER = tuple(GROUP_KEYS)  # display order of lane groups under a rank
GROUP_COLORS = dict(GROUP_COLOR)  # summary colour per lane group

MIN_PX = 3.0  # items narrower than this many pixels merge into gray bands
LABEL_MIN_PX = 30.0  # boxes and bands at least this wide carry a label

# The reference viewer's panel names, per lane group.
PANEL = {
    "cpu": "cpu", "gpu_dev": "gpu dev", "gpu_host": "gpu host", "utility": "utility",
    "io": "io", "python": "python", "openmp": "omp", "proc_group": "proc group",
    "proc_set": "proc set", "proc_other": "io (extern)", "system": "system",
    "framebuffer": "framebuffer", "zerocopy": "zerocopy", "registered": "registered",
    "socket": "socket", "mem_other": "memory", "arrays": "arrays", "channel": "chan",
    "dp": "dp", "ops": "ops",
}
# Long kind names as the reference viewer writes them ("Node 0 CPU 1 Processor(0x…)").
_PROC_LONG = {"cpu": "CPU", "gpu_dev": "GPU", "gpu_host": "GPU", "utility": "Utility",
              "io": "I/O", "python": "Python", "openmp": "OpenMP", "proc_group": "ProcGroup",
              "proc_set": "ProcSet", "proc_other": "Extern"}
_MEM_SHORT = {"system": "s", "framebuffer": "f", "zerocopy": "z", "registered": "r",
              "socket": "k", "mem_other": "m"}
_MEM_LONG = {"system": "System", "framebuffer": "Framebuffer", "zerocopy": "Zero-Copy",
             "registered": "Registered", "socket": "Socket", "mem_other": "Other"}
_MEMKIND_GROUP = {MemKind.SYSTEM: "system", MemKind.FRAMEBUFFER: "framebuffer",
                  MemKind.ZERO_COPY: "zerocopy", MemKind.REGISTERED: "registered",
                  MemKind.SOCKET: "socket"}


@dataclass(frozen=True)
class LaneInfo:
    """One lane: ``short`` as the reference names it (``c0``, ``g0d``, ``n0s0-n0f1``),
    ``long`` for tooltips (``Node 0 CPU 1 Processor(0x…)``)."""

    lane: int
    rank: int
    group: str
    panel: str
    short: str
    long: str
    rows: int
    capacity: int  # bytes for memories, 0 when unknown or not a memory


@dataclass(frozen=True)
class GroupInfo:
    rank: int
    group: str
    panel: str
    title: str  # display title (e.g. "CPU")
    kind: str  # "processor" | "memory" | "channel" | "other"
    lanes: tuple  # lane ids, in display order
    capacity: int  # processors: lane count; memories: bytes (0 = unknown)


@dataclass(frozen=True)
class ProfileInfo:
    ranks: tuple  # rank numbers
    groups: tuple  # GroupInfo, rank by rank, in display order
    lanes: tuple  # LaneInfo indexed by lane id
    time_range: tuple  # (t0, t1) ns, the initial view
    warnings: tuple  # strings
    errors: tuple  # strings: inputs that could not be read
    sources: tuple  # input paths
    markers: tuple  # dicts: time, rank, kind, title, fields
    n_items: int
    legion_version: str = ""
    timeline_missing: str = ""  # why there is no Legion timeline (a crashed run), or ""


@dataclass
class TileRow:
    """One stacking row of a lane tile.  Pixel columns are floats relative to the tile's t0.

    ``box_*``: one entry per drawn item.  ``piece_*``: the state pieces that cover boxes
    (``piece_state`` 0 running, 1 ready, 2 waiting), each with its owning item.
    ``band_*``: merged gray bands and their item counts.
    """

    row: int
    box_x0: np.ndarray
    box_x1: np.ndarray
    box_item: np.ndarray
    box_name: np.ndarray  # colour key: the item's name id
    band_x0: np.ndarray
    band_x1: np.ndarray
    band_count: np.ndarray
    band_first: np.ndarray
    piece_x0: np.ndarray
    piece_x1: np.ndarray
    piece_state: np.ndarray
    piece_item: np.ndarray
    piece_name: np.ndarray = None  # colour key of each piece (its item's name id)


RUNNING, READY, WAITING = 0, 1, 2
STATE_NAMES = ("running", "ready", "waiting")


@dataclass
class LaneTile:
    lane: int
    t0: float
    t1: float
    width_px: int
    rows: list  # TileRow
    labels: list = field(default_factory=list)  # (row, x0, x1, text)
    px_scale: float = 1.0  # tile pixels per screen pixel (MIN_PX is in screen pixels)

    @property
    def ns_per_px(self):
        return (self.t1 - self.t0) / self.width_px


@dataclass(frozen=True)
class Hit:
    """What is under a point: an item (``item`` set) or a merged band (``count`` > 1)."""

    lane: int
    row: int
    item: int | None
    t0: int
    t1: int
    count: int


@dataclass(frozen=True)
class Field:
    """One detail row: ``text`` to show, ``value`` at full precision (ns, bytes, ids),
    ``link`` (kind, target) to follow: ("item", i), ("op", id), ("memory", lane),
    ("provenance", "file:line")."""

    label: str
    text: str
    value: object = None
    link: tuple | None = None


def format_time(ns):
    """Times on axes and in the status bar (as ``stats`` prints them)."""
    from legate_prof.analyze.stats import format_ns
    return format_ns(ns)


def format_ns_us(ns):
    """Times in details: µs with three decimals (ns precision), copyable."""
    return f"{ns / 1000:,.3f} µs"


class ProfileSource:
    """Qt-free query API over a ``TraceModel``."""

    def __init__(self, model):
        self._m = model
        self._info = None
        self._last_tiles = {}  # lane -> LaneTile last produced

    # -- description ---------------------------------------------------------------------
    def info(self) -> ProfileInfo:
        if self._info is None:
            self._info = self._build_info()
        return self._info

    def _build_info(self):
        m = self._m
        L = m.lanes
        n = m.n_lanes
        group = [GROUP_KEYS[int(g)] for g in L["group"].tolist()]
        rank = L["rank"].tolist()
        ref = L["ref"].tolist()
        ref2 = L["ref2"].tolist()
        mem_kind = dict(zip(m.mems["mem_id"].tolist(), m.mems["kind"].tolist()))
        # per-kind numbering from 0 within a node, ordered by id
        mem_short, seen = {}, {}
        for mid in sorted(mem_kind):
            key = (int(node_of_id(np.uint64(mid))), self._mem_group(mem_kind[mid]))
            mem_short[mid] = (key, seen.get(key, 0))
            seen[key] = seen.get(key, 0) + 1
        proc_refs = {}  # (rank, kind) -> processor ids; numbered per kind from 0 by id
        for i in range(n):
            if group[i] in PROCESSOR_GROUPS:
                kk = "gpu" if group[i] in ("gpu_dev", "gpu_host") else group[i]
                proc_refs.setdefault((int(rank[i]), kk), set()).add(ref[i])
        proc_index = {key: {p: k for k, p in enumerate(sorted(v))}
                      for key, v in proc_refs.items()}
        lanes = []
        for i in range(n):
            g, r = group[i], int(rank[i])
            if g in PROCESSOR_GROUPS:
                kind_key = "gpu" if g in ("gpu_dev", "gpu_host") else g
                k = proc_index[(r, kind_key)][ref[i]]
                prefix = "e" if g == "proc_other" else GROUPS[GROUP_KEYS.index(g)][2]
                short = {"gpu_dev": f"g{k}d", "gpu_host": f"g{k}h"}.get(g, f"{prefix}{k}")
                long = f"Node {r} {_PROC_LONG[g]} {k} Processor(0x{ref[i]:x})"
                if g == "proc_other":
                    long += " — the top-level task's lane (the guide's I/O lane)"
                if g == "gpu_dev":
                    long += " device"
                elif g == "gpu_host":
                    long += " host"
            elif g in MEMORY_GROUPS and g != "arrays":
                _, k = mem_short.get(ref[i], ((r, g), int(index_of_mem(np.uint64(ref[i])))))
                short = f"{_MEM_SHORT.get(g, 'm')}{k}"
                long = f"Node {r} {_MEM_LONG.get(g, 'Other')} Memory {k}(0x{ref[i]:x})"
            elif g == "channel":
                dst = self._mem_name(ref2[i], mem_kind, mem_short)
                if ref[i] == 0:
                    short = f"fill {dst}"
                    long = f"Fill channel into {self._mem_long(ref2[i], mem_kind, mem_short)}"
                else:
                    short = f"{self._mem_name(ref[i], mem_kind, mem_short)}-{dst}"
                    long = (f"Channel {self._mem_long(ref[i], mem_kind, mem_short)} to "
                            f"{self._mem_long(ref2[i], mem_kind, mem_short)}")
            elif g == "dp":
                short, long = f"dp{r}", f"Node {r} Dependent Partitioning"
            else:
                short, long = L["name"][i], L["title"][i]
            lanes.append(LaneInfo(lane=i, rank=r, group=g, panel=PANEL.get(g, g), short=short,
                                  long=long, rows=int(L["rows"][i]),
                                  capacity=int(L["capacity"][i])))
        # groups in display order: rank by rank, groups in GROUPS order, lanes by short name
        groups = []
        by_group = {}
        for x in lanes:
            by_group.setdefault((x.rank, x.group), []).append(x.lane)
        for r in sorted(set(rank)):
            for gi, gk in enumerate(GROUP_KEYS):
                ids = by_group.get((r, gk))
                if not ids:
                    continue
                ids.sort(key=lambda j: _natural(lanes[j].short))
                if gk in PROCESSOR_GROUPS:
                    kind, cap = "processor", len(ids)
                elif gk in MEMORY_GROUPS:
                    kind, cap = "memory", sum(lanes[j].capacity for j in ids)
                elif gk == "channel":
                    kind, cap = "channel", 0
                else:
                    kind, cap = "other", 0
                groups.append(GroupInfo(rank=r, group=gk, panel=PANEL.get(gk, gk),
                                        title=GROUPS[gi][1], kind=kind, lanes=tuple(ids),
                                        capacity=cap))
        return ProfileInfo(
            ranks=tuple(sorted(set(rank))), groups=tuple(groups), lanes=tuple(lanes),
            time_range=tuple(m.time_range()), warnings=tuple(str(w) for w in m.warnings),
            errors=tuple(getattr(m, "errors", ()) or ()), sources=tuple(m.sources),
            markers=tuple(m.markers), n_items=m.n_items,
            timeline_missing=self._why_missing(group),
            legion_version=next((r["legion_version"] for r in m.ranks
                                 if r.get("legion_version")), ""))

    def _why_missing(self, groups):
        """A run seen only through the runtime's event stream has no processor lanes:
        Legion writes its own log at shutdown, which a crashed run never reaches."""
        if any(g in PROCESSOR_GROUPS for g in groups):
            return ""
        errs = list(getattr(self._m, "errors", ()) or ())
        marks = [mk.get("title", "") for mk in self._m.markers if mk.get("title")]
        ranks = self._m.ranks
        stream = "; shown: the runtime's event stream" if any(
            "runtime_end_ns" in r for r in ranks) else ""
        if any(r.get("format_version") for r in ranks):  # a Legion log, cut before its timeline
            cut = [str(w).split(": ", 2)[-1] for w in self._m.warnings if "truncated" in str(w)]
            why = ("the Legion Prof log holds no timeline records (Legion writes them at "
                   "shutdown, which a crashed run never reaches)" + (f"; {cut[0]}" if cut else "")
                   + stream)
        else:
            why = ("no Legion Prof log was read (Legion writes it at shutdown, which a crashed "
                   "run never reaches)" + stream)
        if marks:
            why += f"; the run ended with: {marks[0]}"
        elif errs:
            why += f"; {errs[0]}"
        return why

    @staticmethod
    def _mem_group(kind):
        try:
            return _MEMKIND_GROUP.get(MemKind(int(kind)), "mem_other")
        except ValueError:
            return "mem_other"

    def _mem_name(self, mid, mem_kind, mem_short):
        g = self._mem_group(mem_kind.get(mid, 0))
        node = int(node_of_id(np.uint64(mid)))
        k = mem_short[mid][1] if mid in mem_short else int(index_of_mem(np.uint64(mid)))
        return f"n{node}{_MEM_SHORT.get(g, 'm')}{k}"

    def _mem_long(self, mid, mem_kind, mem_short):
        g = self._mem_group(mem_kind.get(mid, 0))
        node = int(node_of_id(np.uint64(mid)))
        k = mem_short[mid][1] if mid in mem_short else int(index_of_mem(np.uint64(mid)))
        return f"Node {node} {_MEM_LONG.get(g, 'Other')} Memory {k}"

    # -- tiles -----------------------------------------------------------------------------
    def prepare_lanes(self, lanes):
        """Get ``lanes`` ready to draw before their tiles are asked: a model built unstacked
        stacks them now, several at once on the machine's cores (a lane's first tile would
        otherwise stack it alone).  Nothing to do for lanes already stacked."""
        stack_in_threads([(self._m, int(L)) for L in lanes])

    def lane_tile(self, lane, t0, t1, width_px, px_scale=1.0) -> LaneTile:
        """Boxes (with state pieces), merged gray bands with counts and labels for one lane
        over [t0, t1] at ``width_px``: all from the one rule ``MIN_PX``.

        ``px_scale``: tile pixels per pixel on screen, for callers that compute on a finer
        grid than they draw (the viewer's cache): the rule stays MIN_PX screen pixels."""
        m = self._m
        width_px = max(int(width_px), 1)
        t0, t1 = float(t0), float(t1)
        if not t1 > t0:  # (a zero-width window, where even 1e-9 ns more is the same float)
            t1 = math.nextafter(t0, math.inf)
        scale = width_px / (t1 - t0)
        rows, labels = [], []
        names = m.items["name"]
        w = m.waits
        min_px = MIN_PX * float(px_scale)
        label_px = LABEL_MIN_PX * float(px_scale)
        for dr in m.draw_list(lane, t0, t1, width_px, min_px=min_px):
            p0, p1, ps, pi = self._pieces(dr.box_item, dr.box_x0, dr.box_x1, t0, scale, w)
            rows.append(TileRow(
                row=dr.row, box_x0=dr.box_x0, box_x1=dr.box_x1, box_item=dr.box_item,
                box_name=names[dr.box_item].astype(np.int64),
                band_x0=dr.band_x0, band_x1=dr.band_x1, band_count=dr.band_count,
                band_first=dr.band_first, piece_x0=p0, piece_x1=p1, piece_state=ps,
                piece_item=pi, piece_name=names[pi].astype(np.int64)))
            for j in np.flatnonzero(np.minimum(dr.box_x1, width_px) -
                                    np.maximum(dr.box_x0, 0.0) >= label_px)[:500].tolist():
                labels.append((dr.row, float(dr.box_x0[j]), float(dr.box_x1[j]),
                               m.item_title(int(dr.box_item[j]))))
            for j in np.flatnonzero(dr.band_x1 - dr.band_x0 >= label_px)[:500].tolist():
                labels.append((dr.row, float(dr.band_x0[j]), float(dr.band_x1[j]),
                               f"{int(dr.band_count[j])} merged"))
        tile = LaneTile(lane=int(lane), t0=float(t0), t1=t1, width_px=width_px, rows=rows,
                        labels=labels, px_scale=float(px_scale))
        self._last_tiles[int(lane)] = tile
        return tile

    @staticmethod
    def _pieces(items, bx0, bx1, t0, scale, w):
        """Running / ready / waiting pieces over the boxes (waits from the model)."""
        n = len(items)
        z = np.zeros(0)
        if n == 0:
            return z, z, np.zeros(0, np.int8), np.zeros(0, np.int64)
        if len(w["item"]):
            lo = np.searchsorted(w["item"], items, side="left")
            hi = np.searchsorted(w["item"], items, side="right")
            has = np.flatnonzero(hi > lo)
        else:
            has = np.zeros(0, np.int64)
        parts_x0 = [bx0]
        parts_x1 = [bx1]
        parts_s = [np.full(n, RUNNING, np.int8)]
        parts_i = [items]
        if len(has):
            counts = (hi - lo)[has]
            owner = np.repeat(has, counts)
            first = np.cumsum(counts) - counts  # where each box's waits start in idx
            idx = np.repeat(lo[has], counts) + np.arange(int(counts.sum())) - \
                np.repeat(first, counts)
            for a, b, state in (("start", "ready", WAITING), ("ready", "end", READY)):
                xa = np.maximum((w[a][idx] - t0) * scale, bx0[owner])
                xb = np.minimum((w[b][idx] - t0) * scale, bx1[owner])
                ok = xb > xa
                parts_x0.append(xa[ok])
                parts_x1.append(xb[ok])
                parts_s.append(np.full(int(ok.sum()), state, np.int8))
                parts_i.append(items[owner[ok]])
        return (np.concatenate(parts_x0), np.concatenate(parts_x1),
                np.concatenate(parts_s), np.concatenate(parts_i))

    def summary_tile(self, group, rank, t0, t1, bins) -> np.ndarray:
        """Average utilization (0..1) of a lane group in ``bins`` equal bins; ``rank=None``
        is the all-ranks summary."""
        return np.clip(self._m.utilization(group, rank, t0, t1, int(bins)), 0.0, 1.0)

    # -- hit-testing -------------------------------------------------------------------------
    def last_tile(self, lane):
        return self._last_tiles.get(int(lane))

    def hit(self, lane, row, x_px) -> Hit | None:
        """What the last tile of ``lane`` shows at pixel column ``x_px`` of row ``row``.

        Boxes win over bands; among boxes the one drawn last (topmost) wins.  Bands report
        their extent in time from the items they hold.
        """
        return self.hit_tile(self._last_tiles.get(int(lane)), row, x_px)

    def hit_tile(self, tile, row, x_px) -> Hit | None:
        """What ``tile`` shows at pixel column ``x_px`` of ``row`` (for callers that keep
        their own tiles, such as the viewer's cache: the tile drawn is the tile asked)."""
        if tile is None:
            return None
        lane = tile.lane
        for tr in tile.rows:
            if tr.row != row:
                continue
            inside = np.flatnonzero((tr.box_x0 <= x_px) & (x_px < tr.box_x1))
            if len(inside):
                i = int(tr.box_item[inside[-1]])
                s, e = self.item_extent(i)
                return Hit(lane=int(lane), row=row, item=i, t0=s, t1=e, count=1)
            band = np.flatnonzero((tr.band_x0 <= x_px) & (x_px < tr.band_x1))
            if len(band):
                j = int(band[0])
                a = tile.t0 + tr.band_x0[j] * tile.ns_per_px
                b = tile.t0 + tr.band_x1[j] * tile.ns_per_px
                return Hit(lane=int(lane), row=row, item=None, t0=int(a), t1=int(np.ceil(b)),
                           count=int(tr.band_count[j]))
        return None

    # -- items -------------------------------------------------------------------------------
    def item_extent(self, i):
        return int(self._m.items["start"][i]), int(self._m.items["stop"][i])

    def item_lane(self, i):
        return int(self._m.items["lane"][i]), int(self._m.rows_of([i])[0])

    def lane_item_range(self, lane):
        """Item ids of a lane are the contiguous range [lo, hi) (items sorted by lane)."""
        return self._m.lane_range(int(lane))

    def items_columns(self, ids) -> dict:
        """start, stop, row, name id of many items at once (arrays)."""
        ids = np.asarray(ids, dtype=np.int64)
        it = self._m.items
        return {"start": it["start"][ids], "stop": it["stop"][ids],
                "row": self._m.rows_of(ids), "name": it["name"][ids].astype(np.int64)}

    def items_provenance(self, ids) -> np.ndarray:
        """Provenance id (into ``provenances``; 0: none) of many items at once."""
        ids = np.asarray(ids, dtype=np.int64)
        return self._m.op_provenance(self._m.items["op_id"][ids]).astype(np.int64)

    def item_title(self, i) -> str:
        """The label drawn on a box; an instance says its size and allocation site
        ("Instance 6.00 MiB · prog.py:16") so a memory lane reads without clicking."""
        i = int(i)
        m = self._m
        if int(m.items["kind"][i]) == ItemKind.INSTANCE:
            t = m.transfer_of(i)
            size = _short_bytes(t[0]) if t is not None else "?"
            prov = m.provenances[int(m.op_provenance([m.items["op_id"][i]])[0])]
            site = prov.rsplit("/", 1)[-1] if prov else ""
            return f"Instance {size}" + (f" · {site}" if site else "")
        return m.item_title(i)

    def instances_of_op(self, op_id) -> np.ndarray:
        """Item ids of the instances created for an operation (details link to them)."""
        it = self._m.items
        sel = (it["op_id"] == np.uint64(op_id)) & (it["kind"] == ItemKind.INSTANCE)
        return np.flatnonzero(sel)

    def item_name_id(self, i) -> int:
        return int(self._m.items["name"][i])

    def name_of(self, name_id) -> str:
        return self._m.names[int(name_id)]

    def _model_details(self, i) -> dict:
        return self._m.item_details(i)

    def _transfer_of(self, i):
        return self._m.transfer_of(i)

    def item_details(self, i) -> list:
        """Ordered ``Field`` rows for one item, times in µs to the ns, with links."""
        d = self._model_details(int(i))
        lanes = self.info().lanes
        lane, _ = self.item_lane(i)
        out = [Field("Title", d["title"], d["title"]), Field("Name", d["name"], d["name"])]
        if "variant" in d:
            out.append(Field("Variant", str(d["variant"]), d["variant"]))
        out.append(Field("Kind", d["kind"], d["kind"]))
        if "op_id" in d:
            out.append(Field("Operation", str(d["op_id"]), d["op_id"], ("op", d["op_id"])))
            if d["kind"] != "instance":
                inst = self.instances_of_op(d["op_id"])
                if len(inst):
                    sizes = [self._transfer_of(int(j)) for j in inst[:20]]
                    total = sum(t[0] for t in sizes if t is not None)
                    out.append(Field("Instances", f"{len(inst)} ({_short_bytes(total)}"
                                     f"{' in the first 20' if len(inst) > 20 else ''})",
                                     inst.tolist(), ("items", inst.tolist())))
        out.append(Field("Lane", f"{lanes[lane].short} — {lanes[lane].long}", lane,
                         ("lane", lane)))
        out.append(Field("Rank", str(lanes[lane].rank), lanes[lane].rank))
        if "provenance" in d:
            out.append(Field("Provenance", d["provenance"], d["provenance"],
                             ("provenance", d["provenance"])))
        for key, label in (("create_ns", "Create"), ("ready_ns", "Ready"), ("start_ns", "Start"),
                           ("stop_ns", "Stop"), ("duration_ns", "Duration"),
                           ("running_ns", "Running"), ("waiting_ns", "Waiting"),
                           ("deferred_ns", "Deferred"), ("delayed_ns", "Delayed"),
                           ("lifetime_ns", "Lifetime")):
            if key in d:
                out.append(Field(label, format_ns_us(d[key]), int(d[key])))
        if "size_bytes" in d:
            out.append(Field("Size", _format_bytes(d["size_bytes"]), int(d["size_bytes"])))
        for key, label in (("source", "Source"), ("destination", "Destination"),
                           ("memory", "Memory")):
            if key in d:
                out.append(Field(label, d[key], d[key], ("memory", d[key])))
        if "instance" in d:
            out.append(Field("Instance", d["instance"], d["instance"]))
        if "bandwidth_GBps" in d:
            out.append(Field("Bandwidth", f"{d['bandwidth_GBps']:.3f} GB/s",
                             float(d["bandwidth_GBps"])))
        for k, wt in enumerate(d.get("waits", [])):
            out.append(Field(f"Wait {k + 1}",
                             f"{format_ns_us(wt['start_ns'])} – {format_ns_us(wt['end_ns'])} "
                             f"(ready at {format_ns_us(wt['ready_ns'])})",
                             (wt["start_ns"], wt["ready_ns"], wt["end_ns"])))
        return out

    def search(self, text, limit=100_000) -> np.ndarray:
        """Item ids whose name or provenance contains ``text`` (case-insensitive), sorted."""
        if not text:
            return np.zeros(0, np.int64)
        return np.asarray(self._m.search(text, limit=limit), dtype=np.int64)

    def search_lanes(self, text) -> list:
        """Lane ids whose short or long name contains ``text`` (e.g. "I/O" finds the
        top-level task's lane)."""
        q = text.lower()
        return [x.lane for x in self.info().lanes if q in x.short.lower() or q in x.long.lower()]

    # -- the whole profile -------------------------------------------------------------------
    def item_parts(self) -> list:
        """The models that hold the items, as ``ItemPart``s: analyses over all items (the
        findings, statistics) read their columns part by part instead of a merged copy."""
        return [ItemPart(self._m, 0, 0, None, None)]

    @property
    def names(self) -> list:
        """The name table that tiles' and columns' name ids index."""
        return self._m.names

    @property
    def provenances(self) -> list:
        """The provenance table (``file:line``; index 0 is none) that provenance ids index."""
        return self._m.provenances

    def summary_model(self):
        """The model of everything but the items (lanes, string tables, step functions,
        busy times, markers), numbered as this source numbers lanes."""
        return self._m

    def merged_model(self):
        """The profile as one ``TraceModel``, for analyses over all its items (findings,
        reports, exports, the cache); a source over ranks' models merges them on first call."""
        return self._m

    @property
    def warnings(self):
        return self._m.warnings

    @property
    def errors(self):
        return self._m.errors

    @property
    def sources(self):
        return self._m.sources


@dataclass(frozen=True)
class ItemPart:
    """One model holding some of a profile's items: its item ``i`` is the profile's item
    ``item_off + i`` on lane ``lane_off + lane``; ``name_map`` / ``prov_map`` turn its name
    and provenance ids into the profile's (None: the same)."""

    model: object
    item_off: int
    lane_off: int
    name_map: object
    prov_map: object

    def names(self, ids=None):
        n = self.model.items["name"] if ids is None else self.model.items["name"][ids]
        return n if self.name_map is None else self.name_map[n]

    def provenances(self, ids=None):
        op = self.model.items["op_id"] if ids is None else self.model.items["op_id"][ids]
        p = self.model.op_provenance(op)
        return p if self.prov_map is None else self.prov_map[p].astype(np.int32)


def by_part(offsets, ids):
    """(part index, which of ``ids``, their ids in that part) for each part holding some of
    ``ids``, the parts' first ids being ``offsets`` (sorted, one more at the end)."""
    ks = np.searchsorted(offsets, ids, side="right") - 1
    for k in np.unique(ks).tolist():
        sel = ks == k
        yield k, sel, ids[sel] - offsets[k]


def stack_in_threads(jobs):
    """Stack the lanes ``[(model, lane)]`` not yet stacked, on a thread per core: the work is
    numpy sorts and gathers, which run without the GIL."""
    jobs = [(m, L) for m, L in jobs if m.lane_needs_stacking(L)]
    if len(jobs) > 1 and (os.cpu_count() or 1) > 1:
        from concurrent.futures import ThreadPoolExecutor
        try:
            with ThreadPoolExecutor(min(os.cpu_count(), len(jobs))) as pool:
                list(pool.map(lambda j: j[0].stacked_lane(j[1]), jobs))
            return
        except RuntimeError:  # no new threads while the interpreter shuts down
            pass
    for m, L in jobs:
        m.stacked_lane(L)


def as_model(obj):
    """The ``TraceModel`` of ``obj``: a model, or a source's merged model."""
    return obj.merged_model() if isinstance(obj, ProfileSource) else obj


def open_profile(paths, progress=None) -> ProfileSource:
    """Read profiles (logs, runtime streams, bundles) into a source; bad input raises
    ``ProfileError`` naming the file."""
    from legate_prof.load.loader import load_profile
    return as_source(load_profile([str(p) for p in paths], progress=progress))


def as_source(obj) -> ProfileSource:
    """``obj`` if it is a ``ProfileSource``, else a new one over the model ``obj``."""
    return obj if isinstance(obj, ProfileSource) else ProfileSource(obj)


def _natural(s):
    import re
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _short_bytes(n):
    return format_bytes(n, 2)


def _format_bytes(n):
    return format_bytes(n, 2, exact=True)


__all__ = ["ProfileSource", "as_source", "as_model", "open_profile", "ProfileInfo", "GroupInfo", "LaneInfo", "LaneTile", "TileRow",
           "Hit", "Field", "MIN_PX", "LABEL_MIN_PX", "RUNNING", "READY", "WAITING",
           "STATE_NAMES", "format_ns_us", "format_time", "GROUP_ORDER", "GROUP_COLORS", "ItemKind"]
