"""Legate's console log: the out-of-memory report it prints, read into plain values.

Legate prints, when an instance cannot be allocated::

    Failed to allocate 8388608 bytes on memory 1e00000000000000 (of kind SYSTEM_MEM) for region
    requirement(s) {1} of Task cupynumeric::BinaryOpTask[/path/oom.py:16] (UID 8)
    corresponding to a LogicalStore allocated at /path/oom.py:16 There is not enough space because
    Legate is reserving 33554400 of the available 41943040 bytes for the following LogicalStores:
    LogicalStore allocated at /path/oom.py:13:
      Instance 4000000000000003 of size 8388608 covering elements <0>..<1048575>
          created for an operation launched at /path/oom.py:13
"""

from __future__ import annotations

import re

from legate_prof.errors import ProfileError

# Every pattern is linear in its input: quantifiers are bounded or over classes that the next
# token cannot also match, nothing crosses a line, and lines are cut at MAX_LINE characters
# before any pattern sees them (a console log is untrusted input: tests/test_hostile.py feeds
# each pattern a megabyte of its worst case).
MAX_LINE = 8192  # legate's lines are a few hundred characters; a path is at most 4096
_NUM = r"\d{1,256}"  # digits of a count; _count bounds the value
_FAILED = re.compile(
    rf"Failed to allocate (?P<bytes>{_NUM}) bytes on memory (?P<mem>[0-9a-fA-Fx]{{1,256}}) "
    r"\(of kind (?P<kind>\w{1,64})\)(?: for region requirement\(s\) \{(?P<reqs>[^}\n]{0,4096})\})?"
    r"(?: of (?:Task|Operation) (?P<task>[^\s\[]{1,4096})(?:\[(?P<prov>[^\]\n]{0,4096})\])?"
    rf"(?: \(UID (?P<uid>{_NUM})\))?)?")
_STORE_AT = re.compile(r"corresponding to a LogicalStore allocated at (?P<site>\S{1,4096})")
_RESERVING = re.compile(rf"reserving (?P<used>{_NUM}) of the available (?P<avail>{_NUM}) bytes")
# (the site's trailing colon and blanks are stripped in Python: a lazy '.+?' before ':?\s*$'
# was quadratic on a long run of spaces)
_HOLDER = re.compile(r"[ \t]{0,64}LogicalStore allocated at (?P<site>[^\n]{1,4096})")
_INSTANCE = re.compile(rf"Instance (?P<inst>[0-9a-fA-F]{{1,256}})"
                       rf"(?: at address [0-9a-fA-Fx]{{1,256}})? of size (?P<size>{_NUM})"
                       rf"(?: covering elements (?P<range>\S{{1,4096}}))?")
_CREATED = re.compile(r"created for an operation launched at (?P<site>\S{1,4096})")

KIND_GROUP = {"SYSTEM_MEM": "system", "SOCKET_MEM": "socket", "Z_COPY_MEM": "zerocopy",
              "ZCMEM": "zerocopy", "GPU_FB_MEM": "framebuffer", "FBMEM": "framebuffer",
              "REGDMA_MEM": "registered"}


_LOG_PREFIX = re.compile(r"^\[\d{1,256} - [0-9a-fA-F]{1,256}\][ \t]{1,64}[\d.]{1,256}[ \t]{1,64}"
                         r"\{\d{1,256}\}\{[\w.]{1,256}\}: ?", re.M)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_LONG_LINE = re.compile(rf"^([^\n]{{{MAX_LINE}}})[^\n]+", re.M)


MAX_COUNT = 2**62  # sizes and ids beyond this in a console log are damage, not data


def _count(text):
    """A byte count or id from the log (digits, maybe with thousands commas), bounded."""
    v = int(str(text).replace(",", ""))
    return v if 0 <= v < MAX_COUNT else MAX_COUNT - 1


def clean_log(text):
    """Lines cut at MAX_LINE; Realm's '[0 - 7f..] 0.46 {5}{legate.mapper}: ' prefixes and
    digit-group commas dropped."""
    return _THOUSANDS.sub("", _LOG_PREFIX.sub("", _LONG_LINE.sub(r"\1", text)))


# a line Realm wrote for a rank: ``[1 - 7fdca4a23740]    1.442971 {5}{legate.mapper}: ...``
_RANK_PREFIX = re.compile(r"^\[(\d{1,9}) - [0-9a-fA-F]{1,256}\]", re.M)


