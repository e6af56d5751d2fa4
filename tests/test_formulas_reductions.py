"""Reductions, scans and softmax: per-element and per-output flops, reduced output shapes."""

import torch

from pyprof_live.formulas import TRANSCENDENTAL as T
from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta
from tests.formula_recorder import cost_of

X = torch.randn(4, 6)  # 24 float32 elements, 96 bytes


def test_sum_mean_prod():
    assert cost_of(torch.sum, X, 1) == Cost(24, 96 + 16, "")  # one add per element; out (4,)
    assert cost_of(torch.sum, X) == Cost(24, 96 + 4, "")  # .default: everything, one value
    # mean over both dims, keepdim: 24 adds + 1 divide; out (1, 1).
    assert cost_of(torch.mean, X, (0, 1), True) == Cost(25, 100, "")
    assert cost_of(torch.prod, X, 0) == Cost(24, 96 + 24, "")  # out (6,)
    # Kineto mean(self, "[-1]", "True", "") on (16, 559, 1024) bf16: 9158656 adds + 8944 divides;
    # bytes 2 * (9158656 + 8944) = 18335200.
    kineto = OpRecord("aten::mean", 0, 1, inputs=(TensorMeta((16, 559, 1024), "bfloat16"), (-1,), True, None))
    assert evaluate(kineto) == Cost(9158656 + 8944, 18335200, "")


def test_extrema_and_arg_reductions():
    # max.dim: values (4,) float32 and indices (4,) int64: 96 + 16 + 32.
    assert cost_of(torch.max, X, 1) == Cost(24, 144, "")
    assert cost_of(torch.argmax, X, 1) == Cost(24, 96 + 32, "")
    assert cost_of(torch.amax, X, 0) == Cost(24, 96 + 24, "")
    assert cost_of(torch.any, X > 0) == Cost(24, 24 + 1, "")  # bool in, one bool out


def test_variance_norm_logsumexp():
    # var over dim 1: 4 per element (mean sum, subtract, square, add) + 1 divide per output: 96 + 4.
    assert cost_of(torch.var, X, 1) == Cost(100, 112, "")
    assert cost_of(torch.std, X, 1) == Cost(100 + 4 * T, 112, "")  # + a sqrt per output
    # 2-norm of everything: square and add per element + one sqrt.
    assert cost_of(torch.linalg.vector_norm, X) == Cost(48 + T, 100, "")
    # logsumexp over dim 1: max, subtract, exp, add per element + a log per output.
    assert cost_of(torch.logsumexp, X, 1) == Cost(24 * (T + 3) + 4 * T, 112, "")


def test_scans():
    assert cost_of(torch.cumsum, X, 1) == Cost(24, 192, "")
    # cummax writes values and int64 indices: 96 + 96 + 192.
    assert cost_of(torch.cummax, X, 1) == Cost(24, 384, "")


def test_softmax_and_log_softmax_forward_and_backward():
    # softmax: max, subtract, exp, sum, divide = T + 4 per element.
    assert cost_of(torch.softmax, X, 1) == Cost(24 * (T + 4), 192, "")
    # log_softmax: the same plus one log per row (4 rows).
    assert cost_of(torch.log_softmax, X, 1) == Cost(24 * (T + 4) + 4 * T, 192, "")
    grad, out = torch.randn(4, 6), torch.softmax(X, 1)
    # backward: y * (g - sum(g * y)) = 4 per element; reads grad and output, writes grad_input: 288 bytes.
    assert cost_of(torch.ops.aten._softmax_backward_data, grad, out, 1, torch.float32) == Cost(96, 288, "")
    assert cost_of(torch.ops.aten._log_softmax_backward_data, grad, out, 1, torch.float32) == Cost(
        24 * (T + 3), 288, ""
    )


def test_softmax_half_to_float_and_old_backward_signature():
    # _softmax(x fp16, dim, half_to_float=True) writes float32: 2 * 24 + 4 * 24 = 144 bytes.
    op = OpRecord("aten::_softmax", 0, 1, inputs=(TensorMeta((4, 6), "float16"), -1, True))
    assert evaluate(op) == Cost(24 * (T + 4), 144, "")
    # torch 1.9 Kineto: _log_softmax_backward_data(grad, output, dim, self) - the 4th argument is a tensor.
    old = OpRecord(
        "aten::_log_softmax_backward_data",
        0,
        1,
        inputs=(
            TensorMeta((32, 1000), "float32"),
            TensorMeta((32, 1000), "float32"),
            1,
            TensorMeta((32, 1000), "float32"),
        ),
    )
    assert evaluate(old) == Cost(32000 * (T + 3), 3 * 128000, "")


def test_reduction_over_a_dim_that_does_not_exist_is_na():
    op = OpRecord("aten::sum", 0, 1, inputs=(TensorMeta((4, 6), "float32"), (3,), False, None))
    assert evaluate(op) == Cost(None, None, "dim 3 out of range for 2 dims")


def test_dim_overloads_as_live_capture_records_them():
    # Live capture omits defaulted arguments: norm(x, 1, dim=1) is norm.ScalarOpt_dim with 3 inputs and prod(x, 0)
    # is prod.dim_int with 2; both reduce over their dim. p=1 norm: abs + add per element, out (4,): 48 flops.
    x = TensorMeta((4, 6), "float32")
    norm = OpRecord("aten::norm", 0, 1, overload="ScalarOpt_dim", inputs=(x, 1, (1,)))
    assert evaluate(norm) == Cost(48, 112, "")
    prod = OpRecord("aten::prod", 0, 1, overload="dim_int", inputs=(x, 0))
    assert evaluate(prod) == Cost(24, 96 + 24, "")
    # The same from Kineto, every argument recorded: prod.dim_int(self, 0, False, None) vs prod(self, None).
    assert evaluate(OpRecord("aten::prod", 0, 1, inputs=(x, 0, False, None))) == Cost(24, 120, "")
    assert evaluate(OpRecord("aten::prod", 0, 1, inputs=(x, None))) == Cost(24, 100, "")
    assert cost_of(torch.norm, X, 1, 1) == Cost(48, 112, "")
