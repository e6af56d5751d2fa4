"""Optimizer ops: the ``_foreach_*`` family and the fused Adam/AdamW/SGD/Adagrad kernels.

A ``_foreach_<op>`` is ``<op>`` applied to each tensor of its lists, so its flops per element are
the pointwise weight of ``<op>`` (pointwise.py), summed over the list; its overloads differ in
the second operand (``List``: a second tensor list, ``Scalar``/``ScalarList``: numbers,
``Tensor``: one 0-dim tensor). Bytes: every list tensor read once, the results (or, in place, the
first list) written once.

Fused optimizers, flops per parameter element:
* Adam/AdamW: weight decay (AdamW: p *= 1 - lr*wd = 1; Adam: g += wd*p = 2), m = lerp(m, g, 1-b1) = 3,
  v = b2*v + (1-b2)*g*g = 4, denom = sqrt(v)/sqrt(bc2) + eps = TRANSCENDENTAL + 2,
  p -= lr/bc1 * m/denom = 3; amsgrad +1 (max), grad_scale +1 (unscale);
* SGD: weight decay 2, momentum buf = m*buf + (1-d)*g = 3, nesterov 2, p -= lr*g = 2;
* Adagrad: weight decay 2, sum += g*g = 2, p -= clr * g / (sqrt(sum) + eps) = TRANSCENDENTAL + 3.
Bytes: params, grads and state read; params and state written.
"""

from __future__ import annotations

from ..records import TensorMeta
from .opargs import OpArgs
from .pointwise import TRANSCENDENTAL, pow_weight
from .registry import builtin
from .work import FormulaInputError, Work, numel

# _foreach_<op> -> (flops per element, number of tensor-list operands when every operand is a list)
_FOREACH = {
    # unary
    "abs": (1, 1),
    "neg": (1, 1),
    "sign": (1, 1),
    "ceil": (1, 1),
    "floor": (1, 1),
    "round": (1, 1),
    "trunc": (1, 1),
    "frac": (2, 1),
    "reciprocal": (1, 1),
    "zero": (0, 1),
    "exp": (TRANSCENDENTAL, 1),
    "expm1": (TRANSCENDENTAL, 1),
    "log": (TRANSCENDENTAL, 1),
    "log10": (TRANSCENDENTAL, 1),
    "log1p": (TRANSCENDENTAL, 1),
    "log2": (TRANSCENDENTAL, 1),
    "sqrt": (TRANSCENDENTAL, 1),
    "rsqrt": (TRANSCENDENTAL, 1),
    "sin": (TRANSCENDENTAL, 1),
    "cos": (TRANSCENDENTAL, 1),
    "tan": (TRANSCENDENTAL, 1),
    "asin": (TRANSCENDENTAL, 1),
    "acos": (TRANSCENDENTAL, 1),
    "atan": (TRANSCENDENTAL, 1),
    "sinh": (TRANSCENDENTAL, 1),
    "cosh": (TRANSCENDENTAL, 1),
    "tanh": (TRANSCENDENTAL, 1),
    "erf": (TRANSCENDENTAL, 1),
    "erfc": (TRANSCENDENTAL, 1),
    "lgamma": (TRANSCENDENTAL, 1),
    "sigmoid": (TRANSCENDENTAL + 2, 1),
    # binary: self op other
    "add": (1, 2),
    "sub": (1, 2),
    "mul": (1, 2),
    "div": (1, 2),
    "maximum": (1, 2),
    "minimum": (1, 2),
    "clamp_min": (1, 2),
    "clamp_max": (1, 2),
    "copy": (0, 2),
    "pow": (TRANSCENDENTAL, 2),
    # ternary
    "addcmul": (3, 3),
    "addcdiv": (3, 3),
    "lerp": (3, 3),
}


def _split_foreach(name: str) -> tuple[str, bool]:
    """'aten::_foreach_add_' -> ('add', True)."""
    base = name.removeprefix("aten::_foreach_")
    return base.rstrip("_"), base.endswith("_")


# Schema names of the operands after `self`, which vary by overload (List, Scalar, ScalarList, Tensor).
_OPERAND_NAMES = {
    "addcmul": ("tensor1", "tensor2"),
    "addcdiv": ("tensor1", "tensor2"),
    "lerp": ("tensors1", "weight"),
    "pow": ("exponent",),
    "copy": ("src",),
}
_SECOND_OPERAND = {"Scalar": "scalar", "ScalarList": "scalars"}


def _foreach_operands(a: OpArgs, op: str, lists: int) -> tuple[tuple, list]:
    """The first tensor list and the other operands in order (tensor lists, 0-dim tensors, numbers, number lists)."""
    names = _OPERAND_NAMES.get(op) or (_SECOND_OPERAND.get(a.op.overload, "other"),)
    if op == "lerp" and a.op.overload == "List":
        names = ("tensors1", "weights")
    return a.tensor_list(0, "self"), [a.value(i, names[i - 1], None) for i in range(1, lists)]


