"""Indexing, gather/scatter, joins, masks, sorting and padding: elements actually touched."""

import torch

from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta
from tests.formula_recorder import cost_of

X = torch.randn(5, 4)
IDX = torch.tensor([4, 0, 2])


def test_index_select_gather_and_advanced_index():
    # index_select rows 3 of (5, 4): indices 3 * 8 + 12 gathered floats + 12 written = 24 + 48 + 48.
    assert cost_of(torch.index_select, X, 0, IDX) == Cost(0, 120, "")
    assert cost_of(lambda x, i: x[i], X, IDX) == Cost(0, 120, "")  # aten::index with one index tensor
    # gather (4, 5) along 1 with (4, 2) indices: 8 * 8 + 8 * 4 + 8 * 4 = 128.
    assert cost_of(torch.gather, torch.randn(4, 5), 1, torch.zeros(4, 2, dtype=torch.long)) == Cost(0, 128, "")


def test_advanced_index_shape_without_a_recorded_output():
    # x (5, 4, 6)[:, idx (2, 3)] -> (5, 2, 3, 6) = 180 gathered; bytes int64 6 * 8 + 180 * 4 * 2 = 1488.
    x, idx = TensorMeta((5, 4, 6), "float32"), TensorMeta((2, 3), "int64")
    assert evaluate(OpRecord("aten::index", 0, 1, inputs=(x, (None, idx)))) == Cost(0, 1488, "")
    # non-adjacent index tensors move the broadcast dims first: x[idx, :, idx] -> (2, 3, 4) = 24 elements.
    split = OpRecord("aten::index", 0, 1, inputs=(x, (idx, None, idx)))
    assert evaluate(split) == Cost(0, 2 * 48 + 24 * 8, "")
    # a boolean mask stands for its upper bound (all true) when no output was recorded: (5,) mask -> 5 rows.
    mask = TensorMeta((5,), "bool")
    assert evaluate(OpRecord("aten::index", 0, 1, inputs=(x, (mask,)))) == Cost(0, 5 + 2 * 120 * 4, "")


def test_scatter_add_and_index_add_count_their_adds():
    dest = torch.zeros(4, 5)
    index, src = torch.zeros(4, 2, dtype=torch.long), torch.ones(4, 2)
    # in place: 8 adds; reads indices 64 + src 32 + the 8 destination elements 32, writes those 8: 160.
    assert cost_of(lambda d, i, s: d.scatter_add_(1, i, s), dest, index, src) == Cost(8, 160, "")
    # out of place also copies self into the output first: + 80 read + 80 written.
    assert cost_of(torch.scatter_add, dest, 1, index, src) == Cost(8, 160 - 32 + 160, "")
    # index_add_ rows [4, 0, 2] of (5, 4) with alpha 2: 12 elements * (mul + add) = 24;
    # reads indices 24 + destination 48 + source 48, writes 48.
    assert cost_of(lambda d, i, s: d.index_add_(0, i, s, alpha=2), X.clone(), IDX, torch.ones(3, 4)) == Cost(
        24, 168, ""
    )
    # index_put_ with accumulate: 12 adds; reads indices 24 + values 48 + destination 48, writes 48.
    assert cost_of(lambda d, i, v: d.index_put_((i,), v, accumulate=True), X.clone(), IDX, torch.ones(3, 4)) == Cost(
        12, 168, ""
    )


def test_joins_masks_and_nonzero():
    a, b = torch.randn(2, 3), torch.randn(4, 3)
    assert cost_of(torch.cat, [a, b]) == Cost(0, 2 * 18 * 4, "")
    assert cost_of(torch.stack, [a, a]) == Cost(0, 2 * 12 * 4, "")
    mask = torch.tensor([[True, False, True, False]] * 5)
    # masked_select: the recorded output has the 10 selected elements: 80 + 20 read, 40 written.
    assert cost_of(torch.masked_select, X, mask) == Cost(0, 140, "")
    # nonzero of (5, 4) with 10 true: int64 (10, 2) written, 20 bools read.
    assert cost_of(torch.nonzero, mask) == Cost(0, 20 + 160, "")
    # masked_fill: no arithmetic; reads self 80 + mask 20, writes 80.
    assert cost_of(torch.masked_fill, X, mask, 0.0) == Cost(0, 180, "")


def test_sort_topk_and_padding():
    x = torch.randn(4, 8)
    # sort along 8: 32 elements * ceil(log2 8) = 96 compares; values 128 + int64 indices 256 written, 128 read.
    assert cost_of(torch.sort, x) == Cost(96, 512, "")
    # topk 3 along 8: 32 * ceil(log2 3) = 64; out (4, 3): 48 + 96 written, 128 read.
    assert cost_of(torch.topk, x, 3) == Cost(64, 272, "")
    # constant_pad_nd (1, 2, 3) by (1, 1) -> (1, 2, 5): 24 read + 40 written.
    assert cost_of(torch.constant_pad_nd, torch.randn(1, 2, 3), [1, 1]) == Cost(0, 64, "")
