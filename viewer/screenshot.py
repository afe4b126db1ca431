"""Headless rendering of the timeline to a PNG, stamped for a bug report."""

from __future__ import annotations

import os
import time

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

from legate_prof import __version__  # noqa: E402
from legate_prof.errors import ProfileError  # noqa: E402
from legate_prof.query import as_source  # noqa: E402

from legate_prof.present.file_list import files_in_words  # noqa: E402
from legate_prof.present.picture_size import MAX_SIDE, check_size  # noqa: E402

from .timeline.critical_path import RunPath  # noqa: E402
from .timeline.path_overlay import MAX_STEPS_DRAWN  # noqa: E402
from .timeline.layout import LaneLayout  # noqa: E402
from .panels.legend import paint_legend  # noqa: E402
from .picture_header import LEGEND_H, STAMP_H, header_layout, paint_header  # noqa: E402
from .notices import notice_lines, problem_lines  # noqa: E402
from legate_prof.present.units import format_ns  # noqa: E402
from .time_text import format_range  # noqa: E402
from .timeline.widget import TimelineWidget  # noqa: E402

FIT_ROW_PX = 12.0  # a grown picture gives each row unit this many pixels
CHROME_PX = 80  # axes and margins of the plot


def qt_started():
    """Whether this process has started Qt (a forked copy of it must not draw then: the
    copy would hold Qt's state without its threads; ``report.pictures``)."""
    return QtCore.QCoreApplication.instance() is not None


def app_instance():
    app = QtWidgets.QApplication.instance()
    if app is None:
        app = QtWidgets.QApplication(["legate_prof"])
    return app


def lane_layout(source, expand=None, state=None, path=None):
    """The lanes as the CLI lays them out (``expand``), or as a window shows them (``state``:
    ``LaneLayout.state()``); ``path``: a ``RunPath`` drawn, its summary track on top."""
    if state is not None:
        layout = LaneLayout.with_state(source, state)
    else:
        layout = LaneLayout.default(source, expand_kinds=expand or None)
    if path is not None and path.track is not None:
        layout.set_path_track(layout.path_track_rows(path.track))
    return layout


def timeline_height(source, expand=None, state=None, path=None, layout=None):
    """Pixels a timeline needs to show every group as laid out (``layout``, else laid out
    here), axes and margins included."""
    if layout is None:
        layout = lane_layout(as_source(source), expand, state, path)
    return int(layout.height * FIT_ROW_PX) + CHROME_PX


def fitted_height(source, height, expand=None, state=None, header_h=STAMP_H + LEGEND_H,
                  path=None, most=MAX_SIDE, layout=None):
    """The picture's height grown to fit every group as laid out (bounded by ``most``)."""
    need = timeline_height(source, expand, state, path, layout) + header_h
    return max(height, min(need, most))


def make_timeline(model, width, height, start=None, stop=None, expand=None, extent=None,
                  state=None, path=None, matches=None, layout=None):
    """A TimelineWidget sized and ranged as asked, ready to grab (``path``: a ``RunPath``
    drawn over it, its track laid out before the rows are sized; ``matches``: items
    highlighted, as a window's search or finding highlights them; ``layout``: its lanes laid
    out already, by ``lane_layout`` of the same arguments: a picture's lanes are laid out
    once, for its height and for the timeline)."""
    app_instance()
    source = as_source(model)
    if layout is None:
        layout = lane_layout(source, expand, state, path)
    w = TimelineWidget(source, layout)
    if path is not None:
        w.set_critical_path(path)
        w.show_critical_path(True)
    if matches is not None:
        w.set_matches(matches)
    # fit the whole lane tree: rows down to 4 px (the caller grows the picture first)
    avail = height - CHROME_PX
    w.row_px = max(4.0, min(18.0, avail / max(layout.height, 1)))
    w.resize(width, height)
    # laid out (shown, its events handled) but not painted: a paint here would draw the
    # whole run once more before the range below is set (half a report's picture time)
    w.setUpdatesEnabled(False)
    w.show()
    QtWidgets.QApplication.processEvents()
    w.setUpdatesEnabled(True)
    if extent is not None:
        w.set_extent(*extent)
    t0, t1 = source.info().time_range
    w.set_time_range(t0 if start is None else start, t1 if stop is None else stop)
    w.cursor.hide()
    w.cursor_label.hide()
    w.item.refresh()  # crisp summary strips at the final scale
    QtWidgets.QApplication.processEvents()
    return w


