"""Elementwise ops and data movement: documented per-element weights, broadcasting, in-place writes,
result dtypes; copies, conversions, fills, factories, random generation, dropout."""

import torch
import torch.nn.functional as F

from pyprof_live.formulas import TRANSCENDENTAL as T
from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta
from tests.formula_recorder import cost_of

X = torch.randn(3, 4)  # 12 float32 elements: 48 bytes


def test_unary_weights():
    assert cost_of(torch.relu, X) == Cost(12, 96, "")  # 1 flop each; 48 read + 48 written
    assert cost_of(torch.exp, X) == Cost(12 * T, 96, "")  # one transcendental each
    assert cost_of(torch.sigmoid, X) == Cost(12 * (T + 2), 96, "")  # 1 / (1 + exp(-x))
    assert cost_of(F.silu, X) == Cost(12 * (T + 3), 96, "")  # x * sigmoid(x)
    assert cost_of(F.gelu, X) == Cost(12 * (T + 4), 96, "")  # x * 0.5 * (1 + erf(x / sqrt 2))
    assert cost_of(F.gelu, X, approximate="tanh") == Cost(12 * (T + 8), 96, "")  # + the cubic term
    assert cost_of(torch.isnan, X) == Cost(12, 48 + 12, "")  # bool output: 1 byte each


def test_binary_broadcast_and_alpha():
    row = torch.randn(4)
    # (3, 4) + (4,): 12 adds; bytes 4 * (12 + 4 read + 12 written) = 112.
    assert cost_of(torch.add, X, row) == Cost(12, 112, "")
    # alpha 2: a multiply and an add per element.
    assert cost_of(torch.add, X, row, alpha=2) == Cost(24, 112, "")
    # in place: writes self (same 12 elements).
    assert cost_of(lambda x, y: x.add_(y), X.clone(), row) == Cost(12, 112, "")
    # comparison: bool output, 4 * 12 + 4 * 4 + 12 = 76.
    assert cost_of(torch.gt, X, row) == Cost(12, 76, "")
    # div with rounding: quotient then floor.
    assert cost_of(torch.div, X, row, rounding_mode="floor") == Cost(24, 112, "")


def test_a_broadcast_stride_zero_operand_is_read_once():
    # X + expanded row: the expanded (3, 4) view has stride (0, 1): its 4 stored elements are read, not 12.
    assert cost_of(torch.mul, X, torch.randn(4).expand(3, 4)) == Cost(12, 4 * (12 + 4 + 12), "")


def test_pow_by_exponent():
    assert cost_of(torch.pow, X, 2) == Cost(12, 96, "")  # x * x
    assert cost_of(torch.pow, X, 3) == Cost(24, 96, "")  # x * x * x
    assert cost_of(torch.pow, X, 0.5) == Cost(12 * T, 96, "")  # a root
    assert cost_of(torch.pow, X, X) == Cost(12 * T, 144, "")  # exp(y log x); two inputs read
    # Kineto writes the exponent as the string "2".
    kineto = OpRecord("aten::pow", 0, 1, inputs=(TensorMeta((3, 4), "float32"), "2"))
    assert evaluate(kineto) == Cost(12, 96, "")


def test_result_dtype_when_no_output_was_recorded():
    # int64 tensor * 2.5 -> float32: 8 * 4 read + 4 * 4 written = 48.
    mul = OpRecord("aten::mul", 0, 1, inputs=(TensorMeta((4,), "int64"), 2.5))
    assert evaluate(mul) == Cost(4, 48, "")
    # Kineto's wrapped number: bf16 (1, 8) * 0-dim double stays bf16: 2 * 8 + 8 + 2 * 8 = 40.
    scaled = OpRecord("aten::mul", 0, 1, inputs=(TensorMeta((1, 8), "bfloat16"), TensorMeta((), "float64")))
    assert evaluate(scaled) == Cost(8, 40, "")
    # int32 tensor + 0-dim float64 tensor -> float64 (a higher-category 0-dim tensor decides): 16 + 8 + 32.
    promoted = OpRecord("aten::add", 0, 1, inputs=(TensorMeta((4,), "int32"), TensorMeta((), "float64")))
    assert evaluate(promoted) == Cost(4, 56, "")


