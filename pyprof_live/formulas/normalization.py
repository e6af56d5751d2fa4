"""Batch, layer, group, instance and RMS normalization, forward and backward, every backend variant.

Flops per input element:
* statistics (batch-norm training, layer/group norm): mean and variance = 4 (add; subtract,
  square, add); RMS norm: 2 (square, add);
* normalize (x - mean) * invstd = 2 (RMS: 1); affine: 1 per weight or bias present;
* per statistics group (channel, row or group): invstd = rsqrt(var + eps) plus the two divides
  by the count = TRANSCENDENTAL + 2;
* batch norm in eval mode: normalize + affine only.
Backward: the reductions sum(g) and sum(g * xhat) with xhat recomputed = 5 per element when any
of grad_weight, grad_bias or the training-mode grad_input needs them; grad_input = 5 (training:
g - mean_g - xhat * mean_gx, times invstd * weight) or 2 (eval: g * invstd * weight).
Layer/group/RMS backward: grad_input 10 (RMS 7), grad_weight 2, grad_bias 1 by output_mask.
Bytes: the input read once, every output written once, small per-channel tensors (weight, bias,
running and saved statistics) counted where read or written.
"""

from __future__ import annotations

from math import prod

from ..records import TensorMeta
from .dtypes import canonical_dtype
from .opargs import OpArgs
from .pointwise import T
from .registry import builtin
from .work import FormulaInputError, Work, numel, present

_STATS = 4
_NORMALIZE = 2
_PER_GROUP = T + 2
_BACKWARD_REDUCE = 5


def _accumulate_dtype(dtype: str | None) -> str | None:
    """Statistics of 16-bit inputs are kept in float32 (torch's accumulate type)."""
    return "float32" if canonical_dtype(dtype) in ("float16", "bfloat16") else dtype


def _channel_stats(x: TensorMeta) -> TensorMeta:
    if len(x.shape) < 2:
        raise FormulaInputError(f"batch norm input needs a channel dim, got {x.shape}")
    return TensorMeta((x.shape[1],), _accumulate_dtype(x.dtype))


# -- batch norm --------------------------------------------------------------------------------

# name -> position of `training` (True/False when the op fixes it); running_mean/var at 3 and 4, unless no_stats.
_BATCH_NORM = {
    "aten::native_batch_norm": 5,
    "aten::_native_batch_norm_legit": 5,
    "aten::_native_batch_norm_legit_functional": 5,
    "aten::cudnn_batch_norm": 5,
    "aten::miopen_batch_norm": 5,
    "aten::batch_norm": 5,
    "aten::_batch_norm_impl_index": 5,
    "aten::_batch_norm_with_update": True,
    "aten::_batch_norm_with_update_functional": True,
    "aten::_native_batch_norm_legit_no_training": False,
    "aten::_batch_norm_no_update": False,
    "aten::instance_norm": True,
}


@builtin(*_BATCH_NORM)
def _batch_norm(a: OpArgs) -> Work:
    x, weight, bias = a.tensor(0, "input"), a.opt_tensor(1, "weight"), a.opt_tensor(2, "bias")
    if a.op.overload:
        no_stats = a.op.overload.startswith("no_stats")
    else:  # Kineto: _native_batch_norm_legit.no_stats has the bool `training` where the others have running_mean
        no_stats = a.has(3, "training") and isinstance(a.recorded(3, "training"), bool)
    training_at = _BATCH_NORM[a.name]
    if no_stats:  # _native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps)
        running, training = (), a.bool(3, "training")
    else:
        running = present(a.opt_tensor(3, "running_mean"), a.opt_tensor(4, "running_var"))
        training = training_at if isinstance(training_at, bool) else a.bool(training_at, "training")
    n = numel(x.shape)
    affine = len(present(weight, bias))
    out = a.output(0) or TensorMeta(x.shape, x.dtype)
    if not training:
        return Work((_NORMALIZE + affine) * n, (x,) + present(weight, bias) + running, (out,))
    stats = _channel_stats(x)
    groups = x.shape[1] * (x.shape[0] if a.name == "aten::instance_norm" else 1)
    flops = (_STATS + _NORMALIZE + affine) * n + _PER_GROUP * groups
    saved = (TensorMeta((groups,), stats.dtype),) * 2  # save_mean, save_invstd
    return Work(flops, (x,) + present(weight, bias) + running, (out,) + saved + running)


# name -> positions of (grad_out, input, weight, save_mean, save_invstd, train, output_mask); train True/None
# and mask None when the op fixes them (all three gradients).
_BATCH_NORM_BACKWARD = {
    "aten::native_batch_norm_backward": (0, 1, 2, 5, 6, 7, 9),
    "aten::batch_norm_backward": (0, 1, 2, 5, 6, 7, 9),
    "aten::_batch_norm_impl_index_backward": (2, 1, 3, 6, 7, 8, 10),
    "aten::cudnn_batch_norm_backward": (1, 0, 2, 5, 6, True, None),
    "aten::miopen_batch_norm_backward": (1, 0, 2, 5, 6, True, None),
}


