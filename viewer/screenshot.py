"""Headless rendering of the timeline to a PNG, stamped for a bug report."""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

from legate_prof import __version__  # noqa: E402

from .layout import LaneLayout  # noqa: E402
from .timeline import TimelineWidget, format_time  # noqa: E402

STAMP_H = 44
LEGEND_H = 18  # the legend strip under the timeline


def app_instance():
    app = QtWidgets.QApplication.instance()
    if app is None:
        app = QtWidgets.QApplication(["legate_prof"])
    return app


def make_timeline(model, width, height, start=None, stop=None, expand=None, extent=None):
    """A TimelineWidget sized and ranged as asked, ready to grab."""
    app_instance()
    layout = LaneLayout.default(model, expand_kinds=expand or None)
    w = TimelineWidget(model, layout)
    # fit the whole lane tree when possible: rows down to 6 px, then it is cut at the bottom
    avail = height - 60
    w.row_px = max(6.0, min(18.0, avail / max(layout.height, 1)))
    w.resize(width, height)
    w.show()
    QtWidgets.QApplication.processEvents()
    if extent is not None:
        w.set_extent(*extent)
    t0, t1 = model.time_range()
    w.set_time_range(t0 if start is None else start, t1 if stop is None else stop)
    w.cursor.hide()
    w.cursor_label.hide()
    w.item.refresh()  # crisp summary strips at the final scale
    QtWidgets.QApplication.processEvents()
    return w


def geometry(w, y_offset=0):
    """Where things are in the grabbed picture: time->x mapping and each lane's pixel rows."""
    vb = w.vb
    (t0, t1), _ = vb.viewRange()

    def to_px(t, y):
        sp = vb.mapViewToScene(QtCore.QPointF(t, y))
        wp = w.mapFromScene(sp)
        return wp.x(), wp.y() + y_offset

    xl, _ = to_px(t0, 0)
    xr, _ = to_px(t1, 0)
    lanes, summaries = {}, {}
    for e in w.lane_layout.entries:
        _, ya = to_px(t0, e.y)
        _, yb = to_px(t0, e.y + e.height)
        if e.kind == "lane":
            lanes[e.lane] = (ya, yb, e.rows)
        elif e.kind == "summary":
            summaries[(e.rank, e.group)] = (ya, yb)
    return {"t0": t0, "t1": t1, "x_left": xl, "x_right": xr, "lanes": lanes,
            "summaries": summaries}


def _missing_timeline(model):
    """Why Legion's timeline is missing from the picture, or '' when it is there."""
    why = [w for w in map(str, model.warnings) if "no timeline records" in w]
    if not why:
        return ""
    files = ", ".join(os.path.basename(w.split(": ")[1]) for w in why[:3] if ": " in w)
    return (f"Legion's timeline is missing from {files}: Legion writes it at shutdown, so the run "
            "crashed or was killed. " + ("What the runtime's event stream recorded is shown."
                                         if model.n_items else "Nothing else was recorded."))


def save_image(img, out):
    """Write ``img`` to ``out`` (format from its extension) through a temporary file."""
    from legate_prof.errors import ProfileError
    from legate_prof.output_file import atomic_output
    fmt = {".jpg": "JPEG", ".jpeg": "JPEG", ".bmp": "BMP"}.get(
        os.path.splitext(out)[1].lower(), "PNG")
    try:
        with atomic_output(out) as tmp:
            if not img.save(tmp, fmt):
                raise ProfileError(out, f"could not write the {fmt} picture (disk full?)")
    except OSError as e:
        raise ProfileError(out, f"could not write ({e.strerror or e})") from None


