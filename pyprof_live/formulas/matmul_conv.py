"""Matrix multiplies and convolutions, forward and backward, with torch.utils.flop_counter's counts.

The counting functions are torch's own (``mm_flop``, ``bmm_flop``, ``conv_flop_count``), so our
numbers equal FlopCounterMode's wherever it counts: 2 flops per multiply-accumulate, bias additions
not counted (as torch). One deliberate deviation: the weight gradient of a grouped (or depthwise)
convolution. torch's ``conv_backward_flop`` counts it as a conv of input with grad_output that is
dense across channels, ``groups`` times the real work (Conv2d(8, 8, 3, groups=8, padding=1) on
2x8x10x10, backward: it says 259,200 where dgrad 28,800 + wgrad 28,800 = 57,600 are done). We count
2 flops per weight element per sample and position it is applied at: torch's number when groups is 1.

Argument mapping is ours: torch's registry feeds ``cudnn_convolution`` through the ``convolution``
signature (its ``benchmark`` flag lands in ``transposed``), which we do not repeat. Where a source
recorded no output (Kineto, nsys), the conv output shape is derived from stride/padding/dilation;
when those are not recorded either (nsys ``sizes``), the answer is ``na`` with that reason.

torch is imported on first use, so importing the formula table stays cheap for file importers.
"""

from __future__ import annotations

from math import prod
from typing import NamedTuple

from ..records import TensorMeta, Unknown
from .opargs import OpArgs
from .pointwise import TRANSCENDENTAL, result_dtype
from .registry import builtin
from .work import FormulaInputError, Work, broadcast_shapes, numel


def _torch_counter():
    from ..torch_compat import flop_counter

    return flop_counter()


def _gemm_out(a: OpArgs, m: int, n: int, batch: tuple, *operands, dtype: str | None = None) -> TensorMeta:
    """The recorded output, else (batch, m, n) in ``dtype`` (default: the operands' result type)."""
    return a.output(0) or TensorMeta(batch + (m, n), dtype or result_dtype(operands))


def _require_2d(*tensors):
    for t in tensors:
        if len(t.shape) != 2:
            raise FormulaInputError(f"expected a matrix, got shape {t.shape}")


# -- matrix multiplies -------------------------------------------------------------------------


@builtin("aten::mm", "aten::_int_mm")
def _mm(a: OpArgs) -> Work:
    # _int_mm multiplies int8 matrices into an int32 result, not the operands' dtype.
    x, y = a.tensor(0, "self"), a.tensor(1, "mat2")
    _require_2d(x, y)
    flops = _torch_counter().mm_flop(x.shape, y.shape)
    dtype = "int32" if a.name == "aten::_int_mm" else None
    return Work(flops, (x, y), (_gemm_out(a, x.shape[0], y.shape[1], (), x, y, dtype=dtype),))


@builtin("aten::addmm", "aten::addmm_", "aten::_addmm_activation")
def _addmm(a: OpArgs) -> Work:
    # beta * self + alpha * (mat1 @ mat2): the bias term is not counted (as torch); _addmm_activation
    # adds its relu (1) or gelu (T + 4) per output element.
    bias, x, y = a.tensor(0, "self"), a.tensor(1, "mat1"), a.tensor(2, "mat2")
    _require_2d(x, y)
    flops = _torch_counter().mm_flop(x.shape, y.shape)
    if a.name == "aten::_addmm_activation":
        flops += (TRANSCENDENTAL + 4 if a.bool(5, "use_gelu", False, modifier=True) else 1) * x.shape[0] * y.shape[1]
    out = bias if a.inplace else _gemm_out(a, x.shape[0], y.shape[1], (), x, y)
    return Work(flops, (bias, x, y), (out,))


