"""GEMMs and convolutions: hand-computed counts, and equality with FlopCounterMode on a ResNet-style
CNN and a GPT-style block, forward and backward."""

from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from pyprof_live import torch_compat
from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta, Unknown
from tests.formula_models import cnn_step, gpt_step
from tests.formula_recorder import checked_evaluate, cost_of, record


def test_mm_addmm_bmm_baddbmm():
    a, b = torch.randn(4, 8), torch.randn(8, 16)
    # mm: 2 * 4 * 16 * 8 = 1024 flops; bytes 4 * (32 + 128 + 64) = 896.
    assert cost_of(torch.mm, a, b) == Cost(1024, 896, "")
    # addmm adds a bias (not counted, as torch): flops 1024; bytes + bias 16 floats = 896 + 64 = 960.
    assert cost_of(torch.addmm, torch.randn(16), a, b) == Cost(1024, 960, "")
    # bmm with batch 3: 2 * 3 * 4 * 16 * 8 = 3072; bytes 4 * 3 * (32 + 128 + 64) = 2688 (the batch factor counted).
    x, y = torch.randn(3, 4, 8), torch.randn(3, 8, 16)
    assert cost_of(torch.bmm, x, y) == Cost(3072, 2688, "")
    assert cost_of(torch.baddbmm, torch.randn(3, 4, 16), x, y) == Cost(3072, 2688 + 4 * 3 * 64, "")


def test_linear_and_matmul_as_importers_see_them():
    # aten::linear (Kineto/nsys show it above addmm): x (2, 5, 8) @ W.T with W (16, 8):
    # 2 * (2*5) * 16 * 8 = 2560 flops; bf16 bytes 2 * (80 + 128 + 16 + 160) = 768.
    x, w, bias = TensorMeta((2, 5, 8), "bfloat16"), TensorMeta((16, 8), "bfloat16"), TensorMeta((16,), "bfloat16")
    linear = OpRecord("aten::linear", 0, 1, inputs=(x, w, bias))
    assert evaluate(linear) == Cost(2560, 768, "")
    # matmul (2, 5, 8) @ (8, 3), broadcast batch: 2 * 10 * 3 * 8 = 480; fp32 bytes 4 * (80 + 24 + 30) = 536.
    matmul = OpRecord("aten::matmul", 0, 1, inputs=(TensorMeta((2, 5, 8), "float32"), TensorMeta((8, 3), "float32")))
    assert evaluate(matmul) == Cost(480, 536, "")
    # vector @ vector: dot, 2 * 8 = 16 flops; bytes 4 * (8 + 8 + 1) = 68.
    dot = OpRecord("aten::matmul", 0, 1, inputs=(TensorMeta((8,), "float32"), TensorMeta((8,), "float32")))
    assert evaluate(dot) == Cost(16, 68, "")


def test_conv2d_forward_from_live_and_from_kineto():
    x, w = torch.randn(2, 3, 9, 9), torch.randn(4, 3, 3, 3)
    # stride 2, padding 1 -> out spatial (9 + 2 - 2 - 1) // 2 + 1 = 5: out (2, 4, 5, 5).
    # flops = 2 * N 2 * C_out 4 * C_in 3 * k 9 * out positions 25 = 10800;
    # bytes = 4 * (x 486 + w 108 + bias 4 + out 200) = 3192.
    live = cost_of(F.conv2d, x, w, torch.randn(4), stride=2, padding=1)
    assert live == Cost(10800, 3192, "")
    # The same call as Kineto records it, no output: the output shape comes from stride/padding/dilation.
    kineto = OpRecord(
        "aten::convolution",
        0,
        1,
        inputs=(
            TensorMeta((2, 3, 9, 9), "float32"),
            TensorMeta((4, 3, 3, 3), "float32"),
            TensorMeta((4,), "float32"),
            (2, 2),
            (1, 1),
            (1, 1),
            False,
            (0, 0),
            1,
        ),
    )
    assert evaluate(kineto) == live


def test_grouped_and_transposed_conv():
    # depthwise: groups 4, weight (4, 1, 3, 3), padding 1 keeps 6x6: 2 * 1 * 4 * 1 * 9 * 36 = 2592.
    assert cost_of(F.conv2d, torch.randn(1, 4, 6, 6), torch.randn(4, 1, 3, 3), padding=1, groups=4).flops == 2592
    # conv_transpose2d (1, 4, 5, 5) -> weight (4, 2, 3, 3), stride 2: flops counted on input positions:
    # 2 * 1 * 4 * 2 * 9 * 25 = 3600; out spatial (5 - 1) * 2 + 3 = 11.
    cost = cost_of(F.conv_transpose2d, torch.randn(1, 4, 5, 5), torch.randn(4, 2, 3, 3), stride=2)
    assert cost.flops == 3600
    kineto = OpRecord(
        "aten::conv_transpose2d",
        0,
        1,
        inputs=(
            TensorMeta((1, 4, 5, 5), "float32"),
            TensorMeta((4, 2, 3, 3), "float32"),
            None,
            (2, 2),
            (0, 0),
            (0, 0),
            1,
            (1, 1),
        ),
    )
    # bytes: 4 * (x 100 + w 72 + out 2*11*11 = 242) = 1656.
    assert evaluate(kineto) == Cost(3600, 1656, "")


