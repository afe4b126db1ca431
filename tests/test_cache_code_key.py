"""A cache entry's key holds the code that makes an entry (``cache.code_digest``): an entry
made by other code (a developer's edit to the builder, a checkout of git main between
releases) is not served; the same code, its files copied or checked out again (new mtimes),
finds its entry.  Real entries of a real run, in the test's own cache folder (conftest's
``own_cache``); the code's sources are copies in ``tmp_path`` the key is pointed at
(``cache.CODE_ROOT``)."""

import os
import shutil
from pathlib import Path

import legate_prof
from legate_prof.load.loader import load_profile
from legate_prof.store import cache

SOURCES = Path(legate_prof.__file__).resolve().parent
MPI2 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2"
EDITED = "assemble/model_builder.py"


def copy_sources(to):
    """The sources the digest reads, copied with new mtimes (as a checkout writes them)."""
    names = list(cache.CODE_MODULES) + [f"{p}/{f.name}" for p in cache.CODE_PACKAGES
                                        for f in (SOURCES / p).glob("*.py")]
    for name in names:
        (to / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SOURCES / name, to / name)
    return to


def edit_one_byte(tree):
    """One byte of the builder changed, its size and mtime kept: only its contents tell."""
    f = tree / EDITED
    st = f.stat()
    data = bytearray(f.read_bytes())
    at = data.index(b"#")  # (the byte after the first "#")
    data[at + 1:at + 2] = b"!" if data[at + 1:at + 2] != b"!" else b"?"
    f.write_bytes(bytes(data))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns


def run_paths():
    return sorted(str(p) for p in MPI2.glob("legate_*"))


def quiet(_):
    pass


def test_an_entry_made_by_other_code_is_not_served_and_goes_in_its_turn(tmp_path, monkeypatch):
    paths = run_paths()
    before = copy_sources(tmp_path / "before")
    after = copy_sources(tmp_path / "after")
    edit_one_byte(after)
    model = load_profile(paths)

    monkeypatch.setattr(cache, "CODE_ROOT", before)
    old = cache.store_cached(model, paths, note=quiet)
    assert old is not None and old.exists()
    assert cache.load_cached(paths, note=quiet) is not None  # the same code: found

    monkeypatch.setattr(cache, "CODE_ROOT", after)
    assert cache.entry_path(paths) != old
    assert cache.load_cached(paths, note=quiet) is None  # other code: not served, rebuilt
    assert old.exists()  # (left for the eviction: least recently used, it goes first)

    monkeypatch.setenv("LEGATE_PROF_CACHE_MAX_MB", "0")  # no room but for the entry written
    new = cache.store_cached(model, paths, note=quiet)
    assert new.exists() and new != old
    assert not old.exists() and not old.with_suffix(cache.STAMP_SUFFIX).exists()
    reopened = cache.load_cached(paths, note=quiet)
    assert reopened is not None and len(reopened.items["start"]) == len(model.items["start"])

    monkeypatch.setattr(cache, "CODE_ROOT", before)  # the old code again: its entry is gone
    assert cache.load_cached(paths, note=quiet) is None


def test_this_code_finds_its_own_entry(tmp_path):
    """The key of the package as installed (``CODE_ROOT`` None): an entry written is found."""
    paths = run_paths()
    assert cache.CODE_ROOT is None and cache.code_digest() != b""
    entry = cache.store_cached(load_profile(paths), paths, note=quiet)
    assert entry == cache.entry_path(paths)
    assert cache.load_cached(paths, note=quiet) is not None


def test_the_digest_is_of_contents_not_of_times(tmp_path):
    one = copy_sources(tmp_path / "one")
    two = copy_sources(tmp_path / "two")  # the same sources, other mtimes and inodes
    os.utime(two / EDITED, ns=(0, 0))
    assert cache.code_digest(one) == cache.code_digest(two) != b""
    three = copy_sources(tmp_path / "three")  # (a root's digest is kept once worked out:
    edit_one_byte(three)                      # edited before it is asked)
    assert cache.code_digest(three) != cache.code_digest(one)
    missing = copy_sources(tmp_path / "missing")  # a module added or removed changes it too
    (missing / "load" / "inputs.py").unlink()
    assert cache.code_digest(missing) not in (cache.code_digest(one), b"")


def test_a_package_without_its_sources_keys_by_its_version(tmp_path):
    """Installed as .pyc alone (no .py to hash): no digest, the version decides as before."""
    tree = copy_sources(tmp_path / "compiled")
    for f in (tree / "model").glob("*.py"):
        f.with_suffix(".pyc").write_bytes(b"")
        f.unlink()
    assert cache.code_digest(tree) == b""


def test_kept_results_key_by_every_module_the_same_way(tmp_path):
    """``results.code_stamp`` hashes the whole package, subfolders too (a command's module in
    ``cli/commands`` works answers out), with the cache's ``source_digest``: one way of
    hashing sources, not two."""
    from legate_prof.store import results
    root = Path(cache.__file__).resolve().parents[1]
    assert results.code_stamp() == cache.source_digest(str(root), ("",)).hex()[:16]
    tree = tmp_path / "pkg"
    shutil.copytree(root, tree, ignore=shutil.ignore_patterns("__pycache__", "data", "static"))
    whole = cache.source_digest(str(tree), ("",))
    deep = tree / "cli" / "commands" / "stats.py"
    deep.write_bytes(deep.read_bytes() + b"\n")
    assert cache.source_digest(str(tree), ("",)) not in (whole, b"")
    # (what the cache's key hashes leaves the commands out: an entry is the timeline's)
    assert cache.source_digest(str(tree), cache.CODE_PACKAGES, cache.CODE_MODULES) == \
        cache.source_digest(str(root), cache.CODE_PACKAGES, cache.CODE_MODULES)


# What the code that makes an entry imports from the rest of the package and that makes no
# part of an entry: where a command's outputs go.
NOT_OF_AN_ENTRY = {"output_file.py"}


def _package_imports(source):
    """The package's modules (paths under it) that ``source`` imports."""
    import ast
    out = set()
    for node in ast.walk(ast.parse(source.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] != "legate_prof" or len(parts) < 2:
                continue
            for k in range(len(parts) - 1, 0, -1):  # (the longest that names a module)
                f = SOURCES.joinpath(*parts[1:k + 1])
                if f.with_suffix(".py").is_file():
                    out.add(f.with_suffix(".py").relative_to(SOURCES).as_posix())
                    break
    return out


def test_every_module_the_entry_makers_import_is_in_the_digest():
    """A module of the package that ``read/``, ``assemble/``, ``model/``, ``store/`` or
    ``load/`` import is hashed with them (``cache.CODE_MODULES``): the files' signatures,
    moved out of the readers into ``file_signatures``, were left out at first, and an entry
    read with other signatures would have been served (a review)."""
    imported = set()
    for package in cache.CODE_PACKAGES:
        for f in (SOURCES / package).glob("*.py"):
            imported |= _package_imports(f)
    outside = {m for m in imported if m.split("/")[0] not in cache.CODE_PACKAGES}
    assert "file_signatures.py" in outside and "errors.py" in outside
    assert outside - NOT_OF_AN_ENTRY <= set(cache.CODE_MODULES), outside - set(cache.CODE_MODULES)
