"""Formulas of the ops only torch.compile'd graphs run (Inductor's prims and masked index forms)."""

import pytest
import torch
import torch._inductor.inductor_prims
import torch._prims

from pyprof_live.formulas import TRANSCENDENTAL as T
from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta
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


def test_inductors_random_numbers_count_as_the_eager_generators_do():
    """torch.compile'd dropout and rand/randn/randint draw through Inductor's prims, fused into kernels."""
    prims, cpu = torch.ops.prims, torch.device("cpu")
    assert cost_of(prims.inductor_seeds, 3, cpu) == Cost(0, 24, "")  # 3 int64 seeds written
    # one int64 read, one written (from the node's shapes: torch 2.6's lookup_seed cannot run eagerly, it aliases)
    lookup = OpRecord("prims::inductor_lookup_seed", 0, 1, inputs=(TensorMeta((3,), "int64"), 1))
    assert evaluate(lookup) == Cost(0, 16, "")
    seed = torch.tensor(7)
    # 10 float32 draws written (40 bytes): uniform's 2 flops each, as uniform_; normal's 3 transcendentals + 4
    assert cost_of(prims.inductor_random, [2, 5], seed, "rand") == Cost(20, 40, "")
    assert cost_of(prims.inductor_random, [2, 5], seed, "randn") == Cost(10 * (3 * T + 4), 40, "")
    assert cost_of(prims.inductor_randint, 0, 7, [2, 5], seed) == Cost(0, 80, "")  # 10 int64 draws, no flops
    # so a compiled dropout's fused ops have native_dropout's 5 flops per element: draw 2 + gt 1 + 2 multiplies
    x = torch.randn(2, 5)
    draws = prims.inductor_random([2, 5], seed, "rand")
    fused = [
        evaluate(lookup),
        cost_of(prims.inductor_random, [2, 5], seed, "rand"),
        cost_of(torch.gt, draws, 0.1),
        cost_of(torch.mul, draws > 0.1, x),
        cost_of(torch.mul, x, 1 / 0.9),
    ]
    assert sum(c.flops for c in fused) == cost_of(torch.ops.aten.native_dropout, x, 0.1, True).flops == 50


@pytest.mark.skipif(
    not hasattr(torch.ops.prims, "_low_memory_max_pool_with_offsets"),
    reason=f"torch {torch.__version__}'s Inductor has no low-memory max pool (its max pools keep int64 indices)",
)
def test_inductors_low_memory_max_pool_has_max_pools_compares_and_int8_offsets():
    """torch.compile'd max_pool2d with indices: offsets in the window instead of indices, turned back in backward."""
    prims = torch.ops.prims
    x = torch.randn(1, 2, 6, 6)
    pool = ([2, 2], [2, 2], [0, 0], [1, 1], False)
    # 18 outputs * 4 compares = 72, as max_pool2d_with_indices; bytes x 288 + out 72 + int8 offsets 18 = 378.
    assert cost_of(prims._low_memory_max_pool_with_offsets, x, *pool) == Cost(72, 378, "")
    assert cost_of(torch.ops.aten.max_pool2d_with_indices, x, *pool).flops == 72
    _, offsets = prims._low_memory_max_pool_with_offsets(x, *pool)
    # index arithmetic, no flops (as for max_pool's indices): int8 offsets 18 read, int64 indices 144 written.
    to_indices = cost_of(prims._low_memory_max_pool_offsets_to_indices, offsets, [2, 2], [6, 6], [2, 2], [0, 0], [1, 1])
    assert to_indices == Cost(0, 162, "")
    # without a recorded output: the output size from the pooling arithmetic (6 -> 3 per dim)
    op = OpRecord("prims::_low_memory_max_pool_with_offsets", 0, 1, inputs=(TensorMeta((1, 2, 6, 6), "float32"), *pool))
    assert evaluate(op) == Cost(72, 378, "")


def test_functionalized_writes_into_views_copy_self_and_read_src():
    # slice_scatter of (4, 2) into columns 0:2 of (4, 6) float32: self 96 read (copied), src 32 read, output 96
    # written; no arithmetic.
    x = torch.randn(4, 6)
    assert cost_of(torch.slice_scatter, x, torch.randn(4, 2), 1, 0, 2) == Cost(0, 224, "")
    assert cost_of(torch.select_scatter, x, torch.randn(4), 1, 3) == Cost(0, 96 + 16 + 96, "")
    assert cost_of(torch.diagonal_scatter, torch.randn(4, 4), torch.randn(4)) == Cost(0, 64 + 16 + 64, "")
    assert cost_of(torch.as_strided_scatter, x, torch.randn(2, 2), (2, 2), (6, 1)) == Cost(0, 96 + 16 + 96, "")


