"""Loss functions, forward and backward.

Elementwise losses charge per element (see each table entry) plus the reduction: 'sum' or 'mean'
add one flop per element, 'mean' one divide; 'none' (reduction 0) writes a full-size output.
NLL gathers one log-probability per target position: 3 flops there (gather-negate-accumulate,
+1 with class weights), and its backward writes a full-size, mostly-zero grad_input.
Cross entropy (the composite op) is log_softmax plus NLL (or, for probability targets, a
multiply-add per element).
"""

from __future__ import annotations

from ..records import TensorMeta
from .opargs import OpArgs
from .pointwise import T
from .registry import builtin
from .work import FormulaInputError, Work, broadcast_shapes, numel

_NONE, _MEAN, _SUM = 0, 1, 2


def _reduced(reduction: int, shape: tuple) -> tuple:
    if reduction not in (_NONE, _MEAN, _SUM):
        raise FormulaInputError(f"unknown loss reduction {reduction}")
    return shape if reduction == _NONE else ()


def _pointwise_loss(a: OpArgs, per_element: int, reduction_at: int, extra=()) -> Work:
    """Loss(self, target[, extra tensors]) computed per element, then reduced."""
    x, target = a.tensor(0, "self"), a.tensor(1, "target")
    reads = (x, target) + tuple(t for t in (a.opt_tensor(i, name) for i, name in extra) if t is not None)
    shape = broadcast_shapes(*(t.shape for t in reads))
    reduction = a.int(reduction_at, "reduction")
    n = numel(shape)
    flops = per_element * n + (n if reduction != _NONE else 0) + (1 if reduction == _MEAN else 0)
    out = a.output(0) or TensorMeta(_reduced(reduction, shape), x.dtype)
    return Work(flops, reads, (out,))


def _pointwise_loss_backward(a: OpArgs, per_element: int, extra=()) -> Work:
    """grad_input of an elementwise loss: (grad_output, self, target, [extra...]) -> self-shaped gradient."""
    grad, x, target = a.tensor(0, "grad_output"), a.tensor(1, "self"), a.tensor(2, "target")
    reads = (grad, x, target) + tuple(t for t in (a.opt_tensor(i, name) for i, name in extra) if t is not None)
    return Work(per_element * numel(x.shape), reads, (a.output(0) or TensorMeta(x.shape, x.dtype),))


# name -> (flops per element, position of reduction, extra tensor arguments)
_FORWARD = {
    "aten::mse_loss": (2, 2, ()),  # (x - y)^2
    "aten::l1_loss": (2, 2, ()),  # |x - y|
    "aten::smooth_l1_loss": (6, 2, ()),  # d = x - y; |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta
    "aten::huber_loss": (6, 2, ()),
    "aten::soft_margin_loss": (2 * T + 2, 2, ()),  # log(1 + exp(-y x))
    "aten::binary_cross_entropy": (2 * T + 6, 3, ((2, "weight"),)),  # -w (y log x + (1 - y) log(1 - x))
    # (1 - y) x + log1p(exp(-|x|)) + max(-x, 0), weighted: 2 T + 7, +3 with pos_weight
    "aten::binary_cross_entropy_with_logits": (2 * T + 7, 4, ((2, "weight"), (3, "pos_weight"))),
    "aten::kl_div": (T + 2, 2, ()),  # y (log y - x), or exp(y) (y - x) with log_target
}


@builtin(*_FORWARD)
def _loss(a: OpArgs) -> Work:
    per_element, reduction_at, extra = _FORWARD[a.name]
    if a.name == "aten::binary_cross_entropy_with_logits" and a.opt_tensor(3, "pos_weight") is not None:
        per_element += 3
    return _pointwise_loss(a, per_element, reduction_at, extra)


