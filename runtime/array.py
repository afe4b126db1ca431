"""``ndarray``: a NumPy-style array whose data is a Legate store and whose operations are tasks.

Every operation is launched inside a ``legate.core.Scope`` whose provenance is the user's
``file:line``, so the profile shows ``BinaryOp[prog.py:16]``.
"""

from __future__ import annotations

import inspect
import os
import time
import warnings

import numpy as np
from legate.core import Scope, get_legate_runtime
from legate.core import types as ty

from . import events
from . import tasks as T

_HERE = os.path.dirname(os.path.abspath(__file__))
_LEGATE_TYPES = {
    np.dtype(np.float64): ty.float64, np.dtype(np.float32): ty.float32,
    np.dtype(np.float16): ty.float16, np.dtype(np.int64): ty.int64,
    np.dtype(np.int32): ty.int32, np.dtype(np.int16): ty.int16, np.dtype(np.int8): ty.int8,
    np.dtype(np.uint64): ty.uint64, np.dtype(np.uint32): ty.uint32,
    np.dtype(np.uint16): ty.uint16, np.dtype(np.uint8): ty.uint8,
    np.dtype(np.bool_): ty.bool_, np.dtype(np.complex64): ty.complex64,
    np.dtype(np.complex128): ty.complex128,
}


def runtime():
    return get_legate_runtime()


def user_site():
    """``/path/prog.py:LINE`` of the innermost frame outside this package."""
    f = inspect.currentframe()
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not fn.startswith(_HERE) and "importlib" not in fn:
            return f"{fn}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


MAX_CODE_CHARS = 200


def source_text(site):
    """The code of the line ``site`` names (stripped, at most MAX_CODE_CHARS), or "": what lets
    ``legate_prof compare`` pair a line of two runs after the script was edited or renamed."""
    import linecache
    path, _, line = site.rpartition(":")
    if not line.isdigit():
        return ""
    return linecache.getline(path, int(line)).strip()[:MAX_CODE_CHARS]


class _Launch:
    """Context for one user-level operation: provenance scope plus an event-stream record."""

    def __init__(self, name, operands=()):
        self.name = name
        self.site = user_site()
        self.scope = Scope(provenance=self.site)
        self.operands = operands

    def __enter__(self):
        self.scope.__enter__()
        if events.has_sink():
            events.operation(self.name, self.site, source_text(self.site),
                             [operand(a, role) for a, role in self.operands
                              if isinstance(a, ndarray)])
        return self

    def __exit__(self, *exc):
        return self.scope.__exit__(*exc)


def launch(name, *reads, made=None, into=None):
    """The context of one operation: ``reads`` the arrays it reads, ``made`` the array it
    makes, ``into`` the caller's array it writes (``out=``, an assignment's target).  The
    stream records them (``operand``): what tells a loop over slices of one array from a
    time loop of whole-array operations or a loop writing ``out=``."""
    return _Launch(name, [(a, "in") for a in reads] + [(made, "new"), (into, "out")])


def operand(array, role):
    """``[array id, elements, role]`` for the stream: the id is the whole array's (a view
    names the array it is a slice of), ``elements`` the view's own (fewer than the array's:
    a slice); role "in" (read), "new" (made by the operation) or "out" (the caller's)."""
    base = array._base if array._base is not None else array
    return [getattr(base, "_id", None) or 0, array.size, role]


# The element-wise operations behind ndarray's operators (``binary``, ``compare``, ``unary``,
# ``as_array``, ``matmul``) make new arrays, so they live with the NumPy-style functions in
# ``runtime.numpy``, which registers them here when it loads: neither module imports the other
# back.
OPERATIONS = {}


def operation(name):
    """The registered element-wise operation ``name`` (loading ``runtime.numpy`` if needed)."""
    if not OPERATIONS:
        import importlib
        importlib.import_module(__package__ + ".numpy")
    return OPERATIONS[name]