@builtin("aten::_scaled_mm")
def _scaled_mm(a: OpArgs) -> Work:
    # fp8 GEMM with per-tensor/row scales; output dtype from out_dtype (default: self's).
    x, y = a.tensor(0, "self"), a.tensor(1, "mat2")
    _require_2d(x, y)
    scales = tuple(
        t
        for t in (
            a.tensor(2, "scale_a"),
            a.tensor(3, "scale_b"),
            a.opt_tensor(4, "bias"),
            a.opt_tensor(5, "scale_result"),
        )
        if t is not None
    )
    out = a.output(0) or TensorMeta((x.shape[0], y.shape[1]), a.dtype(6, "out_dtype") or x.dtype)
    return Work(_torch_counter().mm_flop(x.shape, y.shape), (x, y) + scales, (out,))


@builtin("aten::bmm")
def _bmm(a: OpArgs) -> Work:
    x, y = a.tensor(0, "self"), a.tensor(1, "mat2")
    flops = _torch_counter().bmm_flop(x.shape, y.shape)
    return Work(flops, (x, y), (_gemm_out(a, x.shape[1], y.shape[2], x.shape[:1], x, y),))


@builtin("aten::baddbmm", "aten::baddbmm_")
def _baddbmm(a: OpArgs) -> Work:
    bias, x, y = a.tensor(0, "self"), a.tensor(1, "batch1"), a.tensor(2, "batch2")
    flops = _torch_counter().bmm_flop(x.shape, y.shape)
    out = bias if a.inplace else _gemm_out(a, x.shape[1], y.shape[2], x.shape[:1], x, y)
    return Work(flops, (bias, x, y), (out,))


@builtin("aten::addbmm", "aten::addbmm_")
def _addbmm(a: OpArgs) -> Work:
    # Sums the batch of products into one (m, n) matrix: bmm flops (the batch sum is the accumulation).
    bias, x, y = a.tensor(0, "self"), a.tensor(1, "batch1"), a.tensor(2, "batch2")
    flops = _torch_counter().bmm_flop(x.shape, y.shape)
    out = bias if a.inplace else _gemm_out(a, x.shape[1], y.shape[2], (), x, y)
    return Work(flops, (bias, x, y), (out,))


def matmul_dims(x: tuple, y: tuple) -> tuple[tuple, int, int, int, tuple]:
    """(batch, m, n, k, output shape) of torch.matmul(x, y), with its 1-D and broadcast-batch rules."""
    if not x or not y:
        raise FormulaInputError("matmul of a 0-dim tensor")
    m, k = (1, x[0]) if len(x) == 1 else x[-2:]
    k2, n = (y[0], 1) if len(y) == 1 else y[-2:]
    if k != k2:
        raise FormulaInputError(f"matmul: inner dimensions differ: {x} @ {y}")
    batch = broadcast_shapes(x[:-2], y[:-2])
    out = batch + ((m,) if len(x) > 1 else ()) + ((n,) if len(y) > 1 else ())
    return batch, m, n, k, out


@builtin("aten::matmul", "aten::linear", "aten::mv", "aten::dot", "aten::vdot")
def _matmul(a: OpArgs) -> Work:
    # 2 * batch * m * n * k; bytes are the operands and the output (with the batch factor PyProf missed).
    # linear(input, weight, bias) is input @ weight.T (+ bias, not counted, as addmm).
    linear = a.name == "aten::linear"
    x = a.tensor(0, "input" if linear else "self")
    y = a.tensor(1, "weight" if linear else _SECOND_OPERAND.get(a.name, "other"))
    batch, m, n, k, out_shape = matmul_dims(x.shape, y.shape[::-1] if linear else y.shape)
    bias = a.opt_tensor(2, "bias") if linear else None
    out = a.output(0) or TensorMeta(out_shape, result_dtype((x, y)))
    return Work(2 * prod(batch) * m * n * k, (x, y) + ((bias,) if bias is not None else ()), (out,))


_SECOND_OPERAND = {"aten::mv": "vec", "aten::dot": "tensor", "aten::vdot": "other"}


@builtin("aten::addmv", "aten::addmv_")
def _addmv(a: OpArgs) -> Work:
    bias, mat, vec = a.tensor(0, "self"), a.tensor(1, "mat"), a.tensor(2, "vec")
    _, m, _n, k, _ = matmul_dims(mat.shape, vec.shape)
    out = bias if a.inplace else a.output(0) or TensorMeta((m,), result_dtype((mat, vec)))
    return Work(2 * m * k, (bias, mat, vec), (out,))