def test_cudnn_convolution_uses_its_own_argument_order():
    # cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark, deterministic, allow_tf32):
    # torch's registry reads it as convolution(...) and takes `benchmark` for `transposed`. padding 0, stride 2 on
    # 8x8 with k 3 -> 3x3 out: 2 * 1 * 2 * 3 * 9 * 9 = 972 (transposed counting would give 2 * 2 * 3 * 9 * 64).
    op = OpRecord(
        "aten::cudnn_convolution",
        0,
        1,
        inputs=(
            TensorMeta((1, 3, 8, 8), "float16"),
            TensorMeta((2, 3, 3, 3), "float16"),
            (0, 0),
            (2, 2),
            (1, 1),
            1,
            True,
            False,
            True,
        ),
    )
    # bytes fp16: 2 * (192 + 54 + 18) = 528.
    assert evaluate(op) == Cost(972, 528, "")


@pytest.mark.parametrize(
    "mask, flops",
    [
        # grad_output (2, 4, 5, 5), input (2, 3, 9, 9), weight (4, 3, 3, 3), stride 2, padding 1.
        # dgrad: transposed conv over grad_output's 25 positions: 2 * 2 * 4 * 3 * 9 * 25 = 10800; wgrad: the same 10800.
        ((True, False, False), 10800),
        ((False, True, False), 10800),
        ((True, True, True), 21600),
        ((False, False, True), 0),  # the bias gradient's sum is not counted (as FlopCounterMode)
    ],
)
def test_convolution_backward_by_output_mask(mask, flops):
    grad, x, w = (
        TensorMeta((2, 4, 5, 5), "float32"),
        TensorMeta((2, 3, 9, 9), "float32"),
        TensorMeta((4, 3, 3, 3), "float32"),
    )
    op = OpRecord(
        "aten::convolution_backward", 0, 1, inputs=(grad, x, w, (4,), (2, 2), (1, 1), (1, 1), False, (0, 0), 1, mask)
    )
    # bytes: grad 200 read; + weight 108 read and grad_input 486 written (dgrad); + input 486 read and grad_weight
    # 108 written (wgrad); + grad_bias 4 written.
    expected_bytes = 4 * (200 + (108 + 486) * mask[0] + (486 + 108) * mask[1] + 4 * mask[2])
    assert evaluate(op) == Cost(flops, expected_bytes, "")


def test_pre_2_0_cudnn_dgrad_needs_no_stride_for_flops():
    # Kineto 2021: cudnn_convolution_backward_input(self_size [unknown], grad_output (32, 2048, 7, 7),
    # weight (2048, 512, 1, 1), ...): 2 * 32 * 2048 * 512 * 1 * 49 = 3288334336 flops; bytes need self_size.
    op = OpRecord(
        "aten::cudnn_convolution_backward_input",
        0,
        1,
        inputs=(
            Unknown("GenericList"),
            TensorMeta((32, 2048, 7, 7), "float32"),
            TensorMeta((2048, 512, 1, 1), "float32"),
            Unknown("GenericList"),
            Unknown("GenericList"),
            Unknown("GenericList"),
            Unknown("Int"),
            Unknown("Bool"),
            Unknown("Bool"),
            Unknown("Bool"),
        ),
    )
    assert evaluate(op) == Cost(3288334336, None, "bytes unknown: inputs lack self_size (GenericList)")


def test_pre_2_0_cudnn_wgrad_of_a_depthwise_conv():
    # cudnn_convolution_backward_weight(weight_size (8, 1, 3, 3), grad_output (2, 8, 10, 10), self (2, 8, 10, 10),
    # padding, stride, dilation, groups 8, ...): 2 * 72 weight elements * N 2 * 100 positions = 28800 flops
    # (torch's conv_backward_flop would say 8 times that). bytes: 4 * (grad 1600 + self 1600 + grad_weight 72) = 13088.
    op = OpRecord(
        "aten::cudnn_convolution_backward_weight",
        0,
        1,
        inputs=(
            (8, 1, 3, 3),
            TensorMeta((2, 8, 10, 10), "float32"),
            TensorMeta((2, 8, 10, 10), "float32"),
            (1, 1),
            (1, 1),
            (1, 1),
            8,
            False,
            False,
            True,
        ),
    )
    assert evaluate(op) == Cost(28800, 13088, "")


