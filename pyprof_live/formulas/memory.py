"""Ops that move or create data without arithmetic: copies, dtype conversions, fills, factories,
random number generation, dropout.

Copies and fills are 0 flops; their bytes are what they read and write. Random generators count
the floating-point work that turns raw random bits into the distribution (uniform: scale and
shift = 2 flops; normal: Box-Muller, log + sqrt + sin/cos = 3 transcendentals + 4); the integer
bit generation itself is not floating-point work.
"""

from __future__ import annotations

from math import ceil

from ..records import TensorMeta, Unknown
from .opargs import OpArgs
from .pointwise import TRANSCENDENTAL, elementwise
from .registry import builtin
from .work import NO_WORK, FormulaInputError, Work, check_shape, numel

_UNIFORM = 2
_NORMAL = 3 * TRANSCENDENTAL + 4


@builtin("aten::copy_")
def _copy(a: OpArgs) -> Work:
    # copy_(self, src): reads src (broadcast to self), writes self. Host<->device copies too.
    return Work(0, (a.tensor(1, "src"),), (a.tensor(0, "self"),))


@builtin("aten::copy")
def _functional_copy(a: OpArgs) -> Work:
    # copy(self, src): copy_ out of place, as functionalized (compiled) graphs have it: src, broadcast to self's
    # shape and in self's dtype, written to a new tensor; self's values are not read.
    x = a.tensor(0, "self")
    return Work(0, (a.tensor(1, "src"),), (a.output(0) or TensorMeta(x.shape, x.dtype),))


@builtin("aten::_copy_from", "aten::_copy_from_and_resize")
def _copy_from(a: OpArgs) -> Work:
    return Work(0, (a.tensor(0, "self"),), (a.tensor(1, "dst"),))


@builtin(
    "aten::clone",
    "aten::lift_fresh_copy",
    "aten::detach_copy",
    "aten::alias_copy",
    "aten::view_copy",
    "aten::permute_copy",
    "aten::transpose_copy",
    "aten::t_copy",
    "aten::squeeze_copy",
    "aten::unsqueeze_copy",
    "aten::_reshape_copy",
    "prims::inductor_force_stride_order",
)
def _clone(a: OpArgs) -> Work:
    # A full copy: the output has the input's elements (in another shape or layout; Inductor's
    # inductor_force_stride_order(input, stride) puts an extern's result in the strides the graph needs).
    x = a.tensor(0, "self")
    out = a.output(0) or TensorMeta(x.shape, x.dtype)
    return Work(0, (x,), (out,))


@builtin("aten::_to_copy")
def _to_copy(a: OpArgs) -> Work:
    # _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format)
    x = a.tensor(0, "self")
    out = a.output(0) or TensorMeta(x.shape, a.dtype(1, "dtype") or x.dtype)
    return Work(0, (x,), (out,))


@builtin("aten::fill_", "aten::zero_")
def _fill(a: OpArgs) -> Work:
    # Writes every element of self; fill_.Tensor also reads its 0-dim value.
    value = a.operand(1, "value")
    reads = (value,) if isinstance(value, TensorMeta) else ()
    return Work(0, reads, (a.tensor(0, "self"),))


@builtin(
    "aten::zeros",
    "aten::ones",
    "aten::full",
    "aten::scalar_tensor",
    "aten::new_zeros",
    "aten::new_ones",
    "aten::new_full",
    "aten::zeros_like",
    "aten::ones_like",
    "aten::full_like",
)
def _factory(a: OpArgs) -> Work:
    # Writes its output once: the recorded one, else shape from `size` (*_like: self's), dtype from `dtype`
    # (new_* and *_like: self's; others torch's default float32).
    out = a.output(0)
    if out is None:
        like = a.tensor(0, "self") if a.name.startswith("aten::new_") or a.name.endswith("_like") else None
        if a.name == "aten::scalar_tensor":
            shape = ()
        elif like is not None and a.name.endswith("_like"):
            shape = like.shape
        else:
            shape = check_shape(a.ints(_FACTORY_SIZE[a.name], "size"), "size")
        dtype = _given_dtype(a, _FACTORY_DTYPE[a.name])
        if dtype is _UNRECORDED:  # the source did not record the dtype argument: bytes na, not float32
            dtype = None
        else:
            dtype = dtype or (like.dtype if like is not None else "float32")
        out = TensorMeta(shape, dtype)
    return Work(0, (), (out,))


