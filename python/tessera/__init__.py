"""tessera: CPU kernels whose results depend on the operands' values alone.

Every result is the same, bit for bit, whatever the array's layout (strides,
order, alignment), the number of threads (``threads=``) or the instruction
set tier (``tier=``: ``"scalar"``, ``"avx2"``, ``"avx512"``). Arrays are numpy
arrays (and ml_dtypes' narrow floats and int4/uint4), read in place; results
are new arrays or go to ``out=``, and a refused call writes nothing. The GIL
is released while a kernel runs (an elementwise call of under 16384 elements
keeps it: it ends sooner than another thread could take it).

Families: the elementwise kinds (:func:`add`, :func:`exp`, … one function per
kind of :func:`kinds`), :func:`cast`, :func:`map` and :class:`MapPlan`, the
reductions (:func:`sum`, :func:`prod`, :func:`max`, :func:`min`,
:func:`argmax`, :func:`argmin`, :func:`logsumexp`, :func:`mean`, :func:`var`,
:func:`std`), the scans (:func:`cumsum`, :func:`cumprod`, :func:`cummax`,
:func:`cummin`, :func:`scan`), :func:`contract` and :func:`matmul`,
:mod:`tessera.fft`, :func:`sort`, :func:`argsort` and :func:`unique`.
Errors are :mod:`tessera.errors` classes.
"""

from __future__ import annotations

import builtins as _builtins

import numpy as np

from . import _native, errors
from ._arrays import (
    Result as _Result,
    as_array as _as_array,
    is_scalar as _is_scalar,
    numpy_dtype,
    operand as _operand,
    tessera_dtype,
)
from .errors import ArgumentError, DTypeError, ShapeError, TesseraError

__version__ = _native.__version__

__all__ = [
    "TesseraError",
    "apply",
    "dot2",
    "l1_distance",
    "squared_distance",
    "sum_squares",
    "vecdot",
    "bytes",
    "convolve",
    "correlate",
    "intersect1d",
    "median",
    "quantile",
    "searchsorted",
    "series",
    "setdiff1d",
    "attention",
    "dequantize",
    "formats",
    "gather",
    "linalg",
    "quantize",
    "random",
    "scatter",
    "take_along_axis",
    "argmax",
    "argmin",
    "argsort",
    "cast",
    "contract",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "dtypes",
    "errors",
    "fft",
    "kinds",
    "logsumexp",
    "map",
    "MapPlan",
    "matmul",
    "max",
    "mean",
    "min",
    "numpy_dtype",
    "prod",
    "reduce",
    "scan",
    "sort",
    "std",
    "sum",
    "tessera_dtype",
    "tiers",
    "unique",
    "var",
]


# --------------------------------------------------------------------------
# The catalogue


def dtypes() -> list[str]:
    """The names of every tessera dtype (``tessera_dtype``/``numpy_dtype`` map them)."""
    return [row[0] for row in _native.dtypes()]


def kinds() -> list[str]:
    """The names of every elementwise kind; each is a function of this module
    (``min`` and ``max`` as :func:`minimum` and :func:`maximum`)."""
    return [row[0] for row in _native.kinds()]


def tiers() -> dict:
    """``{"available": [...], "all": [...], "default": name}``: the tiers this
    CPU runs, every tier, and the one a call takes without ``tier=``."""
    rows, default = _native.tiers()
    return {
        "available": [n for n, ok in rows if ok],
        "all": [n for n, _ in rows],
        "default": default,
    }


# --------------------------------------------------------------------------
# Elementwise kinds


_KINDS = {row[0]: row for row in _native.kinds()}


def _ref_dtype(args):
    for a in args:
        if isinstance(a, np.ndarray) and a.dtype != np.bool_:
            return a.dtype
    for a in args:
        if isinstance(a, np.ndarray):
            return a.dtype
    return None


def apply(kind: str, *args, out=None, threads=None, tier=None):
    """Apply the elementwise kind named ``kind`` to ``args`` (broadcast).

    A Python number takes the dtype of the array operands (a complex
    operand's component dtype for ``scale``'s real factor). The result's
    dtype is the kind's (``tessera.kinds()``); with ``out=`` it goes there,
    which must have the broadcast shape and that dtype.
    """
    if kind not in _KINDS:
        raise ArgumentError(f"unknown kind {kind!r}")
    arity = _KINDS[kind][1]
    if len(args) != arity:
        raise ArgumentError(f"{kind} takes {arity} operand(s), {len(args)} given")
    ref = _ref_dtype(args)
    arrays = []
    for i, a in enumerate(args):
        like = ref
        if (
            kind == "scale"
            and i == 1
            and ref is not None
            and ref.kind == "c"
            and _is_scalar(a)
        ):
            like = np.dtype(np.float32 if ref == np.complex64 else np.float64)
        arrays.append(_as_array(a, like))
    names = [tessera_dtype(a.dtype) for a in arrays]
    _call, result = _native.call_dtypes(kind, names)
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError as e:
        raise ShapeError(str(e)) from None
    return _padded_call(
        arrays, shape, result, out,
        lambda ops, dst: _native.elementwise(kind, ops, dst, threads=threads, tier=tier),
    )