@builtin(*(f"aten::_foreach_{op}{suffix}" for op in _FOREACH for suffix in ("", "_")))
def _foreach(a: OpArgs) -> Work:
    op, inplace = _split_foreach(a.name)
    per_element, lists = _FOREACH[op]
    first, others = _foreach_operands(a, op, lists)
    if op == "add" or op == "sub":  # alpha on the List/Tensor overloads: one more multiply
        alpha = a.float(lists, "alpha", 1, modifier=True) if isinstance(others[0], (tuple, list, TensorMeta)) else 1
        per_element += alpha != 1
    if op == "pow" and not isinstance(others[0], (tuple, list, TensorMeta)):
        per_element = pow_weight(float(others[0]))
    reads = [] if op == "zero" else list(first)
    for other in others:
        if isinstance(other, TensorMeta):  # the .Tensor overload's 0-dim operand (TensorMeta is a tuple too)
            reads.append(other)
        elif isinstance(other, (tuple, list)):
            if len(other) != len(first):
                raise FormulaInputError(f"{a.name}: operand lists of lengths {len(first)} and {len(other)}")
            reads += [t for t in other if isinstance(t, TensorMeta)]
    flops = per_element * sum(numel(t.shape) for t in first)
    if inplace:
        return Work(flops, tuple(reads), first)
    outputs = a.output_list() or tuple(TensorMeta(t.shape, t.dtype) for t in first)
    return Work(flops, tuple(reads), outputs)


@builtin("aten::_foreach_norm")
def _foreach_norm(a: OpArgs) -> Work:
    # _foreach_norm(self, ord, dtype): one norm per tensor; 2 flops per element (square/abs, add) + a root each.
    tensors = a.tensor_list(0, "self")
    flops = 2 * sum(numel(t.shape) for t in tensors) + TRANSCENDENTAL * len(tensors)
    dtype = a.dtype(2, "dtype")
    return Work(flops, tensors, tuple(TensorMeta((), dtype or t.dtype) for t in tensors))


@builtin("aten::_foreach_max")
def _foreach_max(a: OpArgs) -> Work:
    tensors = a.tensor_list(0, "self")
    return Work(sum(numel(t.shape) for t in tensors), tensors, tuple(TensorMeta((), t.dtype) for t in tensors))


def _state_lists(a: OpArgs, names: tuple) -> list[tuple]:
    return [a.tensor_list(i, name) for i, name in enumerate(names)]


# _fused_adam_/_fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1,
#                            beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf)
@builtin("aten::_fused_adam_", "aten::_fused_adamw_", "aten::_fused_adam", "aten::_fused_adamw")
def _fused_adam(a: OpArgs) -> Work:
    params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps = _state_lists(
        a, ("self", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs", "state_steps")
    )
    amsgrad = a.bool(11, "amsgrad")
    decay = a.float(9, "weight_decay") != 0
    grad_scale = a.opt_tensor(13, "grad_scale")
    per_element = 3 + 4 + TRANSCENDENTAL + 2 + 3 + amsgrad + (grad_scale is not None)
    if decay:
        per_element += 1 if "adamw" in a.name else 2
    state = exp_avgs + exp_avg_sqs + (max_sqs if amsgrad else ())
    flops = per_element * sum(numel(p.shape) for p in params)
    return Work(flops, params + grads + state + steps, params + state)


# _fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov, maximize,
#             is_first_step, grad_scale, found_inf)
@builtin("aten::_fused_sgd_", "aten::_fused_sgd")
def _fused_sgd(a: OpArgs) -> Work:
    params, grads, buffers = _state_lists(a, ("self", "grads", "momentum_buffer_list"))
    momentum = a.float(4, "momentum") != 0
    per_element = 2 + 2 * (a.float(3, "weight_decay") != 0) + 3 * momentum + 2 * (momentum and a.bool(7, "nesterov"))
    state = buffers if momentum else ()
    return Work(per_element * sum(numel(p.shape) for p in params), params + grads + state, params + state)


# _fused_adagrad_(self, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, maximize, ...)
@builtin("aten::_fused_adagrad_", "aten::_fused_adagrad")
def _fused_adagrad(a: OpArgs) -> Work:
    params, grads, sums, steps = _state_lists(a, ("self", "grads", "state_sums", "state_steps"))
    per_element = 2 + TRANSCENDENTAL + 3 + 2 * (a.float(6, "weight_decay") != 0)
    return Work(per_element * sum(numel(p.shape) for p in params), params + grads + sums + steps, params + sums)