def ended(w):
    """A picture's timeline ``w`` deleted now, its item's pictures and tiles released: a
    report draws its pictures with no event loop to run ``deleteLater``, and each kept its
    window's backing store, its picture and its tiles until the end (100 ranks: 11 pictures,
    1,600 x 4,096, the report's tree 1.3 GiB)."""
    w.item.let_go()
    w.close()
    w.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(w, QtCore.QEvent.Type.DeferredDelete)


def geometry(w, y_offset=0):
    """Where things are in the grabbed picture: time->x mapping, each lane's pixel rows, and
    where the timeline begins below the header (``top``)."""
    vb = w.vb
    (t0, t1), _ = vb.viewRange()

    def to_px(t, y):
        sp = vb.mapViewToScene(QtCore.QPointF(t, y))
        wp = w.mapFromScene(sp)
        return wp.x(), wp.y() + y_offset

    xl, _ = to_px(t0, 0)
    xr, _ = to_px(t1, 0)
    lanes, summaries, track = {}, {}, {}
    for e in w.lane_layout.entries:
        _, ya = to_px(t0, e.y)
        _, yb = to_px(t0, e.y + e.height)
        if e.kind == "lane":
            lanes[e.lane] = (ya, yb, e.rows)
        elif e.kind == "summary":
            summaries[(e.rank, e.group)] = (ya, yb)
        elif e.kind == "path":
            track[e.track_row] = (ya, yb)
    return {"t0": t0, "t1": t1, "x_left": xl, "x_right": xr, "lanes": lanes,
            "summaries": summaries, "track": track, "top": y_offset}


def render_screenshot(model, out, start=None, stop=None, width=1600, height=1000, expand=None,
                      title_files=None, return_geometry=False, fit=True, state=None,
                      critical_path=None, path_track=None, fit_at_most=MAX_SIDE, save=None,
                      matches=None, pixel_ratio=1.0):
    """Render and save; returns the output path (and the picture's geometry if asked).

    With ``fit`` the picture grows taller (up to ``fit_at_most``) so every group as laid
    out fits; where even that cannot hold every rank, a band at its foot says which it shows.
    ``state``: lay the lanes out as a window shows them (``LaneLayout.state()``).
    ``critical_path``: True draws the run's critical path over the lanes (computed here), or
    the ``RunPath`` a window already has; ``path_track(source)``: its summary track (the
    command line's ``analyze.path_track.path_track``).  ``save(job)`` runs ``job()``, the
    encoding and writing (default: now; the report's thread: while the next is drawn).
    ``matches``: items highlighted (a window's export: what its view highlights).
    ``pixel_ratio``: the picture's pixels per unit of ``width`` and ``height`` (a window's
    Export PNG on a HiDPI screen: its device pixel ratio, as a screenshot of the window);
    it grows to ``fit_at_most`` of those units."""
    check_size(out, *_device_size(width, height, pixel_ratio))
    source = as_source(model)
    info = source.info()
    app_instance()
    path = _critical_path_of(source, critical_path, path_track)
    files = [os.path.basename(os.path.abspath(str(f))) for f in (title_files or info.sources)]
    t0, t1 = info.time_range
    a, b = t0 if start is None else start, t1 if stop is None else stop
    in_view = source.items_in(a, b) if (a > t0 or b < t1) else None
    header = header_layout(width, _stamp_texts(info, files, (a, b), path, in_view),
                           _header_lines(info), QtGui.QFont(), critical=path is not None)
    # (a crashed run's note takes a band of its own between the header and the lanes: over
    # the lanes it hid the first rows and the failure's own label, a user's review)
    top_h = header.height + (missing_height(width, info.timeline_missing)
                             if info.timeline_missing else 0)
    layout = lane_layout(source, expand, state, path)  # (once: for the height and the lanes)
    if fit:
        height = fitted_height(source, height, expand, state, top_h, path, fit_at_most,
                               layout)
        check_size(out, *_device_size(width, height, pixel_ratio))
    w = make_timeline(source, width, height - top_h, start, stop, expand, state=state,
                      path=path, matches=matches, layout=layout)
    QtWidgets.QApplication.processEvents()
    grown = w.time_range() != (a, b)  # (a window beyond the run, narrowed by the view's limits)
    a, b = w.time_range()
    if grown:
        in_view = source.items_in(a, b) if (a > t0 or b < t1) else None
    geo = geometry(w, top_h) if return_geometry else None
    pix = w.grab()
    if path is not None or grown:  # (what the path's frame drew: said in the header)
        drawn = w.item.path.last if path is not None and w.item.path is not None else None
        header = header_layout(width, _stamp_texts(info, files, (a, b), path, in_view, drawn),
                               _header_lines(info), QtGui.QFont(), critical=path is not None,
                               rows=len({pc.rect.y() for pc in header.stamp}))
    if geo is not None and path is not None:
        geo["path_drawn"] = dict(w.item.path.last)
    img = _picture(out, (width, height, pixel_ratio), header, _names_in_view(source, a, b), pix,
                   top_h, info.timeline_missing, ranks_cut_off(w), header.height)
    out = str(out)
    (save or _now)(lambda: _save_png(img, out))
    ended(w)
    return (out, geo) if return_geometry else out