@builtin("aten::outer", "aten::ger", "aten::addr", "aten::addr_")
def _outer(a: OpArgs) -> Work:
    # One multiply per output element (addr: alpha * outer + beta * self, the scaling not counted).
    first = 1 if a.name.startswith("aten::addr") else 0
    x, y = a.tensor(first, "vec1" if first else "self"), a.tensor(first + 1, "vec2")
    reads = (x, y) + ((a.tensor(0, "self"),) if first else ())
    shape = (numel(x.shape), numel(y.shape))
    out = reads[2] if a.inplace else a.output(0) or TensorMeta(shape, result_dtype((x, y)))
    return Work(prod(shape), reads, (out,))


# -- convolutions ------------------------------------------------------------------------------

# name -> positions of (bias, stride, padding, dilation, transposed, output_padding, groups); None = absent
# (a fixed value is given instead: transposed False, output_padding 0, groups 1, dilation 1).
_CONV_ARGS = {
    "aten::convolution": (2, 3, 4, 5, 6, 7, 8),
    "aten::_convolution": (2, 3, 4, 5, 6, 7, 8),
    "aten::convolution_overrideable": (2, 3, 4, 5, 6, 7, 8),
    "aten::conv1d": (2, 3, 4, 5, None, None, 6),
    "aten::conv2d": (2, 3, 4, 5, None, None, 6),
    "aten::conv3d": (2, 3, 4, 5, None, None, 6),
    "aten::_convolution_mode": (2, 3, 4, 5, None, None, 6),
    "aten::conv_transpose1d": (2, 3, 4, 7, True, 5, 6),
    "aten::conv_transpose2d": (2, 3, 4, 7, True, 5, 6),
    "aten::conv_transpose3d": (2, 3, 4, 7, True, 5, 6),
    "aten::cudnn_convolution": (None, 3, 2, 4, None, None, 5),
    "aten::cudnn_convolution_transpose": (None, 4, 2, 5, True, 3, 6),
    "aten::cudnn_convolution_relu": (2, 3, 4, 5, None, None, 6),
    "aten::cudnn_convolution_add_relu": (4, 5, 6, 7, None, None, 8),  # (self, weight, z, alpha, bias, ...)
    "aten::miopen_convolution": (2, 4, 3, 5, None, None, 6),
    "aten::miopen_depthwise_convolution": (2, 4, 3, 5, None, None, 6),
    "aten::miopen_convolution_transpose": (2, 5, 3, 6, True, 4, 7),
    "aten::mkldnn_convolution": (2, 4, 3, 5, None, None, 6),
    "aten::_nnpack_spatial_convolution": (2, 4, 3, None, None, None, None),
    # slow/thnn kernels: (self, weight, kernel_size, bias, stride, padding[, dilation | output_padding, dilation])
    "aten::_slow_conv2d_forward": (3, 4, 5, None, None, None, None),
    "aten::thnn_conv2d": (3, 4, 5, None, None, None, None),
    "aten::slow_conv3d": (3, 4, 5, None, None, None, None),
    "aten::slow_conv3d_forward": (3, 4, 5, None, None, None, None),
    "aten::slow_conv_dilated2d": (3, 4, 5, 6, None, None, None),
    "aten::slow_conv_dilated3d": (3, 4, 5, 6, None, None, None),
    "aten::_conv_depthwise2d": (3, 4, 5, 6, None, None, None),
    "aten::conv_depthwise3d": (3, 4, 5, 6, None, None, None),
    "aten::slow_conv_transpose2d": (3, 4, 5, 7, True, 6, None),
    "aten::slow_conv_transpose3d": (3, 4, 5, 7, True, 6, None),
}


def _conv_param(a: OpArgs, position, name: str, spatial: int, neutral: int) -> tuple:
    """stride/padding/dilation/output_padding as one int per spatial dim (a single value broadcasts)."""
    if position is None:
        return (neutral,) * spatial
    values = a.ints(position, name)
    if len(values) == 1:
        return values * spatial
    if len(values) != spatial:
        raise FormulaInputError(f"{name} {values} does not match {spatial} spatial dims")
    return values


