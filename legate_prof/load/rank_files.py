"""Which rank each input file holds, without reading it whole.

A Legion Prof log says it in its first record (``MachineDesc``: ``read_head`` inflates and
parses only that far), a runtime event stream in its header, a bundle in its ranks table.  A
``legate_N`` name is a hint: it spares reading the files of ranks nobody asked for, and the file
confirms it.  Used to read only some ranks' files (``--ranks``) and, on a cluster, to convert
only one's own rank's files (``convert --per-rank`` under a launcher).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from legate_prof.errors import ProfileError

# legate_3.prof, legate_3.prof.gz, legate_3.runtime.prof, legate_3.lpbundle, myrun_3.prof ...
_NAME_RANK = re.compile(r"_(\d+)(?:\.runtime)?(?:\.prof(?:\.gz)?|\.lpbundle)$")
_STEM = re.compile(r"(?:\.runtime)?(?:\.prof(?:\.gz)?|\.lpbundle)$")


def name_rank(path):
    """The rank a file's name gives (``legate_3.prof`` → 3), or None."""
    m = _NAME_RANK.search(os.path.basename(os.fspath(path)))
    return int(m.group(1)) if m else None


def run_stem(path):
    """The name a rank's log and its runtime stream share (``legate_3``), with its folder."""
    p = os.fspath(path)
    return os.path.join(os.path.dirname(p), _STEM.sub("", os.path.basename(p)))


def logs_of_bundle(bundle):
    """The logs a bundle was converted from where they still lie beside it as they were (the
    names and sizes its header says; a header that does not say: its name's,
    ``legate_3.lpbundle``'s ``legate_3.prof`` or ``.prof.gz`` and ``legate_3.runtime.prof``),
    or []: what a damaged bundle's rank is read from instead."""
    from legate_prof.store.bundle_file import bundle_sources
    folder, said = os.path.dirname(os.fspath(bundle)), bundle_sources(bundle)
    if said is None:
        stem = run_stem(bundle)
        log = next((p for p in (stem + ".prof", stem + ".prof.gz") if os.path.isfile(p)), None)
        stream = next((s for s in (stem + ".runtime.prof", stem + ".runtime.prof.gz")
                       if os.path.isfile(s)), None)
        return [log] + ([stream] if stream else []) if log else []
    out = []
    for name, size in said.items():  # (a stranger's header: names in this folder only)
        path = os.path.join(folder, name)
        if name != os.path.basename(name) or not name.endswith((".prof", ".prof.gz")) \
                or not os.path.isfile(path) or os.path.getsize(path) != size:
            return []
        out.append(path)
    return out if any(not p.endswith((".runtime.prof", ".runtime.prof.gz")) for p in out) \
        else []


@dataclass(frozen=True)
class FileRanks:
    """What a file says of itself: the ranks it holds (empty: it does not say) and the number
    of ranks of its run (0: unknown)."""
    ranks: tuple
    num_nodes: int = 0


def head_ranks(path, kind) -> FileRanks:
    """The ranks ``path`` (of ``kind``, as ``inputs.sniff`` says) holds, from its head."""
    if kind == "legion":
        from legate_prof.read.legion_log import read_head
        md = read_head(path).table("MachineDesc")
        if not len(md):
            return FileRanks(())
        return FileRanks((int(md[0]["node_id"]),), int(md[0].get("num_nodes", 0) or 0))
    if kind == "runtime":
        from legate_prof.read.runtime_stream import read_runtime_stream
        h = read_runtime_stream(path).header
        return FileRanks((int(h.get("rank", 0)),), int(h.get("ranks", 0) or 0))
    if kind == "bundle":
        from legate_prof.store.bundle_file import read_bundle
        ranks = read_bundle(path, check=False).ranks
        return FileRanks(tuple(sorted({int(r["rank"]) for r in ranks})),
                         max((int(r.get("num_nodes", 0) or 0) for r in ranks), default=0))
    return FileRanks(())


