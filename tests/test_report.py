"""The offline HTML report: the folder it writes, and the page in a real headless Chromium
opened from file:// with the network emulated offline (skipped, saying why, without one)."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from legate_prof.cli import bundled_example, main
from legate_prof.report.headless import Browser, why_no_browser

EXAMPLE = bundled_example()  # a real legate run, shipped in the package data


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "legate_prof"
    assert main(["report", EXAMPLE, "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def browser():
    why = why_no_browser()
    if why:
        pytest.skip(f"browser tests need a headless Chromium: {why}")
    with Browser(width=1400, height=900) as b:
        yield b


def _meta(out):
    text = (out / "meta.js").read_text()
    return json.loads(text[text.index("(") + 1: text.rindex(")")])


def _png_size(path):
    head = Path(path).read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def _png_colors(path):
    """Set of distinct RGB colours of an 8-bit RGB(A) PNG (Chromium's screenshots)."""
    data = Path(path).read_bytes()
    w, h = struct.unpack(">II", data[16:24])
    depth, ctype = data[24], data[25]
    assert depth == 8 and ctype in (2, 6)
    chunks, pos = [], 8
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            chunks.append(data[pos + 8:pos + 8 + n])
        pos += 12 + n
    raw = zlib.decompress(b"".join(chunks))
    bpp = 3 if ctype == 2 else 4
    stride = w * bpp
    prev = bytearray(stride)
    colors = set()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 7 == 0:
            colors.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 3))
        prev = line
    return colors


# ---- the folder -----------------------------------------------------------------------------
def test_folder_is_self_contained(report_dir):
    """index.html, the viewer and every data file are local; nothing is fetched."""
    names = {p.name for p in report_dir.iterdir()}
    assert {"index.html", "report.js", "report.css", "meta.js", "tiles", "pictures"} <= names
    html = (report_dir / "index.html").read_text()
    for ref in re.findall(r'(?:src|href)="([^"#]+)"', html):
        assert "://" not in ref and (report_dir / ref).is_file(), ref
    js = (report_dir / "report.js").read_text()
    assert "fetch(" not in js and "XMLHttpRequest" not in js
    # without JavaScript, words (the page was blank: a review)
    assert re.search(r"<noscript>.*JavaScript.*legate_prof stats.*</noscript>", html, re.S)


def test_tiles_listed_in_meta_exist_and_cover_the_lanes(report_dir):
    meta = _meta(report_dir)
    assert meta["n_items"] > 10000 and meta["tree"][0]["groups"]
    written = {p.name for p in (report_dir / "tiles").iterdir()}
    listed = {f"L{lv}_{i}.js" for lv, idx in meta["tiles"].items() for i in idx}
    assert listed == written and "L0_0.js" in listed
    assert meta["max_level"] >= 1  # the example merges items at the top level: finer tiles
    tile = (report_dir / "tiles" / "L0_0.js").read_text()
    data = json.loads(tile[tile.index(",", tile.index(",") + 1) + 1: tile.rindex(")")])
    lanes = {L["lane"] for r in meta["tree"] for g in r["groups"] for L in g["lanes"]}
    assert {int(k) for k in data["lanes"]} <= lanes and data["lanes"]
    assert any(row["g"] for rows in data["lanes"].values() for row in rows)  # gray bands
    assert data["util"]


def test_stats_pictures_and_colours_match_the_desktop(report_dir):
    from legate_prof.load.loader import load_profile
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.viewer.colors import name_color
    meta = _meta(report_dir)
    model = load_profile([EXAMPLE])
    assert meta["stats"]["tasks"] == json.loads(json.dumps(compute_stats(model)["tasks"]))
    for name, hexc in list(zip(meta["names"], meta["colors"]))[:50]:
        assert hexc == name_color(name).name()
    assert meta["pictures"]
    for p in meta["pictures"]:
        assert _png_size(report_dir / p["file"]) == (1600, 900)


def test_rewrite_replaces_a_report_but_never_other_folders(tmp_path, capsys):
    out = tmp_path / "legate_prof"
    assert main(["report", EXAMPLE, "-o", str(out), "--no-pictures"]) == 0
    assert main(["report", EXAMPLE, "-o", str(out), "--no-pictures"]) == 0
    assert (out / "index.html").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["legate_prof"]  # no temp folders left
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    assert main(["report", EXAMPLE, "-o", str(other)]) == 2
    assert (other / "notes.txt").read_text() == "keep"
    assert "not a legate_prof report" in capsys.readouterr().err
    log = tmp_path / "legate_0.prof"
    log.write_bytes(Path(EXAMPLE).read_bytes())
    assert main(["report", str(log), "-o", str(log)]) == 2  # never over an input
    assert log.read_bytes() == Path(EXAMPLE).read_bytes()