def render_screenshot(model, out, start=None, stop=None, width=1600, height=1000, expand=None,
                      title_files=None, return_geometry=False):
    """Render and save; returns the output path (and the picture's geometry if asked)."""
    w = make_timeline(model, width, height - STAMP_H - LEGEND_H, start, stop, expand)
    geo = geometry(w, STAMP_H) if return_geometry else None
    pix = w.grab()
    img = QtGui.QImage(width, height, QtGui.QImage.Format.Format_RGB32)
    img.fill(QtGui.QColor(255, 255, 255))
    p = QtGui.QPainter(img)
    p.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
    p.fillRect(QtCore.QRectF(0, 0, width, STAMP_H), QtGui.QColor(38, 50, 72))
    a, b = w.time_range()
    files = [os.path.basename(str(f)) for f in (title_files or model.sources)]
    shown = ", ".join(files[:6]) + (f" (+{len(files) - 6} more)" if len(files) > 6 else "")
    legion = next((r["legion_version"] for r in model.ranks if r.get("legion_version")), "")
    f = QtGui.QFont(p.font())
    f.setPointSizeF(10)
    f.setBold(True)
    p.setFont(f)
    p.setPen(QtGui.QColor(255, 255, 255))
    p.drawText(QtCore.QRectF(10, 3, width - 20, 20), int(QtCore.Qt.AlignmentFlag.AlignLeft),
               f"{shown}   —   {model.n_ranks} rank(s), {model.n_items:,} items")
    f.setBold(False)
    f.setPointSizeF(9)
    p.setFont(f)
    p.drawText(QtCore.QRectF(10, 22, width - 20, 20), int(QtCore.Qt.AlignmentFlag.AlignLeft),
               f"view {format_time(a)} – {format_time(b)}   ·   legate_prof {__version__}"
               + (f"   ·   {legion}" if legion else "")
               + f"   ·   {time.strftime('%Y-%m-%d %H:%M')}")
    from .legend import paint_legend
    p.save()
    p.fillRect(QtCore.QRectF(0, height - LEGEND_H, width, LEGEND_H), QtGui.QColor(246, 246, 246))
    paint_legend(p, 10, height - LEGEND_H + 2)
    p.restore()
    for i, m in enumerate(model.markers[:2]):
        p.setPen(QtGui.QColor(255, 120, 120))
        p.drawText(QtCore.QRectF(width // 2, 3 + 19 * i, width // 2 - 10, 20),
                   int(QtCore.Qt.AlignmentFlag.AlignRight), m["title"])
    p.drawPixmap(0, STAMP_H, pix)
    missing = _missing_timeline(model)
    if missing:  # a crashed run: say in the picture why it is (nearly) empty
        f.setPointSizeF(11)
        f.setBold(True)
        p.setFont(f)
        p.setPen(QtGui.QColor(190, 20, 20))
        p.drawText(QtCore.QRectF(40, STAMP_H + 70, width - 80, 80),
                   int(QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap),
                   missing)
    p.end()
    out = str(out)
    save_image(img, out)
    w.close()
    w.deleteLater()
    return (out, geo) if return_geometry else out


def render_comparison(models, out, names, width=1600, height=1200, expand=None):
    """Two (or more) runs stacked on one time scale, each under a band naming it."""
    t1 = max(m.time_range()[1] for m in models)
    band = 24
    each = (height - LEGEND_H) // len(models) - band
    img = QtGui.QImage(width, height, QtGui.QImage.Format.Format_RGB32)
    img.fill(QtGui.QColor(255, 255, 255))
    p = QtGui.QPainter(img)
    try:
        y = 0
        for m, name in zip(models, names):
            w = make_timeline(m, width, each, 0, t1, expand, extent=(0, t1))
            pix = w.grab()
            p.fillRect(QtCore.QRectF(0, y, width, band), QtGui.QColor(38, 50, 72))
            f = QtGui.QFont(p.font())
            f.setPointSizeF(10)
            f.setBold(True)
            p.setFont(f)
            p.setPen(QtGui.QColor(255, 255, 255))
            p.drawText(QtCore.QRectF(10, y + 3, width - 20, band - 4),
                       int(QtCore.Qt.AlignmentFlag.AlignLeft),
                       f"{name}   —   {m.n_ranks} rank(s), {m.n_items:,} items, "
                       f"0 – {format_time(t1)}")
            p.drawPixmap(0, y + band, pix)
            w.close()
            w.deleteLater()
            y += band + each
        from .legend import paint_legend
        p.fillRect(QtCore.QRectF(0, height - LEGEND_H, width, LEGEND_H),
                   QtGui.QColor(246, 246, 246))
        paint_legend(p, 10, height - LEGEND_H + 2)
    finally:
        p.end()
    save_image(img, str(out))
    return str(out)
