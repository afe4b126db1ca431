"""Text about a hit: the hover tooltip, the detail panel rows and a summary row's value (from
the API).  Every string from the profile is escaped (``plain_text``)."""

from __future__ import annotations

from legate_prof.present.units import format_bytes, format_ns, format_ns_us
from legate_prof.query import as_source

from .plain_text import tooltip_html as _tooltip
from .time_text import format_range

TOOLTIP_FIELDS = ("Provenance", "Lane", "Rank", "Group", "Duration", "Waiting", "Deferred",
                  "Delayed", "Size", "Bandwidth", "Source", "Destination", "Memory")


def lane_place(source, lane):
    """'Rank 2 · cpu · c1': where a lane is, for tooltips and details."""
    x = source.outline().lanes[lane]
    return f"Rank {x.rank} · {x.panel} · {x.short}"


def tooltip_html(source, hit, notes=()):
    """Hover text: the item's title, where it is and the main figures, then ``notes`` (lines:
    its place on the drawn critical path) (rich text whose every string from the profile is
    escaped)."""
    source = as_source(source)
    kind, payload = hit
    if kind == "band":
        a, b, n, lane, _row, busy = band_payload(payload)
        return _tooltip(("b", f"{n:,} merged items"), ("", busy_words(busy, a, b)),
                        ("", lane_place(source, lane)), ("", source.outline().lanes[lane].long),
                        ("", format_range(a, b)), ("i", "zoom in (double-click) to split"))
    fields = source.item_details(payload, critical=False)  # never waits for the path
    lines = [("b", fields[0].text)]
    lines += [("", f"{f.label}: {f.text}") for f in _with_group(source, payload, fields)
              if f.label in TOOLTIP_FIELDS]
    lines += [("", note) for note in notes]
    lines.append(("i", "(click to show details)"))
    return _tooltip(*lines)


def band_payload(payload):
    """(t0, t1, count, lane, row, busy share or None) of a band hit (older ones have no
    share)."""
    return (*payload, None) if len(payload) == 5 else tuple(payload)


def busy_words(busy, a, b):
    """"its items ran 1.2 % of it (1.20 ms of 100.0 ms)": what a merged band's shade says."""
    if busy is None:
        return "its items' share of it is not known"
    span = max(b - a, 0)
    share = "under 0.1 %" if 0 < busy < 0.001 else f"{busy * 100:.1f} %"
    return f"its items ran {share} of it ({format_ns(busy * span)} of {format_ns(span)})"


def summary_value(source, group, rank, t0, t1):
    """A summary row's value over [t0, t1]: '62 % utilization'; for a memory, '60% of 20.0
    MiB: 12.0 MiB in use (peak 16.0 MiB)', or where its capacity is unknown, '48.0 MiB in
    use (peak 61.0 MiB)'; a memory used past its capacity says how far its peak went, and
    where its share is at 100 % (cut there), 'at or over its capacity of 1.3 GiB (peak 2.4
    GiB: 178% of its capacity)'."""
    u = float(source.summary_tile(group, rank, t0, t1, 1)[0])
    scale = source.summary_bytes(group, rank)
    if scale is not None:
        return f"{format_bytes(u * scale[0])} in use (peak {format_bytes(scale[1])})"
    use = source.memory_use(group, rank)  # (a memory of known capacity: its bytes too)
    if use is not None and use[0] > 0:
        peak = f"peak {format_bytes(use[1])}"
        if use[1] > use[0] * (1 + 1e-6):  # (used past its capacity: the share is cut at 100 %)
            peak += f": {use[1] / use[0] * 100:,.0f}% of its capacity"
            if u >= 1.0:
                return f"at or over its capacity of {format_bytes(use[0])} ({peak})"
        return (f"{u * 100:.0f}% of {format_bytes(use[0])}: {format_bytes(u * use[0])} in use "
                f"({peak})")
    return f"{u * 100:.0f}% utilization"


def summary_text(source, entry, t, ns_per_px):
    """Tooltip of a summary row at time ``t``: which rank and kind, and its value there."""
    where = "All ranks" if entry.rank is None else f"Rank {entry.rank}"
    value = summary_value(source, entry.group, entry.rank, t - ns_per_px, t + ns_per_px)
    return _tooltip(("b", f"{where} · {entry.label}"), ("", value))


class _Group:
    """A detail row made here (the group a lane belongs to), shaped as the API's ``Field``."""

    def __init__(self, label, text, link=None):
        self.label, self.text, self.value, self.link = label, text, text, link


def _with_group(source, i, fields):
    """The API's fields with the lane's group after its rank."""
    lane, _ = source.item_lane(i)
    out = []
    for f in fields:
        out.append(f)
        if f.label == "Rank":
            out.append(_Group("Group", source.outline().lanes[lane].panel))
    return out


def detail_fields(source, hit, critical_note=None):
    """Rows for the pinned detail panel: the API's ``Field``s (and the group), or a merged
    band's.  The critical path's rows (what it waited for, what it held up) once it is
    computed; until then a row saying so (``critical_note``), so a click never waits."""
    source = as_source(source)
    kind, payload = hit
    if kind == "marker":  # (a failure's label: what legate's report said, pinned)
        return [_Group("Marker", str(payload.get("title", "")) or str(payload.get("kind", "")))] \
            + [_Group(str(k), str(v)) for k, v in (payload.get("fields") or {}).items()]
    if kind == "band":
        a, b, n, lane, row, busy = band_payload(payload)
        long = source.outline().lanes[lane].long
        return [_Group("Merged items", f"{n:,}"), _Group("Busy", busy_words(busy, a, b)),
                _Group("Lane", f"{lane_place(source, lane)} — {long}", ("lane", lane)),
                _Group("From", format_ns_us(a)), _Group("To", format_ns_us(b))]
    if source.critical_path_ready:
        return _critical_first(_with_group(source, payload, source.item_details(payload)))
    fields = _with_group(source, payload, source.item_details(payload, critical=False))
    return _critical_first(fields + [_Group("Critical path", critical_note or "being computed")])


CRITICAL_ROWS = ("Waited for", "Created by", "Held up", "Critical path")


def _critical_first(fields):
    """The critical path's rows right after where the item is (its lane, rank, group and
    line), before its times and waits: an item with many waits had "Waited for" below the
    fold of the details at 1500×900."""
    crit = [f for f in fields if f.label in CRITICAL_ROWS]
    rest = [f for f in fields if f.label not in CRITICAL_ROWS]
    labels = [f.label for f in rest]
    after = max((labels.index(x) for x in ("Lane", "Rank", "Group", "Provenance")
                 if x in labels), default=len(rest) - 1)
    return rest[:after + 1] + crit + rest[after + 1:]


def details_rows(source, hit):
    """(label, value) rows for the pinned detail panel: the API's fields, µs to the ns."""
    return [(f.label, f.text) for f in detail_fields(source, hit)]


def marker_words(marker):
    """A failure marker's tooltip: its title, then what legate's report said, a field a line
    (the stores that held the pool among them), as ``stats`` prints them."""
    lines = [str(marker.get("title", "")) or str(marker.get("kind", ""))]
    for k, v in (marker.get("fields") or {}).items():
        lines.append(f"{k}: {v}")
    return "\n".join(lines)