def test_report_of_a_missing_file_is_one_line():
    r = subprocess.run([sys.executable, "-m", "legate_prof", "report", "/nonexistent.prof",
                        "-o", "/tmp/never"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# ---- in the browser -------------------------------------------------------------------------
def _open(browser, report_dir):
    browser.errors.clear()
    browser.requests.clear()
    browser.open(report_dir / "index.html")
    browser.wait_frames()


def test_opens_from_file_offline_without_errors(browser, report_dir, tmp_path):
    _open(browser, report_dir)
    assert browser.errors == []
    assert browser.requests and all(u.startswith("file://") for u in browser.requests)
    assert browser.evaluate("LP_frames.length") >= 1
    shot = browser.screenshot(tmp_path / "report.png")
    colors = _png_colors(shot)
    meta = _meta(report_dir)
    drawn = {bytes.fromhex(c[1:]) for c in meta["colors"]} & colors
    assert len(drawn) >= 5  # boxes in the names' colours are on the screen
    assert bytes((128, 128, 128)) in colors  # gray merged bands
    assert bytes((235, 238, 245)) in colors  # the rank header


def test_a_windows_report_says_so_in_its_title(browser, tmp_path):
    """A report of ``--start/--stop`` reads as a run of the window's length: its title names
    the window (its path and findings say "the window's", ``test_critical_cli``)."""
    out = tmp_path / "rep"
    assert main(["report", "-q", EXAMPLE, "--start", "1.5s", "--no-pictures", "-o",
                 str(out)]) == 0
    _open(browser, out)
    assert browser.errors == []
    title = browser.evaluate("document.getElementById('title').textContent")
    assert title.endswith(" items in the window 1.500 s – the end (--start/--stop)"), title


def test_wheel_zoom_drag_pan_and_keys(browser, report_dir):
    _open(browser, report_dir)
    t0, t1 = browser.evaluate("[view.t0, view.t1]")
    browser.wheel(700, 300, -500)  # zoom in at the cursor
    browser.wait_frames()
    a0, a1 = browser.evaluate("[view.t0, view.t1]")
    assert a1 - a0 < (t1 - t0) / 2 and t0 <= a0
    level = browser.evaluate("view.level()")
    assert level >= 1
    assert browser.evaluate("view.tiles().some(function (t) { return t.level >= 1; })")
    browser.drag(800, 300, 600, 300)  # drag left: later times
    browser.wait_frames()
    b0, b1 = browser.evaluate("[view.t0, view.t1]")
    assert b0 > a0 and abs((b1 - b0) - (a1 - a0)) < 1e-6 * (a1 - a0) + 1
    browser.evaluate("document.getElementById('timeline').focus()")
    browser.key("ArrowLeft")
    browser.wait_frames()
    assert browser.evaluate("view.t0") < b0
    browser.key("0")
    browser.wait_frames()
    assert browser.evaluate("[view.t0, view.t1]") == [t0, t1]
    assert browser.errors == []


def test_hover_shows_details_with_provenance(browser, report_dir):
    _open(browser, report_dir)
    found = browser.evaluate("""(function () {
      for (var y = 30; y < view.H; y += 3) for (var x = 5; x < view.W; x += 4) {
        var h = view.hit(x, y);
        if (h && h.kind === 'item' && META.provenances[h.prov]) return describe(h);
      }
      return null; })()""")
    assert found and "Provenance" in found and ".py:" in found and "Duration" in found


def test_merged_bands_are_filled_as_high_as_their_items_ran(browser, report_dir):
    """Issue 36: the report draws a merged band as the desktop does, light gray filled in
    full gray from the bottom as high as the share of its time its items ran (the tile's
    thousandths), and its hover text says that share."""
    _open(browser, report_dir)
    bands = browser.evaluate("""(function () {
      var out = [], seen = {}, d = view.dpr, nsPx = (view.t1 - view.t0) / view.W;
      for (var y = AXIS_PX + 2; y < view.H; y += 2) for (var x = 4; x < view.W - 4; x += 3) {
        var h = view.hit(x, y);
        if (!h || h.kind !== 'band') continue;
        var e = h.entry, rowPx = view.rowPx * e.h / e.rows;
        var row = Math.floor(((y - AXIS_PX + view.scrollY) / view.rowPx - e.y) * e.rows / e.h);
        var top = AXIS_PX + e.y * view.rowPx - view.scrollY + row * rowPx;
        var gap = rowPx > 4 ? 1 : 0, hh = Math.max(rowPx - 2 * gap, 1);
        var xa = (h.start - view.t0) / nsPx, xb = (h.stop - view.t0) / nsPx;
        if (xb - xa < 6 || xb - xa >= LABEL_MIN_PX) continue;  // (wider ones carry a label)
        var key = e.lane + ':' + row + ':' + Math.round(xa), l = view.hit(x - 1, y),
            r = view.hit(x + 1, y);
        if (seen[key] || !l || !r || l.kind !== 'band' || r.kind !== 'band') continue;
        seen[key] = 1;
        var px = view.ctx.getImageData(Math.round(x * d), Math.floor(top * d), 1,
                                       Math.ceil(rowPx * d) + 1).data, n = 0;  // (no box)
        for (var i = 0; i < px.length; i += 4)
          if (px[i] === 128 && px[i + 1] === 128 && px[i + 2] === 128) n++;
        out.push([h.busy, hh, n / d, describe(h)]);
      }
      return out; })()""")
    assert len(bands) >= 3, bands
    for busy, hh, filled, words in bands:
        assert abs(filled - max(busy * hh, 1)) <= 2, (busy, hh, filled)
        assert "its items ran" in words and " of it (" in words
    assert min(b[0] for b in bands) < 0.5  # idle bands are drawn mostly light
    # a band of 0.5 ms at 107.85 s, seen at a 10 ms view: two times told apart, not
    # "107.851 s – 107.851 s" (issue 36)
    words = browser.evaluate("describe({kind: 'band', start: 107851200000, stop: 107851700000, "
                             "count: 12, busy: 0.25})")
    assert "107.8512000 s – 107.8517000 s" in words and "ran 25.0 % of it" in words
    assert browser.errors == []


def test_search_dims_other_names(browser, report_dir, tmp_path):
    _open(browser, report_dir)
    browser.evaluate("var s = document.getElementById('search'); s.value = 'random';"
                     "s.dispatchEvent(new Event('input'))")
    browser.wait_frames()
    count = browser.evaluate("document.getElementById('search-count').textContent")
    assert re.match(r"[1-9]\d* name", count), count
    browser.screenshot(tmp_path / "search.png")
    assert browser.evaluate("Object.keys(view.match.names).length") >= 1
    assert browser.errors == []


# ---- after a real legate run ----------------------------------------------------------------
def test_record_leaves_the_report_beside_the_logs_unless_told_not_to(tmp_path):
    """`legate_prof record` writes legate_prof/index.html next to legate_*.prof (the guide's
    step 4); `record --no-report` does not."""
    prog = Path(__file__).parents[1] / "fixtures" / "programs" / "chain.py"
    with_report, without = tmp_path / "a", tmp_path / "b"
    for d, extra in ((with_report, []), (without, ["--no-report"])):
        d.mkdir()
        p = subprocess.run([sys.executable, "-m", "legate_prof", "record", *extra, "--cpus", "1",
                            "--gpus", "0", "--logdir", str(d), str(prog)], cwd=d,
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-2000:]
        assert (d / "legate_0.prof").is_file()
    assert (with_report / "legate_prof" / "index.html").is_file()
    meta = _meta(with_report / "legate_prof")
    assert any(r["name"] == "add_one" and r["count"] == 5 for r in meta["stats"]["tasks"])
    assert not (without / "legate_prof").exists()


def test_a_report_with_a_rank_unread_says_so_at_the_top(browser, tmp_path):
    """A report of per-rank bundles, one damaged: the page opens with the file it could not
    read and what that leaves out, above the timeline (a picture missing a rank must not
    look complete); a report with nothing wrong shows no such line."""
    from fixtures.synthetic import generate
    files = generate(tmp_path / "run", ranks=3, items=6000, seed=5)
    assert main(["convert", "--per-rank", *map(str, files)]) == 0
    bad = tmp_path / "run" / "legate_1.lpbundle"
    bad.write_bytes(bad.read_bytes()[: bad.stat().st_size // 2])
    for f in files:
        Path(f).unlink()  # the folder holds the bundles only
    out = tmp_path / "rep"
    assert main(["report", str(tmp_path / "run"), "-o", str(out), "--no-pictures"]) == 2
    _open(browser, out)
    assert browser.errors == []
    text = browser.evaluate("document.getElementById('problems').hidden ? '' : "
                            "document.getElementById('problems').innerText")
    assert "could not read" in text and "legate_1.lpbundle" in text, text
    assert "no readable file (not given, or not readable: rank 1)" in text, text


def test_a_report_with_nothing_wrong_has_no_problem_line(browser, report_dir):
    _open(browser, report_dir)
    assert browser.evaluate("document.getElementById('problems').hidden") is True


def test_statistics_tables_say_units_and_parts_in_words_not_json(browser, report_dir):
    """The Statistics section: headers without unit suffixes (the cells carry the units),
    nested parts (a memory kind's count and capacity, a task's variants) as words."""
    _open(browser, report_dir)
    heads = browser.evaluate("Array.from(document.querySelectorAll('#stats th'))"
                             ".map(function (t) { return t.textContent; })")
    cells = browser.evaluate("Array.from(document.querySelectorAll('#stats td'))"
                             ".map(function (t) { return t.textContent; })")
    assert "total" in heads and "by variant" in heads
    assert not [h for h in heads if h.endswith(("_ns", "_bytes"))]
    assert cells and not [c for c in cells if "{" in c or '"' in c]
    assert any("×, running " in c for c in cells)  # a variant: count and running time
    assert "proc_other" not in cells and "io (extern)" in cells  # (a group by its title)
    memories = [c for c in cells if "system: " in c]
    assert memories and all(re.search(r"system: \d+×, [\d.]+\u00a0[KMGT]?i?B", c) for c in memories)
    # (a memory Legion gives no capacity: said so, as stats says it, not "0 B")
    assert not [c for c in cells if "\u00a00\u00a0B" in c or ", 0\u00a0B" in c], memories


def test_legend_keeps_tasks_and_operations_apart(browser, guide_examples, tmp_path):
    """An operation of the runtime has its task's name and colour: the legend lists tasks
    and operations under their own heads, each name once in each; merged bands count as
    counts (×N), not as numbers that read like times."""
    _, profiles = guide_examples["efficient.py"]
    out = tmp_path / "rep"
    assert main(["report", *map(str, profiles), "-o", str(out), "--no-pictures"]) == 0
    _open(browser, out)
    assert browser.errors == []
    spans = browser.evaluate("Array.from(document.querySelectorAll('#legend > span'))"
                             ".map(function (s) { return [s.className, s.textContent]; })")
    heads = [t for c, t in spans if c == "legend-head"]
    assert heads == ["tasks:", "operations (ops lane):"]
    texts = [t for _, t in spans]
    tasks = texts[texts.index("tasks:") + 1:texts.index("operations (ops lane):")]
    ops = texts[texts.index("operations (ops lane):") + 1:]
    assert len(tasks) == len(set(tasks)) and len(ops) == len(set(ops)) and "Random" in ops
    assert any("×count" in t for t in texts)


# ---- the critical path, notices -------------------------------------------------------------
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
MAGENTA = (200, 0, 150)  # report critical.js PATH_COLOR, as the desktop's


def _run_files(run):
    return sorted(str(p) for p in (REAL / run).glob("legate_*.prof*"))


@pytest.fixture(scope="module")
def ineff_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("ineff") / "rep"
    assert main(["report", *_run_files("inefficient_1rank"), "-o", str(out),
                 "--no-pictures"]) == 0
    return out


def _source(run):
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    return as_source(load_profile(_run_files(run), ranked=True))


def _js_call(text):
    return json.loads(text[text.index(",") + 1: text.rindex(")")])


def _records(out):
    ids = []
    for f in sorted((out / "links").iterdir()):
        ids += _js_call(f.read_text())["id"]
    return ids


def _magenta_pixels(path):
    """Distinct colours of the picture (sampled) within a few steps of the path's."""
    return sum(1 for c in _png_colors(path) if sum(abs(a - b) for a, b in zip(c, MAGENTA)) < 40)


def test_the_critical_path_goes_into_the_reports_files(ineff_report):
    """path.js holds the run's path as the API walks it; the lookup files hold a record for
    every step and every box the tiles draw, and for what those link to; tiles name their
    boxes' items; nothing is fetched."""
    src = _source("inefficient_1rank")
    meta = _meta(ineff_report)
    crit = meta["critical"]
    assert crit["available"] and crit["steps"] == len(src.run_critical_path())
    text = (ineff_report / "path.js").read_text()
    path = json.loads(text[text.index("(") + 1: text.rindex(")")])
    assert path["item"] == [s.item for s in src.run_critical_path()]
    assert path["lane"] == [src.item_lane(i)[0] for i in path["item"]]
    listed = {f"C{c}.js" for c in crit["chunks"]}
    assert listed == {p.name for p in (ineff_report / "links").iterdir()}
    ids = set(_records(ineff_report))
    boxes = set()
    for f in (ineff_report / "tiles").iterdir():
        t = f.read_text()
        data = json.loads(t[t.index(",", t.index(",") + 1) + 1: t.rindex(")")])
        boxes |= {b for rows in data["lanes"].values() for r in rows for b in r["b"][4::5]}
    assert boxes and boxes <= ids and set(path["item"]) <= ids
    preds = {src.critical_links().items.target[i] for i in boxes} - {-1}
    assert preds <= ids
    js = (ineff_report / "critical.js").read_text()
    assert "fetch(" not in js and "XMLHttpRequest" not in js


def test_lookup_files_stay_within_their_budget(monkeypatch, tmp_path):
    """A budget too small for every box: the path's steps come first, then the longest
    boxes; the page says an item without a record is not in the lookup files."""
    import legate_prof.report.critical as rc
    monkeypatch.setattr(rc, "LINK_BUDGET", (20_000, 20_000))
    out = tmp_path / "rep"
    assert main(["report", EXAMPLE, "-o", str(out), "--no-pictures"]) == 0
    crit = _meta(out)["critical"]
    cap = 20_000 // rc.RECORD_BYTES
    assert 0 < crit["records"] == len(_records(out)) <= cap
    text = (out / "path.js").read_text()
    steps = json.loads(text[text.index("(") + 1: text.rindex(")")])["item"]
    assert len(steps) > cap and set(steps[:cap // 4]) <= set(_records(out))


def _open_at(browser, out):
    _open(browser, out)
    browser.evaluate("document.getElementById('timeline').focus()")


def _zoom_and_click(browser, src, i):
    """The view at item ``i`` of ``src`` (three times its length, its lane open), and a click
    on its box."""
    a, b = src.item_extent(i)
    browser.evaluate(f"view.setRange({a - (b - a)}, {b + (b - a)})")
    browser.evaluate(f"revealLane({src.item_lane(i)[0]})")
    browser.wait_frames()
    _click_item(browser, i)


def _click_item(browser, item):
    """Click the box of ``item`` where the page draws it (found by its own hit test)."""
    xy = browser.evaluate(f"""(function () {{
      for (var y = 24; y < view.H; y += 2) for (var x = 1; x < view.W; x += 1) {{
        var h = view.hit(x, y);
        if (h && h.kind === 'item' && h.id === {item}) return [x, y];
      }}
      return null; }})()""")
    assert xy, f"item {item} not drawn"
    left, top = browser.evaluate("(function () { var r = view.canvas.getBoundingClientRect();"
                                 " return [r.left, r.top]; })()")
    for t in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", type=t, x=left + xy[0], y=top + xy[1],
                     button="left", clickCount=1)
    browser.wait_frames()


def _details(browser):
    rows = browser.evaluate("Array.from(document.querySelectorAll('#details tr')).map("
                            "function (r) { return [r.cells[0].textContent, r.cells[1].textContent,"
                            " !!r.cells[1].querySelector('a')]; })")
    return {k: (v, link) for k, v, link in rows}


def _wait(browser, expr, timeout=10):
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if browser.evaluate(f"!!({expr})"):
            return
        browser.pump(0.05)
    raise TimeoutError(expr)


def test_a_boxs_details_say_what_it_waited_for_and_the_link_jumps_to_it(browser, ineff_report):
    src = _source("inefficient_1rank")
    t0, t1 = src.info().time_range
    i = next(s.item for s in src.run_critical_path() if s.via == "event"
             and (j := src.critical_predecessor(s.item).predecessor) is not None
             and src.item_extent(s.item)[1] - src.item_extent(s.item)[0] > (t1 - t0) / 2000)
    j = src.critical_predecessor(i).predecessor
    _open_at(browser, ineff_report)
    _zoom_and_click(browser, src, i)
    _wait(browser, "document.querySelector('#details a')")
    rows = _details(browser)
    want = {f.label: f.text for f in src.item_details(i)}
    assert rows["Title"][0] == src.item_title(i)
    assert rows["Waited for"] == (want["Waited for"], True)
    assert rows["Held up"][0] == want["Held up"]
    browser.evaluate("Array.from(document.querySelectorAll('#details a'))"
                     ".filter(function (a) { return a.closest('tr').cells[0].textContent"
                     " === 'Waited for'; })[0].click()")
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {j}")
    browser.wait_frames()
    s, e = src.item_extent(j)
    v0, v1 = browser.evaluate("[view.t0, view.t1]")
    assert v0 <= s and e <= v1
    assert _details(browser)["Title"][0] == src.item_title(j)
    assert browser.errors == []


@pytest.fixture(scope="module")
def mpi2_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("mpi2") / "rep"
    assert main(["report", *_run_files("mpi2"), "-o", str(out), "--no-pictures"]) == 0
    return out


def test_the_pages_words_are_the_details_api_s_for_every_record(browser, ineff_report):
    """report.js composes "Waited for" / "Created by" / "Held up" from the records; for every
    record they are the API's details, word for word, with the same targets — but where the
    item linked to has no record of its own (a link two steps from what the tiles show):
    then the page names it as not in the lookup files."""
    texts = _page_words_are_the_apis(browser, ineff_report, "inefficient_1rank")
    assert not any(" of rank " in t for t in texts)  # (one rank: no rank to name)


def test_the_pages_words_name_the_rank_of_a_lane_on_several_ranks(browser, mpi2_report):
    """On a real 2-rank run both ranks have a u0 and an e0: the page and the API name a
    processor's lane with its rank ("... on u0 of rank 1"), word for word the same."""
    texts = _page_words_are_the_apis(browser, mpi2_report, "mpi2")
    on_lanes = [t for t in texts if " on " in t and not t.startswith(("nothing", "an event"))]
    odd = [t for t in on_lanes if not re.search(r" on \S+ of rank [01]\b", t)]
    assert on_lanes and not odd, odd[:5]


def _page_words_are_the_apis(browser, out, run):
    """The test above on the report ``out`` of ``run``; returns the API's words compared."""
    src = _source(run)
    _open_at(browser, out)
    ids = _records(out)
    have = set(ids)
    got = browser.evaluate(f"linkRowsOf({json.dumps(ids)})")
    links = src.critical_links().items.target
    assert len(got) == len(ids) > 100
    same, texts = 0, []
    for i in ids:
        want = [(f.label, f.text) for f in src.item_details(i)
                if f.label in ("Waited for", "Created by", "Held up")]
        rows = [(r[0], r[1]) for r in got[str(i)]]
        back = [r[2] for r in got[str(i)] if r[0] != "Held up"]
        assert back in ([], [None], [int(links[i])]), i
        if links[i] < 0 or int(links[i]) in have:
            assert rows == want, i
            same += 1
        else:
            assert [r[0] for r in rows] == [w[0] for w in want], i
            assert "not in this report's lookup files" in rows[0][1], i
        texts += [w[1] for w in want]
    assert same > len(ids) / 2
    return texts


def test_a_path_written_in_part_says_the_whole_paths_length(browser, tmp_path, monkeypatch):
    """A path longer than the report writes (``MAX_PATH_STEPS``: its last steps): the status
    gives the whole path's length and says how much of it is drawn; it gave the drawn part's
    length beside the whole path's step count (143 s for a path of 245 s, a user's review)."""
    import legate_prof.report.critical as critical_module
    from legate_prof.analyze.critical_path import critical_path_report
    from legate_prof.load.loader import load_profile
    from legate_prof.present.units import format_ns
    from legate_prof.query import as_source
    from legate_prof.report import write_report
    profile = load_profile(_run_files("mpi2"), ranked=True)
    whole = critical_path_report(as_source(profile), with_items=False)
    monkeypatch.setattr(critical_module, "MAX_PATH_STEPS", 50)
    write_report(profile, tmp_path / "rep", pictures=None)
    _open_at(browser, tmp_path / "rep")
    browser.key("p", "KeyP")
    _wait(browser, "CRIT.path")
    said = browser.evaluate("document.getElementById('crit-status').textContent")
    n = len(whole["path"])
    assert said.startswith(f"critical path: {n} steps over {format_ns(whole['span_ns'])}; "
                           "its last 50 steps drawn (its last "), said
    drawn = whole["path"][0]["on_path_ns"][1] - whole["path"][49]["on_path_ns"][0]
    assert f"(its last {format_ns(drawn)})" in said, said


def test_a_window_the_path_misses_says_why_it_draws_no_path(browser, tmp_path):
    """mpi4's rank 1 from 2 to 3 s: "critical path: 0 steps over 0 ns" (a review); the
    status says what ``critical`` says: where the run's path lies."""
    out = tmp_path / "rep"
    assert main(["report", str(REAL / "mpi4"), "--ranks", "1", "--start", "2s", "--stop",
                 "3s", "-o", str(out), "--no-pictures"]) == 0
    _open_at(browser, out)
    browser.key("p", "KeyP")
    _wait(browser, "CRIT.path")
    said = browser.evaluate("document.getElementById('crit-status').textContent")
    assert said.startswith("critical path: none in the window: the run's path (of the ranks "
                           "read) lies from 3.546 s to 4.406 s"), said
    assert browser.errors == []


def test_the_range_label_keeps_the_digits_a_deep_zoom_needs(browser, ineff_report):
    """A review zoomed far in and read "965.389 ms – 965.389 ms": the label under the
    timeline gives as many digits as the span needs, and the span, as the desktop's does."""
    _open_at(browser, ineff_report)
    browser.evaluate("view.setRange(965389000, 965389500)")
    browser.wait_frames()
    label = browser.evaluate("document.getElementById('range').textContent")
    from legate_prof.viewer.time_text import format_range
    assert label == format_range(965389000, 965389500), label
    assert label.startswith("965.3890000 ms – 965.3895000 ms"), label


def test_a_crashed_runs_findings_say_no_cost_they_cannot_have(browser, tmp_path):
    """A review: the report of oom2 (no Legion timeline) said "costs 0 ns" of its
    out-of-memory findings, where ``insights`` gives a failure no cost line, and "none of its
    work is on the critical path" of the others, where there is no path."""
    out = tmp_path / "rep"
    oom = REAL / "oom2"
    assert main(["report", str(oom), "--log", str(oom / "console.log"), "-o", str(out),
                 "--no-pictures"]) == 0
    _open(browser, out)
    text = browser.evaluate("document.getElementById('findings').textContent")
    assert "Out of memory" in text and "costs 0 ns" not in text, text[:400]
    assert "no critical path to measure it on" in text and "on the critical path" not in text
    assert browser.errors == []


def test_a_path_too_dense_to_link_draws_its_steps_boxes_only(browser, ineff_report):
    """Zoomed out on 20,000 steps, the links between them zigzagged between lanes and covered
    every lane with the path's colour (a user's review): where there are more steps in view
    than one per ``DENSE_PX_PER_STEP`` pixels, only their boxes are drawn, and the status says
    to zoom in for the links."""
    _open_at(browser, ineff_report)
    browser.key("p", "KeyP")
    _wait(browser, "CRIT.path")
    browser.wait_frames()
    steps_in_view = browser.evaluate("stepsInView(view)")
    assert steps_in_view * 3 > browser.evaluate("view.W")  # (the whole run: dense)
    assert browser.evaluate("CRIT.dense") is True
    browser.evaluate("DENSE_PX_PER_STEP = 0; view.requestDraw()")  # (never dense: linked)
    browser.wait_frames()
    assert browser.evaluate("CRIT.dense") is False
    linked = browser.evaluate("""(function () { var n = 0, real = view.ctx.lineTo;
        view.ctx.lineTo = function () { n++; return real.apply(this, arguments); };
        drawPath(view, view.ctx, (view.t1 - view.t0) / view.W); view.ctx.lineTo = real;
        return n; })()""")
    browser.evaluate(f"DENSE_PX_PER_STEP = {10 * browser.evaluate('view.W')}; view.requestDraw()")
    browser.wait_frames()
    unlinked = browser.evaluate("""(function () { var n = 0, real = view.ctx.lineTo;
        view.ctx.lineTo = function () { n++; return real.apply(this, arguments); };
        drawPath(view, view.ctx, (view.t1 - view.t0) / view.W); view.ctx.lineTo = real;
        return n; })()""")
    assert browser.evaluate("CRIT.dense") is True and linked > 0 and unlinked == 0
    said = browser.evaluate("document.getElementById('crit-status').textContent")
    assert said.endswith("too many in view to draw their links: zoom in to see them"), said
    browser.evaluate("DENSE_PX_PER_STEP = 3; view.requestDraw()")
    browser.wait_frames()


def test_walk_keys_and_the_path_toggle(browser, ineff_report, tmp_path):
    src = _source("inefficient_1rank")
    _open_at(browser, ineff_report)
    before = browser.screenshot(tmp_path / "before.png")
    assert _magenta_pixels(before) == 0
    browser.key("p", "KeyP")
    _wait(browser, "CRIT.path")
    browser.wait_frames()
    assert browser.evaluate("CRIT.shown") and \
        browser.evaluate("document.getElementById('crit-status').textContent").startswith(
            f"critical path: {len(src.run_critical_path())} steps")
    assert _magenta_pixels(browser.screenshot(tmp_path / "path.png")) > 0
    browser.key("p", "KeyP")  # (hidden: the walk keys follow an item's own links)
    browser.wait_frames()
    steps = src.run_critical_path()
    i = next(s.item for s in steps if s.via == "event"
             and src.critical_predecessor(s.item).predecessor is not None)
    j = src.critical_predecessor(i).predecessor
    browser.evaluate(f"goToItem({i})")
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {i}")
    browser.key("[", "BracketLeft")
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {j}")
    at_j = browser.evaluate("[view.t0, view.t1, view.scrollY]")
    status = browser.evaluate("document.getElementById('crit-status').textContent")
    assert status == "← Waited for: " + next(f.text for f in src.item_details(i)
                                             if f.label == "Waited for")
    browser.key("]", "BracketRight")
    after = src.critical_successors(j)
    first = int(after[np.argmin(src.items_columns(after)["start"])])
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {first}")
    browser.evaluate("view.setRange(view.t0 + 7, view.t1 + 7)")  # (moved after the walk)
    # the walks undo one by one: Ctrl+Z back to j (its view too), Backspace back to i, then
    # to no selection, then nothing more to undo
    browser.key("z", "KeyZ", modifiers=2)
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {j}")
    assert browser.evaluate("[view.t0, view.t1, view.scrollY]") == at_j
    browser.key("Backspace")
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {i}")
    browser.key("Backspace")
    _wait(browser, "CRIT.sel === null")
    browser.key("Backspace")
    assert browser.evaluate("document.getElementById('crit-status').textContent").startswith(
        "nothing to go back to")
    browser.key("p", "KeyP")
    browser.wait_frames()
    assert browser.evaluate("CRIT.shown")  # (drawn again: the toggle)
    browser.key("p", "KeyP")
    browser.wait_frames()
    assert not browser.evaluate("CRIT.shown")
    assert browser.errors == []


def test_while_the_path_is_drawn_the_reports_walk_keys_follow_it(browser, mpi2_report):
    """As in the viewer: with the path drawn, ``[`` from mpi2's item that ended last (no link
    of its own) selects each step before it on the path in turn, saying "step k of N",
    ``]`` comes back; with the path hidden, the item's own link (none) again."""
    src = _source("mpi2")
    steps = src.run_critical_path()  # (last step first, as the page's path file)
    n, last = len(steps), steps[0].item
    assert n > 100 and src.critical_predecessor(last) is None
    _open_at(browser, mpi2_report)
    browser.key("p", "KeyP")
    _wait(browser, "CRIT.path")
    assert browser.evaluate("CRIT.path.item.length") == n
    browser.evaluate(f"goToItem({last})")
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {last}")
    status = "document.getElementById('crit-status').textContent"
    for k in range(1, 9):
        browser.key("[", "BracketLeft")
        _wait(browser, f"CRIT.sel && CRIT.sel.id === {steps[k].item} && CRIT.pathAt === {k}")
        said = browser.evaluate(status)
        assert said.startswith(f"← step {n - k} of {n} of the critical path: ")
        none = steps[k].end_ns <= steps[k].begin_ns
        assert ("it holds no time on the path" in said) == none, said
    for k in range(7, 3, -1):
        browser.key("]", "BracketRight")
        _wait(browser, f"CRIT.sel && CRIT.sel.id === {steps[k].item} && CRIT.pathAt === {k}")
        assert browser.evaluate(status).startswith(f"→ step {n - k} of {n} ")
    browser.key("p", "KeyP")
    browser.evaluate(f"goToItem({last})")
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {last}")
    browser.key("[", "BracketLeft")
    browser.pump(0.2)
    assert "no critical predecessor" in browser.evaluate(status)
    assert browser.evaluate("CRIT.sel.id") == last and browser.errors == []


def test_a_damaged_graph_stops_at_unknown_in_the_report(browser, tmp_path):
    """Rank 1 of a two-rank run alone: the path ends at "unknown", walking back from an item
    whose event no file records says the chain stops there."""
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    one = str(REAL / "mpi2b" / "legate_1.prof.gz")
    out = tmp_path / "rep"
    assert main(["report", one, "-o", str(out), "--no-pictures"]) == 0
    src = as_source(load_profile([one], ranked=True))
    i = next(k for k in range(src.info().n_items)
             if (link := src.critical_predecessor(k)) is not None
             and link.via == "unknown_event")
    _open_at(browser, out)
    browser.key("p", "KeyP")
    _wait(browser, "CRIT.path")
    assert browser.evaluate("document.getElementById('crit-status').textContent").endswith(
        "(unknown)")
    browser.evaluate(f"goToItem({i})")
    _wait(browser, f"CRIT.sel && CRIT.sel.id === {i}")
    browser.key("[", "BracketLeft")
    browser.pump(0.2)
    status = browser.evaluate("document.getElementById('crit-status').textContent")
    assert status.startswith("Waited for: an event no loaded profile records") and \
        status.endswith("(unknown)") and browser.evaluate("CRIT.sel.id") == i
    assert browser.errors == []


def test_notices_are_a_banner_in_the_screenshot_headers_words(browser, tmp_path, report_dir):
    from legate_prof.viewer.notices import notice_lines
    src = _source("mpi2")
    out = tmp_path / "rep"
    assert main(["report", *_run_files("mpi2"), "-o", str(out), "--no-pictures"]) == 0
    _open(browser, out)
    text = browser.evaluate("document.getElementById('notices').hidden ? '' : "
                            "document.getElementById('notices').innerText")
    assert text.splitlines() == notice_lines(src.info()) and len(text.splitlines()) == 2
    _open(browser, report_dir)
    assert browser.evaluate("document.getElementById('notices').hidden") is True


def test_per_rank_bundles_write_the_critical_files_of_their_logs(tmp_path):
    """A report of per-rank bundles (ranks read one by one, nothing merged) writes the path
    and lookup files that the report of one build of the logs writes, byte for byte (both
    stacked, so item ids agree: raw logs opened for drawing number items unstacked)."""
    import shutil

    from fixtures.synthetic import generate
    from legate_prof.load.loader import load_profile
    from legate_prof.report import write_report
    files = generate(tmp_path / "logs", ranks=3, items=6000, seed=7)
    (tmp_path / "bundles").mkdir()
    for f in files:
        shutil.copy(f, tmp_path / "bundles")
    assert main(["convert", "--per-rank", *map(str, (tmp_path / "bundles").iterdir())]) == 0
    for f in (tmp_path / "bundles").glob("*.prof"):
        f.unlink()
    ranked = load_profile([tmp_path / "bundles"], ranked=True)
    write_report(ranked, tmp_path / "b", pictures=None)
    assert not ranked.merged_yet
    write_report(load_profile([str(f) for f in files], workers=1), tmp_path / "a", pictures=None)
    a, b = tmp_path / "a", tmp_path / "b"
    assert _meta(a)["critical"]["records"] > 100
    assert _meta(a)["critical"] == _meta(b)["critical"]
    names = sorted(p.name for p in (a / "links").iterdir())
    assert names == sorted(p.name for p in (b / "links").iterdir())
    for n in names:
        assert (a / "links" / n).read_bytes() == (b / "links" / n).read_bytes(), n
    assert (a / "path.js").read_bytes() == (b / "path.js").read_bytes()


def test_a_report_without_event_records_says_there_is_no_path(browser, tmp_path):
    """A crashed run's runtime stream alone: no path or lookup files, and the page says why
    when asked for the path or a walk."""
    out = tmp_path / "rep"
    f = str(REAL / "inefficient_1rank" / "legate_0.runtime.prof")
    assert main(["report", f, "-o", str(out), "--no-pictures"]) == 0
    # (why, as `critical` says it: the runtime's stream alone, no Legion log read; "the
    # profile holds no event records" of a page drawing the stream's items: a review)
    why = ("no Legion Prof log was read (Legion writes it at shutdown, which a crashed run "
           "never reaches); shown: the runtime's event stream")
    assert _meta(out)["critical"] == {"available": False, "why": why}
    assert not (out / "path.js").exists() and not (out / "links").exists()
    _open_at(browser, out)
    browser.key("p", "KeyP")
    assert browser.evaluate("document.getElementById('crit-status').textContent") == \
        f"no critical path in this report: {why}"
    assert browser.errors == []


# ---- idle time explained, the critical path's split, units ---------------------------------
UNIT_NS = {"s": 1e9, "ms": 1e6, "µs": 1e3, "ns": 1}


def _ns_of(text):
    """A cell's "3.209 s" (its unit kept by a non-breaking space) in ns."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\u00a0(s|ms|µs|ns)", text)
    assert m, repr(text)
    return float(m.group(1)) * UNIT_NS[m.group(2)]


def _table_cells(browser, selector):
    """Rows of the table(s) at ``selector``: each cell's own text (a share in gray after
    it apart: ``_shares``)."""
    return browser.evaluate(
        f"Array.from(document.querySelectorAll('{selector} tr')).map(function (r) {{"
        " return Array.from(r.children).map(function (c) {"
        "  return c.firstChild ? c.firstChild.textContent : ''; }); })")


def _shares(browser, selector):
    return browser.evaluate(
        f"Array.from(document.querySelectorAll('{selector} tr')).map(function (r) {{"
        " return Array.from(r.children).map(function (c) {"
        "  var p = c.querySelector('.pct'); return p ? p.textContent : null; }); })")


def test_idle_time_is_a_table_per_lane_group_in_units(browser, mpi2_report):
    """stats' idle as its text prints it: a row per (rank, lane group) that idled, named as
    stats names the group ("io (extern)", not "proc_other"), its idle time and each wait in
    units with its share of the row; then the lines; nothing cut with "…"."""
    from legate_prof.analyze.idle_gaps import WAITS
    from legate_prof.model.kinds import GROUP_TITLE
    idle = _meta(mpi2_report)["stats"]["idle"]
    _open(browser, mpi2_report)
    rows = _table_cells(browser, "#stats table.idle-groups")
    assert rows[0] == ["rank", "group", "idle", *WAITS]
    groups = [g for g in idle["groups"] if g["idle_ns"]]
    assert len(groups) >= 6  # two ranks: cpu, utility, io (extern) each
    assert [(r[0], r[1]) for r in rows[1:]] == [(str(g["rank"]), GROUP_TITLE[g["kind"]])
                                                for g in groups]
    assert "io (extern)" in [r[1] for r in rows]
    for r, g in zip(rows[1:], groups):
        assert abs(_ns_of(r[2]) - g["idle_ns"]) <= 0.001 * g["idle_ns"]
        for cell, w in zip(r[3:], WAITS):
            want = g["by_wait"][w]
            assert cell == "–" if not want else abs(_ns_of(cell) - want) <= 0.001 * want + 1
    for r, g in zip(_shares(browser, "#stats table.idle-groups")[1:], groups):
        assert all(re.fullmatch(r"\d+\.\d\u00a0%", p) for p in r[3:] if p is not None)
        shares = [float(p.split("\u00a0")[0]) for p in r[3:] if p is not None]
        assert len(shares) == sum(1 for w in WAITS if g["by_wait"][w])
        assert abs(sum(shares) - 100) < 0.5  # of the row's idle time
    lines = _table_cells(browser, "#stats table.idle-lines")
    assert [r[0] for r in lines[1:]] == [r["provenance"] for r in idle["by_provenance"]]
    text = browser.evaluate("Array.from(document.querySelectorAll('#stats table.idle-groups, "
                            "#stats table.idle-lines')).map(function (t) { return t.textContent; })"
                            ".join(' ')")
    assert "…" not in text and "proc_other" not in text
    assert "copy_fill:" not in browser.evaluate("document.getElementById('stats').textContent")
    assert browser.errors == []


def test_no_table_cell_breaks_a_number_from_its_unit(browser, mpi2_report):
    _open(browser, mpi2_report)
    cells = browser.evaluate("Array.from(document.querySelectorAll('td'))"
                             ".map(function (t) { return t.textContent; })")
    assert cells and not [c for c in cells if re.search(r"\d (s|ms|µs|ns|B|KiB|MiB|GiB)\b", c)]
    assert browser.evaluate("getComputedStyle(document.querySelector('#stats td.num'))"
                            ".whiteSpace") == "nowrap"


def test_the_critical_path_section_splits_it_as_the_critical_command(browser, mpi2_report):
    """The "Critical path" section: the path's length and its split by kind (with the share
    of the path) and by source line, the numbers of ``critical_path_report`` (what
    ``legate_prof critical`` prints), in units."""
    from legate_prof.analyze.critical_path import critical_path_report
    rep = critical_path_report(_source("mpi2"), with_items=False)
    _open(browser, mpi2_report)
    intro = browser.evaluate("document.querySelector('#critical-split > p').textContent")
    assert f"{len(rep['path'])} items over " in intro
    from legate_prof.analyze.critical_text import header  # (where the path lies in the run)
    said = browser.evaluate("Array.from(document.querySelectorAll('#critical-split > p'))"
                            ".map(p => p.textContent)")
    want = [x for x in header(rep) if x]
    assert said[:len(want)] == want and any(x.startswith("The shares below explain ")
                                            for x in want)
    kinds = _table_cells(browser, "#crit-by-kind table")
    assert kinds[0] == ["kind", "time", "% of run"]
    want = [(k, v) for k, v in rep["by_kind"].items() if v]
    assert [r[0] for r in kinds[1:]] == [k for k, _ in want] and len(want) >= 3
    for r, (_, v) in zip(kinds[1:], want):
        assert abs(_ns_of(r[1]) - v) <= 0.001 * v + 1
        assert r[2] == f"{100 * v / rep['run_ns']:.1f}\u00a0%"
    lines = _table_cells(browser, "#crit-by-line table")
    want = [(k, v) for k, v in rep["by_provenance"].items() if v]
    assert [r[0] for r in lines[1:]] == [k for k, _ in want][:20] and want
    assert browser.errors == []


def test_findings_say_their_cost_in_the_words_of_insights(browser, mpi2_report):
    """Each finding on the page says what ``insights`` says of it: its wall-clock time on the
    critical path (or that it has none) and its processor time — not a bare "costs 0 ns"."""
    from legate_prof.analyze.insights import insights_of_run
    from legate_prof.analyze.insights_text import cost_words, explained_words
    run = insights_of_run(_source("mpi2"))
    found = run["findings"]
    _open(browser, mpi2_report)
    items = browser.evaluate(
        "Array.from(document.querySelectorAll('#findings-section ol > li')).map(li => li.textContent)")
    assert len(items) == len(found) >= 2
    for text, x in zip(items, found):
        assert x["title"] in text and cost_words(x, run_ns=run["run_ns"]) in text
        assert "processor time: " in text
    said = browser.evaluate("document.getElementById('findings-explained').textContent")
    assert said == explained_words(run)  # (how much of the run the costs are shares of)
    assert any("costs none of the run's wall-clock time" in t for t in items)
    assert not any("costs 0 ns" in t for t in items)
    assert browser.errors == []


def test_without_event_records_the_critical_section_says_there_is_no_path(browser, tmp_path):
    out = tmp_path / "rep"
    f = str(REAL / "inefficient_1rank" / "legate_0.runtime.prof")
    assert main(["report", f, "-o", str(out), "--no-pictures"]) == 0
    _open_at(browser, out)
    assert browser.evaluate("document.getElementById('critical-split').textContent") == \
        ("No critical path: no Legion Prof log was read (Legion writes it at shutdown, which "
         "a crashed run never reaches); shown: the runtime's event stream.")
    assert browser.errors == []


def test_statistics_say_counts_with_separators_and_no_zero_capacity(browser, mpi2_report):
    """mpi2 (its runtime streams: an arrays group, which has no capacity): the Statistics
    line counts items with thousands separators, as every other count ("1,540 items", was
    "1540 items"), and the groups' table says a capacity Legion gives none is unknown, as
    stats does (was "0 B")."""
    _open(browser, mpi2_report)
    stats = _meta(mpi2_report)["stats"]
    assert stats["items"] >= 1000
    first = browser.evaluate("document.querySelector('#stats p').textContent")
    assert f" {stats['items']:,} items" in first, first
    groups = [g for g in stats["groups"] if "capacity_bytes" in g]
    assert any(g["capacity_bytes"] == 0 for g in groups)  # (the arrays lane's)
    rows = browser.evaluate(
        "Array.from(document.querySelectorAll('#stats table')).filter(function (t) {"
        " return Array.from(t.querySelectorAll('th')).some(function (h) {"
        "  return h.textContent === 'peak'; }); })[0].innerText")
    rows = [r.split("\t") for r in rows.strip().split("\n")]
    col = rows[0].index("capacity")
    shown = [r[col].strip() for r in rows[1:] if len(r) > col and r[col].strip()]
    assert len(shown) == len(groups) and "unknown" in shown, shown
    assert not [c for c in shown if c.replace("\u00a0", " ") == "0 B"], shown


def test_statistics_say_clock_skew_and_instance_lifetimes_in_words(browser, mpi2_report):
    """Review 33: the messages' skew pairs were one flat string of keys ("sender: 0;
    receiver: 1; messages: …") and the instances' summed lifetimes a bare "total" of hundreds
    of thousands of seconds: now each pair reads as the window's notice does, and the column
    says what the seconds are."""
    _open(browser, mpi2_report)
    heads = browser.evaluate("Array.from(document.querySelectorAll('#stats th'))"
                             ".map(function (t) { return t.textContent; })")
    cells = browser.evaluate("Array.from(document.querySelectorAll('#stats td'))"
                             ".map(function (t) { return t.textContent; })")
    assert "lifetimes summed" in heads
    pairs = [c for c in cells if "clock reads" in c]
    assert pairs and re.search(r"rank \d's clock reads [\d.]+\u00a0(?:ns|µs|ms|s) behind rank "
                               r"\d's \(±[\d.]+\u00a0(?:ns|µs|ms|s), [\d,]+ messages\)", pairs[0])
    assert not [c for c in cells if "sender: " in c]


def test_pictures_share_the_reports_work_and_look_as_drawn_alone(monkeypatch, tmp_path):
    """The report's pictures are drawn from its own query source (the messages' clock skew
    worked out once, not once more per picture) and each view painted once (no paint of
    the default range before the picture's); each looks as the screenshot drawn alone."""
    pytest.importorskip("PySide6")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")  # (the header's date: the same)
    from PySide6 import QtGui
    import legate_prof.query.source as source_module
    from legate_prof.load.loader import load_profile
    from legate_prof.report import write_report
    from legate_prof.viewer.screenshot import render_screenshot
    from legate_prof.viewer.timeline.item import TimelineItem
    latencies, paints = [], []
    real_latency, real_paint = source_module.message_latency, TimelineItem._paint_view
    monkeypatch.setattr(source_module, "message_latency",
                        lambda *a: latencies.append(1) or real_latency(*a))
    monkeypatch.setattr(TimelineItem, "_paint_view",
                        lambda self, *a: paints.append(1) or real_paint(self, *a))
    ranked = load_profile(_run_files("mpi2"), ranked=True)
    write_report(ranked, tmp_path / "rep", pictures=render_screenshot)
    pictures = _meta(tmp_path / "rep")["pictures"]
    assert len(pictures) >= 4
    assert len(latencies) == 1
    assert len(paints) == len(pictures)
    for p in pictures[:2]:
        alone = tmp_path / f"alone_{p['group']}.png"
        render_screenshot(load_profile(_run_files("mpi2"), ranked=True), alone, width=1600,
                          height=900, expand=[p["group"]])
        a, b = QtGui.QImage(str(alone)), QtGui.QImage(str(tmp_path / "rep" / p["file"]))
        assert a.size() == b.size() and a == b, p["file"]


def test_a_tiles_lanes_made_a_few_at_a_time_are_those_made_at_once(monkeypatch, tmp_path):
    """A tile's rows are made for ``LANES_AT_ONCE`` lanes at a time and its text from them as
    they come (1,000 ranks' 19,000 lanes held every row as Python lists first): the same
    tiles, byte for byte, as all lanes at once; the items they show the same."""
    import legate_prof.report.writer as writer
    from legate_prof.load.loader import load_profile
    run = load_profile(_run_files("mpi4"), ranked=True)
    folders = {}
    for at_once in (10**6, 3):
        monkeypatch.setattr(writer, "LANES_AT_ONCE", at_once)
        out = tmp_path / f"rep{at_once}"
        writer.write_report(run, out)
        folders[at_once] = {str(p.relative_to(out)): p.read_bytes()
                            for p in sorted(out.rglob("*")) if p.is_file()}
    tile = folders[3]["tiles/L0_0.js"].decode()
    assert len(json.loads(tile[tile.index(",{") + 1: tile.rindex(")")])["lanes"]) > 3 * 4
    assert sum(k.startswith("tiles/") for k in folders[3]) > 2 and "critical.js" in folders[3]
    assert folders[3] == folders[10**6]


def test_each_picture_is_let_go_once_drawn(monkeypatch, tmp_path):
    """A report draws its pictures with no event loop to run ``deleteLater``: each picture's
    timeline is deleted once drawn and its item's picture, tiles and strips let go, where
    every one stayed until the report's end (100 generated ranks: the report's tree 1.3 GiB
    -> 0.5 GiB, its pictures the same bytes)."""
    pytest.importorskip("PySide6")
    from shiboken6 import Shiboken
    import legate_prof.viewer.screenshot as screenshot
    from legate_prof.load.loader import load_profile
    from legate_prof.report import write_report
    made, real = [], screenshot.make_timeline
    monkeypatch.setattr(screenshot, "make_timeline",
                        lambda *a, **k: made.append(real(*a, **k)) or made[-1])
    write_report(load_profile(_run_files("mpi2"), ranked=True), tmp_path / "rep",
                 pictures=screenshot.render_screenshot)
    assert len(made) == len(_meta(tmp_path / "rep")["pictures"]) >= 4
    for w in made:
        assert not Shiboken.isValid(w)
        item = w.__dict__["item"]  # (the wrapper's own attribute: Qt's object is gone)
        assert item._cache_img is None and not item._flat_rows and not item._summary_img
        assert not len(item._lane_cache) and not len(item._summary_cache)


def test_pictures_are_encoded_off_the_drawing_thread_and_a_failed_one_fails_the_report(
        monkeypatch, tmp_path, capsys):
    """Each picture is encoded and written in a thread while the next is drawn (Qt lets go
    of Python's lock while it encodes: the second core works); one that cannot be written
    still ends the report in one line naming it, exit 2, and no half-written folder."""
    pytest.importorskip("PySide6")
    import threading
    import legate_prof.viewer.screenshot as shot
    from legate_prof.errors import ProfileError
    real_save, threads = shot._save_png, []

    def save(img, out):
        threads.append(threading.current_thread() is threading.main_thread())
        return real_save(img, out)
    monkeypatch.setattr(shot, "_save_png", save)
    monkeypatch.setattr(shot, "qt_started", lambda: True)  # (drawn here, not in a copy)
    assert main(["report", *_run_files("mpi2"), "-o", str(tmp_path / "rep")]) == 0
    pictures = _meta(tmp_path / "rep")["pictures"]
    assert len(threads) == len(pictures) >= 4 and not any(threads)
    assert all(_png_size(tmp_path / "rep" / p["file"])[0] == 1600 for p in pictures)

    def fail_third(img, out):
        threads.append(False)
        if len(threads) == len(pictures) + 3:
            raise ProfileError(out, "could not write (No space left on device)")
        return real_save(img, out)
    monkeypatch.setattr(shot, "_save_png", fail_third)
    capsys.readouterr()
    # (--no-cache: drawn again, not the folder kept of the same question written again)
    assert main(["report", *_run_files("mpi2"), "--no-cache", "-o",
                 str(tmp_path / "again")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and ".png" in err[0]
    assert not (tmp_path / "again").exists()


FORKED_PICTURES = r"""
import json, os, sys, time
from legate_prof.load.loader import load_profile
from legate_prof.report import write_report, writer
from legate_prof.viewer.screenshot import render_screenshot
files, out, drawers, mode = json.loads(sys.argv[1])
here = os.getpid()


def render(*a, **k):
    with open(drawers, "a") as f:
        f.write(f"{os.getpid()}\n")
    if os.getpid() != here and mode == "the copy fails":
        raise RuntimeError("the copy fails")
    if os.getpid() != here and mode == "the report fails":
        time.sleep(600)
    return render_screenshot(*a, **k)


if mode == "the report fails":
    def fail(source):
        while not os.path.exists(drawers):  # (the copy has begun drawing)
            time.sleep(0.01)
        raise RuntimeError("the report fails")
    writer.compute_stats = fail
try:
    write_report(load_profile(files, ranked=True), out, pictures=render,
                 pictures_aside=mode != "here")
except RuntimeError as e:
    for pid in {int(p) for p in open(drawers).read().split()} - {here}:
        try:
            os.kill(pid, 0)
            print("the copy still runs")
        except ProcessLookupError:
            print("the copy has ended")
    print(e)
print(json.dumps({"here": here, "drawers": [int(p) for p in open(drawers).read().split()]}))
"""


def _forked_pictures(tmp_path, mode):
    out, drawers = tmp_path / mode / "rep", tmp_path / f"{mode}.pids"
    r = subprocess.run([sys.executable, "-c", FORKED_PICTURES,
                        json.dumps([_run_files("mpi2"), str(out), str(drawers), mode])],
                       capture_output=True, text=True, timeout=600,
                       env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen",
                            "SOURCE_DATE_EPOCH": "1800000000", "LEGATE_PROF_CACHE_DIR": ""})
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.strip().splitlines()
    return out, json.loads(lines[-1]), lines[:-1]


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_pictures_drawn_in_a_forked_copy_are_those_drawn_here(tmp_path):
    """Where Qt has not started, the report's pictures are drawn by a forked copy of the
    process while it works out the rest (the second core), and the report is the one drawn
    in one process, to the byte; a copy that fails leaves them to the process, which draws
    them all again (the same files); a report that fails ends its copy, drawing or not."""
    pytest.importorskip("PySide6")
    here, run_here, _ = _forked_pictures(tmp_path, "here")
    assert set(run_here["drawers"]) == {run_here["here"]} and len(run_here["drawers"]) >= 4
    expected = _files(here)
    assert sum(name.startswith("pictures/") for name in expected) == len(run_here["drawers"])

    aside, run, _ = _forked_pictures(tmp_path, "aside")
    assert run["here"] not in run["drawers"] and len(set(run["drawers"])) == 1
    assert len(run["drawers"]) == len(run_here["drawers"])
    assert _files(aside) == expected

    failed, run, _ = _forked_pictures(tmp_path, "the copy fails")
    copy = run["drawers"][0]
    assert copy != run["here"] and run["drawers"][1:] == [run["here"]] * len(run_here["drawers"])
    assert _files(failed) == expected

    out, run, said = _forked_pictures(tmp_path, "the report fails")
    assert said == ["the copy has ended", "the report fails"]
    assert run["drawers"][0] != run["here"]
    assert list(out.parent.iterdir()) == []  # (nothing of the report: its folder not made)


def test_a_report_is_drawn_in_a_copy_only_where_qt_has_not_started(qapp):
    """A forked copy of a process where Qt runs would hold Qt's state without its threads:
    the command line asks for a copy only where Qt has not started."""
    from legate_prof.cli.commands.report import picture_renderer
    render, why, aside = picture_renderer()
    assert render is not None and why == "" and aside is False


def test_the_reports_statistics_and_findings_share_the_idle_time_and_the_skew(monkeypatch,
                                                                              tmp_path):
    """The report's statistics and its findings explain idle time once between them, and
    the messages' skew is worked out once (the source's, which its notices said already)."""
    import legate_prof.analyze.idle_gaps as idle_module
    import legate_prof.causality.message_latency as latency_module
    import legate_prof.query.source as source_module
    from legate_prof.load.loader import load_profile
    from legate_prof.report import write_report
    idles, latencies = [], []
    real_idle, real_latency = idle_module.idle_gaps, latency_module.message_latency
    monkeypatch.setattr(idle_module, "idle_gaps", lambda *a: idles.append(1) or real_idle(*a))
    counted = (lambda *a, **k: latencies.append(1) or real_latency(*a, **k))
    monkeypatch.setattr(latency_module, "message_latency", counted)
    monkeypatch.setattr(source_module, "message_latency", counted)
    write_report(load_profile(_run_files("mpi2"), ranked=True), tmp_path / "rep", pictures=None)
    meta = _meta(tmp_path / "rep")
    assert meta["stats"]["idle"] and meta["findings"]["findings"]
    assert len(idles) == 1 and len(latencies) == 1


def test_tiles_of_many_lanes_give_each_box_the_provenance_one_lane_at_a_time_gives(monkeypatch):
    """From ``MANY_LANES`` lanes on, the boxes' provenance comes from one lookup of every
    item's; the tiles are those a lookup a lane makes (real ranks: mpi2, the ranks unmerged)."""
    from legate_prof.load.loader import load_profile
    from legate_prof.report import query as report_query
    profile = load_profile(_run_files("mpi2"), stack=False, ranked=True)
    tiles = {}
    for many in (10 ** 9, 1):
        monkeypatch.setattr(report_query, "MANY_LANES", many)
        q = report_query.ReportQueries(profile)
        lanes = [L for _, _, ls in q.group_lanes() for L in ls]
        tiles[many] = [q.lane_tile(L, q.t0, q.t1, 512) for L in lanes]
    assert tiles[1] == tiles[10 ** 9]
    provs = [b for lane in tiles[1] for row in lane for b in row["b"][3::5]]
    assert any(provs)  # (some boxes carry a line: the comparison is not of zeros)


def test_the_pictures_are_titled_as_screenshot_titles_them(tmp_path, monkeypatch, capsys):
    """A folder given to ``report`` titles its pictures by the folder's name, as ``screenshot``
    does (they listed its files: "legate_0.prof, legate_0.runtime.prof, … (+2 more)")."""
    import legate_prof.cli.commands.report as report_cli
    real = report_cli.picture_renderer
    titles = []

    def recording():
        render, why, _ = real()

        def render_seen(*a, **k):
            titles.append(k.get("title_files"))
            return render(*a, **k)
        return render_seen, why, False  # (drawn in this process, where it is seen)
    monkeypatch.setattr(report_cli, "picture_renderer", recording)
    run = Path(__file__).parents[1] / "fixtures" / "real" / "mpi2"
    assert main(["report", str(run), "-o", str(tmp_path / "rep"), "-q"]) == 0
    assert titles and all(t == [str(run)] for t in titles)


def test_the_mapper_calls_table_names_each_mapper(browser, mpi2_report):
    """The "by mapper" cells said "5×, running 928.507 µs; 3×, …" without the mappers' names
    (a user's review): each part now starts with its mapper, as `stats --json` names it."""
    _open(browser, mpi2_report)
    cells = browser.evaluate(
        "Array.from(document.querySelectorAll('#stats td')).map(t => t.textContent)")
    mapped = [c for c in cells if "×, running " in c and "LoggingWrapper(" in c]
    assert mapped, [c for c in cells if "×, running " in c][:5]
    assert all(re.search(r"LoggingWrapper\([^)]*\): \d+×", c) for c in mapped), mapped[:3]


def test_a_report_without_findings_says_so_in_its_findings_section(browser, tmp_path):
    """A run none of the guide's patterns shows in: the report hid its Findings section, and
    the header's link to it did nothing (a user's review); it says what `insights` says.
    (The efficient example's whole run has its start-up as a finding: a window after it.)"""
    out = tmp_path / "rep"
    run = str(Path(__file__).resolve().parents[1] / "fixtures" / "real" / "efficient_0.prof")
    assert main(["report", run, "-o", str(out), "--no-pictures", "--start", "0.9s", "--stop",
                 "1.1s"]) == 0
    _open(browser, out)
    shown = browser.evaluate("!document.getElementById('findings-section').hidden")
    said = browser.evaluate("document.getElementById('findings-none').textContent")
    assert shown and said == ("No finding: none of the guide's inefficiency patterns shows "
                              "in this profile."), said
    assert browser.errors == []


def test_where_the_report_holds_no_finer_detail_the_page_says_so(browser, monkeypatch, tmp_path):
    """The tiles' budget stopped the guide's 4-rank run at 104 ms a pixel: zoomed in, its
    tiny tasks stayed gray bands that said "double-click to zoom in", and nothing said the
    report had no more (a user's review).  The meta names the deepest tiles that still merge
    items, and zoomed past them the page says that `legate_prof view` shows every item."""
    import legate_prof.report.writer as rw
    run = _run_files("mpi2")
    out = tmp_path / "rep"
    monkeypatch.setattr(rw, "BYTES_PER_ITEM", 1 << 20)  # (the whole 24 MiB: every level)
    assert main(["report", *run, "-o", str(out), "--no-pictures"]) == 0
    assert _meta(out)["max_level"] >= 11  # (2 ms a view: level 11; finer tiles than that)
    monkeypatch.setattr(rw, "SIZE_BUDGET", 1)  # (the first level only)
    small = tmp_path / "small"  # (--no-cache: not the folder kept of the same question)
    assert main(["report", *run, "-o", str(small), "--no-pictures", "--no-cache"]) == 0
    meta = _meta(small)
    assert meta["max_level"] == 0 and meta["unrefined"] == ["0_0"], meta["tiles"]
    for folder, ends in ((out, ""), (small, "no finer detail in this report here")):
        _open(browser, folder)
        note = browser.evaluate("document.getElementById('detail-note').textContent")
        assert note == "", note  # (as opened: the whole run, the tiles' own scale)
        mid = (meta["t0"] + meta["t1"]) // 2
        browser.evaluate(f"view.setRange({mid}, {mid + 2_000_000})")
        browser.wait_frames()
        note = browser.evaluate("document.getElementById('detail-note').textContent")
        assert note.startswith(ends) and (not ends or "`legate_prof view`" in note), note
        assert browser.errors == []


def test_a_windows_critical_tables_give_shares_of_the_window(browser, tmp_path):
    """A window's report headed its critical path's shares "% of run" though they are of
    the window, as the text above them says (a user's review)."""
    out = tmp_path / "rep"
    assert main(["report", *_run_files("mpi2"), "--start", "4s", "--stop", "4.5s", "-o",
                 str(out), "--no-pictures"]) == 0
    _open(browser, out)
    heads = browser.evaluate("Array.from(document.querySelectorAll('.crit-split th'))"
                             ".map(t => t.textContent)")
    assert "% of window" in heads and "% of run" not in heads, heads
    # and the view opens (and resets) at the window asked for, not the run's padded range
    # (3.975-4.503 s, a user's review found)
    assert browser.evaluate("[view.t0, view.t1]") == [4_000_000_000, 4_500_000_000]
    assert browser.errors == []


def test_a_window_that_misses_the_run_says_so_on_the_page(browser, tmp_path):
    """`--start 10s --stop 11s` of a 5 s run: the warning went to the terminal only, and the
    page showed an empty timeline (a user's review); its banner says it now."""
    out = tmp_path / "rep"
    assert main(["report", *_run_files("mpi2"), "--start", "10s", "--stop", "11s", "-o",
                 str(out), "--no-pictures"]) == 0
    _open(browser, out)
    banner = browser.evaluate("document.getElementById('notices').textContent")
    assert "the window (--start/--stop) misses the run: it holds no item" in banner, banner
    assert browser.errors == []


def test_a_searchs_count_is_what_it_highlights_by_kind(browser, mpi2_report):
    """Searching BinaryOp said "9 items" on mpi2, where 18 boxes were highlighted (the
    tasks, their application calls, every rank's operations): it summed stats' tasks and
    operations (a user's review).  The count is every item whose name or line matches, by
    kind, as the desktop's search says it."""
    import numpy as np
    from legate_prof.query import kinds_counted
    source = _source("mpi2")
    names = [i for i, n in enumerate(source.names) if "binaryop" in n.lower()]
    ids = np.arange(source.info().n_items, dtype=np.int64)
    cols = source.items_columns(ids, ["name", "kind"])
    hit = np.isin(cols["name"], names)
    provs = np.asarray(source.items_provenance(ids))
    hit |= np.isin(provs, [i for i, p in enumerate(source.provenances)
                           if p and "binaryop" in p.lower()])
    kinds = np.bincount(cols["kind"][hit])
    want = kinds_counted({k: int(kinds[k]) for k in np.flatnonzero(kinds).tolist()})
    _open(browser, mpi2_report)
    browser.evaluate("var s = document.getElementById('search'); s.value = 'BinaryOp';"
                     "s.dispatchEvent(new Event('input'))")
    browser.wait_frames()
    count = browser.evaluate("document.getElementById('search-count').textContent")
    assert count.endswith(f" · {int(hit.sum()):,} items ({want})"), (count, want)
    assert int(hit.sum()) > 9
    assert browser.errors == []


def test_a_boxs_details_split_its_time_into_waiting_and_running(browser, ineff_report):
    """A task that waited most of its time showed only its duration in the details, where
    its tooltip splits it (a user's review): the details say how long it waited and ran,
    as the desktop's details (the API's) say it."""
    src = _source("inefficient_1rank")
    t0, t1 = src.info().time_range
    cand = [s.item for s in src.run_critical_path()
            if src.item_extent(s.item)[1] - src.item_extent(s.item)[0] > (t1 - t0) / 2000
            and any(f.label == "Waiting" for f in src.item_details(s.item))]
    assert cand, "no task on the path waited"
    i = cand[0]
    want = {f.label: f.text for f in src.item_details(i)}
    _open_at(browser, ineff_report)
    _zoom_and_click(browser, src, i)
    _wait(browser, "document.querySelector('#details table')")
    rows = _details(browser)
    assert rows["Waiting"][0] == want["Waiting"] and rows["Running"][0] == want["Running"], (
        rows, want)
    assert browser.errors == []


def test_a_searchs_counts_made_a_chunk_at_a_time_are_the_whole_runs(monkeypatch):
    """The (name, line, kind) counts are made a chunk of items at a time (10 M items'
    columns at once cost hundreds of MB): chunks of 100 items give what one chunk gives."""
    import legate_prof.report.query as rq
    whole = rq.ReportQueries(_source("mpi2")).name_lines()
    monkeypatch.setattr(rq, "NAME_LINES_CHUNK", 100)
    assert rq.ReportQueries(_source("mpi2")).name_lines() == whole
    assert sum(r[3] for r in whole) == _source("mpi2").info().n_items


def test_past_the_budgets_levels_the_tiles_go_down_where_the_findings_are(browser, monkeypatch,
                                                                         tmp_path):
    """What the budget leaves after its last whole level goes down at the first findings'
    windows, from the deepest level up, so a finding's items show as boxes somewhere (the
    guide's 4-rank run held 104 ms a pixel everywhere); elsewhere the page says where detail
    is kept."""
    import legate_prof.report.writer as rw
    run = _run_files("mpi2")
    monkeypatch.setattr(rw, "SIZE_BUDGET", 1)
    first = tmp_path / "first"
    assert main(["report", *run, "-o", str(first), "--no-pictures"]) == 0
    level0 = (first / "tiles" / "L0_0.js").stat().st_size
    monkeypatch.setattr(rw, "SIZE_BUDGET", int(2.5 * level0))  # (level 0, then 1.5x more)
    out = tmp_path / "rep"  # (--no-cache: not the folder kept of the same question)
    assert main(["report", *run, "-o", str(out), "--no-pictures", "--no-cache"]) == 0
    meta = _meta(out)
    spots = meta["detail_spots"]
    assert spots and meta["max_level"] > 1, (spots, meta["tiles"])
    # (no whole level past the first: a tile where each finding is)
    assert all(len(v) <= len(spots) for k, v in meta["tiles"].items() if k != "0"), meta["tiles"]
    span = meta["t1"] - meta["t0"]
    for level, tiles in meta["tiles"].items():
        level = int(level)
        at = {int((s["time"] - meta["t0"]) * 2 ** level // span) for s in spots}
        assert set(tiles) <= at | {0}, (level, tiles, at)  # (only down where the spots are)
    sizes = {f: (out / "tiles" / f).stat().st_size for f in os.listdir(out / "tiles")}
    # (within the budget but for the last tile of each spot, written before its size is known)
    below = max(v for f, v in sizes.items() if not f.startswith("L0_"))
    assert sum(sizes.values()) <= int(2.5 * level0) + len(spots) * below, sizes
    _open(browser, out)
    far = meta["t0"] + span // 50  # (away from the spots: detail ends, and where it is said)
    browser.evaluate(f"view.setRange({far}, {far + 1_000_000})")
    browser.wait_frames()
    note = browser.evaluate("document.getElementById('detail-note').textContent")
    assert note.startswith("no finer detail in this report here") and (
        f"this report keeps it at " in note and f"({spots[0]['finding']})" in note), note
    assert browser.errors == []


def test_a_tile_holds_the_waiting_pieces_in_its_range_and_each_boxs_whole_wait(tmp_path):
    """A task of 31,000 waits across the run put every one of them in every tile it showed
    in (3.7 of a 13 ms tile's 4 MB on the guide's 4-rank run): a tile holds the pieces in
    its range, and each shaded box's time not running ("t", its tooltip's Waiting) apart —
    the API's waited time of that item."""
    import numpy as np
    from legate_prof.present.units import format_ns_us
    out = tmp_path / "rep"
    assert main(["report", *_run_files("mpi2"), "-o", str(out), "--no-pictures"]) == 0
    meta = _meta(out)
    src = _source("mpi2")
    span, checked = meta["t1"] - meta["t0"], 0
    for name in sorted(os.listdir(out / "tiles")):
        text = (out / "tiles" / name).read_text()
        level, i, tile = json.loads("[" + text[text.index("(") + 1: text.rindex(")")] + "]")
        width = span * (i + 1) // 2 ** level - span * i // 2 ** level
        for rows in tile["lanes"].values():
            for r in rows:
                w = np.asarray(r["w"], np.int64).reshape(-1, 4)
                assert ((w[:, 3] > 0) & (w[:, 2] < width)).all(), (name, w[:3])
                b = np.asarray(r["b"], np.int64).reshape(-1, 5)
                for box, ns, calls in np.asarray(r["t"], np.int64).reshape(-1, 3).tolist():
                    if checked < 200:
                        item = int(b[box, 4])
                        want = {f.label: f.text for f in src.item_details(item)}
                        # (no "Waiting" where its pieces are the calls it made: 0; its
                        # calls apart, its running the rest, as the details say them)
                        assert want.get("Waiting", format_ns_us(0)) == format_ns_us(ns), \
                            (item, ns, want)
                        assert want.get("In its calls", format_ns_us(0)) == \
                            format_ns_us(calls), (item, calls, want)
                        dur = int(b[box, 1])
                        assert want["Running"] == format_ns_us(dur - ns - calls), (item, want)
                        checked += 1
    assert checked > 10


def test_the_labels_of_two_ranks_out_of_memory_are_both_shown(browser, tmp_path):
    """Both ranks of the guide's Example 2 ran out within a few ms: the report drew rank 1's
    label over rank 0's, of which a "(" showed (a review).  They stack, as in the desktop
    view: two boxes, one below the other, neither over the other."""
    oom2 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"
    out = tmp_path / "rep"
    assert main(["report", "-q", str(oom2), "--log", str(oom2 / "console.log"),
                 "--no-pictures", "-o", str(out)]) == 0
    _open(browser, out)
    assert browser.errors == []
    boxes = browser.evaluate("window.LP_marker_boxes")
    assert len(boxes) == 2, boxes
    (x0, y0, w0), (x1, y1, w1) = boxes
    assert abs(y1 - y0) >= 18 and x0 < x1 + w1 and x1 < x0 + w0  # (they would overlap)


def test_an_out_of_memory_label_wider_than_a_narrow_view_keeps_its_start(tmp_path):
    """At 900 px the label "Out of memory on rank 0: 4,194,304 bytes ..." ran off the view's
    left edge, its start lost (a review): a label wider than the view is cut at its end, and
    every label lies within the view."""
    if why_no_browser():
        pytest.skip("browser tests need a headless Chromium")
    oom2 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"
    out = tmp_path / "rep"
    assert main(["report", "-q", str(oom2), "--log", str(oom2 / "console.log"),
                 "--no-pictures", "-o", str(out)]) == 0
    with Browser(width=600, height=700) as narrow:
        narrow.open(out / "index.html")
        narrow.wait_frames()
        assert narrow.errors == []
        boxes = narrow.evaluate("window.LP_marker_boxes")
        width = narrow.evaluate("view.W")
    assert boxes and width < 400
    assert all(x >= 0 and x + w <= width + 0.5 for x, _, w in boxes), (boxes, width)


def test_findings_are_headed_and_an_out_of_memory_finding_names_what_held_the_pool(
        browser, tmp_path):
    """The page's findings ran on as one list, those of no time of their own like peers of
    the dearest, and an out-of-memory finding named none of the stores holding the pool (the
    guide's Example 2 story; `insights` says both: a review of the report)."""
    from legate_prof.analyze.insights_text import evidence_lines
    from legate_prof.present.units import format_ns
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    rl, oom = tmp_path / "rl", tmp_path / "oom"
    assert main(["report", "-q", str(real / "read_loop_2ranks"), "--no-pictures",
                 "-o", str(rl)]) == 0
    below = _meta(rl)["findings"]["below"]
    _open(browser, rl)
    title = browser.evaluate("document.getElementById('title').textContent")  # (its length
    assert title.endswith(f", the run {format_ns(_meta(rl)['findings']['run_ns'])}")  # too)
    assert browser.evaluate("document.querySelector('#findings-section p.findings-below')"
                            ".textContent") == below["words"]
    assert browser.evaluate("document.querySelectorAll('#findings-section ol')[1].start") == \
        below["at"] + 1
    assert main(["report", "-q", str(real / "oom2"), "--log", str(real / "oom2" / "console.log"),
                 "--no-pictures", "-o", str(oom)]) == 0
    first = _meta(oom)["findings"]["findings"][0]
    assert first["pattern"] == "out_of_memory"
    _open(browser, oom)
    shown = browser.evaluate("document.querySelector('#findings li details').open && "
                             "document.querySelector('#findings li pre.evidence').textContent")
    assert shown == "\n".join(evidence_lines(first["evidence"]))
    assert "store 4, allocated at " in shown and "not in one piece" in shown
    assert browser.errors == []


def test_the_markers_table_reads_as_words(browser, tmp_path):
    """The report's markers table gave the time in bare nanoseconds (1,581,984,677) and the
    report as one dump of ids and sizes (a review): a row is when, the rank, what happened
    and the report's fields as ``stats`` words them."""
    oom2 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"
    out = tmp_path / "rep"
    assert main(["report", "-q", str(oom2), "--log", str(oom2 / "console.log"),
                 "--no-pictures", "-o", str(out)]) == 0
    _open(browser, out)
    rows = browser.evaluate("""(function () {
      var h = Array.prototype.filter.call(document.querySelectorAll('#stats h3'),
                                          function (e) { return e.textContent === 'markers'; })[0];
      var t = h.nextElementSibling;
      return Array.prototype.map.call(t.querySelectorAll('tr'), function (r) {
        return Array.prototype.map.call(r.children, function (c) { return c.textContent; }); });
    })()""")
    head, first = rows[0], rows[1]
    assert head[:4] == ["when", "rank", "what", "details"], head
    assert first[0].replace("\xa0", " ") == "1.582 s" and first[1] == "0" and first[2].startswith("Out of memory on rank 0")
    assert "requested: 4,194,304 bytes" in first[3] and "1e00000000000000" not in first[3]


def test_the_operations_table_heads_its_tasks_time_as_stats_does(browser, ineff_report):
    """A review: the report's operations table headed the time any of an operation's tasks
    ran "running" (read as the operation's own), where ``stats`` says "tasks ran"."""
    _open(browser, ineff_report)
    heads = browser.evaluate(
        "Array.from(document.querySelectorAll('#stats h3')).filter(function (h) {"
        " return h.textContent === 'operations'; }).map(function (h) {"
        " return Array.from(h.nextElementSibling.querySelectorAll('th')).map("
        " function (t) { return t.textContent; }); })")
    assert heads and "tasks ran" in heads[0] and "running" not in heads[0], heads
    assert browser.errors == []


def test_a_run_of_many_ranks_is_titled_by_its_first_and_last_file(browser, tmp_path):
    """A report of 1,000 ranks listed the 1,000 file names in its title: the page's whole
    first screen (a walk at 1,000 ranks).  A numbered run is titled by its first and last
    file and a count (``present.file_list``), in the title and above the statistics."""
    from fixtures.synthetic import Shape, generate
    run = tmp_path / "run12"
    generate(str(run), ranks=12, items=2_400, seed=3, shape=Shape(cpus=1, gpus=0))
    out = tmp_path / "rep"
    assert main(["report", "-q", str(run), "--no-pictures", "-o", str(out)]) == 0
    assert _meta(out)["files_label"] == "legate_0.prof … legate_11.prof (12 files)"
    _open(browser, out)
    assert browser.errors == []
    title = browser.evaluate("document.getElementById('title').textContent")
    assert title.startswith("legate_prof report — legate_0.prof … legate_11.prof (12 files) — "
                            "12 rank(s), "), title
    stats = browser.evaluate("document.querySelector('#stats p').textContent")
    assert stats.startswith("legate_0.prof … legate_11.prof (12 files) — 12 rank(s)"), stats
    assert "legate_5.prof" not in title + stats
