"""Losses (forward and backward) and embeddings / embedding bags (forward and backward)."""

import torch
import torch.nn.functional as F

from pyprof_live.formulas import TRANSCENDENTAL as T
from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta
from tests.formula_recorder import checked_evaluate, cost_of, record


def test_elementwise_losses_and_their_reduction():
    x, y = torch.randn(4, 5), torch.randn(4, 5)  # 20 elements
    # mse mean: (x - y)^2 = 2 per element, + 20 adds + 1 divide; bytes 4 * (20 + 20 + 1).
    assert cost_of(torch.ops.aten.mse_loss, x, y, 1) == Cost(61, 164, "")
    # reduction none: no reduction flops, full-size output.
    assert cost_of(torch.ops.aten.mse_loss, x, y, 0) == Cost(40, 240, "")
    # backward 2 (x - y) g / n = 3 per element; reads 0-dim grad, x, y, writes grad_input: 4 * (1 + 20 + 20 + 20).
    assert cost_of(torch.ops.aten.mse_loss_backward, torch.tensor(1.0), x, y, 1) == Cost(60, 244, "")
    assert cost_of(torch.ops.aten.smooth_l1_loss, x, y, 2, 1.0) == Cost(6 * 20 + 20, 164, "")  # sum: no divide
    assert cost_of(torch.ops.aten.huber_loss_backward, torch.tensor(1.0), x, y, 1, 1.0) == Cost(80, 244, "")
    p, labels = torch.rand(4, 5), torch.rand(4, 5)
    assert cost_of(torch.ops.aten.binary_cross_entropy, p, labels, None, 1) == Cost(20 * (2 * T + 6) + 21, 164, "")
    logits = torch.randn(3)
    targets = torch.tensor([1.0, 0.0, 1.0])
    # with logits: 2 T + 7 per element + 3 adds + 1 divide = 145; bytes 4 * (3 + 3 + 1).
    assert cost_of(torch.ops.aten.binary_cross_entropy_with_logits, logits, targets) == Cost(145, 28, "")
    # kl_div is composite under dispatch; Kineto and nsys show it: y (log y - x) = T + 2 per element, sum.
    kl = OpRecord("aten::kl_div", 0, 1, inputs=(TensorMeta((4, 5), "float32"), TensorMeta((4, 5), "float32"), 2, False))
    assert evaluate(kl) == Cost(20 * (T + 2) + 20, 164, "")


def test_nll_forward_and_backward_touch_one_element_per_target():
    logp = torch.log_softmax(torch.randn(4, 10), 1)
    target = torch.tensor([1, 0, 9, 3])
    # forward mean: gather, negate, accumulate 3 per target + 1 divide = 13. Bytes: target 4 * 8, the 4 picked
    # log-probabilities 4 * 4, output and total_weight 2 * 4: 56.
    assert cost_of(torch.ops.aten.nll_loss_forward, logp, target, None, 1, -100) == Cost(13, 56, "")
    # backward: -g * w / total at each target: 12; reads grad 4 + target 32 + total_weight 4, writes the full
    # (4, 10) grad_input 160: 200.
    grad, total = torch.tensor(1.0), torch.tensor(4.0)
    assert cost_of(torch.ops.aten.nll_loss_backward, grad, logp, target, None, 1, -100, total) == Cost(12, 200, "")
    # nll_loss2d: (N, C, H, W) scores, (N, H, W) targets: 2 * 3 * 3 = 18 picked.
    scores, pixels = torch.randn(2, 5, 3, 3), torch.randint(0, 5, (2, 3, 3))
    assert cost_of(torch.ops.aten.nll_loss2d_forward, scores, pixels, None, 2, -100).flops == 54


def test_cross_entropy_as_importers_show_it():
    # aten::cross_entropy_loss (composite): log_softmax (T + 4) * 40 + T * 4 rows = 1040, NLL 3 * 4, mean 1: 1053.
    # Bytes: scores 160 + targets 32 read, the loss 4 written: 196.
    op = OpRecord(
        "aten::cross_entropy_loss",
        0,
        1,
        inputs=(TensorMeta((4, 10), "float32"), TensorMeta((4,), "int64"), None, 1, -100, 0.0),
    )
    assert evaluate(op) == Cost(1053, 196, "")
    # a target that does not match the scores is na, not a wrong number.
    bad = OpRecord(
        "aten::cross_entropy_loss",
        0,
        1,
        inputs=(TensorMeta((4, 10), "float32"), TensorMeta((5,), "int64"), None, 1, -100, 0.0),
    )
    assert evaluate(bad) == Cost(None, None, "nll target (5,) does not match input (4, 10)")


def test_embedding_reads_the_looked_up_rows_not_the_table():
    table, idx = torch.randn(1000, 4), torch.randint(0, 1000, (2, 3))
    # out (2, 3, 4): indices 6 * 8 + 24 gathered floats * 4 + 24 written * 4 = 240 (not the 16000-byte table).
    assert cost_of(F.embedding, idx, table) == Cost(0, 240, "")
    # dense backward: one add per grad element (24); reads grad 96 + indices 48, writes (1000, 4) 16000.
    assert cost_of(torch.ops.aten.embedding_dense_backward, torch.randn(2, 3, 4), idx, 1000, -1, False) == Cost(
        24, 16144, ""
    )


def test_embedding_bag_forward_and_backward():
    # weight (100, 16), 20 indices in 3 bags, mean: 20 * 16 adds + 3 * 16 divides = 368.
    # Bytes (no outputs recorded, as Kineto): indices 160 + 320 gathered floats 1280 + offsets 24 read;
    # output (3, 16) 192, offset2bag 20 * 8 = 160, bag_size 3 * 8 = 24 written: 1840.
    op = OpRecord(
        "aten::_embedding_bag",
        0,
        1,
        inputs=(
            TensorMeta((100, 16), "float32"),
            TensorMeta((20,), "int64"),
            TensorMeta((3,), "int64"),
            False,
            1,
            False,
            None,
            False,
            -1,
        ),
    )
    assert evaluate(op) == Cost(368, 1840, "")
    table = torch.randn(100, 16, requires_grad=True)
    tokens, offsets = torch.randint(0, 100, (20,)), torch.tensor([0, 5, 12])
    ops, _ = record(lambda: F.embedding_bag(tokens, table, offsets, mode="mean").backward(torch.randn(3, 16)))
    backward = next(o for o in ops if o.name == "aten::_embedding_bag_backward")
    # accumulate + divide by bag size per gathered element: 2 * 20 * 16 = 640.
    assert checked_evaluate(backward).flops == 640
