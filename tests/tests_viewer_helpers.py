"""Reading pixels of rendered timelines back by time and lane; where an item is drawn; a
window showing a loaded profile."""

from PySide6 import QtGui


def _x(geo, t):
    return geo["x_left"] + (t - geo["t0"]) / (geo["t1"] - geo["t0"]) * (geo["x_right"] - geo["x_left"])


def _y(geo, lane, row):
    ya, yb, rows = geo["lanes"][lane]
    h = (yb - ya) / rows
    return ya + (row + 0.5) * h


def pixel(img, geo, lane, row, t):
    c = QtGui.QColor(img.pixel(int(_x(geo, t)), int(_y(geo, lane, row))))
    return (c.red(), c.green(), c.blue())


def row_colors(img, geo, lane, row, t0, t1):
    """Colours along one row between two times (one sample per pixel column)."""
    y = int(_y(geo, lane, row))
    xa, xb = int(_x(geo, t0)) + 1, int(_x(geo, t1)) - 1
    out = []
    for x in range(max(xa, 0), min(xb, img.width() - 1) + 1):
        c = QtGui.QColor(img.pixel(x, y))
        out.append((c.red(), c.green(), c.blue()))
    return out


def item_point(tl, i):
    """The widget point at the middle of item ``i``'s box in timeline ``tl``."""
    from PySide6 import QtCore
    src = tl.source
    lane, row = src.item_lane(i)
    e = tl.lane_layout.find_lane(lane)
    s0, s1 = src.item_extent(i)
    scene = tl.vb.mapViewToScene(QtCore.QPointF((s0 + s1) / 2, e.y + (row + 0.5) * e.row_h))
    return tl.mapFromScene(scene)


def shown_window(qtbot, source, files=("x.prof",), **kw):
    """The window showing ``source`` (a profile loaded already), 1400 x 900, on screen."""
    from legate_prof.viewer.app import MainWindow
    win = MainWindow(source, list(files), **kw)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    return win


LOAD_MS = 120_000


def loading_window(qtbot, files, load, size=(1400, 900), **kw):
    """A window on screen that will load ``files`` with ``load(progress)`` (not begun:
    ``start_loading``), as `view` makes it."""
    from legate_prof.viewer.app import MainWindow
    win = MainWindow(files=[str(f) for f in files], load=load, **kw)
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    return win


def opened_window(qtbot, files, opener=None, findings=True, size=(1400, 900)):
    """The window as ``legate_prof view FILES`` opens it: a load in a worker, the findings
    after it."""
    from legate_prof.analyze.insights import find_insights
    from legate_prof.viewer.app import MainWindow, default_open
    opener = opener or default_open
    files = [str(f) for f in files]
    win = MainWindow(files=files, load=lambda progress: opener(files, progress),
                     findings=find_insights if findings else None, opener=opener)
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    win.start_loading()
    wait_loaded(qtbot, win, findings)
    return win


def wait_loaded(qtbot, win, findings=True):
    """Until the window shows its profile (and ``findings``: has said its findings)."""
    qtbot.waitUntil(lambda: win.timeline is not None and not win.showing_ranks_so_far,
                    timeout=LOAD_MS)
    if findings:
        qtbot.waitUntil(lambda: win.findings is not None and win.statusBar().currentMessage()
                        .endswith(("findings", "finding")), timeout=LOAD_MS)