def test_int_mm_output_is_int32_when_not_recorded():
    # Kineto/nsys record no output: int8 (32, 64) @ int8 (64, 32) writes int32 (32, 32).
    # flops 2 * 32 * 32 * 64 = 131072; bytes 2048 + 2048 + 4 * 1024 = 8192 (int8 output would give 5120).
    op = OpRecord("aten::_int_mm", 0, 1, inputs=(TensorMeta((32, 64), "int8"), TensorMeta((64, 32), "int8")))
    assert evaluate(op) == Cost(131072, 8192, "")


def _per_op_flops(step) -> tuple[Counter, dict]:
    ops, _ = record(step)
    ours = Counter()
    for op in ops:
        ours[op.name] += checked_evaluate(op).flops or 0
    with FlopCounterMode(display=False) as counter:
        step()
    theirs = {f"aten::{packet.__name__}": count for packet, count in counter.get_flop_counts()["Global"].items()}
    return ours, theirs


#: FlopCounterMode counts CPU flash attention from torch 2.15 (its registry lists the _for_cpu ops); before, 0.
_CPU_SDPA = (
    {"aten::_scaled_dot_product_flash_attention_for_cpu", "aten::_scaled_dot_product_flash_attention_for_cpu_backward"}
    if torch_compat.TORCH >= (2, 15)
    else set()
)


@pytest.mark.parametrize(
    "make_step, expected_ops",
    [
        (cnn_step, {"aten::convolution", "aten::convolution_backward", "aten::addmm", "aten::mm"}),
        (gpt_step, {"aten::addmm", "aten::mm"} | _CPU_SDPA),
    ],
)
def test_equal_to_flop_counter_mode_forward_and_backward(make_step, expected_ops):
    # Every op FlopCounterMode counts gets exactly its count from us.
    # Both models' convs have groups 1 on purpose: for grouped convs we deliberately differ in the weight
    # gradient (test_grouped_conv_backward_deviates_from_flop_counter_mode).
    ours, theirs = _per_op_flops(make_step(optimizer=False))
    assert set(theirs) == expected_ops
    assert {name: ours[name] for name in theirs} == theirs
    assert all(count > 0 for count in theirs.values())


def _conv_train_step(conv, x):
    x.requires_grad_()  # so the backward computes dgrad as well as wgrad
    return lambda: conv(x).sum().backward()


@pytest.mark.parametrize(
    "make_conv, x_shape, forward, backward, theirs_backward",
    [
        # Depthwise Conv2d(8, 8, 3, groups=8, padding=1) on (2, 8, 10, 10): weight (8, 1, 3, 3), out (2, 8, 10, 10).
        # forward 2 * N 2 * C_out 8 * C_in/g 1 * k 9 * 100 positions = 28800; dgrad the same 28800;
        # wgrad 2 * 72 weight elements * N 2 * 100 output positions = 28800: backward 57600.
        # FlopCounterMode's wgrad is dense across channels, 8x: 28800 + 8 * 28800 = 259200.
        (lambda: torch.nn.Conv2d(8, 8, 3, groups=8, padding=1, bias=False), (2, 8, 10, 10), 28800, 57600, 259200),
        # ConvTranspose2d(4, 6, 3, stride=2, groups=2) on (1, 4, 5, 5): weight (4, 3, 3, 3) = 108, out (1, 6, 11, 11).
        # forward on input positions: 2 * N 1 * C_in 4 * C_out/g 3 * k 9 * 25 = 5400; dgrad (a conv of grad_output
        # with the weight onto the 25 input positions) 5400; wgrad 2 * 108 * N 1 * 25 input positions = 5400:
        # backward 10800. FlopCounterMode's wgrad is 2x (groups 2): 5400 + 2 * 5400 = 16200.
        (lambda: torch.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, bias=False), (1, 4, 5, 5), 5400, 10800, 16200),
    ],
)
def test_grouped_conv_backward_deviates_from_flop_counter_mode(make_conv, x_shape, forward, backward, theirs_backward):
    torch.manual_seed(0)
    ours, theirs = _per_op_flops(_conv_train_step(make_conv(), torch.randn(x_shape)))
    assert ours["aten::convolution"] == theirs["aten::convolution"] == forward
    assert ours["aten::convolution_backward"] == backward
    assert theirs["aten::convolution_backward"] == theirs_backward
