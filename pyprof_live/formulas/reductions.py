"""Reductions and scans: sum, mean, prod, norms, max/min/argmax, var/std, logsumexp, cumsum...

Flops per input element (+ per output element where the op finishes each result):
sum/prod/nansum 1; mean 1 + 1 per output (the divide); max/min/amax/amin/argmax/argmin/any/all 1
(a compare); norm: p=2 -> 2 (square, add) + sqrt per output, p=1 or inf -> 2 (abs, add/compare),
p=0 -> 2, other p -> |x|^p = TRANSCENDENTAL + 2, + one root per output; var -> 4 (sum for the mean,
subtract, square, add) + 1 per output, std -> var + sqrt per output; logsumexp -> max, subtract,
exp, add = TRANSCENDENTAL + 3, + log per output; cumsum/cumprod 1, logcumsumexp 2 TRANSC + 1.
Bytes: the input read once, every output written once.
"""

from __future__ import annotations

from ..records import TensorMeta
from .opargs import OpArgs
from .pointwise import TRANSCENDENTAL, T, elementwise
from .registry import builtin
from .work import FormulaInputError, Work, normalize_dim, numel


def reduced_shape(shape: tuple, dims, keepdim: bool) -> tuple:
    """Shape after reducing ``dims`` (None or empty: every dim) of ``shape``."""
    if dims is None or dims == ():
        axes = set(range(len(shape)))
    else:
        axes = {normalize_dim(d, len(shape)) for d in dims}
    if keepdim:
        return tuple(1 if i in axes else size for i, size in enumerate(shape))
    return tuple(size for i, size in enumerate(shape) if i not in axes)


def _dims(a: OpArgs, index: int):
    """A ``dim`` argument as a tuple of dims or None (all): int[]?, int?, or a single int."""
    value = a.value(index, "dim", None)
    if value is None or value == "" or value == "None":
        return None
    return a.ints(index, "dim")


def reduction(
    a: OpArgs,
    per_input: int,
    per_output: int = 0,
    *,
    dim_at: int | None = 1,
    keepdim_at: int | None = 2,
    outputs: int = 1,
    index_outputs: int = 0,
    dtype_at: int | None = None,
    out_dtype: str | None = None,
) -> Work:
    """Work of a reduction of ``self`` over its ``dim`` argument (``dim_at`` None: over everything).

    ``outputs`` value tensors are written in ``out_dtype``, the ``dtype`` argument or the input's
    dtype, plus ``index_outputs`` int64 index tensors (max.dim's indices).
    """
    x = a.tensor(0, "self")
    dims = _dims(a, dim_at) if dim_at is not None else None
    keepdim = a.bool(keepdim_at, "keepdim", False) if keepdim_at is not None else False
    shape = reduced_shape(x.shape, dims, keepdim)
    dtype = out_dtype or (a.dtype(dtype_at, "dtype") if dtype_at is not None else None) or x.dtype
    written = tuple(a.output(i) or TensorMeta(shape, dtype) for i in range(outputs))
    written += tuple(a.output(outputs + i) or TensorMeta(shape, "int64") for i in range(index_outputs))
    return Work(per_input * numel(x.shape) + per_output * numel(shape), (x,), written)


def _has_dim(a: OpArgs, dimless_overloads: set, dimless_arg_count: int) -> bool:
    """Whether the call is an overload with a ``dim`` argument: known from the recorded overload (live
    capture), else from the argument count (Kineto and nsys record every argument; the dim-less
    overloads have at most ``dimless_arg_count``)."""
    if a.op.overload:
        return a.op.overload not in dimless_overloads
    return len(a.op.inputs) > dimless_arg_count


# sum.dim_IntList(self, dim, keepdim, dtype) / sum.default(self, dtype); mean likewise; nansum and nanmean
# always take (self, dim, keepdim, dtype).
@builtin("aten::sum", "aten::nansum")
def _sum(a: OpArgs) -> Work:
    if _has_dim(a, {"default"} if a.name == "aten::sum" else set(), 2):
        return reduction(a, 1, dtype_at=3)
    return reduction(a, 1, dim_at=None, keepdim_at=None, dtype_at=1)


@builtin("aten::mean", "aten::nanmean")
def _mean(a: OpArgs) -> Work:
    if _has_dim(a, {"default"} if a.name == "aten::mean" else set(), 2):
        return reduction(a, 1, 1, dtype_at=3)
    return reduction(a, 1, 1, dim_at=None, keepdim_at=None, dtype_at=1)


@builtin("aten::prod")
def _prod(a: OpArgs) -> Work:
    # prod(self, dtype) or prod.dim_int(self, dim, keepdim, dtype)
    if _has_dim(a, {"default"}, 2):
        return reduction(a, 1, dtype_at=3)
    return reduction(a, 1, dim_at=None, keepdim_at=None, dtype_at=1)


@builtin("aten::amax", "aten::amin")
def _extremum(a: OpArgs) -> Work:
    return reduction(a, 1)


