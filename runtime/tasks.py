"""The Legate tasks behind every array operation: a NumPy CPU variant and, where CuPy is
installed, a CuPy GPU variant running the same body.

Task names are what users see in the profile (``BinaryOp``, ``Compare``, ``PutMask`` …), so
each variant function is given that name before it is registered.  Elementwise tasks align
their arguments and Legate partitions them across the CPUs; tasks whose output size depends on
the data (``Nonzero``, boolean selection) or that index anywhere (``Gather``/``Scatter``) see
their data whole (``broadcast``).
"""

from __future__ import annotations

import functools
import threading

import numpy
from legate.core import VariantCode, align, broadcast
from legate.core.task import ADD, InputStore, OutputStore, PyTask, ReductionStore

try:  # GPU variants only where CuPy is importable (legate maps them onto GPUs if present)
    import cupy
except ImportError:  # pragma: no cover - depends on the machine
    cupy = None

BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "power", "maximum",
          "minimum", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_xor", "mod"]
COMPARE = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal"]
UNARY = ["negative", "invert", "logical_not", "absolute", "sqrt", "exp", "log", "sin", "cos",
         "square"]


_variant = threading.local()


class _ArrayModule:
    """``np`` inside a task body: NumPy in the CPU variant, CuPy in the GPU variant."""

    def __getattr__(self, name):
        return getattr(getattr(_variant, "xp", numpy), name)


np = _ArrayModule()


def _arr(store):
    return np.asarray(store.get_inline_allocation())


def on_device(fn, xp):
    """The same task body with ``np`` bound to ``xp`` (CuPy for the GPU variant)."""
    @functools.wraps(fn)
    def variant(*args, **kwargs):
        prev = getattr(_variant, "xp", numpy)
        _variant.xp = xp
        try:
            return fn(*args, **kwargs)
        finally:
            _variant.xp = prev
    return variant


def _named(name, fn, constraints=()):
    fn.__name__ = name
    fn.__qualname__ = name
    flat = [c for group in constraints for c in (group if isinstance(group, list) else [group])]
    t = PyTask(func=fn, variants=(VariantCode.CPU,), constraints=flat or None)
    if cupy is not None:
        t.gpu_variant(on_device(fn, cupy))
    t.complete_registration()
    return t


def _binary(a: InputStore, b: InputStore, out: OutputStore, op: int) -> None:
    o = _arr(out)
    o[...] = getattr(np, BINARY[op])(_arr(a), _arr(b))


def _binary_scalar(a: InputStore, scalar: InputStore, out: OutputStore, op: int,
                   reverse: bool) -> None:
    x = _arr(a)
    v = _arr(scalar).reshape(-1)[0]
    f = getattr(np, BINARY[op])
    _arr(out)[...] = f(v, x) if reverse else f(x, v)


def _compare(a: InputStore, b: InputStore, out: OutputStore, op: int) -> None:
    _arr(out)[...] = getattr(np, COMPARE[op])(_arr(a), _arr(b))


def _compare_scalar(a: InputStore, out: OutputStore, op: int, value: float) -> None:
    _arr(out)[...] = getattr(np, COMPARE[op])(_arr(a), value)


def _unary(a: InputStore, out: OutputStore, op: int) -> None:
    _arr(out)[...] = getattr(np, UNARY[op])(_arr(a))


def _convert(a: InputStore, out: OutputStore) -> None:
    o = _arr(out)
    o[...] = _arr(a).astype(o.dtype)


def _assign(src: InputStore, out: OutputStore) -> None:
    _arr(out)[...] = _arr(src)


def _fill(out: OutputStore, value: float) -> None:
    _arr(out)[...] = value


def _random(out: OutputStore, seed: int) -> None:
    o = _arr(out)
    lo = out.domain.lo[0] if len(o.shape) else 0
    rng = np.random.default_rng(int(seed) * 1_000_003 + int(lo))  # CuPy takes one int
    o[...] = rng.random(o.shape, dtype=o.dtype if o.dtype in (numpy.float32, numpy.float64)
                        else numpy.float64)


def _putmask(z: InputStore, mask: InputStore, values: InputStore, out: OutputStore) -> None:
    o = _arr(out)
    o[...] = np.where(_arr(mask), _arr(values), _arr(z))


def _putmask_scalar(z: InputStore, mask: InputStore, out: OutputStore, value: float) -> None:
    o = _arr(out)
    o[...] = np.where(_arr(mask), value, _arr(z))


def _count_nonzero(x: InputStore, out: ReductionStore[ADD]) -> None:
    _arr(out)[...] += np.count_nonzero(_arr(x))


def _nonzero(x: InputStore, out: OutputStore) -> None:
    _arr(out)[...] = np.flatnonzero(_arr(x))