def files_of_ranks(paths, wanted):
    """(the inputs holding any of the ranks ``wanted``, notes): a file named for another rank
    is not opened; the others say which ranks they hold from their heads.  A file that does
    not say (no machine description) is left out with a note; so is one whose name and
    content disagree and whose content is not wanted.  Where a name was wrong, or no file
    holds a rank asked for, names are not trusted: the files passed over say their ranks too
    (a pair of files named for each other's ranks was two files left out, and the rank asked
    for "held by none").  Unreadable files and what is not a rank's (legate's console log)
    stay: their reader says what they are."""
    wanted = set(wanted)
    kept, notes, passed, misnamed, held = [], [], [], False, False
    for p in paths:
        hint = name_rank(p)
        if hint is not None and hint not in wanted:
            passed.append(p)
            continue
        said = _said_ranks(p)
        if said is None:
            kept.append(p)  # (reported when read, or legate's console log for --log)
            continue
        if not said:
            notes.append(f"warning: {p}: says no rank (no machine description); left out of "
                         "--ranks")
        elif wanted & set(said):
            kept.append(p)
            held = True
        elif hint is not None:
            misnamed = True
            notes.append(_misnamed(p, hint, said, "left out of --ranks"))
    if passed and (misnamed or not held):
        for p in passed:
            said = _said_ranks(p)
            if said and wanted & set(said):  # (unreadable ones stay out, unread as before)
                kept.append(p)
                notes.append(_misnamed(p, name_rank(p), said, "read for --ranks"))
        order = {p: k for k, p in enumerate(paths)}
        kept.sort(key=order.get)
    return kept, notes


def _said_ranks(path):
    """The ranks ``path`` says it holds (empty: it says none), or None where it is not a
    rank's file or cannot be read."""
    from legate_prof.load.inputs import sniff
    try:
        kind = sniff(path)
        if kind not in ("legion", "runtime", "bundle"):  # legate's console log (--log)
            return None
        return head_ranks(path, kind).ranks
    except ProfileError:
        return None


def _misnamed(path, hint, held, then):
    return (f"warning: {path}: named for rank {hint} but holds rank "
            f"{', '.join(map(str, held))}; {then}")


@dataclass
class RankJob:
    """One rank's files converted into one bundle: its Legion Prof log and the runtime stream
    beside it (``legate_3.prof`` with ``legate_3.runtime.prof``), or one of them alone."""
    files: list
    rank: int | None


def per_rank_jobs(paths, kinds, share=None):
    """(the inputs grouped per rank — each log with the runtime stream of its name and rank —,
    notes).  ``share`` = (process, processes) under a launcher: only the groups of this
    process, rank ``r`` going to process ``r % processes`` — by the name's rank where the name
    gives one (every process decides the same without reading the others' files), else by the
    rank the file says, else by the group's place among the inputs."""
    groups = {}
    for p in paths:
        groups.setdefault(run_stem(p), []).append(p)
    jobs, notes = [], []
    for k, (stem, files) in enumerate(groups.items()):
        hint = name_rank(files[0])
        if share is not None and hint is not None and hint % share[1] != share[0]:
            continue  # another process's: left unread
        ranks = {}
        for p in files:
            try:
                held = head_ranks(p, kinds[p]).ranks if p in kinds else ()
            except ProfileError:
                held = ()
            ranks[p] = held[0] if len(held) == 1 else None
        logs = [p for p in files if kinds.get(p) != "runtime"]
        rank = next((ranks[p] for p in logs if ranks[p] is not None),
                    next((r for r in ranks.values() if r is not None), None))
        if share is not None and hint is None:
            owner = rank if rank is not None else k
            if owner % share[1] != share[0]:
                continue
        if hint is not None and rank is not None and hint != rank:
            notes.append(f"warning: {files[0]}: named for rank {hint} but holds rank {rank}")
        together = [p for p in files if ranks[p] in (rank, None)]
        jobs.append(RankJob(together, rank))
        jobs.extend(RankJob([p], ranks[p]) for p in files if p not in together)
    return jobs, notes
