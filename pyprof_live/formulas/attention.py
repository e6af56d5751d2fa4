"""Scaled dot-product attention, every backend variant an importer sees, forward and backward.

Flops are torch.utils.flop_counter's ``sdpa_flop_count`` / ``sdpa_backward_flop_count``: the two
(forward) or five (backward) batched matmuls, 2 flops per multiply-accumulate, grouped-query heads
broadcast; the softmax and scaling are not counted and causal masking is not discounted (both as
torch, so totals match FlopCounterMode). Shapes are re-laid out per backend, because the kernels
take different layouts: the ``_scaled_dot_product_*`` ops and flex attention take
(batch, heads, seq, dim), while ``_flash_attention_*`` and ``_efficient_attention_*`` take
(batch, seq, heads, dim), or packed (total_tokens, heads, dim) with cumulative sequence lengths.
torch's own registry feeds the latter straight into the (batch, heads, seq, dim) count, which
swaps seq and heads; we transpose first. For packed (varlen) calls the per-sequence lengths are
values we do not have, so every sequence is taken at the recorded maximum length: an upper bound
(what torch does for fake tensors).

Bytes: q, k, v (and any mask/bias) read, output and logsumexp written; backward reads
grad_out, q, k, v, out, logsumexp and writes the three gradients.
"""

from __future__ import annotations

from ..records import TensorMeta
from .opargs import OpArgs
from .registry import builtin
from .work import FormulaInputError, Work


def _counts():
    from .. import torch_compat

    return torch_compat


def _check_4d(*tensors: TensorMeta) -> None:
    for t in tensors:
        if len(t.shape) != 4:
            raise FormulaInputError(f"attention expects 4-d (batch, heads, seq, dim) tensors, got {t.shape}")


def _lse(q_bhsd: tuple) -> TensorMeta:
    """The float32 logsumexp a fused kernel writes: one value per (batch, head, query)."""
    return TensorMeta(q_bhsd[:3], "float32")


def _sdpa_work(
    q: TensorMeta, k: TensorMeta, v: TensorMeta, shapes, extra_reads=(), writes_lse=True, outputs=(), times=1
) -> Work:
    """Forward work given (batch, heads, seq, dim) shapes of q, k, v (a list of such triples), ``times`` over."""
    count = _counts().sdpa_flop_count
    flops = times * sum(count(*triple) for triple in shapes)
    out = outputs[0] if outputs else TensorMeta(q.shape[:-1] + v.shape[-1:], q.dtype)
    writes = (out,) + ((outputs[1] if len(outputs) > 1 else _lse(shapes[0][0]),) if writes_lse else ())
    return Work(flops, (q, k, v) + tuple(t for t in extra_reads if t is not None), writes)


def _sdpa_backward_work(
    grad: TensorMeta, q: TensorMeta, k: TensorMeta, v: TensorMeta, shapes, extra_reads=(), times=1
) -> Work:
    """Backward work given (grad_out, q, k, v) shapes in (batch, heads, seq, dim) layout, ``times`` over."""
    count = _counts().sdpa_backward_flop_count
    flops = times * sum(count(*quad) for quad in shapes)
    return Work(
        flops,
        (grad, q, k, v) + tuple(t for t in extra_reads if t is not None),
        (TensorMeta(q.shape, q.dtype), TensorMeta(k.shape, k.dtype), TensorMeta(v.shape, v.dtype)),
    )


def _recorded(a: OpArgs, count: int) -> tuple:
    outputs = tuple(a.output(i) for i in range(count))
    return outputs if all(outputs) else ()


# -- (batch, heads, seq, dim) ops --------------------------------------------------------------

# name -> ((position, name) of the mask/bias argument or None, whether the op writes logsumexp: True, False, or
# the position of its compute_log_sumexp flag)
_SDPA_FORWARD = {
    "aten::scaled_dot_product_attention": ((3, "attn_mask"), False),
    "aten::_scaled_dot_product_attention_math": ((3, "attn_mask"), False),
    "aten::_scaled_dot_product_flash_attention": (None, True),
    "aten::_scaled_dot_product_flash_attention_for_cpu": ((5, "attn_mask"), True),
    "aten::_scaled_dot_product_efficient_attention": ((3, "attn_bias"), 4),
    "aten::_scaled_dot_product_cudnn_attention": ((3, "attn_bias"), 4),
    "aten::_scaled_dot_product_fused_attention_overrideable": ((3, "attn_bias"), True),
    "flex_attention": (None, True),
}


@builtin(*_SDPA_FORWARD)
def _sdpa(a: OpArgs) -> Work:
    q, k, v = a.tensor(0, "query"), a.tensor(1, "key"), a.tensor(2, "value")
    _check_4d(q, k, v)
    mask_arg, writes_lse = _SDPA_FORWARD[a.name]
    if not isinstance(writes_lse, bool):
        writes_lse = a.bool(writes_lse, "compute_log_sumexp", True, modifier=True)
    mask = a.opt_tensor(*mask_arg) if mask_arg is not None else None
    return _sdpa_work(q, k, v, [(q.shape, k.shape, v.shape)], (mask,), writes_lse, _recorded(a, 2 if writes_lse else 1))