def rank_texts(text):
    """{rank: its lines} of a console log several ranks wrote into (by the ``[N - thread]``
    each line starts with; a line without one goes with the line before), in order of the
    ranks' first lines; {None: text} where no line names a rank other than the first's."""
    if len(set(_RANK_PREFIX.findall(text))) < 2:
        return {None: text}
    out, rank = {}, None
    for line in text.splitlines(keepends=True):
        m = _RANK_PREFIX.match(line)
        if m:
            rank = int(m[1])
        out.setdefault(rank, []).append(line)
    return {r: "".join(lines) for r, lines in out.items()}


def parse_oom_reports(text: str):
    """Each rank's out-of-memory report in a log (the first of each rank: it aborts), by
    rank: ``parse_oom_report``'s dict with ``rank``, the rank of the memory that ran out
    (else of the lines that say it; 0 when nothing tells)."""
    out = {}
    for prefix_rank, part in rank_texts(text).items():
        rep = parse_oom_report(part)
        if rep is None:
            continue
        node = _memory_node(rep["memory"])
        rep["rank"] = node if node is not None else (prefix_rank or 0)
        out.setdefault(rep["rank"], rep)
    return [out[r] for r in sorted(out)]


def _memory_node(mem):
    """The node (rank) of a Realm memory id ``1e00010000000000``: its bits 40..55."""
    try:
        v = int(mem, 16)
    except ValueError:
        return None
    return (v >> 40) & 0xFFFF if v < 2**64 else None


def parse_oom_report(text: str):
    """The first out-of-memory report in a log, as a dict; None if there is none."""
    text = clean_log(text)
    m = _FAILED.search(text)
    if not m:
        return None
    rep = {
        "requested_bytes": _count(m["bytes"]),
        "memory": m["mem"],
        "memory_kind": m["kind"],
        "group": KIND_GROUP.get(m["kind"], "mem_other"),
        "task": m["task"] or "",
        "provenance": m["prov"] or "",
        "uid": _count(m["uid"]) if m["uid"] else None,
        "holders": [],
    }
    tail = text[m.end():]
    s = _STORE_AT.search(tail[:2000])
    if s:
        rep["store_allocated_at"] = s["site"]
    r = _RESERVING.search(tail[:4000])
    if r:
        rep["reserved_bytes"] = _count(r["used"])
        rep["pool_bytes"] = _count(r["avail"])
        holder = None
        for line in tail[r.end():].splitlines()[1:]:
            h = _HOLDER.match(line)
            site = h["site"].rstrip() if h else ""
            if site.rstrip(":"):
                holder = {"allocated_at": site.rstrip(":"), "instances": []}
                rep["holders"].append(holder)
                continue
            i = _INSTANCE.search(line)
            if i and holder is not None:
                holder["instances"].append({"instance": i["inst"], "size": _count(i["size"]),
                                            "elements": i["range"] or ""})
                continue
            c = _CREATED.search(line)
            if c and holder is not None and holder["instances"]:
                holder["instances"][-1]["created_at"] = c["site"]
                continue
            if line.strip() and not line.startswith(" ") and holder is not None:
                break
    return rep


# Realm's line where a process caught a signal (its backtrace follows): ``Signal 2 received by
# node 0, process 9876 (thread 7fcb...) - obtaining backtrace``
_SIGNAL = re.compile(r"^Signal (?P<sig>\d{1,3}) received by node (?P<node>\d{1,9}), process",
                     re.M)


def parse_signals(text: str):
    """{rank: the signal number} of each rank whose process caught a signal, as Realm says in
    a console log (the first it caught).  Not every signal is said: one that kills outright
    (SIGKILL) leaves no line, nor, in legate 26.06, SIGTERM."""
    out = {}
    for m in _SIGNAL.finditer(clean_log(text)):
        out.setdefault(int(m["node"]), int(m["sig"]))
    return out


SIGNAL_WORDS = {2: "interrupted (Ctrl+C)", 3: "asked to quit", 15: "asked to end",
                1: "its terminal hung up", 9: "killed outright",
                6: "aborted (a failed check in the runtime or the program)",
                11: "crashed (a segmentation fault)", 7: "crashed (a bus error)",
                8: "crashed (an arithmetic fault)", 4: "crashed (an illegal instruction)"}


def signal_words(number):
    """'signal 2 (SIGINT): interrupted (Ctrl+C)'."""
    import signal
    try:
        name = f" ({signal.Signals(number).name})"
    except ValueError:
        name = ""
    what = SIGNAL_WORDS.get(number)
    return f"signal {number}{name}" + (f": {what}" if what else "")


def read_log_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read(64 << 20)
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    return data.decode("utf-8", "replace")


def looks_like_legate_log(text):
    return bool(_FAILED.search(text)) or "legate" in text.lower() or "legion" in text.lower()
