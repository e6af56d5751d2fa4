"""Max, average and adaptive pooling in 1, 2 and 3 dims, forward and backward.

Flops: max pooling 1 compare per window element per output element; average pooling 1 add per
window element plus 1 divide per output element; adaptive pooling sums its (uneven) windows
exactly. Max-pool backward scatters each grad_output element into grad_input (1 add each);
average-pool backward spreads each grad_output element over its window (1 add per window element
plus the divide). Bytes: input (or grad_output and indices) read, outputs written.
Output sizes follow torch's pooling arithmetic (ceil_mode included) when not recorded.
"""

from __future__ import annotations

from math import gcd, prod

from ..records import TensorMeta
from .opargs import OpArgs
from .registry import builtin
from .work import FormulaInputError, Work, check_shape, numel


def _spatial_param(a: OpArgs, index: int, name: str, dims: int, default=None) -> tuple:
    """kernel_size/stride/padding/dilation as one int per pooled dim (one value broadcasts); ``default``
    when the argument is absent or empty (an empty stride means the kernel size)."""
    if default is not None and not a.has(index, name):
        return default
    values = a.ints(index, name)
    if not values and default is not None:
        return default
    if len(values) == 1:
        return values * dims
    if len(values) != dims:
        raise FormulaInputError(f"{name} {values} does not match {dims} pooled dims")
    return values