def _names_in_view(source, a, b, most=16):
    """The task names that took the most time in [a, b] (what the legend names)."""
    t = source.name_times(a, b)
    order = np.argsort(-t, kind="stable")[:most]
    return [source.names[i] for i in order.tolist() if t[i] > 0]


def _stamp_texts(info, files, time_range, path, in_view=None, drawn=None):
    """The stamp's left texts: the files, ranks and items (``in_view`` of them where the
    view is a window); the view's range, version, Legion, the date; with a critical path,
    a line saying how it is drawn (``drawn``: ``PathOverlay.last``) and how much of the run
    it explains."""
    a, b = time_range
    shown = files_in_words(files, most=6)
    title = (f"{shown}   —   {info.ranks_read} rank(s), {info.n_items:,} items"
             + (f" ({in_view:,} in view)" if in_view is not None else ""))
    view = ((f"view {format_range(a, b)}" if info.n_items else "no timeline items to show")
            + f"   ·   legate_prof {__version__}"
            + (f"   ·   {info.legion_version}" if info.legion_version else "")
            + f"   ·   {_taken_at()}")
    return [title, view] + (path_lines(path, a, b, drawn) if path is not None else [])


def path_lines(path, a, b, drawn=None):
    """The header's lines on the critical path: its steps and how they are drawn; how much
    of the run it explains and how much of that rests on inferred links."""
    out = [path_words(path, a, b, drawn)]
    if path.track is not None:
        out.append(f"the critical path {path.track.words}"
                   + (" (hatched on its track; an inferred link dashed)"
                      if path.track.inferred_from_ns is not None else ""))
    elif path.track_error:
        out.append(f"no summary track of the critical path ({path.track_error})")
    return out


