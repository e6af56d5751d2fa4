"""softmax and log_softmax, forward and backward.

Per element: softmax = max (compare), subtract, exp, sum, divide = TRANSCENDENTAL + 4;
log_softmax = max, subtract, exp, sum, subtract = TRANSCENDENTAL + 4, plus one log per row.
Backward: softmax grad_in = y * (g - sum(g * y)) = 4; log_softmax grad_in = g - exp(y) * sum(g)
= TRANSCENDENTAL + 3. Bytes: input read, output written (backward: grad and output read, grad_input
written).
"""

from __future__ import annotations

from ..records import TensorMeta
from .opargs import OpArgs
from .pointwise import T
from .registry import builtin
from .work import Work, normalize_dim, numel


def _rows(shape: tuple, dim: int) -> int:
    """Number of independent softmax rows: elements / size of the softmax dim."""
    return numel(shape) // shape[dim] if shape and shape[dim] else 0


# _softmax(self, dim, half_to_float); softmax(self, dim, dtype); _safe_softmax(self, dim, dtype);
# _masked_softmax(self, mask, dim, mask_type) reads its mask too.
@builtin(
    "aten::_softmax",
    "aten::softmax",
    "aten::_log_softmax",
    "aten::log_softmax",
    "aten::_safe_softmax",
    "aten::_masked_softmax",
    "aten::special_softmax",
    "aten::special_log_softmax",
)
def _softmax(a: OpArgs) -> Work:
    x = a.tensor(0, "self")
    masked = a.name == "aten::_masked_softmax"
    dim = normalize_dim(a.int(2 if masked else 1, "dim", -1), len(x.shape))
    out_dtype = x.dtype
    if a.name == "aten::_softmax" or a.name == "aten::_log_softmax":
        out_dtype = "float32" if a.bool(2, "half_to_float", False, modifier=True) else x.dtype
    elif not masked:
        out_dtype = a.dtype(2, "dtype") or x.dtype
    out = a.output(0) or TensorMeta(x.shape, out_dtype)
    flops = (T + 4) * numel(x.shape) + (T * _rows(x.shape, dim) if "log_softmax" in a.name else 0)
    reads = (x, a.tensor(1, "mask")) if masked else (x,)
    return Work(flops, reads, (out,))


# _softmax_backward_data(grad_output, output, dim, input_dtype); _masked_softmax_backward(grad_output, output,
# mask, dim)
@builtin("aten::_softmax_backward_data", "aten::_log_softmax_backward_data", "aten::_masked_softmax_backward")
def _softmax_backward(a: OpArgs) -> Work:
    grad, y = a.tensor(0, "grad_output"), a.tensor(1, "output")
    masked = a.name == "aten::_masked_softmax_backward"
    per_element = T + 3 if "log_softmax" in a.name else 4
    # Before torch 1.11 the fourth argument was the input tensor, not its dtype.
    old_signature = masked or isinstance(a.value(3, "input_dtype", None), TensorMeta)
    dtype = grad.dtype if old_signature else a.dtype(3, "input_dtype") or grad.dtype
    out = a.output(0) or TensorMeta(grad.shape, dtype)
    reads = (grad, y, a.tensor(2, "mask")) if masked else (grad, y)
    return Work(per_element * numel(grad.shape), reads, (out,))
