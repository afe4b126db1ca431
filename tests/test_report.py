"""The offline HTML report: the folder it writes, and the page in a real headless Chromium
opened from file:// with the network emulated offline (skipped, saying why, without one)."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

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
    assert "no readable file (rank 1)" in text, text


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
    assert any(c.endswith("iB") or " B;" in c for c in cells if "system" in c)


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