def legate_type(dtype):
    try:
        return _LEGATE_TYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"dtype {dtype} is not supported by legate_prof.runtime") from None


def expanded_index(key, ndim):
    """``key`` as a tuple with its ``...`` replaced by the full slices it stands for, so each
    entry after it indexes the trailing axes (NumPy's rule: one ``...`` at most; ``None`` and
    the ``...`` itself take no axis)."""
    key = key if isinstance(key, tuple) else (key,)
    at = [k for k, entry in enumerate(key) if entry is Ellipsis]
    if len(at) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if not at:
        return key
    taken = sum(1 for entry in key if entry is not None and entry is not Ellipsis)
    return key[:at[0]] + (slice(None),) * max(ndim - taken, 0) + key[at[0] + 1:]


def checked_index(index, axis, size):
    """``index`` (negative from the end) as a position in an axis of ``size``; NumPy's
    IndexError outside it: Python's iteration stops on it, and Legate's own error for an
    out-of-range projection is a ValueError and a page of text."""
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    return int(index) + (size if index < 0 else 0)


class ndarray:
    """A view of a Legate store (or a slice of one) with NumPy semantics."""

    __array_priority__ = 1000

    def __init__(self, store, dtype, base=None, site=None):
        self.store = store  # the Legate store (a slice of one for views)
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(s) for s in store.shape)
        self._base = base
        if base is None:
            self._id = events.array_created(self.shape, self.dtype, site or user_site())

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def empty(cls, shape, dtype=np.float64, site=None):
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        site = site or user_site()
        with Scope(provenance=site):  # Legate's OOM report names the allocation site
            store = runtime().create_store(legate_type(dtype), shape=shape)
        return cls(store, dtype, site=site)

    @classmethod
    def from_numpy(cls, a):
        a = np.ascontiguousarray(a)
        out = cls.empty(a.shape if a.shape else (1,), a.dtype)
        np.asarray(out.store.get_physical_store().get_inline_allocation())[...] = \
            a.reshape(out.shape)
        return out

    def __del__(self):
        if getattr(self, "_base", 1) is None and getattr(self, "_id", None) is not None:
            try:
                events.array_released(self._id)
            except Exception:
                pass

    # ---- basics -------------------------------------------------------------------------
    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        # (the program stops here until every operation writing the array has run: Legion
        # records only part of such a wait, so the stream records all of it)
        t0 = time.time_ns() if events.has_sink() else None
        if t0 is not None:  # (its start too: a program killed while it waits says so)
            waited = (operand(self, "in")[0], user_site())
            events.value_waiting(t0, *waited)
        try:
            mapped = np.asarray(self.store.get_physical_store().get_inline_allocation())
        finally:  # (a wait an exception ended, a signal's handler raising, waited all the same)
            if t0 is not None:
                events.value_wait(t0, time.time_ns(), *waited)
        a = np.array(mapped)  # (its copy into NumPy: the program's own work, not waiting)
        return a.astype(dtype) if dtype is not None else a

    def to_numpy(self):
        return self.__array__()

    def item(self):
        return self.to_numpy().reshape(-1)[0].item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous")
        return bool(self.item())

    def __repr__(self):
        return f"legate_prof.runtime.ndarray({self.to_numpy()!r})"

    def astype(self, dtype, copy=True):
        out = ndarray.empty(self.shape, dtype)
        with launch("Convert", self, made=out):
            T.Convert(self.store, out.store)
        return out

    def copy(self):
        out = ndarray.empty(self.shape, self.dtype)
        with launch("Copy", self, made=out):
            T.Assign(self.store, out.store)
        return out

    def stencil_hint(self, low_offsets, high_offsets):
        """cuPyNumeric's hint: allocate the halo once (Legate's bloated-instance prefetch)."""
        with launch("StencilHint"):
            runtime().prefetch_bloated_instances(self.store, tuple(low_offsets),
                                                 tuple(high_offsets), False)

    def sum(self, axis=None, dtype=None):
        return self._reduce("sum", axis, dtype)

    def prod(self, axis=None, dtype=None):
        return self._reduce("prod", axis, dtype)

    def max(self, axis=None):
        return self._reduce("max", axis)

    def min(self, axis=None):
        return self._reduce("min", axis)

    def any(self, axis=None):
        """Whether any element is true (along ``axis``: an array of them), as NumPy's (a
        review: ``if (x > 0.5).any():`` raised AttributeError)."""
        return self._truth()._reduce_truth("max", axis)

    def all(self, axis=None):
        """Whether every element is true (along ``axis``: an array of them)."""
        return self._truth()._reduce_truth("min", axis)

    def _truth(self):
        return self if self.dtype == np.bool_ else self != 0

    def _reduce_truth(self, op, axis):
        if self.size == 0:  # (NumPy's: any of nothing is False, all of nothing True)
            return np.bool_(op == "min") if axis is None else \
                ndarray.from_numpy(getattr(np.asarray(self.to_numpy()), "any" if op == "max"
                                           else "all")(axis=axis))
        out = self._reduce(op, axis)
        return np.bool_(out) if axis is None else out

    def mean(self, axis=None):
        total = self._reduce("sum", axis, np.float64 if self.dtype.kind in "biu" else None)
        n = self.size if axis is None else self.shape[axis]
        return total / n

    def _reduce(self, op, axis=None, dtype=None):
        """One ``Reduce`` task; a scalar for a full reduction, an array along ``axis``."""
        if axis is not None:
            axis = int(axis) + (self.ndim if int(axis) < 0 else 0)
            if not 0 <= axis < self.ndim:
                raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of "
                                              f"dimension {self.ndim}")
        if dtype is not None:
            dt = np.dtype(dtype)
        elif op in ("sum", "prod") and self.dtype.kind in "bi":
            dt = np.dtype(np.int64)
        elif op in ("sum", "prod") and self.dtype.kind == "u":
            dt = np.dtype(np.uint64)
        else:
            dt = self.dtype
        shape = (1,) if axis is None else tuple(s for k, s in enumerate(self.shape) if k != axis)
        out = ndarray.empty(shape or (1,), dt)
        with launch("Reduce", self, made=out):
            T.Reduce(self.store, out.store, T.REDUCE.index(op), -1 if axis is None else axis)
        return out.item() if axis is None or not shape else out

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and not np.isscalar(shape[0]) else shape
        shape = tuple(int(s) for s in shape)
        if -1 in shape:
            known = int(np.prod([s for s in shape if s != -1]))
            shape = tuple(self.size // max(known, 1) if s == -1 else s for s in shape)
        if int(np.prod(shape)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {shape}")
        out = ndarray.empty(shape, self.dtype)
        with launch("Reshape", self, made=out):
            T.Reshape(self.store, out.store)
        return out

    def transpose(self, *axes):
        axes = tuple(axes[0]) if len(axes) == 1 and not np.isscalar(axes[0]) else axes
        if axes and tuple(axes) != tuple(reversed(range(self.ndim))):
            if tuple(axes) == tuple(range(self.ndim)):
                return self.copy()
            raise NotImplementedError("transpose with axes other than reversed")
        if self.ndim < 2:
            return self
        out = ndarray.empty(tuple(reversed(self.shape)), self.dtype)
        with launch("Transpose", self, made=out):
            T.Transpose(self.store, out.store)
        return out

    @property
    def T(self):
        return self.transpose()

    def __matmul__(self, other):
        return operation("matmul")(self, other)

    def __rmatmul__(self, other):
        return operation("matmul")(other, self)

    def fill(self, value):
        with launch("Fill", into=self):
            T.Fill(self.store, float(value))

    def _strided(self, key):
        """A 1-d slice with a step: (start, stop or -1, step, length), else None."""
        if self.ndim != 1 or not isinstance(key, slice) or key.step in (None, 1):
            return None
        start, stop, step = key.indices(self.shape[0])
        n = len(range(start, stop, step))
        return start, (stop if stop >= 0 else -1), step, n

    # ---- indexing -----------------------------------------------------------------------
    def _slice_view(self, key):
        """A view for an index of integers and unit-step slices (``...`` expanded), else None
        (the caller falls back); an integer outside its axis raises NumPy's IndexError."""
        store, dim = self.store, 0
        keys = expanded_index(key, self.ndim)
        for axis, k in enumerate(keys):
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (slice, int, np.integer)):
                return None
            if axis >= self.ndim:
                raise IndexError(f"too many indices for array: array is {self.ndim}-dimensional,"
                                 f" but {sum(entry is not None for entry in keys)} were indexed")
            if isinstance(k, slice):
                start, stop, step = k.indices(store.shape[dim])
                if step != 1:
                    return None
                store = store.slice(dim, slice(start, stop))
                dim += 1
            else:
                store = store.project(dim, checked_index(k, axis, store.shape[dim]))
        return ndarray(store, self.dtype, base=self._base if self._base is not None else self)

    def __iter__(self):
        """Over axis 0, as NumPy: each element of a 1-d array, each row (a view) otherwise."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, key):
        if isinstance(key, ndarray) and key.dtype == np.bool_:
            return _mask_select(self, key)
        if isinstance(key, tuple) and key and all(isinstance(k, ndarray) for k in key):
            return _gather(self, key)
        if isinstance(key, ndarray):
            return _gather(self, (key,))
        st = self._strided(key)
        if st is not None:
            out = ndarray.empty((st[3],), self.dtype)
            if st[3]:
                with launch("StridedSlice", self, made=out):
                    T.StridedSlice(self.store, out.store, *st[:3])
            return out
        view = self._slice_view(key)
        if view is None:
            return _fallback_getitem(self, key)
        if view.ndim == 0:
            return view.item()
        return view

    def __setitem__(self, key, value):
        if isinstance(key, ndarray) and key.dtype == np.bool_:
            return _mask_assign(self, key, value)
        if isinstance(key, tuple) and key and all(isinstance(k, ndarray) for k in key):
            return _scatter(self, key, value)
        if isinstance(key, ndarray):
            return _scatter(self, (key,), value)
        st = self._strided(key)
        if st is not None:
            vals = value if isinstance(value, ndarray) else \
                operation("as_array")(np.full((st[3],), value, self.dtype))
            if vals.dtype != self.dtype:
                vals = vals.astype(self.dtype)
            with launch("StridedAssign", vals, into=self):
                T.StridedAssign(self.store, vals.store, self.store, *st[:3])
            return
        view = self._slice_view(key)
        if view is None:
            raise NotImplementedError(f"assignment with index {key!r}")
        if isinstance(value, ndarray):
            if value.shape != view.shape:
                raise ValueError(f"could not broadcast {value.shape} into {view.shape}")
            with launch("Copy", value, into=view):
                T.Assign(value.store, view.store)
        else:
            with launch("Fill", into=view):
                T.Fill(view.store, float(value))

    # ---- arithmetic ---------------------------------------------------------------------
    def _bin(self, other, op, reverse=False):
        binary = operation("binary")
        return binary(op, other, self) if reverse else binary(op, self, other)

    def __add__(self, o): return self._bin(o, "add")
    def __radd__(self, o): return self._bin(o, "add", True)
    def __sub__(self, o): return self._bin(o, "subtract")
    def __rsub__(self, o): return self._bin(o, "subtract", True)
    def __mul__(self, o): return self._bin(o, "multiply")
    def __rmul__(self, o): return self._bin(o, "multiply", True)
    def __truediv__(self, o): return self._bin(o, "true_divide")
    def __rtruediv__(self, o): return self._bin(o, "true_divide", True)
    def __pow__(self, o): return self._bin(o, "power")
    def __mod__(self, o): return self._bin(o, "mod")
    def __and__(self, o): return self._bin(o, "logical_and" if self.dtype == np.bool_ else "bitwise_and")
    def __or__(self, o): return self._bin(o, "logical_or" if self.dtype == np.bool_ else "bitwise_or")
    def __xor__(self, o): return self._bin(o, "logical_xor" if self.dtype == np.bool_ else "bitwise_xor")

    def _inplace(self, other, op):
        operation("binary")(op, self, other, out=self)
        return self

    def __iadd__(self, o): return self._inplace(o, "add")
    def __isub__(self, o): return self._inplace(o, "subtract")
    def __imul__(self, o): return self._inplace(o, "multiply")
    def __itruediv__(self, o): return self._inplace(o, "true_divide")
    def __ipow__(self, o): return self._inplace(o, "power")
    def __imod__(self, o): return self._inplace(o, "mod")
    def __ifloordiv__(self, o): return self._inplace(o, "floor_divide")

    def _cmp(self, other, op):
        return operation("compare")(op, self, other)

    def __lt__(self, o): return self._cmp(o, "less")
    def __le__(self, o): return self._cmp(o, "less_equal")
    def __gt__(self, o): return self._cmp(o, "greater")
    def __ge__(self, o): return self._cmp(o, "greater_equal")
    def __eq__(self, o): return self._cmp(o, "equal")
    def __ne__(self, o): return self._cmp(o, "not_equal")

    def __neg__(self):
        return operation("unary")("negative", self)

    def __invert__(self):
        return operation("unary")("logical_not" if self.dtype == np.bool_ else "invert", self)

    __hash__ = None


def count_true(mask):
    """How many elements of a boolean array are true (one CountNonzero task)."""
    out = ndarray.empty((1,), np.int64)
    with launch("CountNonzero", mask, made=out):
        runtime().issue_fill(out.store, 0)
        T.CountNonzero(mask.store, out.store)
    return int(out.item())


def _mask_select(x, mask):
    if mask.shape != x.shape:
        raise IndexError(f"boolean index shape {mask.shape} does not match {x.shape}")
    n = count_true(mask)
    out = ndarray.empty((n,), x.dtype)
    if n:
        with launch("BoolMaskSelect", x, mask, made=out):
            T.MaskSelect(x.store, mask.store, out.store)
    return out


def _mask_assign(x, mask, value):
    if isinstance(value, ndarray):
        with launch("BoolMaskAssign", mask, value, into=x):
            T.MaskAssign(x.store, mask.store, value.store, x.store)
    else:
        with launch("PutMask", mask, into=x):
            T.PutMaskScalar(x.store, mask.store, x.store, float(value))


def _gather(x, index):
    if len(index) != 1 or x.ndim != 1:
        return _fallback_getitem(x, tuple(i.to_numpy() for i in index))
    idx = index[0]
    out = ndarray.empty(idx.shape, x.dtype)
    with launch("Gather", x, idx, made=out):
        T.Gather(x.store, idx.store, out.store)
    return out


def _scatter(x, index, value):
    if len(index) != 1 or x.ndim != 1:
        raise NotImplementedError("scatter with multi-dimensional indices")
    idx = index[0]
    vals = value if isinstance(value, ndarray) else operation("as_array")(
        np.full(idx.shape, value, x.dtype))
    with launch("Scatter", idx, vals, into=x):
        T.Scatter(x.store, idx.store, vals.store, x.store)


def _fallback_getitem(x, key):
    warnings.warn(f"legate_prof.runtime: indexing with {type(key).__name__} falls back to NumPy",
                  RuntimeWarning, stacklevel=3)
    r = x.to_numpy()[key]
    return ndarray.from_numpy(r) if isinstance(r, np.ndarray) and r.ndim else r