def _padded_call(arrays, shape, result, out, run):
    """``run(operands, destination)`` over ``arrays`` broadcast to ``shape``.

    tessera packs the sub-byte dtypes along the last axis, which must then
    hold whole bytes. Where it does not (three int4 values), the elementwise
    call runs on that axis padded with zero codes to whole bytes and the
    padding is dropped from the result (each element is computed from its
    own operands' elements alone, so the rest is unchanged).
    """
    from ._arrays import per_byte

    vpb = _builtins.max(
        [per_byte(tessera_dtype(a.dtype)) for a in arrays] + [per_byte(result)]
    )
    last = shape[-1] if shape else 1
    if vpb == 1 or last <= 1 or last % vpb == 0:
        res = _Result(shape, result, out)
        run([_operand(a) for a in arrays], res.native)
        return res.finish()
    width = -(-last // vpb) * vpb
    padded = []
    for a in arrays:
        if a.ndim and a.shape[-1] == last:
            fill = np.zeros((*a.shape[:-1], width - last), a.dtype)
            a = np.concatenate([a, fill], axis=-1)
        padded.append(a)
    res = _Result((*shape[:-1], width), result)
    if out is not None:
        _Result(shape, result, out)  # out's dtype and shape, checked before the call
    run([_operand(a) for a in padded], res.native)
    r = res.finish()[..., :last]
    if out is not None:
        out[...] = r
        return out
    return np.ascontiguousarray(r)


def _make_kind(name: str, public: str):
    """The callable of one kind: native (``_native.Ufunc``) for numpy arrays
    of whole-byte dtypes, :func:`apply` for everything else."""
    _, arity, accepts, accuracy, doc = _KINDS[name]
    params = ", ".join(f"x{i}" for i in range(arity))

    def slow(args, out, threads, tier):
        return apply(name, *args, out=out, threads=threads, tier=tier)

    text = (
        f"{public}({params}, out=None, threads=None, tier=None)\n\n{doc}\n\n"
        f"Accepts {', '.join(accepts)} operands; accuracy: {accuracy}. "
        "See :func:`apply` for broadcasting, Python numbers and ``out=``."
    )
    f = _native.Ufunc(name, slow, public)
    f.__doc__ = text
    return f


def _register_dtypes():
    from ._arrays import DTYPES

    pairs = []
    for n in DTYPES:
        try:
            pairs.append((n, numpy_dtype(n)))
        except DTypeError:
            pass  # no numpy or ml_dtypes type: reached through apply() alone
    _native.register_dtypes(pairs)


_register_dtypes()

_RENAMED = {"min": "minimum", "max": "maximum"}
for _k in _KINDS:
    _public = _RENAMED.get(_k, _k)
    globals()[_public] = _make_kind(_k, _public)
    __all__.append(_public)

# numpy's names for the same kinds.
_NUMPY_NAMES = {
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "negative": "neg",
    "absolute": "abs",
    "equal": "eq",
    "not_equal": "ne",
    "less": "lt",
    "less_equal": "le",
    "greater": "gt",
    "greater_equal": "ge",
    "power": "pow",
    "conjugate": "conj",
    "invert": "bitwise_not",
    "left_shift": "shl",
    "right_shift": "shr",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
}
for _alias, _k in _NUMPY_NAMES.items():
    if _k in _KINDS:
        globals()[_alias] = _make_kind(_k, _alias)
        __all__.append(_alias)


# --------------------------------------------------------------------------
# Casts and map programs


def cast(x, dtype, mode: str = "default", out=None, threads=None, tier=None):
    """``x`` converted to ``dtype`` (any tessera dtype, by name or numpy type).

    ``mode="default"`` follows ml_dtypes' rules (round to nearest even; values
    beyond a format's range become its overflow value); ``"saturating"``
    clamps them to the largest finite value.
    """
    x = _as_array(x)
    return _padded_call(
        [x], x.shape, tessera_dtype(dtype), out,
        lambda ops, dst: _native.cast(ops[0], dst, mode=mode, threads=threads, tier=tier),
    )


class MapPlan:
    """A fused elementwise program parsed and typed once.

    ``text`` is tessera's program text: statements ``name = expression``
    separated by ``;``, over the inputs ``x0, x1, …`` with kind calls and
    operators (``exp(x0)``, ``x0 * x1 + x1``, ``cast(x0, f32)``), outputs
    ``y0, y1, …`` (``"t = x0 * x1; y0 = t + x1; y1 = exp(t)"``). ``dtypes`` are the
    inputs' dtypes. The results have the bits of the single-kind calls
    composed node by node.
    """

    def __init__(self, text: str, dtypes):
        self._program = _native.Program(text, [tessera_dtype(d) for d in dtypes])

    @property
    def input_dtypes(self) -> list[str]:
        return self._program.input_dtypes()

    @property
    def output_dtypes(self) -> list[str]:
        return self._program.output_dtypes()

    def __str__(self) -> str:
        return str(self._program)

    def __call__(self, *operands, out=None, threads=None, tier=None):
        """Run over ``operands`` (broadcast); one array per output, a tuple
        where the program has several (``out=`` likewise)."""
        ins = self.input_dtypes
        if len(operands) != len(ins):
            raise ArgumentError(f"the program takes {len(ins)} inputs, {len(operands)} given")
        arrays = [
            _as_array(a, numpy_dtype(d) if _is_scalar(a) else None)
            for a, d in zip(operands, ins)
        ]
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError as e:
            raise ShapeError(str(e)) from None
        outs = self.output_dtypes
        if out is not None and not isinstance(out, tuple):
            out = (out,)
        if out is not None and len(out) != len(outs):
            raise ArgumentError(f"the program has {len(outs)} outputs, out= gives {len(out)}")
        results = [
            _Result(shape, d, None if out is None else out[i]) for i, d in enumerate(outs)
        ]
        self._program.run(
            [_operand(a) for a in arrays],
            [r.native for r in results],
            threads=threads,
            tier=tier,
        )
        done = tuple(r.finish() for r in results)
        return done[0] if len(done) == 1 else done


def map(text: str, *operands, out=None, threads=None, tier=None):
    """Run the program ``text`` over ``operands`` once (see :class:`MapPlan`;
    plan it once with ``MapPlan`` to run it many times)."""
    dts = [
        tessera_dtype(_as_array(a).dtype) if not _is_scalar(a) else None for a in operands
    ]
    ref = next((d for d in dts if d is not None), "f64")
    plan = MapPlan(text, [d or ref for d in dts])
    return plan(*operands, out=out, threads=threads, tier=tier)


# --------------------------------------------------------------------------
# Reductions and scans


def _axes(axis, ndim: int) -> list[int]:
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ShapeError(f"axis {a} is out of range for an array of rank {ndim}")
        out.append(a % ndim if ndim else a)
    return out


def _scalar_or_array(r: np.ndarray):
    return r[()] if r.ndim == 0 else r


def reduce(op: str, x, axis=None, keepdims=False, dtype=None, out=None, threads=None, tier=None):
    """Reduce ``x`` by ``op`` (``sum``, ``prod``, ``max``, ``min``, ``argmax``,
    ``argmin``, ``logsumexp``, ``mean``, ``variance``, ``l2norm``, ``sum2``)
    over ``axis`` (None: every axis; an int or a tuple), in tessera's fixed
    lane order (the same bits for every layout, thread count and tier).

    The result has ``x``'s dtype (``dtype=`` another; int64 for the Arg
    reductions: positions in C order over the reduced axes). A full
    reduction without ``keepdims`` returns a numpy scalar.
    """
    x = _as_array(x)
    axes = _axes(axis, x.ndim)
    shape, rdt = _native.reduce_shape(op, axes, list(x.shape), tessera_dtype(x.dtype))
    if dtype is not None and op not in ("argmax", "argmin"):
        rdt = tessera_dtype(dtype)
    if keepdims:
        shape = [1 if i in axes else n for i, n in enumerate(x.shape)]
    res = _Result(shape, rdt, out)
    _native.reduce([op], axes, _operand(x), [res.native], threads=threads, tier=tier)
    r = res.finish()
    return r if out is not None else _scalar_or_array(r)


def _reduction(op: str, doc: str, public: str):
    """The callable of one reduction: native (``_native.Reducer``) for a
    numpy array of a whole-byte dtype without ``dtype=`` or ``out=``,
    :func:`reduce` for everything else."""

    def slow(x, axis, keepdims, dtype, out, threads, tier):
        return reduce(op, x, axis, keepdims, dtype, out, threads, tier)

    f = _native.Reducer(op, slow, public)
    f.__doc__ = (
        f"{public}(x, axis=None, keepdims=False, dtype=None, out=None, threads=None, tier=None)"
        f"\n\n{doc}\n\nSee :func:`reduce` for the keywords and the order."
    )
    return f


sum = _reduction("sum", "The sum (lane order for floats and complex; wrapping for integers).", "sum")
prod = _reduction("prod", "The product (lane order for floats and complex; wrapping for integers).", "prod")
max = _reduction("max", "The IEEE 754-2019 maximum (a NaN wins).", "max")
min = _reduction("min", "The IEEE 754-2019 minimum (a NaN wins).", "min")
logsumexp = _reduction("logsumexp", "ln Σ exp x, in two passes (floats).", "logsumexp")
mean = _reduction("mean", "The mean (floats).", "mean")
var = _reduction("variance", "The variance about the mean, divided by n (floats; numpy's ddof=0).", "var")


def std(x, axis=None, keepdims=False, dtype=None, out=None, threads=None, tier=None):
    """The square root of :func:`var` (two roundings: the variance's, then the root's)."""
    v = var(x, axis, keepdims, dtype, None, threads, tier)
    v = np.asarray(v)
    return _scalar_or_array(apply("sqrt", v, out=out, threads=threads, tier=tier))


def argmax(x, axis=None, keepdims=False, out=None, threads=None, tier=None):
    """The position (int64) of the first maximum (a NaN the largest, -0 below
    +0); over several axes (None: all) the C-order position among them."""
    return reduce("argmax", x, axis, keepdims, None, out, threads, tier)


def argmin(x, axis=None, keepdims=False, out=None, threads=None, tier=None):
    """The position (int64) of the first minimum (a NaN the smallest)."""
    return reduce("argmin", x, axis, keepdims, None, out, threads, tier)


def scan(op: str, x, axis=-1, dtype=None, out=None, threads=None, tier=None):
    """The running ``op`` (``sum``, ``prod``, ``max``, ``min``, ``argmax``,
    ``argmin``, ``logsumexp``, ``mean``, ``variance``, ``sum_doubling``,
    ``prod_doubling``) of ``x`` along ``axis`` (None: ``x`` flattened), in
    tessera's chunked order with carries. The result has ``x``'s dtype
    (``dtype=`` another; int64 for the Arg scans)."""
    x = _as_array(x)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    (ax,) = _axes(axis, x.ndim) if x.ndim else (0,)
    fixed, _carrier = _native.scan_dtype(op, ax, list(x.shape), tessera_dtype(x.dtype))
    rdt = fixed or (tessera_dtype(dtype) if dtype is not None else tessera_dtype(x.dtype))
    res = _Result(x.shape, rdt, out)
    _native.scan(op, ax, _operand(x), res.native, threads=threads, tier=tier)
    return res.finish()


def cumsum(x, axis=None, dtype=None, out=None, threads=None, tier=None):
    """The running sum along ``axis`` (None: flattened), as numpy's cumsum."""
    return scan("sum", x, axis, dtype, out, threads, tier)


def cumprod(x, axis=None, dtype=None, out=None, threads=None, tier=None):
    """The running product along ``axis`` (None: flattened)."""
    return scan("prod", x, axis, dtype, out, threads, tier)


def cummax(x, axis=None, dtype=None, out=None, threads=None, tier=None):
    """The running IEEE 754-2019 maximum along ``axis`` (None: flattened)."""
    return scan("max", x, axis, dtype, out, threads, tier)


def cummin(x, axis=None, dtype=None, out=None, threads=None, tier=None):
    """The running IEEE 754-2019 minimum along ``axis`` (None: flattened)."""
    return scan("min", x, axis, dtype, out, threads, tier)


# --------------------------------------------------------------------------
# Contractions


def _same_float(a: np.ndarray, b: np.ndarray):
    if a.dtype == b.dtype and a.dtype.kind in "fcV":
        return tessera_dtype(a.dtype)
    return None


def contract(spec: str, a, b, acc=None, dtype=None, out=None, threads=None, tier=None):
    """The contraction ``spec`` of ``a`` and ``b``, written as einsum's
    subscripts: ``"ij,jk->ik"``, ``"bij,bjk->bik"``, ``"ik,jk->ij"``.

    Each letter of both operands and the result is a batch axis; of both
    operands only, a contracted one; of one operand and the result, a row
    (``a``) or column (``b``) axis. Every letter of an operand must be in
    the other operand or the result. Accumulated in ``acc`` (default:
    :func:`tessera.contract`'s rule, f32 for f32 and narrower floats, f64
    for f64, i32/i64 for integers, complex where either is), in tessera's
    chain order along the contracted axes; the result has the inputs'
    dtype where they share a float or complex dtype, else ``acc``
    (``dtype=`` another).
    """
    a, b = _as_array(a), _as_array(b)
    try:
        ins, res_letters = spec.replace(" ", "").split("->")
        la, lb = ins.split(",")
    except ValueError:
        raise ArgumentError(f"contract spec {spec!r}: expected 'ab,bc->ac'") from None
    for s, arr, nm in ((la, a, "a"), (lb, b, "b")):
        if len(s) != arr.ndim or len(set(s)) != len(s):
            raise ShapeError(
                f"contract spec {spec!r}: {nm} has rank {arr.ndim}, its subscripts {s!r}"
            )
    if len(set(res_letters)) != len(res_letters):
        raise ArgumentError(f"contract spec {spec!r}: a result letter repeats")
    batch, contracting, rows, cols = [], [], [], []
    for i, c in enumerate(la):
        if c in lb:
            j = lb.index(c)
            (batch if c in res_letters else contracting).append((i, j, c))
        elif c in res_letters:
            rows.append(c)
        else:
            raise ArgumentError(f"contract spec {spec!r}: {c!r} of a is in neither b nor the result")
    for c in lb:
        if c not in la:
            if c in res_letters:
                cols.append(c)
            else:
                raise ArgumentError(
                    f"contract spec {spec!r}: {c!r} of b is in neither a nor the result"
                )
    natural = [c for *_, c in batch] + rows + cols
    if sorted(natural) != sorted(res_letters):
        raise ArgumentError(f"contract spec {spec!r}: the result's letters do not match")
    acc_name = tessera_dtype(acc) if acc is not None else _native.default_acc(
        tessera_dtype(a.dtype), tessera_dtype(b.dtype)
    )
    bp = [(i, j) for i, j, _ in batch]
    cp = [(i, j) for i, j, _ in contracting]
    shape = _native.contract_shape(list(a.shape), list(b.shape), bp, cp, acc_name)
    perm = [natural.index(c) for c in res_letters]
    rdt = tessera_dtype(dtype) if dtype is not None else (_same_float(a, b) or acc_name)
    if out is not None and perm != sorted(perm):
        target = np.transpose(out, np.argsort(perm))
    else:
        target = out
    res = _Result(shape, rdt, target)
    _native.contract(
        _operand(a), _operand(b), res.native, bp, cp, acc_name, threads=threads, tier=tier
    )
    r = res.finish()
    if out is not None:
        return out
    return np.transpose(r, perm) if perm != sorted(perm) else r


def matmul(a, b, acc=None, dtype=None, out=None, threads=None, tier=None):
    """numpy's ``matmul``: ``[..., M, K] @ [..., K, N]`` with the leading
    axes broadcast and 1-D operands promoted, as :func:`contract` computes
    it (its accumulator and result-dtype rules)."""
    a, b = _as_array(a), _as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul: operands of rank 0 are not matrices")
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = a.reshape(1, -1)
    if vb:
        b = b.reshape(-1, 1)
    rank = _builtins.max(a.ndim, b.ndim)
    a = a.reshape((1,) * (rank - a.ndim) + a.shape)
    b = b.reshape((1,) * (rank - b.ndim) + b.shape)
    acc_name = tessera_dtype(acc) if acc is not None else _native.default_acc(
        tessera_dtype(a.dtype), tessera_dtype(b.dtype)
    )
    bp = [(i, i) for i in range(rank - 2)]
    cp = [(rank - 1, rank - 2)]
    shape = _native.contract_shape(list(a.shape), list(b.shape), bp, cp, acc_name)
    rdt = tessera_dtype(dtype) if dtype is not None else (_same_float(a, b) or acc_name)
    squeeze = tuple(shape[:-2]) + ((shape[-2],) if not va else ()) + ((shape[-1],) if not vb else ())
    target = None if out is None else out.reshape(shape)
    if out is not None and not np.shares_memory(target, out):
        raise ShapeError("out cannot be viewed with the product's shape")
    res = _Result(shape, rdt, target)
    _native.contract(
        _operand(a), _operand(b), res.native, bp, cp, acc_name, threads=threads, tier=tier
    )
    r = res.finish()
    return out if out is not None else r.reshape(squeeze)


# --------------------------------------------------------------------------
# Order and unique


def _sorted(x, axis, descending, total_order, want_values, want_positions, threads, tier):
    x = _as_array(x)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    (ax,) = _axes(axis, x.ndim)
    name = tessera_dtype(x.dtype)
    vals = _Result(x.shape, name) if want_values else None
    pos = _Result(x.shape, "i64") if want_positions else None
    _native.sort(
        _operand(x),
        ax,
        descending,
        total_order,
        values=None if vals is None else vals.native,
        positions=None if pos is None else pos.native,
        threads=threads,
        tier=tier,
    )
    return (None if vals is None else vals.finish(), None if pos is None else pos.finish())


def sort(x, axis=-1, descending=False, total_order=False, threads=None, tier=None):
    """``x`` sorted along ``axis`` (None: flattened), stably. Floats in
    numpy's order (NaNs last, -0 and +0 equal) or, with ``total_order=True``,
    IEEE 754 totalOrder (-NaN < -inf < … < -0 < +0 < … < +inf < +NaN)."""
    return _sorted(x, axis, descending, total_order, True, False, threads, tier)[0]


def argsort(x, axis=-1, descending=False, total_order=False, threads=None, tier=None):
    """The int64 positions that sort ``x`` along ``axis`` (see :func:`sort`), stably."""
    return _sorted(x, axis, descending, total_order, False, True, threads, tier)[1]


def unique(x, return_index=False, return_inverse=False, return_counts=False,
           threads=None, tier=None):
    """The distinct values of ``x`` (flattened), **in order of first
    appearance** (numpy's ``unique`` sorts them; ``np.sort`` the result for
    that). Values are compared by their bits: -0 and +0 differ, as do NaNs
    of different payloads. With ``return_index``, ``return_inverse``,
    ``return_counts``: the first position of each value, each element's
    value number, and each value's count (int64), as numpy's keywords.
    """
    x = np.ascontiguousarray(_as_array(x)).reshape(-1)
    n = x.size
    item = x.dtype.itemsize
    if item in (1, 2, 4, 8):
        keys = x.view(np.dtype(f"u{item}")).astype(np.uint64).reshape(n, 1)
    elif item % 8 == 0:
        keys = x.view(np.uint64).reshape(n, item // 8)
    else:
        raise DTypeError(f"unique: {x.dtype} has an item size of {item} bytes")
    ids = np.empty(n, np.int64)
    first = np.empty(n, np.int64)
    counts = np.empty(n, np.int64)
    k = _native.unique(keys, ids, first, counts, threads=threads, tier=tier)
    first, counts = first[:k], counts[:k]
    values = x[first]
    extra = []
    if return_index:
        extra.append(first)
    if return_inverse:
        extra.append(ids)
    if return_counts:
        extra.append(counts)
    return (values, *extra) if extra else values


# --------------------------------------------------------------------------
# Movement, random numbers, quantisation, attention


def _positions(p) -> np.ndarray:
    p = _as_array(p)
    if p.dtype != np.int64:
        if p.dtype.kind not in "iu":
            raise DTypeError(f"positions must be integers, not {p.dtype}")
        p = p.astype(np.int64)
    return p


def gather(x, positions, axis, out=None, threads=None, tier=None):
    """numpy's ``take_along_axis``: element j of the result is ``x``'s at j
    with its index along ``axis`` replaced by ``positions[j]``. ``positions``
    has the result's shape; ``x`` the same but along ``axis``. A position
    outside the axis reads zero bits (numpy raises instead)."""
    x = _as_array(x)
    p = _positions(positions)
    (ax,) = _axes(axis, x.ndim)
    res = _Result(p.shape, tessera_dtype(x.dtype), out)
    _native.gather(ax, _operand(x), _operand(p), res.native, threads=threads, tier=tier)
    return res.finish()


take_along_axis = gather


def scatter(x, positions, updates, axis, combine="set", out=None, threads=None, tier=None):
    """A copy of ``x`` with ``updates`` combined in at ``positions`` along
    ``axis`` (numpy's ``put_along_axis`` for ``combine="set"``, which keeps
    the last update; ``"add"``, ``"max"``, ``"min"`` combine the updates
    that land on one element in C order). Positions outside the axis drop
    their update."""
    x = _as_array(x)
    p = _positions(positions)
    u = _as_array(updates, x.dtype)
    (ax,) = _axes(axis, x.ndim)
    res = _Result(x.shape, tessera_dtype(x.dtype), out)
    _native.scatter(
        combine, ax, _operand(x), _operand(p), _operand(u), res.native, threads=threads, tier=tier
    )
    return res.finish()


def random(shape, dtype=np.float64, seed=0, out=None, threads=None, tier=None):
    """Counter-based random numbers: element i (C order) is a function of
    ``seed`` and i alone (splitmix64's finaliser of ``seed + (i + 1)·φ``).
    Floats are uniform on [0, 1); integers take the low bits; bool the
    lowest. Not cryptographic."""
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    res = _Result(tuple(shape), tessera_dtype(dtype), out)
    _native.random(int(seed) % (1 << 64), res.native, threads=threads, tier=tier)
    return res.finish()


def _qparams(scale, zero_point, axis, ndim):
    if isinstance(scale, (int, float, np.floating, np.integer)):
        return dict(scale=float(scale), zero_point=int(zero_point))
    if axis is None:
        raise ArgumentError("per-channel scales need axis=")
    (ax,) = _axes(axis, ndim)
    zp = np.broadcast_to(np.asarray(zero_point, np.int32), np.shape(scale))
    return dict(axis=ax, scales=scale, zero_points=np.ascontiguousarray(zp, np.int32))


def quantize(x, scale, zero_point=0, dtype=np.int8, axis=None, out=None, threads=None, tier=None):
    """``q = saturate(rint(x / scale) + zero_point)`` into an integer dtype,
    per tensor (a number ``scale``) or per channel along ``axis`` (an array
    of scales in x's carrier: float32, or float64 for float64 data)."""
    x = _as_array(x)
    res = _Result(x.shape, tessera_dtype(dtype), out)
    p = _qparams(scale, zero_point, axis, x.ndim)
    if "scales" in p:
        carrier = np.float64 if x.dtype == np.float64 else np.float32
        p["scales"] = np.ascontiguousarray(p["scales"], carrier)
    _native.quantize(False, _operand(x), res.native, threads=threads, tier=tier, **p)
    return res.finish()


def dequantize(q, scale, zero_point=0, dtype=np.float32, axis=None, out=None, threads=None, tier=None):
    """``x = (q - zero_point) · scale`` into a float dtype (one rounded
    product, then one rounding into a narrower ``dtype``)."""
    q = _as_array(q)
    res = _Result(q.shape, tessera_dtype(dtype), out)
    p = _qparams(scale, zero_point, axis, q.ndim)
    if "scales" in p:
        carrier = np.float64 if np.dtype(dtype) == np.float64 else np.float32
        p["scales"] = np.ascontiguousarray(p["scales"], carrier)
    _native.quantize(True, _operand(q), res.native, threads=threads, tier=tier, **p)
    return res.finish()


def attention(q, k, v, scale=None, causal=False, offset=0, window=None, program=None,
              loads=(), lengths=None, acc=None, dtype=None, return_lse=False,
              threads=None, tier=None):
    """Flash attention: ``softmax(scale · q kᵀ, masked) · v`` row by row.

    ``q`` is ``[lead…, hq, tq, dk]``, ``k`` ``[lead…, hk, tk, dk]``, ``v``
    ``[lead…, hk, tk, dv]`` (f16, bf16, f32 or f64; ``hk`` divides ``hq``:
    grouped and multi-query heads). ``scale`` defaults to 1/√dk. Masks:
    ``causal=True`` (key j visible from row i where j ≤ i + offset), with
    ``window=w`` a causal sliding window of w keys, or ``program=`` a
    program text (input x0 the score, x1… the ``loads``; output y0 bool
    visibility, y1 the score used). ``lengths`` (int64 ``[lead…]``): keys
    per lead index. Accumulated in ``acc`` (f32, or f64 for f64 inputs);
    the result in ``dtype`` (q's by default); with ``return_lse`` also the
    rows' log-sum-exp (in ``acc``). The bits of a row depend on its own
    pairs alone (not the batch, the heads' grouping, the threads or the tier).
    """
    q, k, v = _as_array(q), _as_array(k), _as_array(v)
    if q.ndim < 3:
        raise ShapeError("q must be [lead…, heads, rows, dk]")
    acc_name = tessera_dtype(acc) if acc is not None else ("f64" if q.dtype == np.float64 else "f32")
    if scale is None:
        scale = 1.0 / float(np.sqrt(q.shape[-1])) if q.shape[-1] else 1.0
    if program is not None:
        mask = "program"
    elif window is not None:
        mask = "sliding_window"
    elif causal:
        mask = "causal"
    else:
        mask = "full"
    lead = q.shape[:-1]
    o = _Result((*lead, v.shape[-1]), tessera_dtype(dtype) if dtype is not None else tessera_dtype(q.dtype))
    lse = _Result(lead, acc_name)
    _native.attention(
        _operand(q), _operand(k), _operand(v), o.native, lse.native, float(scale), mask,
        offset=int(offset), window=None if window is None else int(window), text=program,
        loads=[_operand(_as_array(x)) for x in loads],
        lengths=None if lengths is None else _operand(_positions(lengths)),
        threads=threads, tier=tier,
    )
    return (o.finish(), lse.finish()) if return_lse else o.finish()


# --------------------------------------------------------------------------
# Signals, order statistics, sorted sets


def _conv(x, k, mode, acc, dtype, out, threads, tier, reverse):
    x, k = _as_array(x), _as_array(k)
    acc_name = tessera_dtype(acc) if acc is not None else _native.default_acc(
        tessera_dtype(x.dtype), tessera_dtype(k.dtype)
    )
    shape = _native.convolve_shape(list(x.shape), list(k.shape), mode)
    rdt = tessera_dtype(dtype) if dtype is not None else (_same_float(x, k) or acc_name)
    res = _Result(shape, rdt, out)
    _native.convolve(
        _operand(x), _operand(k), res.native, mode, acc_name, reverse, threads=threads, tier=tier
    )
    return res.finish()


def convolve(x, k, mode="full", acc=None, dtype=None, out=None, threads=None, tier=None):
    """The discrete convolution of each line of ``x`` (its last axis) with
    the 1-D kernel ``k`` (``mode`` ``"full"``, ``"same"`` or ``"valid"``, as
    numpy's ``convolve``), each output a contraction of its window with the
    reversed kernel in ``acc`` (default: :func:`contract`'s rule): the same
    bits for every layout, thread count and tier."""
    return _conv(x, k, mode, acc, dtype, out, threads, tier, True)


def correlate(x, k, mode="valid", acc=None, dtype=None, out=None, threads=None, tier=None):
    """As :func:`convolve` without reversing the kernel (numpy's
    ``correlate`` for real kernels; a complex kernel is not conjugated)."""
    return _conv(x, k, mode, acc, dtype, out, threads, tier, False)


def _order_stat(x, axis, q, out, threads, tier):
    x = _as_array(x)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    (ax,) = _axes(axis, x.ndim)
    shape = x.shape[:ax] + x.shape[ax + 1:]
    res = _Result(shape, "f64", out)
    _native.order_statistic(_operand(x), ax, res.native, q=q, threads=threads, tier=tier)
    r = res.finish()
    return r if out is not None else _scalar_or_array(r)


def median(x, axis=None, out=None, threads=None, tier=None):
    """numpy's ``median`` along one axis (None: flattened), in float64: the
    middle element, or the mean of the two middle ones; NaN where a slice
    holds a NaN."""
    return _order_stat(x, axis, None, out, threads, tier)


def quantile(x, q, axis=None, out=None, threads=None, tier=None):
    """numpy's ``quantile`` (method ``linear``) of one ``q`` in [0, 1] along
    one axis (None: flattened), in float64."""
    return _order_stat(x, axis, float(q), out, threads, tier)


def searchsorted(a, v, out=None, threads=None, tier=None):
    """numpy's ``searchsorted(a, v, side="left")``: for each element of ``v``
    the number of elements of the sorted 1-D ``a`` below it (int64), in the
    total order of :func:`sort` (NaNs last)."""
    a, v = _as_array(a), _as_array(v, _as_array(a).dtype)
    res = _Result(v.shape, "i64", out)
    _native.lower_bound(_operand(a), _operand(v), res.native, threads=threads, tier=tier)
    r = res.finish()
    return r if out is not None else _scalar_or_array(r)


def _sorted_unique(a):
    a = sort(np.asarray(a).reshape(-1))
    if a.size:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return np.ascontiguousarray(a)


def _set_op(a, b, intersect, assume_unique, threads, tier):
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    if a.dtype != b.dtype:
        raise DTypeError(f"operands of {a.dtype} and {b.dtype}: one dtype is needed")
    if not assume_unique:
        a, b = _sorted_unique(a), _sorted_unique(b)
    dst = np.empty(_builtins.min(a.size, b.size) if intersect else a.size, a.dtype)
    n = _native.sorted_set(_operand(a), _operand(b), dst, intersect, threads=threads, tier=tier)
    return dst[:n].copy()


def intersect1d(a, b, assume_unique=False, threads=None, tier=None):
    """numpy's ``intersect1d`` for u32, u64, i32 and i64: the sorted values in
    both. With ``assume_unique`` the inputs must already be sorted and free of
    duplicates (not checked)."""
    return _set_op(a, b, True, assume_unique, threads, tier)


def setdiff1d(a, b, assume_unique=False, threads=None, tier=None):
    """numpy's ``setdiff1d`` for u32, u64, i32 and i64: the sorted values of
    ``a`` not in ``b`` (``assume_unique`` as :func:`intersect1d`)."""
    return _set_op(a, b, False, assume_unique, threads, tier)


def _terms(which, x, y, axis, keepdims, dtype, out, threads, tier):
    x = _as_array(x)
    if y is not None:
        y = _as_array(y, x.dtype)
    axes = _axes(axis, x.ndim)
    shape, rdt = _native.reduce_shape("sum", axes, list(x.shape), tessera_dtype(x.dtype))
    if dtype is not None:
        rdt = tessera_dtype(dtype)
    if keepdims:
        shape = [1 if i in axes else n for i, n in enumerate(x.shape)]
    res = _Result(shape, rdt, out)
    _native.reduce_terms(
        which, axes, _operand(x), None if y is None else _operand(y), res.native,
        threads=threads, tier=tier,
    )
    r = res.finish()
    return r if out is not None else _scalar_or_array(r)


def vecdot(x, y, axis=-1, keepdims=False, dtype=None, out=None, threads=None, tier=None):
    """numpy's ``vecdot``: Σ conj(x)·y along ``axis`` (None: all axes) for
    operands of one shape and dtype (conjugated only where complex), as a
    lane-order sum of the products: the same bits for every layout, thread
    count and tier."""
    which = "dot_conj" if _as_array(x).dtype.kind == "c" else "dot"
    return _terms(which, x, y, axis, keepdims, dtype, out, threads, tier)


def dot2(x, y, axis=-1, keepdims=False, dtype=None, out=None, threads=None, tier=None):
    """Σ x·y with each product formed exactly and the sum compensated (Dot2:
    about twice the working precision; floats)."""
    return _terms("dot2", x, y, axis, keepdims, dtype, out, threads, tier)


def sum_squares(x, axis=None, keepdims=False, dtype=None, out=None, threads=None, tier=None):
    """Σ x² along ``axis`` (None: all), in lane order (floats)."""
    return _terms("sum_squares", x, None, axis, keepdims, dtype, out, threads, tier)


def squared_distance(x, y, axis=None, keepdims=False, dtype=None, out=None, threads=None, tier=None):
    """Σ (x − y)² along ``axis`` (None: all), in lane order (floats)."""
    return _terms("squared_distance", x, y, axis, keepdims, dtype, out, threads, tier)


def l1_distance(x, y, axis=None, keepdims=False, dtype=None, out=None, threads=None, tier=None):
    """Σ |x − y| along ``axis`` (None: all), in lane order (floats)."""
    return _terms("l1_distance", x, y, axis, keepdims, dtype, out, threads, tier)


from . import bytes, fft, formats, linalg, series  # noqa: E402  (they need the names above)