def pool_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """torch's pooling_output_shape."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    if out <= 0:
        raise FormulaInputError(f"pooling output would be empty: size {size}, kernel {kernel}, stride {stride}")
    return out


def _windowed(a: OpArgs, dims: int, dilation_at: int | None, ceil_at: int, x: TensorMeta) -> tuple[tuple, int]:
    """(output shape, window elements) of a max/avg pool over the last ``dims`` dims of ``x``."""
    if len(x.shape) < dims + 1:
        raise FormulaInputError(f"pooling input {x.shape} has fewer than {dims} + 1 dims")
    kernel = _spatial_param(a, 1, "kernel_size", dims)
    stride = _spatial_param(a, 2, "stride", dims, default=kernel)
    padding = _spatial_param(a, 3, "padding", dims, default=(0,) * dims)
    dilation = _spatial_param(a, dilation_at, "dilation", dims, default=(1,) * dims) if dilation_at else (1,) * dims
    ceil_mode = a.bool(ceil_at, "ceil_mode", False)
    spatial = tuple(
        pool_output_size(size, k, s, p, d, ceil_mode)
        for size, k, s, p, d in zip(x.shape[-dims:], kernel, stride, padding, dilation)
    )
    return x.shape[:-dims] + spatial, prod(kernel)


_LOW_MEMORY_MAX_POOL = "prims::_low_memory_max_pool_with_offsets"


def spatial_dims(name: str) -> int:
    """Pooled/interpolated dims of an op from its name: ``max_pool3d`` 3, ``upsample_linear1d`` 1, else 2."""
    return 3 if "3d" in name else 1 if "1d" in name else 2


# max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) -> (out, indices); Inductor's
# low-memory max pool (torch.compile'd max_pool2d/3d with indices) takes the same arguments and does the same
# compares, writing each maximum's int8 offset in its window instead of an int64 index.
@builtin(
    "aten::max_pool1d",
    "aten::max_pool2d",
    "aten::max_pool3d",
    "aten::max_pool1d_with_indices",
    "aten::max_pool2d_with_indices",
    "aten::max_pool3d_with_indices",
    "aten::mkldnn_max_pool2d",
    "aten::quantized_max_pool2d",
    _LOW_MEMORY_MAX_POOL,
)
def _max_pool(a: OpArgs) -> Work:
    x = a.tensor(0, "self")
    low_memory = a.name == _LOW_MEMORY_MAX_POOL
    dims = len(a.ints(1, "kernel_size")) if low_memory else spatial_dims(a.name)
    out = a.output(0)
    if out is None:
        shape, window = _windowed(a, dims, 4, 5, x)
        out = TensorMeta(shape, x.dtype)
    else:
        window = prod(_spatial_param(a, 1, "kernel_size", dims))
    writes: tuple[TensorMeta, ...] = (out,)
    if low_memory or a.name.endswith("_with_indices"):
        writes += (a.output(1) or TensorMeta(out.shape, "int8" if low_memory else "int64"),)
    return Work(window * numel(out.shape), (x,), writes)


# _low_memory_max_pool_offsets_to_indices(self, kernel_size, input_size, stride, padding, dilation) -> indices: the
# low-memory pool's backward turns its offsets back into indices: index arithmetic, 0 flops, as max_pool2d_with_indices
# counts none for its indices.
@builtin("prims::_low_memory_max_pool_offsets_to_indices")
def _low_memory_max_pool_indices(a: OpArgs) -> Work:
    offsets = a.tensor(0, "self")
    return Work(0, (offsets,), (a.output(0) or TensorMeta(offsets.shape, "int64"),))


# avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
@builtin("aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool3d")
def _avg_pool(a: OpArgs) -> Work:
    x = a.tensor(0, "self")
    dims = spatial_dims(a.name)
    out = a.output(0)
    if out is None:
        shape, window = _windowed(a, dims, None, 4, x)
        out = TensorMeta(shape, x.dtype)
    else:
        window = prod(_spatial_param(a, 1, "kernel_size", dims))
    return Work((window + 1) * numel(out.shape), (x,), (out,))


# max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)
@builtin("aten::max_pool2d_with_indices_backward", "aten::max_pool3d_with_indices_backward")
def _max_pool_backward(a: OpArgs) -> Work:
    grad, x, indices = a.tensor(0, "grad_output"), a.tensor(1, "self"), a.tensor(7, "indices")
    return Work(numel(grad.shape), (grad, indices), (a.output(0) or TensorMeta(x.shape, x.dtype),))


# avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
@builtin("aten::avg_pool2d_backward", "aten::avg_pool3d_backward")
def _avg_pool_backward(a: OpArgs) -> Work:
    grad, x = a.tensor(0, "grad_output"), a.tensor(1, "self")
    window = prod(_spatial_param(a, 2, "kernel_size", spatial_dims(a.name)))
    return Work((window + 1) * numel(grad.shape), (grad,), (a.output(0) or TensorMeta(x.shape, x.dtype),))


def adaptive_window_elements(sizes: tuple, outputs: tuple) -> int:
    """Input elements summed over every adaptive-pooling window (torch's start/end index rule), per channel.

    Along a dim of ``size`` pooled to ``out``, window i spans floor(i*size/out) .. ceil((i+1)*size/out),
    and the lengths sum to size + out - gcd(size, out): each window's ceil exceeds the next one's floor
    by one unless (i+1)*size is a multiple of out, which happens gcd(size, out) times. Closed form,
    so an output size taken from a file costs nothing to count."""
    total = 1
    for size, out in zip(sizes, outputs):
        if out <= 0:
            raise FormulaInputError(f"adaptive pooling output size {out}")
        total *= size + out - gcd(size, out)
    return total


def _adaptive_output(a: OpArgs, x: TensorMeta, dims: int) -> tuple:
    out = a.output(0)
    if out is not None:
        return out.shape
    size = a.ints(1, "output_size")
    size = size * dims if len(size) == 1 else size
    if len(size) != dims:
        raise FormulaInputError(f"output_size {size} does not match {dims} pooled dims")
    return x.shape[:-dims] + tuple(s if s is not None else x.shape[-dims + i] for i, s in enumerate(size))


# adaptive_avg_pool2d(self, output_size); _adaptive_avg_pool2d(self, output_size); adaptive_max_pool2d -> (out, indices)
@builtin(
    "aten::adaptive_avg_pool1d",
    "aten::adaptive_avg_pool2d",
    "aten::adaptive_avg_pool3d",
    "aten::_adaptive_avg_pool2d",
    "aten::_adaptive_avg_pool3d",
    "aten::mkldnn_adaptive_avg_pool2d",
    "aten::adaptive_max_pool1d",
    "aten::adaptive_max_pool2d",
    "aten::adaptive_max_pool3d",
)
def _adaptive_pool(a: OpArgs) -> Work:
    x = a.tensor(0, "self")
    dims = spatial_dims(a.name)
    shape = check_shape(_adaptive_output(a, x, dims), "output_size")
    summed = adaptive_window_elements(x.shape[-dims:], shape[-dims:]) * numel(x.shape[:-dims])
    writes = (a.output(0) or TensorMeta(shape, x.dtype),)
    if "max" in a.name:
        return Work(summed, (x,), writes + (a.output(1) or TensorMeta(shape, "int64"),))
    return Work(summed + numel(shape), (x,), writes)


# _adaptive_avg_pool2d_backward(grad_output, self); adaptive_max_pool2d_backward(grad_output, self, indices)
@builtin(
    "aten::_adaptive_avg_pool2d_backward",
    "aten::_adaptive_avg_pool3d_backward",
    "aten::adaptive_avg_pool3d_backward",
    "aten::adaptive_max_pool2d_backward",
    "aten::adaptive_max_pool3d_backward",
)
def _adaptive_pool_backward(a: OpArgs) -> Work:
    grad, x = a.tensor(0, "grad_output"), a.tensor(1, "self")
    grad_input = a.output(0) or TensorMeta(x.shape, x.dtype)
    if "max" in a.name:
        return Work(numel(grad.shape), (grad, a.tensor(2, "indices")), (grad_input,))
    dims = spatial_dims(a.name)
    spread = adaptive_window_elements(x.shape[-dims:], grad.shape[-dims:]) * numel(x.shape[:-dims])
    return Work(spread + numel(grad.shape), (grad,), (grad_input,))
