"""Batch, layer, group and RMS norm: training/eval forward and backward by output mask, backend variants."""

import pytest
import torch
import torch.nn.functional as F

from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta
from tests.formula_recorder import checked_evaluate, cost_of, record

C = 3
X = torch.randn(2, C, 4, 4)  # 96 elements; in the arithmetic below T = TRANSCENDENTAL = 20


def _bn_args():
    return (torch.randn(C), torch.randn(C), torch.zeros(C), torch.ones(C))


def test_batch_norm_training_and_eval():
    weight, bias, mean, var = _bn_args()
    # training: statistics 4 + normalize 2 + affine 2 per element, rsqrt + 2 divides per channel:
    # 8 * 96 + (T + 2) * 3 = 834. Bytes: x 96 + weight, bias, running mean/var 4 * 3 read; out 96, save_mean,
    # save_invstd 2 * 3 and the updated running stats 2 * 3 written: 4 * (108 + 108) = 864.
    assert cost_of(torch.ops.aten.native_batch_norm, X, weight, bias, mean, var, True, 0.1, 1e-5) == Cost(834, 864, "")
    # eval: normalize + affine only: 4 * 96 = 384; bytes 4 * (96 + 12 read + 96 written) = 816.
    assert cost_of(torch.ops.aten._native_batch_norm_legit_no_training, X, weight, bias, mean, var, 0.1, 1e-5) == Cost(
        384, 816, ""
    )


def test_batch_norm_backward_by_output_mask():
    x = X.clone().requires_grad_()
    weight, bias = (torch.randn(C, requires_grad=True) for _ in range(2))
    grad = torch.randn(2, C, 4, 4)
    ops, _ = record(lambda: F.batch_norm(x, torch.zeros(C), torch.ones(C), weight, bias, training=True).backward(grad))
    backward = next(op for op in ops if op.name == "aten::native_batch_norm_backward")
    # reductions (xhat, g * xhat, two sums) 5 + training grad_input 5 per element: 960.
    # Bytes: grad, x 2 * 96 + weight, save_mean, save_invstd 3 * 3 read; grad_input 96 + grad_weight, grad_bias 2 * 3
    # written: 4 * (201 + 102) = 1212.
    assert checked_evaluate(backward) == Cost(960, 1212, "")


@pytest.mark.parametrize(
    "mask, flops", [((True, False, False), 960), ((False, True, True), 480), ((False, False, False), 0)]
)
def test_cudnn_and_native_batch_norm_backward_masks(mask, flops):
    x, channel = TensorMeta((2, 3, 4, 4), "float32"), TensorMeta((3,), "float32")
    op = OpRecord(
        "aten::native_batch_norm_backward",
        0,
        1,
        inputs=(x, x, channel, channel, channel, channel, channel, True, 1e-5, mask),
    )
    assert evaluate(op).flops == flops
    # cudnn_batch_norm_backward(input, grad_output, weight, running_mean, running_var, save_mean, save_var, eps,
    # reserve) always computes all three gradients: 960, as the full mask.
    cudnn = OpRecord(
        "aten::cudnn_batch_norm_backward",
        0,
        1,
        inputs=(x, x, channel, channel, channel, channel, channel, 1e-5, TensorMeta((0,), "uint8")),
    )
    assert evaluate(cudnn).flops == 960


def test_layer_norm_forward_and_backward():
    x = torch.randn(2, 5, 8)  # 80 elements, 10 rows of 8
    weight, bias = torch.randn(8), torch.randn(8)
    # 8 per element + (T + 2) per row: 640 + 220 = 860. Bytes: x 80 + weight 8 + bias 8 read; out 80, mean 10,
    # rstd 10 written: 4 * (96 + 100) = 784.
    assert cost_of(torch.ops.aten.native_layer_norm, x, [8], weight, bias, 1e-5) == Cost(860, 784, "")
    grad, mean, rstd = torch.randn(2, 5, 8), torch.randn(2, 5, 1), torch.randn(2, 5, 1)
    # backward: grad_input 10, grad_weight 2, grad_bias 1 per element: 1040. Bytes: grad, x 160 + weight 8 + mean,
    # rstd 20 read; grad_input 80 + grad_weight, grad_bias 16 written: 4 * (188 + 96) = 1136.
    backward = cost_of(
        torch.ops.aten.native_layer_norm_backward, grad, x, [8], mean, rstd, weight, bias, [True, True, True]
    )
    assert backward == Cost(1040, 1136, "")


def test_group_and_rms_norm():
    x = torch.randn(2, 6, 4)  # 48 elements, 3 groups per sample -> 6 statistics
    weight, bias = torch.randn(6), torch.randn(6)
    # 8 * 48 + (T + 2) * 6 = 516; bytes 4 * (48 + 12 read + 48 + 12 written) = 480.
    assert cost_of(torch.ops.aten.native_group_norm, x, weight, bias, 2, 6, 4, 3, 1e-5) == Cost(516, 480, "")
    # RMS norm: square and add 2 + normalize 1 + weight 1 per element, (T + 2) per row: 320 + 220 = 540.
    # bytes 4 * (80 + 8 read + 80 + rstd 10 written) = 712.
    rms = OpRecord(
        "aten::_fused_rms_norm",
        0,
        1,
        inputs=(TensorMeta((2, 5, 8), "float32"), (8,), TensorMeta((8,), "float32"), 1e-6),
    )
    assert evaluate(rms) == Cost(540, 712, "")


def test_layer_norm_whose_shape_does_not_end_the_input_is_na():
    op = OpRecord("aten::native_layer_norm", 0, 1, inputs=(TensorMeta((2, 5, 8), "float32"), (5,), None, None, 1e-5))
    assert evaluate(op) == Cost(None, None, "normalized_shape (5,) does not end input shape (2, 5, 8)")


def test_cudnn_batch_norm_recorded_on_meta_tensors_matches_native():
    # The CUDA-only op's real schema-ordered record, via meta tensors: same 834 flops and 864 bytes as above.
    meta = [torch.empty(*shape, device="meta") for shape in ((2, C, 4, 4), (C,), (C,), (C,), (C,))]
    ops, _ = record(lambda: torch.ops.aten.cudnn_batch_norm(*meta, True, 0.1, 1e-5))
    assert checked_evaluate(ops[-1]) == Cost(834, 864, "")


def test_batch_norm_without_running_stats():
    # _native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps): training statistics,
    # no running stats: 834 flops as above; bytes 4 * (96 + 6 read + 96 + 6 written) = 816.
    weight, bias = torch.randn(C), torch.randn(C)
    live = cost_of(torch.ops.aten._native_batch_norm_legit.no_stats, X, weight, bias, True, 0.1, 1e-5)
    assert live == Cost(834, 816, "")
    kineto = OpRecord(
        "aten::_native_batch_norm_legit",
        0,
        1,
        inputs=(
            TensorMeta((2, C, 4, 4), "float32"),
            TensorMeta((C,), "float32"),
            TensorMeta((C,), "float32"),
            True,
            0.1,
            1e-5,
        ),
    )
    assert evaluate(kineto) == live
