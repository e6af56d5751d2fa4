"""Interpolation (upsample_* / F.interpolate) and grid sampling, forward and backward.

Flops per output element: nearest 0 (index arithmetic only); linear interpolation takes
2^d - 1 lerps of 3 flops each over d interpolated dims (linear 3, bilinear 9, trilinear 21);
bicubic: five 4-tap cubic combinations of 7 flops (4 rows, then the column) = 35. Backward
spreads each grad_output element over the same taps: the same count. Bytes: input (grad_output)
read, output (grad_input) written.
"""

from __future__ import annotations

from math import floor

from ..records import TensorMeta
from .opargs import OpArgs
from .pooling import spatial_dims
from .registry import builtin
from .work import FormulaInputError, Work, check_shape, numel

_LERP = 3
_BICUBIC = 35


def _per_output(name: str, dims: int) -> int:
    if "nearest" in name:
        return 0
    if "bicubic" in name:
        return _BICUBIC
    return _LERP * (2**dims - 1)


_UPSAMPLE = [
    f"aten::upsample_{mode}{d}d"
    for mode, d in (
        ("nearest", 1),
        ("nearest", 2),
        ("nearest", 3),
        ("linear", 1),
        ("bilinear", 2),
        ("bicubic", 2),
        ("trilinear", 3),
    )
] + [
    "aten::_upsample_nearest_exact1d",
    "aten::_upsample_nearest_exact2d",
    "aten::_upsample_nearest_exact3d",
    "aten::_upsample_bilinear2d_aa",
    "aten::_upsample_bicubic2d_aa",
]


def _scale_factors(a: OpArgs, x: TensorMeta, dims: int) -> tuple:
    """Output spatial size from scale factors: the .vec overload's list (last argument)."""
    scales = a.value(len(a.op.inputs) - 1, "scale_factors", None)
    if not isinstance(scales, (tuple, list)) or len(scales) != dims:
        raise FormulaInputError("inputs lack output_size and scale_factors")
    return tuple(floor(size * float(scale)) for size, scale in zip(x.shape[-dims:], scales))


@builtin(*_UPSAMPLE)
def _upsample(a: OpArgs) -> Work:
    # upsample_bilinear2d(self, output_size, align_corners, scales_h, scales_w);
    # .vec(input, output_size?, [align_corners,] scale_factors?)
    x = a.tensor(0, "input" if a.op.overload == "vec" else "self")
    dims = spatial_dims(a.name)
    out = a.output(0)
    if out is None:
        size = a.value(1, "output_size", None)
        spatial = tuple(a.ints(1, "output_size")) if size not in (None, "") else _scale_factors(a, x, dims)
        out = TensorMeta(x.shape[:-dims] + check_shape(spatial, "output_size"), x.dtype)
    return Work(_per_output(a.name, dims) * numel(out.shape), (x,), (out,))


@builtin(*(name + "_backward" for name in _UPSAMPLE))
def _upsample_backward(a: OpArgs) -> Work:
    # upsample_bilinear2d_backward(grad_output, output_size, input_size, align_corners, scales...)
    grad = a.tensor(0, "grad_output")
    grad_input = a.output(0) or TensorMeta(check_shape(a.ints(2, "input_size"), "input_size"), grad.dtype)
    return Work(_per_output(a.name, spatial_dims(a.name)) * numel(grad.shape), (grad,), (grad_input,))


# grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners); modes 0 bilinear, 1 nearest, 2 bicubic
_GRID_MODES = {0: _LERP * 3, 1: 0, 2: _BICUBIC}


@builtin("aten::grid_sampler_2d", "aten::grid_sampler_3d", "aten::grid_sampler", "aten::cudnn_grid_sampler")
def _grid_sample(a: OpArgs) -> Work:
    x, grid = a.tensor(0, "input"), a.tensor(1, "grid")
    mode = 0 if a.name == "aten::cudnn_grid_sampler" else a.int(2, "interpolation_mode")
    per_output = _GRID_MODES.get(mode)
    if per_output is None:
        raise FormulaInputError(f"unknown grid_sample mode {mode}")
    if "3d" in a.name and mode == 0:
        per_output = _LERP * 7
    out = a.output(0) or TensorMeta(x.shape[:2] + grid.shape[1:-1], x.dtype)
    return Work(per_output * numel(out.shape), (x, grid), (out,))