# Positions of the `size` and `dtype` arguments.
_FACTORY_SIZE = {
    "aten::zeros": 0,
    "aten::ones": 0,
    "aten::full": 0,
    "aten::new_zeros": 1,
    "aten::new_ones": 1,
    "aten::new_full": 1,
}
_FACTORY_DTYPE = {
    "aten::zeros": 1,
    "aten::ones": 1,
    "aten::full": 2,
    "aten::new_zeros": 2,
    "aten::new_ones": 2,
    "aten::new_full": 3,
    "aten::zeros_like": 1,
    "aten::ones_like": 1,
    "aten::full_like": 2,
    "aten::scalar_tensor": 1,
}


_UNRECORDED = "unrecorded"


def _given_dtype(a: OpArgs, index: int):
    """The ``dtype`` argument: a canonical name, None when not given, _UNRECORDED when the source did not say."""
    if a.has(index, "dtype") and isinstance(a.recorded(index, "dtype"), Unknown):
        return _UNRECORDED
    return a.dtype(index, "dtype")


@builtin("aten::eye")
def _eye(a: OpArgs) -> Work:
    # eye(n, dtype, ...) / eye.m(n, m, dtype, ...): writes the n x m matrix.
    out = a.output(0)
    if out is None:
        with_m = a.op.overload == "m" or (not a.op.overload and len(a.op.inputs) == 6)
        n = a.int(0, "n")
        m = a.int(1, "m") if with_m else n
        dtype = _given_dtype(a, 2 if with_m else 1)
        out = TensorMeta((n, m), None if dtype is _UNRECORDED else dtype or "float32")
    return Work(0, (), (out,))


@builtin("aten::arange", "aten::linspace", "aten::logspace")
def _range(a: OpArgs) -> Work:
    # Each element is start + i * step: 2 flops (logspace adds a pow: + TRANSCENDENTAL).
    out = a.output(0) or _range_output(a)
    per_element = 2 + (TRANSCENDENTAL if a.name == "aten::logspace" else 0)
    return Work(per_element * numel(out.shape), (), (out,))


# arange overloads by the leading numbers they take; the rest are dtype, layout, device, pin_memory.
_ARANGE_NUMBERS = {"default": ("end",), "start": ("start", "end"), "start_step": ("start", "end", "step")}
_ARANGE_BY_COUNT = {len(names): names for names in _ARANGE_NUMBERS.values()}
_ARANGE_TRAILING = 4


def _range_output(a: OpArgs) -> TensorMeta:
    """arange(end) / arange(start, end[, step]) / linspace(start, end, steps, ...) from their values."""
    if a.name != "aten::arange":
        return TensorMeta((a.int(2, "steps"),), a.dtype(3 if a.name == "aten::linspace" else 4, "dtype") or "float32")
    if a.op.inputs and isinstance(a.op.inputs[-1], TensorMeta):  # arange.start_out(start, end, step, out)
        names: tuple[str, ...] | None = _ARANGE_NUMBERS["start_step"]
    else:
        names = _ARANGE_NUMBERS.get(a.op.overload) or _ARANGE_BY_COUNT.get(len(a.op.inputs) - _ARANGE_TRAILING)
    if names is None:
        raise FormulaInputError(f"cannot tell arange's overload from {len(a.op.inputs)} arguments")
    count = len(names)
    raw = [a.value(i, name) for i, name in enumerate(names)]
    numbers = [float(v) for v in raw]
    start, end, step = [(0.0, numbers[0], 1.0), (*numbers, 1.0), tuple(numbers)][count - 1]
    if step == 0:
        raise FormulaInputError("arange step is 0")
    integral = all(isinstance(v, int) or (isinstance(v, str) and v.strip().lstrip("-").isdigit()) for v in raw)
    out = a.op.inputs[-1] if isinstance(a.op.inputs[-1], TensorMeta) else None
    dtype = out.dtype if out is not None else a.dtype(count, "dtype") or ("int64" if integral else "float32")
    return TensorMeta((max(ceil((end - start) / step), 0),), dtype)