def _mask_select(x: InputStore, mask: InputStore, out: OutputStore) -> None:
    _arr(out)[...] = _arr(x)[_arr(mask)]


def _mask_assign(x: InputStore, mask: InputStore, values: InputStore, out: OutputStore) -> None:
    o = _arr(out)
    m = _arr(mask)
    o[...] = _arr(x)
    o[m] = _arr(values)


def _gather(x: InputStore, index: InputStore, out: OutputStore) -> None:
    _arr(out)[...] = _arr(x)[_arr(index)]


def _scatter(x: InputStore, index: InputStore, values: InputStore, out: OutputStore) -> None:
    o = _arr(out)
    o[...] = _arr(x)
    o[_arr(index)] = _arr(values)


def _sum(x: InputStore, out: ReductionStore[ADD]) -> None:
    _arr(out)[...] += _arr(x).sum(dtype=_arr(out).dtype)


def _where(mask: InputStore, a: InputStore, b: InputStore, out: OutputStore) -> None:
    _arr(out)[...] = np.where(_arr(mask), _arr(a), _arr(b))


BinaryOp = _named("BinaryOp", _binary, (align("a", "b"), align("a", "out")))
BinaryOpScalar = _named("BinaryOp", _binary_scalar, (align("a", "out"), broadcast("scalar")))
Compare = _named("Compare", _compare, (align("a", "b"), align("a", "out")))
CompareScalar = _named("Compare", _compare_scalar, (align("a", "out"),))
UnaryOp = _named("UnaryOp", _unary, (align("a", "out"),))
Convert = _named("Convert", _convert, (align("a", "out"),))
Fill = _named("Fill", _fill)
Assign = _named("Copy", _assign, (align("src", "out"),))
Random = _named("Random", _random)
PutMask = _named("PutMask", _putmask, (align("z", "mask"), align("z", "values"),
                                         align("z", "out")))
PutMaskScalar = _named("PutMask", _putmask_scalar, (align("z", "mask"), align("z", "out")))
CountNonzero = _named("CountNonzero", _count_nonzero)
Nonzero = _named("Nonzero", _nonzero, (broadcast("x"), broadcast("out")))
MaskSelect = _named("BoolMaskSelect", _mask_select,
                    (broadcast("x"), broadcast("mask"), broadcast("out")))
MaskAssign = _named("BoolMaskAssign", _mask_assign,
                    (broadcast("x"), broadcast("mask"), broadcast("values"), broadcast("out")))
Gather = _named("Gather", _gather, (broadcast("x"), align("index", "out")))
Scatter = _named("Scatter", _scatter,
                 (broadcast("x"), broadcast("index"), broadcast("values"), broadcast("out")))
Sum = _named("Sum", _sum)
Where = _named("Where", _where, (align("mask", "a"), align("mask", "b"), align("mask", "out")))


# ---- the ndarray methods people write first: each sees its data whole (broadcast) ----------
REDUCE = ["sum", "prod", "max", "min"]


def _reduce(x: InputStore, out: OutputStore, op: int, axis: int) -> None:
    a = _arr(x)
    r = getattr(np, REDUCE[op])(a, axis=None if axis < 0 else axis)
    _arr(out)[...] = np.reshape(np.asarray(r, dtype=_arr(out).dtype), _arr(out).shape)


def _reshape(x: InputStore, out: OutputStore) -> None:
    _arr(out)[...] = np.reshape(_arr(x), _arr(out).shape)


def _transpose(x: InputStore, out: OutputStore) -> None:
    _arr(out)[...] = np.transpose(_arr(x))


def _matmul(a: InputStore, b: InputStore, out: OutputStore) -> None:
    _arr(out)[...] = np.reshape(np.matmul(_arr(a), _arr(b)), _arr(out).shape)


def _strided_get(x: InputStore, out: OutputStore, start: int, stop: int, step: int) -> None:
    _arr(out)[...] = _arr(x)[start:(None if stop < 0 else stop):step]


def _strided_set(x: InputStore, values: InputStore, out: OutputStore, start: int, stop: int,
                 step: int) -> None:
    o = _arr(out)
    o[...] = _arr(x)
    o[start:(None if stop < 0 else stop):step] = _arr(values)


Reduce = _named("Reduce", _reduce, (broadcast("x"), broadcast("out")))
Reshape = _named("Reshape", _reshape, (broadcast("x"), broadcast("out")))
Transpose = _named("Transpose", _transpose, (broadcast("x"), broadcast("out")))
MatMul = _named("MatMul", _matmul, (broadcast("a"), broadcast("b"), broadcast("out")))
StridedSlice = _named("StridedSlice", _strided_get, (broadcast("x"), broadcast("out")))
StridedAssign = _named("StridedAssign", _strided_set,
                       (broadcast("x"), broadcast("values"), broadcast("out")))