def test_functional_copy_reads_src_and_writes_a_tensor_like_self():
    # copy((4, 6) float64, (6,) float32): src 24 bytes read, broadcast into 24 float64 written (192); self not read.
    assert cost_of(torch.ops.aten.copy, torch.randn(4, 6, dtype=torch.float64), torch.randn(6)) == Cost(0, 216, "")


def _f32(*shape):
    return TensorMeta(shape, "float32")


def test_a_frozen_convolution_counts_the_convolution_and_the_ops_fused_after_it():
    """torch._inductor.config.freezing fuses a convolution with what follows it into one oneDNN call (recorded
    shapes of a compiled ResNet-18's first convolution and of a residual block's second one)."""
    conv_relu = OpRecord(
        "mkldnn::_convolution_pointwise",
        0,
        1,
        inputs=(_f32(2, 3, 32, 32), _f32(64, 3, 7, 7), _f32(64), (3, 3), (2, 2), (1, 1), 1, "relu", (None,), ""),
        outputs=(_f32(2, 64, 16, 16),),
    )
    # 2 * 32768 outputs * 147 (3 * 7 * 7) = 9,633,792, + relu 1 per output = 9,666,560 flops.
    # Reads 4 * (6144 + 9408 + 64) = 62,464 bytes, writes 4 * 32768 = 131,072.
    assert evaluate(conv_relu) == Cost(9_666_560, 193_536, "")
    add_relu = OpRecord(
        "mkldnn::_convolution_pointwise_",
        0,
        1,
        overload="binary",
        inputs=(_f32(2, 64, 8, 8), _f32(2, 64, 8, 8), _f32(64, 64, 3, 3), _f32(64), (1, 1), (1, 1), (1, 1), 1)
        + ("add", 1.0, "relu", (None,), ""),
        outputs=(_f32(2, 64, 8, 8),),
    )
    # in place into the residual (other, first): 2 * 8192 * 576 = 9,437,184, + add 1 and relu 1 per output = 9,453,568.
    # Reads x 32768 + weight 147,456 + bias 256 + residual 32768 = 213,248 bytes, writes 32768.
    assert evaluate(add_relu) == Cost(9_453_568, 246_016, "")
    # a source that records no overload (Kineto): the form is told by the number of arguments, 13 here
    binary = OpRecord("mkldnn::_convolution_pointwise", 0, 1, inputs=add_relu.inputs, outputs=add_relu.outputs)
    assert evaluate(binary) == Cost(9_453_568, 246_016, "")


def test_a_frozen_linear_counts_the_gemm_from_the_weight_it_was_packed_from():
    # mkl::_mkl_linear(X, MKL_W, ORI_W, B, batch): MKL's packed buffer (1786913 floats) is read, the GEMM's shape is
    # ORI_W's: 2 * 64 * 256 * 1024 = 33,554,432 flops. Reads 4 * (16384 + 1786913) = 7,213,188, writes 4 * 65536.
    mkl = OpRecord(
        "mkl::_mkl_linear",
        0,
        1,
        inputs=(_f32(64, 256), _f32(1786913, 1), _f32(1024, 256), None, 64),
        outputs=(_f32(64, 1024),),
    )
    assert evaluate(mkl) == Cost(33_554_432, 7_475_332, "")
    # oneDNN's, with a tanh gelu fused: 2 * 8 * 16 * 32 = 8192, + (T + 8) per output for 256 outputs.
    gelu = OpRecord("mkldnn::_linear_pointwise", 0, 1, inputs=(_f32(8, 16), _f32(32, 16), None, "gelu", (), "tanh"))
    assert evaluate(gelu).flops == 8192 + (T + 8) * 256
    # .binary (X, other, W, B, attr) with no overload recorded (5 arguments): K == N, so the weight check alone
    # would not tell: 2 * 64 * 256 * 256 = 8,388,608 + add 1 per output (16384) = 8,404,992
    add = OpRecord(
        "mkldnn::_linear_pointwise", 0, 1, inputs=(_f32(64, 256), _f32(64, 256), _f32(256, 256), None, "add")
    )
    assert evaluate(add).flops == 8_404_992
    unknown = OpRecord("mkldnn::_linear_pointwise", 0, 1, inputs=(_f32(8, 16), _f32(32, 16), None, "mish", (), ""))
    assert evaluate(unknown).reason.endswith("no formula for the fused 'mish'")