def conv_output_shape(
    x: tuple, w: tuple, stride, padding, dilation, transposed: bool, output_padding, groups: int
) -> tuple:
    """Output shape of a (transposed) convolution, torch's arithmetic."""
    kernel = w[2:]
    if transposed:
        spatial = tuple(
            (i - 1) * s - 2 * p + d * (k - 1) + op + 1
            for i, k, s, p, d, op in zip(x[2:], kernel, stride, padding, dilation, output_padding)
        )
        channels = w[1] * groups
    else:
        spatial = tuple(
            (i + 2 * p - d * (k - 1) - 1) // s + 1 for i, k, s, p, d in zip(x[2:], kernel, stride, padding, dilation)
        )
        channels = w[0]
    if any(size <= 0 for size in spatial):
        raise FormulaInputError(f"convolution output would be empty: input {x}, weight {w}")
    return (x[0], channels) + spatial


def _conv_inputs(a: OpArgs, positions: tuple | None = None, x_at: int = 0, w_at: int = 1):
    """(input, weight, bias, transposed, output TensorMeta) of a forward convolution op; ``positions`` as in
    _CONV_ARGS (default: the op's entry there), the input and weight at ``x_at`` and ``w_at``."""
    bias_at, stride_at, padding_at, dilation_at, transposed_at, output_padding_at, groups_at = (
        positions or _CONV_ARGS[a.name]
    )
    x, w = a.tensor(x_at, "input"), a.tensor(w_at, "weight")
    if len(x.shape) != len(w.shape) or len(x.shape) < 3:
        if len(x.shape) == len(w.shape) - 1:  # unbatched conv1d/2d/3d: (C, *spatial)
            x = TensorMeta((1,) + x.shape, x.dtype, None)
        else:
            raise FormulaInputError(f"convolution input {x.shape} and weight {w.shape} disagree")
    bias = a.opt_tensor(bias_at, "bias") if bias_at is not None else None
    transposed = transposed_at is True or (transposed_at is not None and a.bool(transposed_at, "transposed"))
    out = a.output(0)
    if out is None:
        spatial = len(x.shape) - 2
        padding = a.value(padding_at, "padding") if padding_at is not None else 0
        if padding in ("same", "valid"):  # conv2d(padding="same"): output spatial = input spatial (stride 1)
            spatial_out = (
                x.shape[2:]
                if padding == "same"
                else tuple(
                    i - d * (k - 1)
                    for i, k, d in zip(x.shape[2:], w.shape[2:], _conv_param(a, dilation_at, "dilation", spatial, 1))
                )
            )
            out = TensorMeta((x.shape[0], w.shape[0]) + tuple(spatial_out), x.dtype)
        else:
            shape = conv_output_shape(
                x.shape,
                w.shape,
                _conv_param(a, stride_at, "stride", spatial, 1),
                _conv_param(a, padding_at, "padding", spatial, 0),
                _conv_param(a, dilation_at, "dilation", spatial, 1),
                transposed,
                _conv_param(a, output_padding_at, "output_padding", spatial, 0),
                a.int(groups_at, "groups") if groups_at is not None else 1,
            )
            out = TensorMeta(shape, x.dtype)
    return x, w, bias, transposed, out


@builtin(*_CONV_ARGS)
def _convolution(a: OpArgs) -> Work:
    x, w, bias, transposed, out = _conv_inputs(a)
    flops = _torch_counter().conv_flop_count(list(x.shape), list(w.shape), list(out.shape), transposed=transposed)
    reads = (x, w) + ((bias,) if bias is not None else ())
    if a.name == "aten::cudnn_convolution_add_relu":
        reads += (a.tensor(2, "z"),)
    return Work(flops, reads, (out,))


