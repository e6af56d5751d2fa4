"""Elementwise ops: unary and binary math, comparisons, activations and their backward, ternary ops.

Flops are a per-output-element weight times the output's element count. The weights count the
floating-point operations of the op's defining expression, with one exception:

* ``TRANSCENDENTAL = 20`` flops for each exp, log, sqrt, rsqrt, trig, hyperbolic, erf or gamma
  evaluation. These are not single instructions: CUDA's accurate (non fast-math) ``expf``,
  ``logf``, ``tanhf``, ``erff`` compile to roughly 10-30 FP32 instructions, and 20 is the weight
  NVIDIA PyProf used, so numbers stay comparable with PyProf's. A composite activation adds its
  arithmetic: ``sigmoid`` = 1/(1+exp(-x)) = TRANSCENDENTAL + 2.

Bytes: every tensor operand is read once (a broadcast operand only for its stored elements), the
output written once; an in-place op (``add_``) writes its first operand.
"""

from __future__ import annotations

from ..records import TensorMeta, Unknown
from .dtypes import canonical_dtype, itemsize, kind_rank
from .opargs import OpArgs
from .registry import builtin
from .work import FormulaInputError, Work, broadcast_shapes, normalize_dim, numel

#: Flops charged for one transcendental function evaluation (see module docstring).
TRANSCENDENTAL = 20
T = TRANSCENDENTAL


def result_dtype(operands, *, bool_result: bool = False) -> str | None:
    """torch's result type of an elementwise op over ``operands`` (TensorMeta or Python numbers).

    Dimensioned tensors decide; a 0-dim tensor or a Python scalar only when of a higher category
    (int tensor * 0-dim float64 -> float64, int tensor * 2.5 -> float32). None when a tensor
    operand has no recorded dtype.
    """
    if bool_result:
        return "bool"
    tensors = [o for o in operands if isinstance(o, TensorMeta)]
    if any(canonical_dtype(t.dtype) is None for t in tensors):
        return None
    dimensioned = _widest(t.dtype for t in tensors if t.shape)
    zero_dim = _widest(t.dtype for t in tensors if not t.shape)
    result = dimensioned or zero_dim
    if zero_dim and kind_rank(zero_dim) > kind_rank(result):
        result = zero_dim
    scalar_kinds = [
        3 if isinstance(o, complex) else 2 if isinstance(o, float) else 0 if isinstance(o, bool) else 1
        for o in operands
        if isinstance(o, (bool, int, float, complex))
    ]
    if scalar_kinds and max(scalar_kinds) > kind_rank(result):
        result = ("bool", "int64", "float32", "complex64")[max(scalar_kinds)]
    return result


def _widest(dtypes) -> str | None:
    """The highest-category, then largest, dtype of ``dtypes`` (canonical names)."""
    return max((canonical_dtype(d) for d in dtypes), key=lambda d: (kind_rank(d), itemsize(d)), default=None)


def elementwise(a: OpArgs, flops_per_element: int, operands, *, bool_result: bool = False) -> Work:
    """Work of an elementwise op whose operands are the arguments named in ``operands``.

    ``operands`` holds ``(index, name)`` pairs; tensor operands are read, the (broadcast) output
    is written: the first operand itself for an in-place op, else the recorded output or one
    built from the broadcast shape and result type.
    """
    values = [a.operand(index, name) for index, name in operands]
    tensors = [v for v in values if isinstance(v, TensorMeta)]
    if not tensors:
        raise FormulaInputError(f"{a.name}: no tensor operand recorded")
    shape = broadcast_shapes(*(t.shape for t in tensors))
    if a.inplace:
        out = values[0] if isinstance(values[0], TensorMeta) else tensors[0]
    else:
        out = a.output(0) or TensorMeta(shape, result_dtype(values, bool_result=bool_result))
    return Work(flops_per_element * numel(out.shape), tuple(tensors), (out,))


def _names(table: str) -> list[str]:
    return ["aten::" + word for word in table.split()]


def _register_table(tables: dict, operands, *, bool_result: bool = False) -> None:
    """Register ``{flops_per_element: "name name_ ..."}`` with a fixed operand list."""
    for weight, table in tables.items():
        builtin(*_names(table))(lambda a, weight=weight: elementwise(a, weight, operands, bool_result=bool_result))


_SELF = ((0, "self"),)
_SELF_OTHER = ((0, "self"), (1, "other"))
_GRAD_SELF = ((0, "grad_output"), (1, "self"))

