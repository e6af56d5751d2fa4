"""Pooling (max/avg/adaptive, 1d-3d, forward and backward) and interpolation."""

import pytest
import torch
import torch.nn.functional as F

from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta, Unknown
from tests.formula_recorder import checked_evaluate, cost_of, record


def test_max_pool_with_indices_forward_and_backward():
    x = torch.randn(1, 2, 6, 6, requires_grad=True)
    grad = torch.randn(1, 2, 3, 3)
    ops, _ = record(lambda: F.max_pool2d(x, 2).backward(grad))
    forward = next(o for o in ops if o.name == "aten::max_pool2d_with_indices")
    backward = next(o for o in ops if o.name == "aten::max_pool2d_with_indices_backward")
    # 18 outputs * 4-element windows = 72 compares; bytes x 72 * 4 + out 18 * 4 + int64 indices 18 * 8 = 504.
    assert checked_evaluate(forward) == Cost(72, 504, "")
    # backward: one add per grad_output element; reads grad 72 + indices 144, writes grad_input 288.
    assert checked_evaluate(backward) == Cost(18, 504, "")


@pytest.mark.parametrize("ceil_mode, out", [(False, 2), (True, 3)])
def test_pool_output_size_without_a_recorded_output(ceil_mode, out):
    # Kineto max_pool2d_with_indices(x (1, 1, 5, 5), [2, 2], [2, 2], [0, 0], [1, 1], ceil_mode): 5 -> 2 or 3.
    op = OpRecord(
        "aten::max_pool2d_with_indices",
        0,
        1,
        inputs=(TensorMeta((1, 1, 5, 5), "float32"), (2, 2), (2, 2), (0, 0), (1, 1), ceil_mode),
    )
    # flops out*out * 4; bytes 4 * 25 + out*out * (4 + 8).
    assert evaluate(op) == Cost(out * out * 4, 100 + out * out * 12, "")


def test_avg_and_adaptive_pooling():
    x = torch.randn(1, 1, 4, 4)
    # 3x3 windows, stride 1, padding 1: 16 outputs * (9 adds + 1 divide) = 160; bytes 4 * (16 + 16).
    assert cost_of(F.avg_pool2d, x, 3, 1, 1) == Cost(160, 128, "")
    # adaptive 5 -> 2 per dim: windows [0, 3) and [2, 5), 3 + 3 = 6 per dim, 36 summed + 4 divides = 40.
    assert cost_of(torch.ops.aten._adaptive_avg_pool2d, torch.randn(1, 1, 5, 5), [2, 2]) == Cost(40, 116, "")
    # adaptive max (1, 2, 1, 6) -> (1, 3): windows of 2, 6 compares per channel, 12; bytes 48 + 24 + int64 48.
    assert cost_of(F.adaptive_max_pool2d, torch.randn(1, 2, 1, 6), (1, 3)) == Cost(12, 120, "")


def test_avg_pool_backward_spreads_over_the_window():
    grad, x = torch.randn(1, 1, 2, 2), torch.randn(1, 1, 4, 4)
    # 4 grad elements * (4 window adds + 1 divide) = 20; reads grad 16 bytes, writes grad_input 64.
    assert cost_of(torch.ops.aten.avg_pool2d_backward, grad, x, [2, 2], [2, 2], [0, 0], False, True, None) == Cost(
        20, 80, ""
    )


def test_pooling_from_nsys_sizes_is_na():
    op = OpRecord(
        "aten::max_pool2d_with_indices",
        0,
        1,
        inputs=(TensorMeta((1, 1, 5, 5)), Unknown("no shape recorded"), Unknown("no shape recorded")),
    )
    assert evaluate(op) == Cost(None, None, "inputs lack kernel_size (no shape recorded)")


def test_interpolation_by_mode():
    x = torch.randn(1, 2, 3, 3)  # -> (1, 2, 6, 6): 72 outputs; bytes 4 * (18 + 72) = 360
    assert cost_of(F.interpolate, x, scale_factor=2, mode="nearest") == Cost(0, 360, "")
    assert cost_of(F.interpolate, x, scale_factor=2, mode="bilinear") == Cost(9 * 72, 360, "")  # 3 lerps of 3
    assert cost_of(F.interpolate, x, scale_factor=2, mode="bicubic") == Cost(35 * 72, 360, "")
    # Kineto upsample_bilinear2d.vec(input, output_size None, align_corners, scale_factors [2.0, 2.0]).
    kineto = OpRecord(
        "aten::upsample_bilinear2d", 0, 1, inputs=(TensorMeta((1, 2, 3, 3), "float32"), None, False, (2.0, 2.0))
    )
    assert evaluate(kineto) == Cost(9 * 72, 360, "")
    grad = torch.randn(1, 2, 6, 6)
    backward = cost_of(torch.ops.aten.upsample_bilinear2d_backward, grad, [6, 6], [1, 2, 3, 3], False)
    assert backward == Cost(9 * 72, 360, "")