def _wgrad_flops(grad: TensorMeta, x: TensorMeta, weight_shape: tuple, transposed: bool) -> int:
    """2 flops per weight element for each sample and each position it is applied at: the output's positions
    for a convolution, the input's for a transposed one (padding ignored, as torch's forward count)."""
    positions = (x if transposed else grad).shape[2:]
    return 2 * prod(weight_shape) * grad.shape[0] * prod(positions)


def _conv_backward(
    a: OpArgs, grad: TensorMeta, x: TensorMeta, w: TensorMeta, transposed: bool, mask, grad_bias_channels: int
) -> Work:
    """dgrad (mask[0]: the opposite-transposedness conv of grad_output with the weight, torch's count) and
    wgrad (mask[1], ours: see the module docstring on groups); the bias gradient (mask[2], a sum over
    grad_output) is not counted in flops, as torch, but its write is in the bytes."""
    grads = (
        a.output(0) or TensorMeta(x.shape, x.dtype),
        a.output(1) or TensorMeta(w.shape, w.dtype),
        a.output(2) or TensorMeta((grad_bias_channels,), grad.dtype),
    )
    mask = tuple(mask) + (False,) * (3 - len(mask))
    dgrad = (
        _torch_counter().conv_flop_count(
            list(grad.shape), list(w.shape), list(grads[0].shape), transposed=not transposed
        )
        if mask[0]
        else 0
    )
    flops = dgrad + (_wgrad_flops(grad, x, w.shape, transposed) if mask[1] else 0)
    reads = (grad,) + ((w,) if mask[0] else ()) + ((x,) if mask[1] else ())
    return Work(flops, reads, tuple(g for g, wanted in zip(grads, mask) if wanted))


@builtin("aten::convolution_backward", "aten::convolution_backward_overrideable")
def _convolution_backward(a: OpArgs) -> Work:
    # (grad_output, input, weight, [bias_sizes,] stride, padding, dilation, transposed, output_padding, groups,
    #  output_mask); _overrideable has no bias_sizes.
    shift = 0 if a.name == "aten::convolution_backward" else -1
    grad, x, w = a.tensor(0, "grad_output"), a.tensor(1, "input"), a.tensor(2, "weight")
    transposed = a.bool(7 + shift, "transposed")
    channels = w.shape[1] * a.int(9 + shift, "groups") if transposed else w.shape[0]
    return _conv_backward(a, grad, x, w, transposed, a.bools(10 + shift, "output_mask"), channels)


@builtin("aten::cudnn_convolution_backward", "aten::miopen_convolution_backward")
def _cudnn_conv_backward(a: OpArgs) -> Work:
    # Pre-2.0 (self, grad_output, weight, padding, stride, dilation, groups, benchmark, deterministic,
    # allow_tf32, output_mask[2]): every shape is an argument, so no stride is needed.
    x, grad, w = a.tensor(0, "self"), a.tensor(1, "grad_output"), a.tensor(2, "weight")
    return _conv_backward(a, grad, x, w, False, a.bools(10, "output_mask")[:2], w.shape[0])


@builtin("aten::_slow_conv2d_backward")
def _slow_conv2d_backward(a: OpArgs) -> Work:
    # (grad_output, self, weight, kernel_size, stride, padding, output_mask)
    grad, x, w = a.tensor(0, "grad_output"), a.tensor(1, "self"), a.tensor(2, "weight")
    return _conv_backward(a, grad, x, w, False, a.bools(6, "output_mask"), w.shape[0])


@builtin("aten::cudnn_convolution_backward_input", "aten::miopen_convolution_backward_input")
def _conv_dgrad(a: OpArgs) -> Work:
    # Pre-2.0 split backward: (self_size, grad_output, weight, padding, stride, ...). dgrad flops need only
    # grad_output and weight (a transposed conv over grad_output's positions); bytes need self_size.
    grad, w = a.tensor(1, "grad_output"), a.tensor(2, "weight")
    flops = _torch_counter().conv_flop_count(list(grad.shape), list(w.shape), None, transposed=True)
    try:
        grad_input: TensorMeta | Unknown = a.output(0) or TensorMeta(tuple(a.ints(0, "self_size")), grad.dtype)
    except FormulaInputError as missing:
        grad_input = Unknown(missing.reason.removeprefix("inputs lack "))
    return Work(flops, (grad, w), (grad_input,))