def _taken_at():
    """When the picture was taken, as its header says: now, or ``SOURCE_DATE_EPOCH`` (UTC)
    where it is set, so that pictures of the same profile are the same file (reproducible
    builds' convention)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.isdigit():
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(min(int(epoch), 2**40)))
    return time.strftime("%Y-%m-%d %H:%M")


def _critical_path_of(source, asked, summarize=None):
    """The run's critical path to draw when ``asked`` (True: computed now, with its summary
    track where ``summarize`` is given; a ``RunPath``: as given), or None."""
    if asked is None or asked is False:
        return None
    return asked if isinstance(asked, RunPath) else \
        RunPath.from_steps(source, source.run_critical_path(), summarize)


def path_words(path, a, b, drawn=None):
    """The path's steps, and how many of them the view [a, b] shows (where not all); how
    they are drawn (``drawn``: ``PathOverlay.last`` — a summary track where too dense for
    steps one by one, or only the last ones where capped)."""
    end = ", stops at an unknown event" if path.stops_unknown else ""
    n = len(path)
    seen = int(((path.end >= a) & (path.begin <= b)).sum()) if n else 0
    shown = "" if seen == n else f", {seen:,} in view"
    out = f"run's critical path: {n:,} step{'' if n == 1 else 's'}{shown}{end}"
    mode = (drawn or {}).get("mode")
    if mode == "track":
        out += " — as its track at the top (too dense for steps one by one: zoom in)"
    elif mode == "capped":
        out += (f" — only the last {MAX_STEPS_DRAWN:,} of the {drawn['capped']:,} in view "
                "drawn")
    elif mode == "steps" and path.track is not None:
        out += " — its steps one by one, its track at the top"
    return out


MARKER_COLOR, PROBLEM_COLOR, NOTICE_COLOR = (255, 120, 120), (255, 196, 92), (150, 200, 255)


def _header_lines(info):
    """The header's right-hand lines, two at most, with their colours: the run's end (an
    out-of-memory failure), what could not be read or was wrong (amber), what the numbers
    mean across nodes (clock skew, a slow network: blue)."""
    problems = problem_lines(info)
    notices = notice_lines(info)
    right = [(m["title"], QtGui.QColor(*MARKER_COLOR))
             for m in info.markers[:2 - bool(problems) - bool(notices) or 1]]
    for lines, color in ((problems, PROBLEM_COLOR), (notices, NOTICE_COLOR)):
        if lines and len(right) < 2:
            more = f"  (+{len(lines) - 1} more)" if len(lines) > 1 else ""
            right.append((lines[0] + more, QtGui.QColor(*color)))
    return right


MISSING_H = 72  # the band of a crashed run's note, between the header and the lanes: at least
MISSING_LINES = 8  # its text's lines at most (a longer why is cut with an ellipsis)
_MISSING_FLAGS = QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap


def _missing_font(base=None):
    f = QtGui.QFont(base or QtGui.QFont())
    f.setPointSizeF(10)
    f.setBold(True)
    return f


def _missing_text(width, why, font):
    """(the note's text, fitted to ``MISSING_LINES`` lines of the band's width; its height)."""
    fm = QtGui.QFontMetrics(font)
    inner = max(int(width * 0.8) - 16, 40)
    text = f"Timeline missing: {why}"
    most = fm.lineSpacing() * MISSING_LINES
    if fm.boundingRect(0, 0, inner, 1 << 20, int(_MISSING_FLAGS), text).height() > most:
        lo, hi = 0, len(text)  # (the longest start that fits, and an ellipsis)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            fits = fm.boundingRect(0, 0, inner, 1 << 20, int(_MISSING_FLAGS),
                                   text[:mid] + "…").height() <= most
            lo, hi = (mid, hi) if fits else (lo, mid - 1)
        text = text[:lo] + "…"
    return text, fm.boundingRect(0, 0, inner, 1 << 20, int(_MISSING_FLAGS), text).height()


def missing_height(width, why):
    """The band a crashed run's note takes, its whole text in it (a long why was cut off at
    the band's fixed height: a review's screenshot lost "with --log)")."""
    return max(MISSING_H, _missing_text(width, why, _missing_font())[1] + 16)


def _paint_missing(p, width, top, why):
    """A crashed run's picture says that the Legion timeline is missing, and why (in its band
    from ``top``)."""
    f = _missing_font(p.font())
    p.setFont(f)
    text, _ = _missing_text(width, why, f)
    box = QtCore.QRectF(width * 0.1, top + 4, width * 0.8, missing_height(width, why) - 8)
    p.fillRect(box, QtGui.QColor(255, 240, 240))
    p.setPen(QtGui.QColor(190, 0, 0))
    p.drawRect(box)
    p.drawText(box.adjusted(8, 4, -8, -4), int(_MISSING_FLAGS), text)


def _device_size(width, height, ratio):
    """A picture's size in pixels: ``width`` x ``height`` at ``ratio`` pixels each."""
    return round(width * ratio), round(height * ratio)


