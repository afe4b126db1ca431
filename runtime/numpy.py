"""The NumPy-style namespace: ``from legate_prof.runtime import numpy as np``.

Implemented functions launch Legate tasks; anything else falls back to NumPy with a warning
naming it (as cuNumeric does), converting arrays on the way in and out.
"""

from __future__ import annotations

import sys
import warnings

import numpy as _np

from . import tasks as T
from . import array as _array
from .array import launch, ndarray, runtime

# dtypes and constants pass through
float16, float32, float64 = _np.float16, _np.float32, _np.float64
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
bool_, complex64, complex128 = _np.bool_, _np.complex64, _np.complex128
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype


def _as_array(x, dtype=None):
    if isinstance(x, ndarray):
        return x
    a = _np.asarray(x, dtype=dtype)
    return ndarray.from_numpy(a)


def _result_dtype(a, b, op):
    """NumPy 2 promotion: Python scalars are weak, so float32 + 1.0 stays float32."""
    if op.startswith("logical"):
        return _np.dtype(_np.bool_)
    dt = _np.result_type(*(x.dtype if isinstance(x, ndarray) else x for x in (a, b)))
    if op == "true_divide" and dt.kind in "biu":
        return _np.dtype(_np.float64)
    return dt


def _binary(op, a, b, out=None):
    code = T.BINARY.index(op)
    _refuse_unsafe_cast(op, out, a, b)
    dt = _result_dtype(a, b, op)
    if isinstance(a, ndarray) and isinstance(b, ndarray):
        if a.shape != b.shape:
            return _fallback_call(op, a, b, out=out)
        res = out if out is not None else ndarray.empty(a.shape, dt)
        with launch("BinaryOp", a, b, **_result(res, out)):
            T.BinaryOp(a.store, b.store, res.store, code)
        return res
    arr, scal, rev = (a, b, False) if isinstance(a, ndarray) else (b, a, True)
    if not _np.isscalar(scal):
        return _binary(op, a if isinstance(a, ndarray) else _as_array(a),
                       b if isinstance(b, ndarray) else _as_array(b), out=out)
    src = arr if arr.dtype == dt else arr.astype(dt)
    res = out if out is not None else ndarray.empty(arr.shape, dt)
    with launch("BinaryOp", src, **_result(res, out)):
        T.BinaryOpScalar(src.store, _scalar_array(scal, dt), res.store, code, rev)
    return res


def _stand_in(x):
    """An empty NumPy array of ``x``'s dtype; a scalar as it is (Python's stay weak)."""
    if _is_scalar(x):
        return x
    return _np.empty(0, x.dtype if isinstance(x, ndarray) else _np.asarray(x).dtype)


def _refuse_unsafe_cast(op, out, *operands):
    """NumPy's casting error where the result cannot go into ``out`` (an in-place operand) by
    'same_kind' (``int_array += 1.5``): the task would truncate silently.  NumPy decides, on
    empty stand-ins of the operands, and raises its own exception."""
    if out is not None:
        getattr(_np, op)(*map(_stand_in, operands), out=_np.empty(0, out.dtype))


def _result(res, out):
    """``launch``'s keyword for an operation's result: the array it made, or ``out=``."""
    return {"made": res} if out is None else {"into": out}


def _scalar_array(value, dt):
    """A one-element array holding the scalar: it lives in memory like any other operand."""
    from .array import legate_type
    store = runtime().create_store(legate_type(dt), shape=(1,))
    runtime().issue_fill(store, _np.asarray(value, dtype=dt).item())
    return store


REFLECTED = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
             "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def _is_scalar(x):
    """A Python or NumPy scalar (or 0-d array): an operand the task takes as a value."""
    return not isinstance(x, ndarray) and _np.ndim(x) == 0


def _compare(op, a, b):
    """One ``Compare`` task; a scalar first operand compares reflected (``1 < a`` is
    ``a > 1``), and a NumPy array or a list operand becomes an array first."""
    if not isinstance(a, ndarray) and not isinstance(b, ndarray):
        return getattr(_np, op)(a, b)
    if _is_scalar(a):
        return _compare(REFLECTED[op], b, a)
    code = T.COMPARE.index(op)
    a, b = _as_array(a), (b if _is_scalar(b) else _as_array(b))
    if isinstance(b, ndarray):
        if a.shape != b.shape:
            return _fallback_call(op, a, b)
        res = ndarray.empty(a.shape, _np.bool_)
        with launch("Compare", a, b, made=res):
            T.Compare(a.store, b.store, res.store, code)
        return res
    res = ndarray.empty(a.shape, _np.bool_)
    with launch("Compare", a, made=res):
        T.CompareScalar(a.store, res.store, code, float(b))
    return res