def test_ternary_and_selection():
    y, z = torch.randn(3, 4), torch.randn(3, 4)
    assert cost_of(torch.addcmul, X, y, z, value=0.5) == Cost(36, 4 * 48, "")  # self + value * t1 * t2
    assert cost_of(torch.lerp, X, y, 0.3) == Cost(36, 4 * 36, "")  # start + w * (end - start)
    mask = X > 0
    assert cost_of(torch.where, mask, X, y) == Cost(0, 12 + 4 * 36, "")  # a selection: no arithmetic
    assert cost_of(torch.clamp, X, 0, 1) == Cost(24, 96, "")  # two compares
    assert cost_of(torch.clamp, X, min=0) == Cost(12, 96, "")


def test_activation_backward():
    grad, x = torch.randn(3, 4), torch.randn(3, 4)
    # relu's backward is threshold_backward(grad, self, 0): 1 per element; reads 2, writes 1 -> 144 bytes.
    assert cost_of(torch.ops.aten.threshold_backward, grad, x, 0.0) == Cost(12, 144, "")
    assert cost_of(torch.ops.aten.gelu_backward, grad, x) == Cost(12 * (2 * T + 8), 144, "")
    assert cost_of(torch.ops.aten.sigmoid_backward, grad, x) == Cost(36, 144, "")  # g * y * (1 - y)


def test_copies_and_conversions():
    half = torch.randn(2, 3).half()
    # copy_ float16 -> float32: reads 6 * 2, writes 6 * 4.
    assert cost_of(lambda dst, src: dst.copy_(src), torch.empty(2, 3), half) == Cost(0, 36, "")
    assert cost_of(lambda t: t.to(torch.bfloat16), torch.randn(2, 3)) == Cost(0, 24 + 12, "")  # _to_copy
    assert cost_of(torch.clone, torch.randn(2, 3)) == Cost(0, 48, "")
    # Kineto _to_copy(self, dtype "6" = float32 ScalarType code, ...) from int64: 8 * 6 read + 4 * 6 written.
    kineto = OpRecord("aten::_to_copy", 0, 1, inputs=(TensorMeta((1, 6), "int64"), 6, None, None, None, False, None))
    assert evaluate(kineto) == Cost(0, 72, "")


def test_fills_and_factories_write_only():
    assert cost_of(lambda t: t.zero_(), torch.empty(2, 3)) == Cost(0, 24, "")
    assert cost_of(lambda t: t.fill_(3.0), torch.empty(2, 3)) == Cost(0, 24, "")
    assert cost_of(torch.zeros, (2, 3)) == Cost(0, 24, "")
    assert cost_of(torch.full, (2, 2), 7, dtype=torch.int64) == Cost(0, 32, "")
    # Kineto arange(0, 559) (Concrete Inputs "0", "559", then dtype/layout/device/pin_memory): int64,
    # 2 flops (start + i * step) per element: 1118; bytes 559 * 8 = 4472.
    kineto = OpRecord("aten::arange", 0, 1, inputs=(0, 559, None, None, None, False))
    assert evaluate(kineto) == Cost(1118, 4472, "")
    assert cost_of(torch.arange, 0, 10, 2) == Cost(10, 40, "")  # 5 int64 elements


def test_random_and_dropout():
    x = torch.empty(2, 5)
    assert cost_of(lambda t: t.uniform_(), x) == Cost(20, 40, "")  # scale + shift per element
    assert cost_of(lambda t: t.normal_(), x) == Cost(10 * (3 * T + 4), 40, "")  # Box-Muller
    # native_dropout in training: uniform draw 2 + compare 1 + x * mask * scale 2 = 5 flops per element;
    # bytes: input 40 read, output 40 + bool mask 10 written.
    assert cost_of(torch.ops.aten.native_dropout, torch.randn(2, 5), 0.1, True) == Cost(50, 90, "")
    # item(): one element read.
    assert cost_of(lambda t: t.item(), torch.randn(())) == Cost(0, 4, "")