def _picture(out, size, header, names, pix, top, missing, cut, missing_top=None):
    """The picture of ``size`` (width, height, device pixel ratio: drawn in its units, its
    pixels that ratio more): the header (``names``: the legend's tasks), the timeline's
    pixmap ``pix`` below it at ``top``, what says the timeline is ``missing`` (in its band
    from ``missing_top``), and the band that says which ranks it holds where it is ``cut``
    off (``ranks_cut_off``)."""
    width, height, ratio = size
    img = QtGui.QImage(*_device_size(width, height, ratio), QtGui.QImage.Format.Format_RGB32)
    if img.isNull():
        raise ProfileError(str(out), "not enough memory for a {}x{} image".format(
            *_device_size(width, height, ratio)))
    img.setDevicePixelRatio(ratio)
    img.fill(QtGui.QColor(255, 255, 255))
    p = QtGui.QPainter(img)
    try:
        p.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
        paint_header(p, header, names)
        p.drawPixmap(0, top, pix)
        if missing:
            _paint_missing(p, width, top if missing_top is None else missing_top, missing)
        if cut is not None:
            _paint_cut_off(p, width, height, *cut)
    finally:
        p.end()
    return img


def ranks_cut_off(w):
    """(the ranks whose header a timeline widget holds, every rank laid out) where it cannot
    hold every rank's header (a picture at its greatest height, 1,000 ranks in it); None
    where it holds them all."""
    heads = [e for e in w.lane_layout.entries if e.kind == "header" and e.rank is not None]
    vb, h = w.vb, w.height()
    inside = [e.rank for e in heads
              if w.mapFromScene(vb.mapViewToScene(QtCore.QPointF(0, e.y + e.height))).y() <= h]
    if len(inside) == len(heads):
        return None
    return inside, [e.rank for e in heads]


def cut_off_words(inside, every):
    """What a picture that holds only some ranks says of them."""
    held = (f"rank {inside[0]}" if len(inside) == 1 else
            f"ranks {inside[0]}–{inside[-1]}" if inside == every[:len(inside)] else
            f"{len(inside)} ranks") if inside else "no rank"
    rest = [r for r in every if r not in set(inside)]
    ask = (f"`legate_prof screenshot --ranks {rest[0]}-{rest[-1]}`"
           if rest and rest == list(range(rest[0], rest[-1] + 1)) else
           "`legate_prof screenshot --ranks …`")
    return (f"{held} of {len(every):,} in this picture: its height holds no more "
            f"({ask} or the window shows the others)")


def _paint_cut_off(p, width, height, inside, every):
    """A band at the picture's foot: which ranks it holds (a picture never drops ranks
    without saying so)."""
    f = QtGui.QFont(p.font())
    f.setPointSizeF(10)
    f.setBold(True)
    p.setFont(f)
    box = QtCore.QRectF(0, height - 26, width, 26)
    p.fillRect(box, QtGui.QColor(255, 241, 214))
    p.setPen(QtGui.QColor(107, 61, 0))
    p.drawText(box.adjusted(8, 0, -8, 0), int(QtCore.Qt.AlignmentFlag.AlignVCenter
                                              | QtCore.Qt.AlignmentFlag.AlignLeft),
               "⋯ " + cut_off_words(inside, every))


def _now(job):
    return job()