def _unary(op, a, out=None):
    _refuse_unsafe_cast(op, out, a)
    dt = a.dtype if op not in ("sqrt", "exp", "log", "sin", "cos") or a.dtype.kind == "f" \
        else _np.dtype(_np.float64)
    res = out if out is not None else ndarray.empty(a.shape, dt)
    with launch("UnaryOp", a, **_result(res, out)):
        T.UnaryOp(a.store, res.store, T.UNARY.index(op))
    return res


def _ufunc2(op):
    def f(a, b, out=None):
        if not isinstance(a, ndarray) and not isinstance(b, ndarray):
            return getattr(_np, op)(a, b)
        return _binary(op, a, b, out=out)
    f.__name__ = op
    return f


def _ufunc1(op):
    def f(a, out=None):
        return _unary(op, _as_array(a), out=out)
    f.__name__ = op
    return f


for _op in T.BINARY:
    setattr(sys.modules[__name__], _op, _ufunc2(_op))
for _op in T.UNARY:
    setattr(sys.modules[__name__], _op, _ufunc1(_op))
divide = true_divide  # noqa: F821
abs = absolute  # noqa: F821


def less(a, b): return _compare("less", a, b)
def less_equal(a, b): return _compare("less_equal", a, b)
def greater(a, b): return _compare("greater", a, b)
def greater_equal(a, b): return _compare("greater_equal", a, b)
def equal(a, b): return _compare("equal", a, b)
def not_equal(a, b): return _compare("not_equal", a, b)


# ---- creation ---------------------------------------------------------------------------
def empty(shape, dtype=float64):
    return ndarray.empty(shape, dtype)


def full(shape, fill_value, dtype=None):
    dt = dtype or (_np.float64 if isinstance(fill_value, float) else _np.asarray(fill_value).dtype)
    a = ndarray.empty(shape, dt)
    # a lazy Legion fill, as cuNumeric does: no instance until something uses the array
    with launch("Fill", made=a):
        runtime().issue_fill(a.store, _np.asarray(fill_value, dtype=dt).item())
    return a


def zeros(shape, dtype=float64):
    return full(shape, 0, dtype)


def ones(shape, dtype=float64):
    return full(shape, 1, dtype)


def empty_like(a, dtype=None):
    return ndarray.empty(a.shape, dtype or a.dtype)


def zeros_like(a, dtype=None):
    return zeros(a.shape, dtype or a.dtype)


def ones_like(a, dtype=None):
    return ones(a.shape, dtype or a.dtype)


def array(obj, dtype=None):
    if isinstance(obj, ndarray):
        return obj.copy() if dtype is None else obj.astype(dtype)
    return ndarray.from_numpy(_np.asarray(obj, dtype=dtype))


def asarray(obj, dtype=None):
    if isinstance(obj, ndarray) and (dtype is None or obj.dtype == dtype):
        return obj
    return array(obj, dtype)


def arange(*args, dtype=None):
    return ndarray.from_numpy(_np.arange(*args, dtype=dtype))


# ---- masks, selection, reductions ------------------------------------------------------
def putmask(a, mask, values):
    if isinstance(values, ndarray):
        if values.shape != a.shape:
            raise ValueError("putmask: values must have the array's shape")
        with launch("PutMask", mask, values, into=a):
            T.PutMask(a.store, mask.store, values.store, a.store)
    else:
        with launch("PutMask", mask, into=a):
            T.PutMaskScalar(a.store, mask.store, a.store, float(values))


def where(cond, a, b):
    a = a if isinstance(a, ndarray) else full(cond.shape, a)
    b = b if isinstance(b, ndarray) else full(cond.shape, b)
    out = ndarray.empty(cond.shape, _np.result_type(a.dtype, b.dtype))
    with launch("Where", cond, a, b, made=out):
        T.Where(cond.store, a.store, b.store, out.store)
    return out


def count_nonzero(a):
    return _array.count_true(a)


def nonzero(a):
    if a.ndim != 1:
        return tuple(ndarray.from_numpy(i) for i in _np.nonzero(a.to_numpy()))
    n = _array.count_true(a)
    out = ndarray.empty((n,), _np.int64)
    if n:
        with launch("Nonzero", a, made=out):
            T.Nonzero(a.store, out.store)
    return (out,)