# -- unary -------------------------------------------------------------------------------------
_register_table(
    {
        0: "conj_physical conj_physical_",
        1: "abs abs_ neg neg_ sign sign_ sgn sgn_ ceil ceil_ floor floor_ trunc trunc_ fix fix_ reciprocal "
        "reciprocal_ square relu relu_ bitwise_not bitwise_not_ deg2rad deg2rad_ rad2deg rad2deg_",
        2: "frac frac_",
        3: "nan_to_num nan_to_num_",
        4: "hardsigmoid hardsigmoid_",
        5: "hardswish hardswish_",
        T: "exp exp_ exp2 exp2_ expm1 expm1_ log log_ log2 log2_ log10 log10_ log1p log1p_ sqrt sqrt_ rsqrt rsqrt_ "
        "sin sin_ cos cos_ tan tan_ asin asin_ acos acos_ atan atan_ sinh sinh_ cosh cosh_ tanh tanh_ asinh "
        "asinh_ acosh acosh_ atanh atanh_ erf erf_ erfc erfc_ erfinv erfinv_ lgamma lgamma_ digamma digamma_ "
        "i0 i0_ angle",
        T + 2: "sigmoid sigmoid_ logit logit_ sinc sinc_",
        T + 3: "silu silu_",
        T + 4: "elu elu_ selu selu_ celu celu_",
        2 * T + 3: "softplus log_sigmoid",
        3 * T + 2: "mish mish_",
    },
    _SELF,
)
_register_table({1: "isnan isinf isfinite isneginf isposinf signbit logical_not logical_not_"}, _SELF, bool_result=True)
_register_table(
    {1: "threshold threshold_", 2: "leaky_relu leaky_relu_ hardtanh hardtanh_ hardshrink", 3: "softshrink"}, _SELF
)
_register_table({2: "rrelu_with_noise rrelu_with_noise_"}, ((0, "self"), (1, "noise")))
_register_table({2: "_prelu_kernel prelu"}, ((0, "self"), (1, "weight")))


@builtin("aten::round", "aten::round_")
def _round(a: OpArgs) -> Work:
    # round.decimals scales by 10^d, rounds, scales back: 3 flops instead of 1.
    return elementwise(a, 3 if a.int(1, "decimals", 0, modifier=True) else 1, _SELF)


@builtin("aten::gelu", "aten::gelu_")
def _gelu(a: OpArgs) -> Work:
    # erf form: x * 0.5 * (1 + erf(x / sqrt 2)) = T + 4; tanh form adds the cubic: T + 8.
    approximate = a.modifier(1, "approximate", "none")
    return elementwise(a, T + (8 if approximate == "tanh" else 4), _SELF)


@builtin("aten::log_sigmoid_forward")
def _log_sigmoid_forward(a: OpArgs) -> Work:
    # log(1 + exp(-x)) written stably; also writes the `buffer` output (same shape as self).
    x = a.tensor(0, "self")
    buffer = a.output(1) or x
    return Work((2 * T + 3) * numel(x.shape), (x,), (a.output(0) or x, buffer))