@builtin("aten::cudnn_convolution_backward_weight", "aten::miopen_convolution_backward_weight")
def _conv_wgrad(a: OpArgs) -> Work:
    # (weight_size, grad_output, self, ...): a conv of input with grad_output producing the weight shape.
    grad, x = a.tensor(1, "grad_output"), a.tensor(2, "self")
    grad_weight = a.output(0) or TensorMeta(tuple(a.ints(0, "weight_size")), grad.dtype)
    return Work(_wgrad_flops(grad, x, grad_weight.shape, False), (grad, x), (grad_weight,))


@builtin("aten::cudnn_convolution_backward_bias", "aten::miopen_convolution_backward_bias")
def _conv_bias_grad(a: OpArgs) -> Work:
    # Sum of grad_output over batch and spatial dims: one add per element.
    grad = a.tensor(0, "grad_output")
    return Work(numel(grad.shape), (grad,), (a.output(0) or TensorMeta(grad.shape[1:2], grad.dtype),))


# -- Inductor's CPU GEMMs and convolutions with their epilogues --------------------------------
# With torch._inductor.config.freezing (PyTorch's advice for CPU inference) Inductor prepacks the weights for
# oneDNN / MKL and calls one extern per GEMM or convolution, with the pointwise ops after it fused in: ``attr``
# (unary: relu, gelu, ...) and ``binary_attr`` (add, ...; the ``_`` variant writes into ``other``). Counted as
# the GEMM or convolution (as torch counts them, bias not counted) plus each fused op's flops per output
# element, as its eager formula counts them; a prepacked weight is read as recorded (MKL's packed buffer).

#: flops per output element of a fused unary op (oneDNN's attr names), as pointwise.py counts the eager op.
_UNARY_EPILOGUE = {
    "none": 0,
    "relu": 1,
    "hardtanh": 2,
    "leaky_relu": 2,
    "hardsigmoid": 4,
    "hardswish": 5,
    "tanh": TRANSCENDENTAL,
    "sigmoid": TRANSCENDENTAL + 2,
    "swish": TRANSCENDENTAL + 3,
    "gelu": TRANSCENDENTAL + 4,
}
_BINARY_EPILOGUE = {"add": 1, "sub": 1, "mul": 1, "div": 1}


class _Layout(NamedTuple):
    """Schema positions of a fused op's arguments; the fused ops' as (position, argument name), None: not fused."""

    x: int
    weight: int
    bias: int
    other: int | None = None
    unary: tuple[int, str] | None = None
    algorithm: tuple[int, str] | None = None  # gelu's: "tanh" or "none"
    binary: tuple[int, str] | None = None


#: (X, W, B, padding, stride, dilation, groups, attr, scalars, algorithm); .binary: (X, other, W, B, padding,
#: stride, dilation, groups, binary_attr, alpha, unary_attr, unary_scalars, unary_algorithm), ``other`` first in
#: the in-place ``_convolution_pointwise_``.
_CONV_UNARY = _Layout(0, 1, 2, unary=(7, "attr"), algorithm=(9, "algorithm"))
_CONV_BINARY = _Layout(0, 2, 3, 1, (10, "unary_attr"), (12, "unary_algorithm"), (8, "binary_attr"))
_CONV_BINARY_INPLACE = _CONV_BINARY._replace(x=1, other=0)


def _epilogue_flops(a: OpArgs, layout: _Layout, out: TensorMeta) -> int:
    per_element = 0
    if layout.unary is not None:
        unary = a.value(*layout.unary, None) or "none"
        if unary not in _UNARY_EPILOGUE:
            raise FormulaInputError(f"no formula for the fused {unary!r}")
        per_element = _UNARY_EPILOGUE[unary]
        if unary == "gelu" and layout.algorithm is not None and a.value(*layout.algorithm, None) == "tanh":
            per_element += 4  # the tanh form's cubic (pointwise.py's gelu)
    if layout.binary is not None:
        binary = a.value(*layout.binary)
        if binary not in _BINARY_EPILOGUE:
            raise FormulaInputError(f"no formula for the fused {binary!r}")
        per_element += _BINARY_EPILOGUE[binary]
    return per_element * numel(out.shape)