def sum(a, axis=None, dtype=None):
    a = _as_array(a)
    if axis is not None:
        return a.sum(axis=axis, dtype=dtype)
    dt = _np.dtype(dtype) if dtype else (a.dtype if a.dtype.kind in "fc" else _np.dtype(_np.int64))
    out = ndarray.empty((1,), dt)
    with launch("Sum", a, made=out):
        runtime().issue_fill(out.store, 0)
        T.Sum(a.store, out.store)
    return out.item()


def mean(a, axis=None):
    return _as_array(a).mean(axis=axis)


def prod(a, axis=None, dtype=None):
    return _as_array(a).prod(axis=axis, dtype=dtype)


def amax(a, axis=None):
    return _as_array(a).max(axis=axis)


def amin(a, axis=None):
    return _as_array(a).min(axis=axis)


max = amax  # noqa: A001
min = amin  # noqa: A001


def reshape(a, shape):
    return _as_array(a).reshape(shape)


def transpose(a, axes=None):
    return _as_array(a).transpose(*(() if axes is None else (axes,)))


def matmul(a, b):
    """One ``MatMul`` task (1-d or 2-d operands, NumPy's shapes and promotion)."""
    a, b = _as_array(a), _as_array(b)
    if a.ndim not in (1, 2) or b.ndim not in (1, 2):
        return _fallback_call("matmul", a, b)
    if a.shape[-1] != b.shape[0]:
        raise ValueError(f"matmul: mismatch in core dimension ({a.shape} @ {b.shape})")
    shape = a.shape[:-1] + b.shape[1:]
    dt = _np.result_type(a.dtype, b.dtype)
    out = ndarray.empty(shape or (1,), dt)
    with launch("MatMul", a, b, made=out):
        T.MatMul(a.store, b.store, out.store)
    return out.item() if not shape else out


dot = matmul


def any(a, axis=None):
    return _as_array(a).any(axis=axis)


def all(a, axis=None):
    return _as_array(a).all(axis=axis)


def allclose(a, b, rtol=1e-05, atol=1e-08):
    return _np.allclose(_np.asarray(a), _np.asarray(b), rtol=rtol, atol=atol)


# ---- random -----------------------------------------------------------------------------
class _Random:
    """``np.random``: ``random(n)`` and ``default_rng().random(n, dtype=)``."""

    def __init__(self):
        self._seed = 12345
        self._calls = 0

    def seed(self, s):
        self._seed = int(s)

    def _next_seed(self):
        self._calls += 1
        return self._seed * 1_000_003 + self._calls

    def random(self, size=None, dtype=float64):
        if size is None:
            return _np.random.default_rng(self._next_seed()).random()
        out = ndarray.empty(size, dtype)
        with launch("Random", made=out):
            T.Random(out.store, self._next_seed())
        return out

    def default_rng(self, seed=None):
        g = _Random()
        g._seed = self._next_seed() if seed is None else int(seed)
        return g


random = _Random()


# ---- NumPy fallback ---------------------------------------------------------------------
def _to_numpy(x):
    if isinstance(x, ndarray):
        return x.to_numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_numpy(v) for v in x)
    return x


def _from_numpy(x):
    if isinstance(x, _np.ndarray) and x.ndim:
        return ndarray.from_numpy(x)
    if isinstance(x, tuple):
        return tuple(_from_numpy(v) for v in x)
    return x


def _fallback_call(name, *args, **kwargs):
    warnings.warn(f"legate_prof.runtime: numpy.{name} is not implemented; falling back to "
                  "NumPy", RuntimeWarning, stacklevel=3)
    out = kwargs.pop("out", None)
    r = getattr(_np, name)(*_to_numpy(args), **{k: _to_numpy(v) for k, v in kwargs.items()})
    res = _from_numpy(r)
    if out is not None:
        out[...] = res
        return out
    return res


def __getattr__(name):
    attr = getattr(_np, name)  # AttributeError for names NumPy lacks too
    if not callable(attr) or isinstance(attr, type):
        return attr

    def fallback(*args, **kwargs):
        return _fallback_call(name, *args, **kwargs)
    fallback.__name__ = name
    return fallback


# under `legate --profile`, record operations and arrays as they happen (crash-safe)
from .stream import maybe_start as _maybe_start  # noqa: E402

_maybe_start()


_array.OPERATIONS.update(binary=_binary, compare=_compare, unary=_unary, as_array=_as_array,
                        matmul=matmul)