@builtin("aten::argmax", "aten::argmin")
def _arg_extremum(a: OpArgs) -> Work:
    return reduction(a, 1, out_dtype="int64")


@builtin("aten::any", "aten::all")
def _any(a: OpArgs) -> Work:
    return reduction(a, 1, out_dtype="bool")


@builtin("aten::count_nonzero")
def _count_nonzero(a: OpArgs) -> Work:
    # count_nonzero(self, dim): no keepdim.
    return reduction(a, 1, keepdim_at=None, out_dtype="int64")


@builtin("aten::max", "aten::min")
def _max(a: OpArgs) -> Work:
    # max(self) -> scalar; max.dim(self, dim, keepdim) -> (values, indices); max.other(self, other) is binary.
    second = a.tensor_or_value(1, "other" if a.op.overload == "other" else "dim", None)
    if isinstance(second, TensorMeta):
        return elementwise(a, 1, ((0, "self"), (1, "other")))
    if second is None:
        return reduction(a, 1, dim_at=None, keepdim_at=None)
    return reduction(a, 1, dim_at=1, keepdim_at=2, index_outputs=1)


@builtin("aten::aminmax")
def _aminmax(a: OpArgs) -> Work:
    # aminmax(self, *, dim, keepdim) -> (min, max): two compares per element.
    return reduction(a, 2, dim_at=1, keepdim_at=2, outputs=2)


# norm overloads: norm.Scalar(self, p), norm.ScalarOpt_dim(self, p, dim, keepdim), ...;
# linalg_vector_norm(self, ord, dim, keepdim, *, dtype)
# linalg_norm(self, ord, dim, keepdim, *, dtype) over vectors: ord a number, or "fro" (the 2-norm of every element).
@builtin("aten::norm", "aten::linalg_vector_norm", "aten::linalg_norm")
def _norm(a: OpArgs) -> Work:
    p = a.value(1, "p" if a.name == "aten::norm" else "ord", 2)
    if p == "fro":
        p = 2.0
    elif isinstance(p, str) and not p.replace(".", "", 1).lstrip("-").isdigit() and p not in ("inf", "-inf"):
        raise FormulaInputError(f"no formula for the {p!r} matrix norm")
    p = 2.0 if p is None or p == "" else float(p)
    if p in (1.0, 2.0, float("inf"), float("-inf"), 0.0):
        per_input, per_output = 2, (TRANSCENDENTAL if p == 2.0 else 0)
    else:
        per_input, per_output = TRANSCENDENTAL + 2, TRANSCENDENTAL
    # norm.Scalar(self, p) and norm.ScalarOpt_dtype(self, p, dtype) have no dim; the linalg norms always do.
    dim_at = 2 if a.name != "aten::norm" or _has_dim(a, {"Scalar", "ScalarOpt_dtype"}, 3) else None
    return reduction(a, per_input, per_output, dim_at=dim_at, keepdim_at=3 if dim_at else None)


@builtin("aten::var", "aten::std", "aten::var_mean", "aten::std_mean")
def _var(a: OpArgs) -> Work:
    # var.correction(self, dim, *, correction, keepdim); var.dim(self, dim, unbiased, keepdim);
    # var(self, unbiased).
    per_output = 1 + (T if "std" in a.name else 0)
    outputs = 2 if a.name.endswith("_mean") else 1
    if _has_dim(a, {"default"}, 2):
        return reduction(a, 4, per_output, dim_at=1, keepdim_at=3, outputs=outputs)
    return reduction(a, 4, per_output, dim_at=None, keepdim_at=None, outputs=outputs)


@builtin("aten::logsumexp")
def _logsumexp(a: OpArgs) -> Work:
    return reduction(a, T + 3, T)


@builtin("aten::cumsum", "aten::cumsum_", "aten::cumprod", "aten::cumprod_")
def _cumulative(a: OpArgs) -> Work:
    # (self, dim, dtype): output has the input's shape (in-place: self).
    x = a.tensor(0, "self")
    normalize_dim(a.int(1, "dim"), len(x.shape))
    out = x if a.inplace else a.output(0) or TensorMeta(x.shape, a.dtype(2, "dtype") or x.dtype)
    return Work(numel(x.shape), (x,), (out,))


@builtin("aten::logcumsumexp", "aten::cummax", "aten::cummin")
def _scan(a: OpArgs) -> Work:
    # (self, dim): logcumsumexp = log(exp(acc) + exp(x)) per element; cummax/cummin also write int64 indices.
    x = a.tensor(0, "self")
    normalize_dim(a.int(1, "dim"), len(x.shape))
    per_element = 2 * T + 1 if a.name == "aten::logcumsumexp" else 1
    writes: tuple[TensorMeta, ...] = (a.output(0) or TensorMeta(x.shape, x.dtype),)
    if a.name != "aten::logcumsumexp":
        writes += (a.output(1) or TensorMeta(x.shape, "int64"),)
    return Work(per_element * numel(x.shape), (x,), writes)
