"""Text about a hit: the hover tooltip and the detail panel rows (from the API)."""

from __future__ import annotations

from legate_prof.present.units import format_ns
from legate_prof.query import as_source


def tooltip_html(source, hit):
    """Hover text: the item's title, its lane's long name and the main figures."""
    source = as_source(source)
    kind, payload = hit
    if kind == "band":
        a, b, n, lane, _row = payload
        return (f"<b>{n} merged items</b><br>{_esc(source.info().lanes[lane].long)}"
                f"<br>{format_ns(a)} – {format_ns(b)}"
                "<br><i>zoom in (double-click) to split</i>")
    fields = source.item_details(payload)
    rows = [f"<b>{_esc(fields[0].text)}</b>"]
    for f in fields:
        if f.label in ("Provenance", "Lane", "Duration", "Waiting", "Deferred", "Delayed",
                       "Size", "Bandwidth", "Source", "Destination", "Memory"):
            rows.append(f"{f.label}: {_esc(f.text)}")
    rows.append("<i>(click to show details)</i>")
    return "<br>".join(rows)


def _esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def details_rows(source, hit):
    """(label, value) rows for the pinned detail panel: the API's fields, µs to the ns."""
    source = as_source(source)
    kind, payload = hit
    if kind == "band":
        a, b, n, lane, row = payload
        from legate_prof.present.units import format_ns_us
        return [("Merged items", str(n)), ("Lane", source.info().lanes[lane].long),
                ("From", format_ns_us(a)), ("To", format_ns_us(b))]
    return [(f.label, f.text) for f in source.item_details(payload)]
