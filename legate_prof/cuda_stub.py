"""Make the PyPI legate wheel importable on machines without an NVIDIA driver.

The wheel links ``libcuda.so.1``.  Where no real driver library can be loaded, we build a tiny
stand-in (``data/cuda_stub.c``: every call answers CUDA_ERROR_NO_DEVICE) into a cache
directory and put it on ``LD_LIBRARY_PATH`` of the ``legate`` process.  Where a real driver
exists nothing is built or changed.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).with_name("data") / "cuda_stub.c"


def real_driver_present() -> bool:
    """True when the dynamic loader finds a libcuda.so.1 that is not our stand-in."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    if not hasattr(lib, "legate_prof_cuda_stub"):
        return True
    # Our stand-in was found first (it is on LD_LIBRARY_PATH); is there a real one too?
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        return False
    return "libcuda.so.1 " in out


def cache_dir() -> Path:
    """Where the stand-in is built: ``cuda-stub`` in this tool's cache folder (a relative
    XDG_CACHE_HOME ignored, as the XDG spec says: it built the stand-in in the folder the
    command ran in)."""
    from legate_prof.store.cache import user_cache_home
    return user_cache_home() / "cuda-stub"


# what a failed build means, for the one line that says so
NEEDED = ("no NVIDIA driver here, and legate's library needs libcuda.so.1 even with --gpus 0: "
          "its stand-in could not be built")


def build_stub() -> Path:
    """Compile the stand-in once (keyed by the source's hash); returns its directory.
    RuntimeError, in words that say what to do, where it cannot be built (no compiler, a
    compiler that fails, a cache folder that cannot be written)."""
    src = SOURCE.read_bytes()
    tag = hashlib.sha256(src).hexdigest()[:12]
    out = cache_dir() / tag
    lib = out / "libcuda.so.1"
    if lib.exists():
        return out
    cc = shlex.split(os.environ.get("CC", "")) or [shutil.which("cc") or shutil.which("gcc")]
    if not cc[0]:
        raise RuntimeError(f"{NEEDED}: no C compiler (cc) found; install one (gcc or clang), "
                           "or set CC to one")
    tmp = out / f"libcuda.so.1.{os.getpid()}"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RuntimeError(f"{NEEDED}: {e.filename}: {e.strerror or e} (XDG_CACHE_HOME names "
                           "the folder it goes under: one this user can write)") from None
    try:
        done = subprocess.run([*cc, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(SOURCE)],
                              capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise RuntimeError(f"{NEEDED}: {cc[0]}: {e.strerror or e}; set CC to a C compiler, "
                           "or install one (gcc or clang)") from None
    if done.returncode != 0 or not tmp.exists():
        tmp.unlink(missing_ok=True)
        said = [ln.strip() for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
        said = [ln for ln in said if "error" in ln.lower()][:1] or said[-1:]  # (its first)
        raise RuntimeError(f"{NEEDED}: {' '.join(cc)} failed (exit status {done.returncode}"
                           f"{': ' + said[0] if said else ''}); set CC to a working C compiler")
    os.replace(tmp, lib)
    link = out / "libcuda.so"
    if not link.exists():
        try:
            link.symlink_to("libcuda.so.1")
        except FileExistsError:
            pass
    return out


def legate_env(env=None, stand_in=True) -> dict:
    """Environment for running ``legate``: adds the stand-in only when no driver exists
    (and ``stand_in``: ``legate --help`` needs none).  RuntimeError where it cannot be
    built (``build_stub``)."""
    env = dict(os.environ if env is None else env)
    # the launcher runs the program with the first python3 on PATH: make it ours
    bindir = os.path.dirname(sys.executable)
    if not env.get("PATH", "").startswith(bindir + os.pathsep):
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    if stand_in and not real_driver_present():
        stub = build_stub()
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in [str(stub), env.get("LD_LIBRARY_PATH", "")] if p)
    return env


def legate_executable() -> str:
    exe = Path(sys.executable).with_name("legate")
    if exe.exists():
        return str(exe)
    found = shutil.which("legate")
    if not found:
        raise RuntimeError("the 'legate' launcher is not installed (pip install legate==26.6.1)")
    return found


def main(argv=None):
    """``python -m legate_prof.cuda_stub``: print the LD_LIBRARY_PATH entry to use, if any."""
    if real_driver_present():
        print("")
        return 0
    try:
        print(build_stub())
    except RuntimeError as e:
        print(f"legate_prof: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
