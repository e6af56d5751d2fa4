"""Formulas of the ops only torch.compile'd graphs run (Inductor's prims and masked index forms)."""

import torch
import torch._inductor.inductor_prims
import torch._prims

from pyprof_live.formulas import Cost
from tests.formula_recorder import cost_of

X = torch.randn(3, 4)  # 12 float32 elements: 48 bytes


def test_fma_is_a_multiply_add_per_element():
    # a * b + c on 12 elements: 2 flops each; 3 * 48 read + 48 written.
    assert cost_of(torch.ops.prims.fma.default, X, X.clone(), X.clone()) == Cost(24, 192, "")


def test_convert_element_type_reads_and_writes_each_element_once():
    # 12 float32 read (48 bytes), 12 float16 written (24 bytes), no arithmetic.
    assert cost_of(torch.ops.prims.convert_element_type.default, X, torch.float16) == Cost(0, 72, "")


def test_iota_is_arange():
    # 5 int64 elements, start + i * step: 2 flops each, 40 bytes written.
    iota = torch.ops.prims.iota.default
    cost = cost_of(iota, 5, start=0, step=1, dtype=torch.int64, device="cpu", requires_grad=False)
    assert cost == Cost(10, 40, "")


def test_masked_index_put_accumulate_adds_each_value_once():
    # self (8,) float32, mask (3,) bool, indices [(3,) int64], values (3,) float32: 3 adds.
    # Reads: self 32 + mask 3 + index 24 + values 12 + the 3 accumulated elements 12 = 83; writes 32.
    x, values = torch.zeros(8), torch.ones(3)
    mask, index = torch.tensor([True, False, True]), torch.tensor([1, 2, 1])
    op = torch.ops.aten._unsafe_masked_index_put_accumulate.default
    assert cost_of(op, x, mask, [index], values) == Cost(3, 115, "")


def test_masked_index_reads_what_it_gathers():
    # (8,) float32 gathered at 3 places: reads mask 3 + index 24 + 3 elements 12, writes 12.
    x, mask, index = torch.randn(8), torch.tensor([True, False, True]), torch.tensor([1, 2, 1])
    assert cost_of(torch.ops.aten._unsafe_masked_index.default, x, mask, [index], 0.0) == Cost(0, 51, "")