@builtin("aten::glu")
def _glu(a: OpArgs) -> Work:
    # Splits `self` in halves a, b along dim: a * sigmoid(b) = T + 3 per output element.
    x = a.tensor(0, "self")
    dim = normalize_dim(a.int(1, "dim", -1), len(x.shape))
    shape = x.shape[:dim] + (x.shape[dim] // 2,) + x.shape[dim + 1 :]
    out = a.output(0) or TensorMeta(shape, x.dtype)
    return Work((T + 3) * numel(shape), (x,), (out,))


# -- binary ------------------------------------------------------------------------------------
_register_table(
    {
        1: "mul mul_ maximum minimum fmax fmin copysign copysign_ heaviside heaviside_ nextafter nextafter_ "
        "bitwise_and bitwise_and_ bitwise_or bitwise_or_ bitwise_xor bitwise_xor_ bitwise_left_shift "
        "bitwise_left_shift_ bitwise_right_shift bitwise_right_shift_ __and__ __iand__ __or__ __ior__ __xor__ "
        "__ixor__ __lshift__ __ilshift__ __rshift__ __irshift__",
        2: "floor_divide floor_divide_ remainder remainder_ fmod fmod_",
        T: "atan2 atan2_ float_power float_power_",
        T + 1: "xlogy xlogy_",
        T + 3: "hypot hypot_",
        2 * T + 3: "logaddexp logaddexp2",
    },
    _SELF_OTHER,
)
_register_table(
    {
        1: "eq eq_ ne ne_ lt lt_ le le_ gt gt_ ge ge_ logical_and logical_and_ logical_or "
        "logical_or_ logical_xor logical_xor_"
    },
    _SELF_OTHER,
    bool_result=True,
)


@builtin("aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::rsub", "aten::subtract", "aten::subtract_")
def _add(a: OpArgs) -> Work:
    # self + alpha * other: one add, plus a multiply when alpha != 1.
    alpha = a.float(2, "alpha", 1, modifier=True)
    return elementwise(a, 1 if alpha == 1 else 2, _SELF_OTHER)


@builtin("aten::div", "aten::div_", "aten::divide", "aten::divide_", "aten::true_divide", "aten::true_divide_")
def _div(a: OpArgs) -> Work:
    # rounding_mode "trunc"/"floor" rounds the quotient: one more flop.
    return elementwise(a, 2 if a.modifier(2, "rounding_mode", None) else 1, _SELF_OTHER)


def pow_weight(exponent) -> int:
    """x**e: small integer powers are repeated multiplies (torch special-cases them), others exp(e*log x)."""
    if (
        isinstance(exponent, (int, float))
        and not isinstance(exponent, bool)
        and float(exponent).is_integer()
        and abs(exponent) <= 3
    ):
        e = int(exponent)
        return max(abs(e) - 1, 0) + (1 if e < 0 else 0)
    return T


@builtin("aten::pow", "aten::pow_")
def _pow(a: OpArgs) -> Work:
    exponent = a.tensor_or_value(1, "exponent")
    weight = T if isinstance(exponent, TensorMeta) else pow_weight(_number(exponent))
    return elementwise(a, weight, ((0, "self"), (1, "exponent")))


def _number(value):
    """A Scalar argument as a number (Kineto writes Concrete Inputs as strings such as "2")."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise FormulaInputError(f"not a number: {value!r}") from None
    return value


# -- backward of activations -------------------------------------------------------------------
_register_table({3: "sigmoid_backward tanh_backward"}, ((0, "grad_output"), (1, "output")))  # g * (1 - y) * y
_register_table({2: "hardshrink_backward"}, ((0, "grad_out"), (1, "self")))
_register_table(
    {
        1: "threshold_backward",
        2: "hardtanh_backward leaky_relu_backward softshrink_backward",
        3: "hardsigmoid_backward logit_backward",
        5: "hardswish_backward",
        T + 4: "softplus_backward",
        T + 6: "silu_backward",
        2 * T + 8: "gelu_backward",
        3 * T + 8: "mish_backward",
    },
    _GRAD_SELF,
)
_register_table({2: "rrelu_with_noise_backward"}, ((0, "grad_output"), (1, "self"), (2, "noise")))
_register_table({T + 4: "log_sigmoid_backward"}, ((0, "grad_output"), (1, "self"), (2, "buffer")))
# elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result)
_register_table({T + 4: "elu_backward"}, ((0, "grad_output"), (5, "self_or_result")))


@builtin("aten::_prelu_kernel_backward")
def _prelu_backward(a: OpArgs) -> Work:
    # grad_input = g * (x > 0 ? 1 : w), grad_weight = g * x where x <= 0: 3 per element.
    grad, x, weight = a.tensor(0, "grad_output"), a.tensor(1, "self"), a.tensor(2, "weight")
    return Work(3 * numel(x.shape), (grad, x, weight), (a.output(0) or x, a.output(1) or x))


@builtin("aten::glu_backward")
def _glu_backward(a: OpArgs) -> Work:
    # Recomputes sigmoid(b), then grad_a = g*s, grad_b = g*a*s*(1-s): T + 5 per grad_output element.
    grad, x = a.tensor(0, "grad_output"), a.tensor(1, "self")
    return Work((T + 5) * numel(grad.shape), (grad, x), (a.output(0) or x,))


# -- ternary -----------------------------------------------------------------------------------
_register_table({3: "addcmul addcmul_ addcdiv addcdiv_"}, ((0, "self"), (1, "tensor1"), (2, "tensor2")))
_register_table({3: "lerp lerp_"}, ((0, "self"), (1, "end"), (2, "weight")))
_register_table({0: "where"}, ((0, "condition"), (1, "self"), (2, "other")))
_register_table({0: "masked_fill masked_fill_"}, ((0, "self"), (1, "mask"), (2, "value")))
_register_table({1: "clamp_min clamp_min_"}, ((0, "self"), (1, "min")))
_register_table({1: "clamp_max clamp_max_"}, ((0, "self"), (1, "max")))


@builtin("aten::clamp", "aten::clamp_", "aten::clip", "aten::clip_")
def _clamp(a: OpArgs) -> Work:
    # One compare per bound given (a bound a sizes-only source did not record counts as given).
    bounds = sum(
        a.operand(i, name) not in (None, "") or (a.has(i, name) and isinstance(a.recorded(i, name), Unknown))
        for i, name in ((1, "min"), (2, "max"))
    )
    return elementwise(a, bounds, ((0, "self"), (1, "min"), (2, "max")))


# -- Inductor's primitives (ops of torch.compile'd graphs) ---------------------------------------
builtin("prims::fma")(lambda a: elementwise(a, 2, ((0, "a"), (1, "b"), (2, "c"))))  # a * b + c