def _save_png(img, out):
    """Write to a temporary file in the target directory, then rename (format by extension)."""
    from legate_prof.output_file import atomic_output
    fmt = {".jpg": "JPEG", ".jpeg": "JPEG", ".bmp": "BMP"}.get(
        os.path.splitext(str(out))[1].lower(), "PNG")
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d) or not os.access(d, os.W_OK):
        raise ProfileError(out, "could not write the picture (directory missing or not writable)")
    data = QtCore.QByteArray()  # encoded here, written by Python: a full disk is one line
    buf = QtCore.QBuffer(data)
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not img.save(buf, fmt):
        raise ProfileError(out, f"could not encode the {fmt} picture")
    buf.close()
    try:
        with atomic_output(out) as tmp, open(tmp, "wb") as f:
            f.write(data.data())
    except OSError as e:
        raise ProfileError(out, f"could not write ({e.strerror or e})") from None


def run_band_text(name, info):
    """The band over a run in a comparison: its name, ranks, items and its own time range
    (the shared axis's end named run A's range, a review found: "0 - 4.430 s" of a run of
    0.82 s beside a longer one)."""
    return (f"{name}   —   {info.ranks_read} rank(s), {info.n_items:,} items, "
            f"0 – {format_ns(info.time_range[1])}")


def render_comparison(models, out, names, width=1600, height=1200, expand=None):
    """Two (or more) runs stacked on one time scale, each under a band naming it."""
    from .panels.legend import paint_legend
    from legate_prof.present.limits import MAX_LANES_EXPANDED
    app_instance()  # (before the first painter: its font is the application's, as in a
    sources = [as_source(m) for m in models]  # screenshot; it was a bold serif one)
    t1 = max(src.info().time_range[1] for src in sources)
    band = 24
    # the runs laid out alike: every group expanded only where every run's lanes fit (a
    # small run's expanded below a big run's collapsed could not be compared; a user's review)
    state = None if expand or all(len(src.outline().lanes) <= MAX_LANES_EXPANDED
                                  for src in sources) else {"expanded": set()}
    # each run as tall as its lanes need (as a screenshot grows), within MAX_SIDE in all
    even = (height - LEGEND_H) // len(sources) - band
    layouts = [lane_layout(src, expand, state) for src in sources]  # (each laid out once)
    heights = [max(even, timeline_height(src, layout=layout)) for src, layout in
               zip(sources, layouts)]
    room = MAX_SIDE - LEGEND_H - band * len(sources)
    if sum(heights) > room:
        heights = [max(even, h * room // sum(heights)) for h in heights]
    height = sum(heights) + band * len(sources) + LEGEND_H
    img = QtGui.QImage(width, height, QtGui.QImage.Format.Format_RGB32)
    img.fill(QtGui.QColor(255, 255, 255))
    p = QtGui.QPainter(img)
    try:
        y = 0
        for src, name, each, layout in zip(sources, names, heights, layouts):
            info = src.info()
            w = make_timeline(src, width, each, 0, t1, expand, extent=(0, t1), state=state,
                              layout=layout)
            pix = w.grab()
            p.fillRect(QtCore.QRectF(0, y, width, band), QtGui.QColor(38, 50, 72))
            f = QtGui.QFont(p.font())
            f.setPointSizeF(10)
            f.setBold(True)
            p.setFont(f)
            p.setPen(QtGui.QColor(255, 255, 255))
            p.drawText(QtCore.QRectF(10, y + 3, width - 20, band - 4),
                       int(QtCore.Qt.AlignmentFlag.AlignLeft),
                       run_band_text(name, info))
            p.drawPixmap(0, y + band, pix)
            ended(w)
            y += band + each
        p.fillRect(QtCore.QRectF(0, height - LEGEND_H, width, LEGEND_H),
                   QtGui.QColor(246, 247, 250))
        paint_legend(p, 10, height - LEGEND_H + 2)
    finally:
        p.end()
    _save_png(img, str(out))
    return str(out)