@builtin(
    "aten::uniform_",
    "aten::normal_",
    "aten::random_",
    "aten::exponential_",
    "aten::bernoulli_",
    "aten::log_normal_",
    "aten::cauchy_",
    "aten::geometric_",
)
def _random_fill(a: OpArgs) -> Work:
    # Overwrites self with random values; bernoulli_.Tensor also reads its probability tensor.
    x = a.tensor(0, "self")
    p = a.tensor_or_value(1, "p", None) if a.name == "aten::bernoulli_" else None
    reads = (p,) if isinstance(p, TensorMeta) else ()
    return Work(_RANDOM_FLOPS[a.name] * numel(x.shape), reads, (x,))


_RANDOM_FLOPS = {
    "aten::uniform_": _UNIFORM,
    "aten::normal_": _NORMAL,
    "aten::random_": 0,
    "aten::exponential_": TRANSCENDENTAL + _UNIFORM,
    "aten::bernoulli_": _UNIFORM + 1,
    "aten::log_normal_": _NORMAL + TRANSCENDENTAL,
    "aten::cauchy_": TRANSCENDENTAL + _UNIFORM + 2,
    "aten::geometric_": 2 * TRANSCENDENTAL + 2,
}


@builtin("aten::rand", "aten::randn", "aten::rand_like", "aten::randn_like", "aten::randint", "aten::randint_like")
def _random_create(a: OpArgs) -> Work:
    out = a.output(0) or _random_output(a)
    per_element = _NORMAL if a.name.startswith("aten::randn") else 0 if "randint" in a.name else _UNIFORM
    return Work(per_element * numel(out.shape), (), (out,))


def _random_output(a: OpArgs) -> TensorMeta:
    if a.name.endswith("_like"):
        like = a.tensor(0, "self")
        return TensorMeta(like.shape, like.dtype)
    if a.name == "aten::randint":  # randint(high, size) / randint(low, high, size): size is the int list
        for index in (1, 2):
            value = a.value(index, "size", None)
            if isinstance(value, (tuple, list, str)):
                return TensorMeta(check_shape(a.ints(index, "size"), "size"), "int64")
        raise FormulaInputError("inputs lack size")
    return TensorMeta(check_shape(a.ints(0, "size"), "size"), a.dtype(1, "dtype") or "float32")


@builtin("aten::randperm")
def _randperm(a: OpArgs) -> Work:
    # A shuffle of n int64 indices: integer work only.
    return Work(0, (), (a.output(0) or TensorMeta((a.int(0, "n"),), "int64"),))


@builtin("aten::bernoulli")
def _bernoulli(a: OpArgs) -> Work:
    # bernoulli(self): draws with probabilities self -> uniform + compare per element.
    return elementwise(a, _UNIFORM + 1, ((0, "self"),))


@builtin("aten::native_dropout")
def _native_dropout(a: OpArgs) -> Work:
    # Training: uniform draw + compare -> bool mask, then x * mask * 1/(1-p): 5 flops per element.
    # Eval (train False): a plain copy, no mask.
    x = a.tensor(0, "input")
    train = a.value(2, "train", None)
    out = a.output(0) or TensorMeta(x.shape, x.dtype)
    if train is False or train == "False":
        return Work(0, (x,), (out,))
    mask = a.output(1) or TensorMeta(x.shape, "bool")
    return Work((_UNIFORM + 3) * numel(x.shape), (x,), (out, mask))