# name -> positions of (grad_out, query, key, value, out, logsumexp), and (position, name) of the
# mask/bias argument, read again by backward, or None
_SDPA_BACKWARD = {
    "aten::_scaled_dot_product_flash_attention_backward": ((0, 1, 2, 3, 4, 5), None),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": ((0, 1, 2, 3, 4, 5), (8, "attn_mask")),
    "aten::_scaled_dot_product_efficient_attention_backward": ((0, 1, 2, 3, 5, 6), (4, "attn_bias")),
    "aten::_scaled_dot_product_cudnn_attention_backward": ((0, 1, 2, 3, 4, 5), (8, "attn_bias")),
    "aten::_scaled_dot_product_fused_attention_overrideable_backward": ((0, 1, 2, 3, 6, 7), (4, "attn_bias")),
    "flex_attention_backward": ((5, 0, 1, 2, 3, 4), None),
}


@builtin(*_SDPA_BACKWARD)
def _sdpa_backward(a: OpArgs) -> Work:
    (grad_at, q_at, k_at, v_at, out_at, lse_at), mask_arg = _SDPA_BACKWARD[a.name]
    grad, q, k, v = (
        a.tensor(grad_at, "grad_out"),
        a.tensor(q_at, "query"),
        a.tensor(k_at, "key"),
        a.tensor(v_at, "value"),
    )
    _check_4d(grad, q, k, v)
    mask = a.opt_tensor(*mask_arg) if mask_arg is not None else None
    extra = (a.opt_tensor(out_at, "out"), a.opt_tensor(lse_at, "logsumexp"), mask)
    return _sdpa_backward_work(grad, q, k, v, [(grad.shape, q.shape, k.shape, v.shape)], extra)


# -- (batch, seq, heads, dim) or packed (tokens, heads, dim) kernels ---------------------------


def _bhsd(t: TensorMeta) -> tuple:
    """(batch, seq, heads, dim) -> (batch, heads, seq, dim)."""
    if len(t.shape) != 4:
        raise FormulaInputError(f"expected a 4-d (batch, seq, heads, dim) tensor, got {t.shape}")
    b, s, h, d = t.shape
    return b, h, s, d


def _per_sequence(a: OpArgs, q, k, v, cum_q_at: int, max_q_at: int, grad=None) -> tuple[list, int]:
    """Shapes for the count and how many times they count: one (b, h, s, d) set, or, for packed varlen
    input, one per sequence at max length (the sequence count multiplies, it is never iterated)."""
    cum_q = a.opt_tensor(cum_q_at, "cum_seq_q")
    if cum_q is None:
        one = (_bhsd(q), _bhsd(k), _bhsd(v))
        return [((_bhsd(grad),) + one) if grad is not None else one], 1
    sequences = cum_q.shape[0] - 1
    max_q, max_k = a.int(max_q_at, "max_q"), a.int(max_q_at + 1, "max_k")
    q_heads, k_heads, v_heads = (t.shape[-2] for t in (q, k, v))
    padded = ((1, q_heads, max_q, q.shape[-1]), (1, k_heads, max_k, k.shape[-1]), (1, v_heads, max_k, v.shape[-1]))
    if grad is not None:
        return [((1, q_heads, max_q, v.shape[-1]), *padded)], sequences
    return [padded], sequences


@builtin("aten::_flash_attention_forward")
def _flash_forward(a: OpArgs) -> Work:
    # (query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...)
    q, k, v = a.tensor(0, "query"), a.tensor(1, "key"), a.tensor(2, "value")
    shapes, times = _per_sequence(a, q, k, v, 3, 5)
    return _sdpa_work(q, k, v, shapes, (), True, _recorded(a, 2), times)


@builtin("aten::_efficient_attention_forward")
def _efficient_forward(a: OpArgs) -> Work:
    # (query, key, value, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, ...)
    q, k, v = a.tensor(0, "query"), a.tensor(1, "key"), a.tensor(2, "value")
    if a.opt_tensor(4, "cu_seqlens_q") is not None:  # packed: (1, tokens, heads, dim) -> (tokens, heads, dim)
        q, k, v = (TensorMeta(t.shape[1:], t.dtype) for t in (q, k, v))
    shapes, times = _per_sequence(a, q, k, v, 4, 6)
    return _sdpa_work(q, k, v, shapes, (a.opt_tensor(3, "bias"),), True, _recorded(a, 2), times)


@builtin("aten::_flash_attention_backward")
def _flash_backward(a: OpArgs) -> Work:
    # (grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, ...)
    grad, q, k, v = a.tensor(0, "grad_out"), a.tensor(1, "query"), a.tensor(2, "key"), a.tensor(3, "value")
    shapes, times = _per_sequence(a, q, k, v, 6, 8, grad=grad)
    extra = (a.opt_tensor(4, "out"), a.opt_tensor(5, "logsumexp"))
    return _sdpa_backward_work(grad, q, k, v, shapes, extra, times)


@builtin("aten::_efficient_attention_backward")
def _efficient_backward(a: OpArgs) -> Work:
    # (grad_out_, query, key, value, bias, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, logsumexp, ...)
    grad, q, k, v = a.tensor(0, "grad_out_"), a.tensor(1, "query"), a.tensor(2, "key"), a.tensor(3, "value")
    if a.opt_tensor(6, "cu_seqlens_q") is not None:
        grad, q, k, v = (TensorMeta(t.shape[1:], t.dtype) for t in (grad, q, k, v))
    shapes, times = _per_sequence(a, q, k, v, 6, 8, grad=grad)
    extra = (a.opt_tensor(4, "bias"), a.opt_tensor(5, "out"), a.opt_tensor(10, "logsumexp"))
    return _sdpa_backward_work(grad, q, k, v, shapes, extra, times)
