"""Attention: hand-computed counts (FlopCounterMode counts 0 for the CPU SDPA op, so it proves nothing
there), the (batch, seq, heads, dim) layout of the flash/efficient kernels, GQA and packed varlen input."""

import torch
import torch.nn.functional as F

from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta
from tests.formula_recorder import checked_evaluate, record


def _sdpa_ops():
    q, k, v = (torch.randn(2, 4, 16, 8, requires_grad=True) for _ in range(3))
    grad = torch.randn(2, 4, 16, 8)  # not .sum().backward(): its expanded (stride-0) grad would be read as 1 element
    ops, _ = record(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad))
    return {op.name: op for op in ops if "attention" in op.name}


def test_cpu_sdpa_forward_and_backward_hand_computed():
    ops = _sdpa_ops()
    forward = ops["aten::_scaled_dot_product_flash_attention_for_cpu"]
    backward = ops["aten::_scaled_dot_product_flash_attention_for_cpu_backward"]
    # B 2, H 4, L = S 16, E 8. Forward: Q K^T and P V, each 2 * B*H * L * S * E = 2 * 8 * 16 * 16 * 8 = 32768 flops:
    # 65536 (causal masking is not discounted, as torch). Bytes: q, k, v read (3 * 1024 floats), out (1024) and
    # logsumexp (B*H*L = 128 floats) written: 4 * (3072 + 1024 + 128) = 16896.
    assert checked_evaluate(forward) == Cost(65536, 16896, "")
    # Backward: five matmuls of the same size: 5 * 32768 = 163840. Bytes: grad_out, q, k, v, out (5 * 1024) and
    # logsumexp (128) read, dq, dk, dv (3 * 1024) written: 4 * (5120 + 128 + 3072) = 33280.
    assert checked_evaluate(backward) == Cost(163840, 33280, "")


def test_cpu_sdpa_backward_reads_the_mask_again():
    q, k, v = (torch.randn(2, 4, 16, 8, requires_grad=True) for _ in range(3))
    mask, grad = torch.randn(16, 16), torch.randn(2, 4, 16, 8)
    ops, _ = record(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask).backward(grad))
    (backward,) = [op for op in ops if op.name == "aten::_scaled_dot_product_flash_attention_for_cpu_backward"]
    # As above (33280 bytes), plus the (16, 16) fp32 mask read: 33280 + 4 * 256 = 34304.
    assert checked_evaluate(backward) == Cost(163840, 34304, "")


def test_flash_kernel_layout_is_batch_seq_heads_dim():
    # Kineto (Qwen1.5 on H100): aten::_flash_attention_forward with q, k, v (16, 559, 16, 64) bf16 = (B, S, H, D).
    # 2 matmuls * 2 * B 16 * H 16 * 559 * 559 * 64 = 20478754816 flops (torch's own registry, reading the shape as
    # (B, H, S, D), would give 4 * 16 * 559 * 16 * 16 * 64 = 585957376).
    # Bytes: q, k, v 3 * 9158656 bf16 = 54951936; out 18317312; logsumexp (16, 16, 559) fp32 = 572416.
    qkv = TensorMeta((16, 559, 16, 64), "bfloat16", (572416, 64, 35776, 1))
    op = OpRecord(
        "aten::_flash_attention_forward",
        0,
        1,
        inputs=(qkv, qkv, qkv, None, None, 559, 559, 0.0, True, False, 0.125, None, None, None, None),
    )
    assert evaluate(op) == Cost(20478754816, 73841664, "")


def test_sdpa_with_grouped_query_heads():
    # q 8 heads, k/v 2 heads (GQA): each matmul 2 * 8 heads * 4 * 6 * 16 = 6144, total 12288.
    # Bytes fp16: q 512 + k 192 + v 192 read, out 512 written: 2 * 1408 = 2816.
    q, kv = TensorMeta((1, 8, 4, 16), "float16"), TensorMeta((1, 2, 6, 16), "float16")
    op = OpRecord("aten::scaled_dot_product_attention", 0, 1, inputs=(q, kv, kv, None, 0.0, False, None, True))
    assert evaluate(op) == Cost(12288, 2816, "")


def test_packed_varlen_flash_takes_every_sequence_at_max_length():
    # 3 sequences packed into 10 tokens, 2 heads, dim 8, max length 5: per sequence 2 * 2 * (2 * 5 * 5 * 8) = 1600,
    # so 4800 (an upper bound: the real lengths are tensor values no trace records).
    packed, offsets = TensorMeta((10, 2, 8), "float16"), TensorMeta((4,), "int32")
    op = OpRecord(
        "aten::_flash_attention_forward",
        0,
        1,
        inputs=(packed, packed, packed, offsets, offsets, 5, 5, 0.0, False, False),
    )
    assert evaluate(op).flops == 4800


def test_attention_with_bad_shapes_is_na():
    op = OpRecord(
        "aten::_scaled_dot_product_efficient_attention",
        0,
        1,
        inputs=(TensorMeta((2, 16, 8), "float16"),) * 3 + (None, True),
    )
    assert evaluate(op) == Cost(None, None, "attention expects 4-d (batch, heads, seq, dim) tensors, got (2, 16, 8)")


def _meta(*shape, dtype=torch.float16):
    return torch.empty(*shape, device="meta", dtype=dtype)


def test_gpu_only_attention_kernels_recorded_on_meta_tensors():
    # Meta tensors give the CUDA ops' real schema-ordered records on a CPU-only machine. The same attention,
    # B 2, H 4, S 16, D 8, through three backends: 65536 flops each (see the CPU test above).
    q = _meta(2, 4, 16, 8)
    sdpa_flash, _ = record(lambda: torch.ops.aten._scaled_dot_product_flash_attention(q, q, q))
    sdpa_efficient, _ = record(lambda: torch.ops.aten._scaled_dot_product_efficient_attention(q, q, q, None, True))
    bshd = _meta(2, 16, 4, 8)  # the flash kernel's own (batch, seq, heads, dim) layout
    flash, _ = record(
        lambda: torch.ops.aten._flash_attention_forward(bshd, bshd, bshd, None, None, 16, 16, 0.0, False, False)
    )
    for ops in (sdpa_flash, sdpa_efficient, flash):
        assert checked_evaluate(ops[-1]).flops == 65536, ops[-1].name
