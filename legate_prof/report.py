"""``legate_prof report``: the folder the guide promises beside the logs (``legate_prof/index.html``).

A self-contained, offline page: the run at a glance (machine, lane-group load), the findings of
``insights`` with their source lines and remedies, per-kind statistics, and pictures of the
timeline (all groups, then each processor group expanded) ready to paste into a bug report.
Everything is in the folder (PNGs beside index.html), nothing is fetched, so it opens by
double-click from file:// on a laptop with no network.  The pictures come from the same
rendering as ``legate_prof screenshot``.
"""

from __future__ import annotations

import html
import os
import shutil
import tempfile

from .insights import find_insights
from .kinds import GROUP_TITLE, PROCESSOR_GROUPS
from .stats import _fmt_bytes, compute_stats, format_ns

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2330}
header{background:#263248;color:#fff;padding:14px 24px}
header h1{font-size:20px;margin:0 0 4px}
main{padding:8px 24px 40px;max-width:1700px}
h2{border-bottom:1px solid #d7dbe3;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}
td,th{padding:3px 10px;border-bottom:1px solid #eceef2;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left}
th{background:#f3f5f8}
.finding{border-left:4px solid #d0452f;background:#fbf6f5;padding:8px 14px;margin:10px 0}
.finding .pattern{font-family:monospace;color:#a33}
.remedy{color:#225c2c}
code{background:#eef0f4;padding:1px 4px;border-radius:3px}
figure{margin:14px 0}
figure img{max-width:100%;border:1px solid #d7dbe3}
figcaption{color:#555}
.warn{color:#8a5a00}
"""


def _table(head, rows):
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _timings(rows, limit=40):
    return _table(["name", "count", "total", "running", "mean", "std dev", "min", "max"],
                  [[r["name"], f"{r['count']:,}", format_ns(r["total_ns"]),
                    format_ns(r["running_ns"]), format_ns(r["mean_ns"]),
                    format_ns(r.get("stddev_ns", 0)), format_ns(r["min_ns"]),
                    format_ns(r["max_ns"])] for r in rows[:limit]])


def _pictures(model, out_dir, width):
    """(file, caption): the whole run, then each processor group of rank 0 expanded."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from .viewer.screenshot import render_screenshot
    pics = [("timeline.png", "The whole run, every lane group (zoomed out)", [])]
    ranks = sorted({int(r) for r in model.lanes["rank"].tolist()})
    present = [k for k, _ in model.groups_present(ranks[0] if ranks else None)]
    for key in present:
        if key in PROCESSOR_GROUPS or key in ("channel",):
            pics.append((f"group_{key}.png", f"{GROUP_TITLE[key]} lanes expanded", [key]))
    made = []
    for name, caption, expand in pics:
        render_screenshot(model, os.path.join(out_dir, name), width=width,
                          height=900 if expand else 1000, expand=expand)
        made.append((name, caption))
    return made


MARKER = "<!-- legate_prof report -->"


def is_report(folder):
    """True when ``folder`` is empty or holds a report we wrote (so it may be replaced)."""
    names = os.listdir(folder)
    if not names:
        return True
    try:
        with open(os.path.join(folder, "index.html"), encoding="utf-8") as f:
            return MARKER in f.read(4096)
    except OSError:
        return False


def write_report(model, out_dir, title_files=(), width=1600):
    """Write ``out_dir/index.html`` and its pictures; the folder is replaced as a whole.

    An existing folder is replaced only if it is empty or an earlier report: a folder named
    ``legate_prof`` may well be this package's own source.
    """
    from .errors import ProfileError
    out_dir = os.path.abspath(out_dir)
    if os.path.isdir(out_dir) and not is_report(out_dir):
        raise ProfileError(out_dir, "exists and is not a legate_prof report; choose another "
                                    "folder with -o")
    parent = os.path.dirname(out_dir) or "."
    tmp = tempfile.mkdtemp(prefix=".legate_prof_report.", dir=parent)
    try:
        pics = _pictures(model, tmp, width)
        page = render_page(model, pics, title_files)
        with open(os.path.join(tmp, "index.html"), "w", encoding="utf-8") as f:
            f.write(page)
        os.chmod(tmp, 0o755)
        if os.path.isdir(out_dir):  # replace the previous report only when the new one is whole
            old = out_dir + ".old"
            shutil.rmtree(old, ignore_errors=True)
            os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return os.path.join(out_dir, "index.html")


def render_page(model, pictures, title_files=()):
    s = compute_stats(model)
    findings = find_insights(model)
    files = [os.path.basename(str(f)) for f in (title_files or model.sources)]
    a, b = s["span_ns"]
    parts = [f"<!doctype html>{MARKER}<html lang=en><head><meta charset=utf-8>"
             f"<title>legate_prof — {html.escape(', '.join(files[:4]))}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<header><h1>legate_prof report — {html.escape(', '.join(files[:6]))}"
             f"{' …' if len(files) > 6 else ''}</h1>"
             f"{s['ranks']} rank(s) · {s['items']:,} timeline items · run "
             f"{format_ns(b - a)} · {html.escape(s['legion_version'])}</header><main>"]
    for w in s["warnings"] + s["errors"]:
        parts.append(f"<p class=warn>{html.escape(str(w))}</p>")
    parts.append("<h2>Findings</h2>")
    if not findings:
        parts.append("<p>No finding: none of the guide's inefficiency patterns shows here.</p>")
    for f in findings:
        t0, t1 = f["window_ns"]
        lines = ", ".join(f"<code>{html.escape(p)}</code>" for p in f["provenance"][:8])
        ev = ", ".join(f"{html.escape(str(k))} = {html.escape(str(v))}"
                       for k, v in f["evidence"].items() if not isinstance(v, dict))
        parts.append(f"<div class=finding><span class=pattern>{f['pattern']}</span> "
                     f"<b>{html.escape(f['title'])}</b><br>"
                     + (f"at {lines}<br>" if lines else "")
                     + f"when {format_ns(t0)} – {format_ns(t1)}<br>evidence: {ev}<br>"
                     f"<span class=remedy>remedy: {html.escape(f['remedy'])}</span></div>")
    parts.append("<h2>Timeline</h2>")
    for name, caption in pictures:
        parts.append(f"<figure><img src='{html.escape(name)}' alt='{html.escape(caption)}'>"
                     f"<figcaption>{html.escape(caption)} — "
                     f"<a href='{html.escape(name)}'>{html.escape(name)}</a></figcaption>"
                     "</figure>")
    parts.append("<h2>Machine and load</h2>")
    parts.append(_table(["rank", "group", "lanes", "items", "busy", "memory peak"],
                        [[g["rank"], g["title"], g["lanes"], f"{g['items']:,}",
                          format_ns(g["busy_ns"]),
                          (f"{_fmt_bytes(g['peak_bytes'])} of "
                           f"{_fmt_bytes(g['capacity_bytes']) if g['capacity_bytes'] else '?'}"
                           if "peak_bytes" in g else "")] for g in s["groups"]]))
    for key, title in (("tasks", "Tasks"), ("gpu_kernels", "GPU kernels"),
                       ("operations", "Operations (runtime event stream)"),
                       ("meta_tasks", "Runtime meta-tasks"), ("mapper_calls", "Mapper calls"),
                       ("runtime_calls", "Runtime calls")):
        if s.get(key):
            parts.append(f"<h2>{title}</h2>" + _timings(s[key]))
    parts.append("<p>Running time is total minus waits minus the calls a task made, as the "
                 "reference legion_prof counts it. Made by legate_prof; open the logs with "
                 "<code>legate_prof view</code> to zoom in.</p></main></body></html>")
    return "\n".join(parts)