def _binary(a: OpArgs, by_count: bool) -> bool:
    """The .binary overload, as the source recorded it, or as the number of arguments says where it recorded none."""
    return a.op.overload == "binary" if a.op.overload else by_count


def _fused_reads(a: OpArgs, layout: _Layout, x: TensorMeta, weight: TensorMeta) -> tuple:
    bias = a.opt_tensor(layout.bias, "B")
    other = a.tensor(layout.other, "other") if layout.other is not None else None
    return tuple(t for t in (x, weight, bias, other) if t is not None)


@builtin("mkldnn::_convolution_pointwise", "mkldnn::_convolution_pointwise_")
def _mkldnn_convolution(a: OpArgs) -> Work:
    if a.inplace:
        layout = _CONV_BINARY_INPLACE
    else:  # a source without overloads (Kineto, nsys): the binary form has 13 arguments, the unary 10
        layout = _CONV_BINARY if _binary(a, a.has(10, "unary_attr")) else _CONV_UNARY
    # padding, stride, dilation and groups follow the bias: _CONV_ARGS' (bias, stride, padding, dilation, transposed,
    # output_padding, groups), as mkldnn_convolution's
    after = layout.bias + 1
    positions = (layout.bias, after + 1, after, after + 2, None, None, after + 3)
    x, w, _, _, out = _conv_inputs(a, positions, layout.x, layout.weight)
    groups = a.int(after + 3, "groups")
    if w.shape[1] * groups != x.shape[1]:  # arguments read at the wrong places (a form the source did not name)
        raise FormulaInputError(f"convolution input {x.shape} and weight {w.shape} (groups {groups}) disagree")
    flops = _torch_counter().conv_flop_count(list(x.shape), list(w.shape), list(out.shape), transposed=False)
    flops += _epilogue_flops(a, layout, out)
    return Work(flops, _fused_reads(a, layout, x, w), (out,))


#: mkldnn::_linear_pointwise (X, W, B, attr, scalars, algorithm); .binary (X, other, W, B, attr: the binary op).
_LINEAR_UNARY = _Layout(0, 1, 2, unary=(3, "attr"), algorithm=(5, "algorithm"))
_LINEAR_BINARY = _Layout(0, 2, 3, other=1, binary=(4, "attr"))
#: mkl::_mkl_linear (X, MKL_W: the packed weight, ORI_W: the weight it was packed from, B, batch_size): no epilogue.
_MKL_LINEAR = _Layout(0, 1, 3)


@builtin("mkldnn::_linear_pointwise", "mkl::_mkl_linear")
def _fused_linear(a: OpArgs) -> Work:
    if a.name == "mkl::_mkl_linear":
        layout, logical = _MKL_LINEAR, a.tensor(2, "ORI_W")  # the packed buffer's shape is MKL's layout
    else:
        # a source without overloads: the binary form has 5 arguments, the unary 6
        layout = _LINEAR_BINARY if _binary(a, not a.has(5, "algorithm")) else _LINEAR_UNARY
        logical = a.tensor(layout.weight, "W")
    x, packed = a.tensor(layout.x, "X"), a.tensor(layout.weight, "W")
    if len(logical.shape) != 2 or not x.shape or x.shape[-1] != logical.shape[1]:
        raise FormulaInputError(f"linear input {x.shape} and weight {logical.shape} disagree")
    rows = prod(x.shape[:-1])
    out = a.output(0) or TensorMeta(x.shape[:-1] + logical.shape[:1], x.dtype)
    flops = _torch_counter().mm_flop((rows, x.shape[-1]), (x.shape[-1], logical.shape[0]))
    flops += _epilogue_flops(a, layout, out)
    return Work(flops, _fused_reads(a, layout, x, packed), (out,))