# name -> flops per element of grad_input (grad_output, self, target, ...)
_BACKWARD = {
    "aten::mse_loss_backward": (3, ()),  # 2 (x - y) g / n
    "aten::smooth_l1_loss_backward": (4, ()),
    "aten::huber_loss_backward": (4, ()),
    "aten::soft_margin_loss_backward": (T + 5, ()),
    "aten::binary_cross_entropy_backward": (6, ((3, "weight"),)),  # g (x - y) / max(x (1 - x), eps) w
    "aten::l1_loss_backward": (3, ()),
}


@builtin(*_BACKWARD)
def _loss_backward(a: OpArgs) -> Work:
    per_element, extra = _BACKWARD[a.name]
    return _pointwise_loss_backward(a, per_element, extra)


def _targets(x: TensorMeta, target: TensorMeta) -> int:
    """Positions NLL picks a class for: target's elements, which must match self minus its class dim."""
    expected = x.shape[:1] + x.shape[2:] if len(x.shape) > 1 else ()
    if target.shape != expected:
        raise FormulaInputError(f"nll target {target.shape} does not match input {x.shape}")
    return numel(target.shape)


# nll_loss_forward(self, target, weight, reduction, ignore_index) -> (output, total_weight); nll_loss2d likewise.
@builtin(
    "aten::nll_loss_forward", "aten::nll_loss2d_forward", "aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss2d"
)
def _nll_loss(a: OpArgs) -> Work:
    x, target, weight = a.tensor(0, "self"), a.tensor(1, "target"), a.opt_tensor(2, "weight")
    picked = _targets(x, target)
    reduction = a.int(3, "reduction")
    flops = (3 + (weight is not None)) * picked + (reduction == _MEAN)
    reads = (target, TensorMeta((picked,), x.dtype)) + ((weight,) if weight is not None else ())
    writes: tuple[TensorMeta, ...] = (a.output(0) or TensorMeta(_reduced(reduction, target.shape), x.dtype),)
    if a.name.endswith("_forward"):
        writes += (a.output(1) or TensorMeta((), x.dtype),)  # total_weight
    return Work(flops, reads, writes)


# nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight)
@builtin("aten::nll_loss_backward", "aten::nll_loss2d_backward")
def _nll_loss_backward(a: OpArgs) -> Work:
    # grad_input is zero-filled, then -g * w / total_weight at each target position: 3 flops there.
    grad, x, target = a.tensor(0, "grad_output"), a.tensor(1, "self"), a.tensor(2, "target")
    weight, total_weight = a.opt_tensor(3, "weight"), a.tensor(6, "total_weight")
    picked = _targets(x, target)
    reads = (grad, target, total_weight) + ((weight,) if weight is not None else ())
    return Work(3 * picked, reads, (a.output(0) or TensorMeta(x.shape, x.dtype),))


# cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing)
@builtin("aten::cross_entropy_loss")
def _cross_entropy(a: OpArgs) -> Work:
    x, target, weight = a.tensor(0, "self"), a.tensor(1, "target"), a.opt_tensor(2, "weight")
    reduction = a.int(3, "reduction")
    n = numel(x.shape)
    classes = x.shape[1] if len(x.shape) > 1 else x.shape[0]
    log_softmax = (T + 4) * n + T * (n // classes if classes else 0)
    if target.shape == x.shape:  # class probabilities: -sum(p * log_softmax) -> multiply and add per element
        flops = log_softmax + 2 * n
        out_shape = _reduced(reduction, x.shape[:1] + x.shape[2:] if len(x.shape) > 1 else ())
    else:
        picked = _targets(x, target)
        flops = log_softmax + (3 + (weight is not None)) * picked
        out_shape = _reduced(reduction, target.shape)
    if a.float(5, "label_smoothing", 0.0, modifier=True):
        flops += 2 * n  # the smoothing term sums every log-probability
    flops += reduction == _MEAN
    reads = (x, target) + ((weight,) if weight is not None else ())
    return Work(flops, reads, (a.output(0) or TensorMeta(out_shape, x.dtype),))