@builtin(*_BATCH_NORM_BACKWARD)
def _batch_norm_backward(a: OpArgs) -> Work:
    grad_at, input_at, weight_at, mean_at, invstd_at, train_at, mask_at = _BATCH_NORM_BACKWARD[a.name]
    grad, x, weight = a.tensor(grad_at, "grad_out"), a.tensor(input_at, "input"), a.opt_tensor(weight_at, "weight")
    train = train_at if isinstance(train_at, bool) else a.bool(train_at, "train")
    mask = (True, True, True) if mask_at is None else a.bools(mask_at, "output_mask")
    n = numel(x.shape)
    reduce = mask[1] or mask[2] or (mask[0] and train)
    flops = _BACKWARD_REDUCE * n * reduce + (5 if train else 2) * n * mask[0]
    saved = present(a.opt_tensor(mean_at, "save_mean"), a.opt_tensor(invstd_at, "save_invstd"))
    channel = _channel_stats(x)
    grads = (
        a.output(0) or TensorMeta(x.shape, x.dtype),
        a.output(1) or TensorMeta(channel.shape, weight.dtype if weight else x.dtype),
        a.output(2) or TensorMeta(channel.shape, weight.dtype if weight else x.dtype),
    )
    return Work(flops, (grad, x) + present(weight) + saved, tuple(g for g, wanted in zip(grads, mask) if wanted))


# SyncBatchNorm's pieces: batch_norm_stats(input, eps) -> (mean, invstd); batch_norm_elemt(input, weight, bias,
# mean, invstd, eps); batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g);
# batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count).
@builtin("aten::batch_norm_stats")
def _batch_norm_stats(a: OpArgs) -> Work:
    x = a.tensor(0, "input")
    stats = _channel_stats(x)
    return Work(_STATS * numel(x.shape) + _PER_GROUP * x.shape[1], (x,), (stats, stats))


@builtin("aten::batch_norm_elemt")
def _batch_norm_elemt(a: OpArgs) -> Work:
    x, weight, bias = a.tensor(0, "input"), a.opt_tensor(1, "weight"), a.opt_tensor(2, "bias")
    reads = (x,) + present(weight, bias, a.tensor(3, "mean"), a.tensor(4, "invstd"))
    return Work(
        (_NORMALIZE + len(present(weight, bias))) * numel(x.shape),
        reads,
        (a.output(0) or TensorMeta(x.shape, x.dtype),),
    )


@builtin("aten::batch_norm_backward_reduce")
def _batch_norm_backward_reduce(a: OpArgs) -> Work:
    grad, x = a.tensor(0, "grad_out"), a.tensor(1, "input")
    stats = _channel_stats(x)
    wanted = [a.bool(5 + i, name, True, modifier=True) for i, name in enumerate(("input_g", "weight_g", "bias_g"))]
    writes = (stats, stats) * wanted[0] + (stats,) * wanted[1] + (stats,) * wanted[2]
    return Work(_BACKWARD_REDUCE * numel(x.shape), (grad, x, a.tensor(2, "mean"), a.tensor(3, "invstd")), writes)


@builtin("aten::batch_norm_backward_elemt")
def _batch_norm_backward_elemt(a: OpArgs) -> Work:
    grad, x = a.tensor(0, "grad_out"), a.tensor(1, "input")
    reads = (grad, x) + present(
        a.tensor(2, "mean"),
        a.tensor(3, "invstd"),
        a.opt_tensor(4, "weight"),
        a.tensor(5, "sum_dy"),
        a.tensor(6, "sum_dy_xmu"),
    )
    return Work(5 * numel(x.shape), reads, (a.output(0) or TensorMeta(x.shape, x.dtype),))


# -- layer / group / RMS norm ------------------------------------------------------------------


def _row_norm(x: TensorMeta, groups: int, affine: int, rms: bool, reads, outputs) -> Work:
    per_element = (2 + 1 if rms else _STATS + _NORMALIZE) + affine
    return Work(per_element * numel(x.shape) + _PER_GROUP * groups, reads, outputs)


def _normalized_rows(x: TensorMeta, normalized_shape: tuple) -> tuple:
    """Shape of the per-row statistics: the leading dims, the normalized ones kept as 1."""
    axis = len(x.shape) - len(normalized_shape)
    if axis < 0 or tuple(x.shape[axis:]) != tuple(normalized_shape):
        raise FormulaInputError(f"normalized_shape {normalized_shape} does not end input shape {x.shape}")
    return x.shape[:axis] + (1,) * len(normalized_shape)


