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
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "legate_prof" / "cuda-stub"


def build_stub() -> Path:
    """Compile the stand-in once (keyed by the source's hash); returns its directory."""
    src = SOURCE.read_bytes()
    tag = hashlib.sha256(src).hexdigest()[:12]
    out = cache_dir() / tag
    lib = out / "libcuda.so.1"
    if lib.exists():
        return out
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise RuntimeError("no C compiler (cc) found to build the CUDA driver stand-in")
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f"libcuda.so.1.{os.getpid()}"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(SOURCE)], check=True)
    os.replace(tmp, lib)
    link = out / "libcuda.so"
    if not link.exists():
        try:
            link.symlink_to("libcuda.so.1")
        except FileExistsError:
            pass
    return out


def legate_env(env=None) -> dict:
    """Environment for running ``legate``: adds the stand-in only when no driver exists."""
    env = dict(os.environ if env is None else env)
    # the launcher runs the program with the first python3 on PATH: make it ours
    bindir = os.path.dirname(sys.executable)
    if not env.get("PATH", "").startswith(bindir + os.pathsep):
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    if not real_driver_present():
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
    print(build_stub())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