@builtin("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout")
def _dropout(a: OpArgs) -> Work:
    # Composite: identity (no work, no copy) unless training with p > 0; then native_dropout's cost.
    x = a.tensor(0, "input")
    if a.float(1, "p") == 0 or not a.bool(2, "train"):
        return NO_WORK
    return Work((_UNIFORM + 3) * numel(x.shape), (x,), (TensorMeta(x.shape, x.dtype), TensorMeta(x.shape, "bool")))


@builtin("aten::native_dropout_backward")
def _native_dropout_backward(a: OpArgs) -> Work:
    # grad * mask * scale: 2 per element.
    return elementwise(a, 2, ((0, "grad_output"), (1, "mask")))


@builtin("aten::_local_scalar_dense", "aten::item")
def _item(a: OpArgs) -> Work:
    # tensor.item(): reads one element (a device-to-host copy on GPU).
    x = a.tensor(0, "self")
    return Work(0, (TensorMeta((1,) if numel(x.shape) else (0,), x.dtype),), ())


# -- Inductor's primitives (ops of torch.compile'd graphs) ---------------------------------------
@builtin("prims::convert_element_type")
def _convert_element_type(a: OpArgs) -> Work:
    # convert_element_type(a, dtype): _to_copy's dtype cast.
    x = a.tensor(0, "a")
    return Work(0, (x,), (a.output(0) or TensorMeta(x.shape, a.dtype(1, "dtype") or x.dtype),))


# Inductor's random numbers (torch.compile'd dropout, rand, randn, randint): a seed per graph call (inductor_seeds),
# one looked up per use, then the draws, fused into the kernels that use them. The draws count as the eager
# generators do, so a compiled dropout's kernel has native_dropout's flops: draw (2) + compare + 2 multiplies.
@builtin("prims::inductor_seed", "prims::inductor_seeds")
def _inductor_seeds(a: OpArgs) -> Work:
    # inductor_seeds(count, device) / inductor_seed(device): fresh int64 seeds, no floating-point work.
    shape = (a.int(0, "count"),) if a.name == "prims::inductor_seeds" else ()
    return Work(0, (), (a.output(0) or TensorMeta(shape, "int64"),))


@builtin("prims::inductor_lookup_seed")
def _inductor_lookup_seed(a: OpArgs) -> Work:
    # inductor_lookup_seed(seeds, index): seeds[index], one int64 read and written.
    seed = TensorMeta((), a.tensor(0, "seeds").dtype)
    return Work(0, (seed,), (a.output(0) or seed,))


@builtin("prims::inductor_random")
def _inductor_random(a: OpArgs) -> Work:
    # inductor_random(size, seed, mode): torch.rand (mode "rand") or torch.randn ("randn") draws, float32.
    mode = a.value(2, "mode")
    if mode not in ("rand", "randn"):
        raise FormulaInputError(f"inductor_random mode {mode!r}")
    out = a.output(0) or TensorMeta(check_shape(a.ints(0, "size"), "size"), "float32")
    return Work((_UNIFORM if mode == "rand" else _NORMAL) * numel(out.shape), (), (out,))


@builtin("prims::inductor_randint")
def _inductor_randint(a: OpArgs) -> Work:
    # inductor_randint(low, high, size, seed): torch.randint's integer draws, no floating-point work.
    return Work(0, (), (a.output(0) or TensorMeta(check_shape(a.ints(2, "size"), "size"), "int64"),))


@builtin("prims::iota")
def _iota(a: OpArgs) -> Work:
    # iota(length, *, start, step, dtype, ...): start + i * step, arange's 2 flops per element.
    out = a.output(0) or TensorMeta((a.int(0, "length"),), a.dtype(3, "dtype") or "int64")
    return Work(2 * numel(out.shape), (), (out,))