# native_layer_norm(input, normalized_shape, weight, bias, eps); layer_norm(..., cudnn_enable)
@builtin("aten::native_layer_norm", "aten::layer_norm")
def _layer_norm(a: OpArgs) -> Work:
    x, weight, bias = a.tensor(0, "input"), a.opt_tensor(2, "weight"), a.opt_tensor(3, "bias")
    stats_shape = _normalized_rows(x, a.ints(1, "normalized_shape"))
    stats = TensorMeta(stats_shape, _accumulate_dtype(x.dtype))
    outputs: tuple[TensorMeta, ...] = (
        a.output(0) or TensorMeta(x.shape, x.dtype),
        a.output(1) or stats,
        a.output(2) or stats,
    )
    if a.name == "aten::layer_norm":
        outputs = outputs[:1]
    return _row_norm(x, prod(stats_shape), len(present(weight, bias)), False, (x,) + present(weight, bias), outputs)


# _fused_rms_norm(input, normalized_shape, weight, eps) -> (output, rstd); rms_norm(same arguments)
@builtin("aten::_fused_rms_norm", "aten::rms_norm")
def _rms_norm(a: OpArgs) -> Work:
    x, weight = a.tensor(0, "input"), a.opt_tensor(2, "weight")
    stats_shape = _normalized_rows(x, a.ints(1, "normalized_shape"))
    outputs: tuple[TensorMeta, ...] = (a.output(0) or TensorMeta(x.shape, x.dtype),)
    if a.name == "aten::_fused_rms_norm":
        outputs += (a.output(1) or TensorMeta(stats_shape, _accumulate_dtype(x.dtype)),)
    return _row_norm(x, prod(stats_shape), len(present(weight)), True, (x,) + present(weight), outputs)


# native_group_norm(input, weight, bias, N, C, HxW, group, eps); group_norm(input, num_groups, weight, bias, eps, ...)
@builtin("aten::native_group_norm", "aten::group_norm")
def _group_norm(a: OpArgs) -> Work:
    native = a.name == "aten::native_group_norm"
    x = a.tensor(0, "input")
    weight, bias = (
        (a.opt_tensor(1, "weight"), a.opt_tensor(2, "bias"))
        if native
        else (a.opt_tensor(2, "weight"), a.opt_tensor(3, "bias"))
    )
    groups = a.int(6, "group") if native else a.int(1, "num_groups")
    stats = TensorMeta((x.shape[0], groups), _accumulate_dtype(x.dtype))
    outputs = (a.output(0) or TensorMeta(x.shape, x.dtype),) + (
        (a.output(1) or stats, a.output(2) or stats) if native else ()
    )
    return _row_norm(x, x.shape[0] * groups, len(present(weight, bias)), False, (x,) + present(weight, bias), outputs)


def _row_norm_backward(
    a: OpArgs, grad: TensorMeta, x: TensorMeta, weight, saved, mask, param_shape: tuple, rms: bool
) -> Work:
    n = numel(x.shape)
    flops = (7 if rms else 10) * n * mask[0] + 2 * n * mask[1] + n * mask[2]
    param_dtype = weight.dtype if weight is not None else x.dtype
    grads = (
        a.output(0) or TensorMeta(x.shape, x.dtype),
        a.output(1) or TensorMeta(param_shape, param_dtype),
        a.output(2) or TensorMeta(param_shape, param_dtype),
    )
    return Work(flops, (grad, x) + present(weight) + saved, tuple(g for g, wanted in zip(grads, mask) if wanted))


# native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
@builtin("aten::native_layer_norm_backward")
def _layer_norm_backward(a: OpArgs) -> Work:
    grad, x, weight = a.tensor(0, "grad_out"), a.tensor(1, "input"), a.opt_tensor(5, "weight")
    normalized = a.ints(2, "normalized_shape")
    saved = (a.tensor(3, "mean"), a.tensor(4, "rstd"))
    return _row_norm_backward(a, grad, x, weight, saved, a.bools(7, "output_mask"), tuple(normalized), False)


# _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, output_mask) -> (grad_input, grad_weight)
@builtin("aten::_fused_rms_norm_backward")
def _rms_norm_backward(a: OpArgs) -> Work:
    grad, x, weight = a.tensor(0, "grad_out"), a.tensor(1, "input"), a.opt_tensor(4, "weight")
    mask = tuple(a.bools(5, "output_mask"))[:2] + (False,)
    return _row_norm_backward(
        a, grad, x, weight, (a.tensor(3, "rstd"),), mask, tuple(a.ints(2, "normalized_shape")), True
    )


# native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
@builtin("aten::native_group_norm_backward")
def _group_norm_backward(a: OpArgs) -> Work:
    grad, x, weight = a.tensor(0, "grad_out"), a.tensor(1, "input"), a.opt_tensor(4, "weight")
    saved = (a.tensor(2, "mean"), a.tensor(3, "rstd"))
    return _row_norm_backward(a, grad, x, weight, saved, a.bools(9, "output_mask"), (a.int(6, "C"),), False)
