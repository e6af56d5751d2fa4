"""Embedding lookups and embedding bags, forward and backward.

A lookup is a gather: 0 flops, bytes = the indices, the rows it reads (one embedding row per
index, not the whole table) and the output. A bag reduces the rows of each bag: 1 flop per
gathered element (add for sum/mean, compare for max), plus a multiply per element with
per_sample_weights and a divide per output element for mean. Dense backward zero-fills the
(num_weights, dim) gradient and accumulates one grad row per index: 1 flop per element.
"""

from __future__ import annotations

from ..records import TensorMeta
from .opargs import OpArgs
from .registry import builtin
from .work import FormulaInputError, Work, elements, numel, present

_SUM, _MEAN, _MAX = 0, 1, 2


def _row_size(table: TensorMeta) -> int:
    if len(table.shape) != 2:
        raise FormulaInputError(f"embedding table must be 2-d, got {table.shape}")
    return table.shape[1]


@builtin("aten::embedding")
def _embedding(a: OpArgs) -> Work:
    # embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
    table, indices = a.tensor(0, "weight"), a.tensor(1, "indices")
    out = a.output(0) or TensorMeta(indices.shape + (_row_size(table),), table.dtype)
    return Work(0, (indices, elements(numel(out.shape), table.dtype)), (out,))


# embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq);
# embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse)
@builtin("aten::embedding_dense_backward", "aten::embedding_backward")
def _embedding_backward(a: OpArgs) -> Work:
    grad, indices = a.tensor(0, "grad_output"), a.tensor(1, "indices")
    dim = grad.shape[-1] if grad.shape else 1
    out = a.output(0) or TensorMeta((a.int(2, "num_weights"), dim), grad.dtype)
    scale = a.bool(4, "scale_grad_by_freq", False, modifier=True)
    return Work(numel(grad.shape) * (2 if scale else 1), (grad, indices), (out,))


@builtin("aten::embedding_sparse_backward")
def _embedding_sparse_backward(a: OpArgs) -> Work:
    # A sparse gradient: the grad rows become its values, the indices its indices; no arithmetic.
    grad, indices = a.tensor(0, "grad"), a.tensor(1, "indices")
    return Work(0, (grad, indices), (TensorMeta(grad.shape, grad.dtype), TensorMeta(indices.shape, "int64")))


def _bags(a: OpArgs, indices: TensorMeta, offsets: TensorMeta | None, include_last_offset_at: int) -> int:
    if len(indices.shape) == 2:  # 2-d input: one bag per row, offsets unused
        return indices.shape[0]
    if offsets is None:
        raise FormulaInputError("1-d embedding_bag indices need offsets")
    return numel(offsets.shape) - a.bool(include_last_offset_at, "include_last_offset", False, modifier=True)


# _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
#                include_last_offset, padding_idx) -> (output, offset2bag, bag_size, max_indices)
@builtin("aten::_embedding_bag", "aten::_embedding_bag_forward_only", "aten::embedding_bag")
def _embedding_bag(a: OpArgs) -> Work:
    table, indices, offsets = a.tensor(0, "weight"), a.tensor(1, "indices"), a.opt_tensor(2, "offsets")
    mode = a.int(4, "mode")
    per_sample = a.opt_tensor(6, "per_sample_weights")
    dim, looked_up = _row_size(table), numel(indices.shape)
    bags = _bags(a, indices, offsets, 7)
    flops = looked_up * dim * (1 + (per_sample is not None)) + (bags * dim if mode == _MEAN else 0)
    reads = (indices, elements(looked_up * dim, table.dtype)) + present(offsets, per_sample)
    recorded = tuple(t for t in (a.output(i) for i in range(4)) if t is not None)
    writes = recorded or (
        TensorMeta((bags, dim), table.dtype),
        TensorMeta((looked_up,), "int64"),
        TensorMeta((bags,), "int64"),
    ) + ((TensorMeta((bags, dim), "int64"),) if mode == _MAX else ())
    return Work(flops, reads, writes)


# name -> positions of (grad, indices, offset2bag, bag_size, num_weights, mode, per_sample_weights)
_BAG_BACKWARD = {
    "aten::_embedding_bag_backward": (0, 1, 3, 4, 6, 8, 10),
    "aten::_embedding_bag_dense_backward": (0, 1, 2, 3, 5, 7, 8),
    "aten::_embedding_bag_sparse_backward": (0, 1, 3, 4, 5, 7, 8),
}


@builtin(*_BAG_BACKWARD)
def _embedding_bag_backward(a: OpArgs) -> Work:
    # Each index adds its bag's grad row into the weight gradient (x its per-sample weight, / bag size for mean).
    grad_at, indices_at, offset2bag_at, bag_size_at, num_weights_at, mode_at, per_sample_at = _BAG_BACKWARD[a.name]
    grad, indices = a.tensor(grad_at, "grad"), a.tensor(indices_at, "indices")
    per_sample = a.opt_tensor(per_sample_at, "per_sample_weights")
    dim, looked_up = grad.shape[-1], numel(indices.shape)
    mode = a.int(mode_at, "mode")
    flops = looked_up * dim * (1 + (per_sample is not None) + (mode == _MEAN))
    reads = (grad, indices, a.tensor(offset2bag_at, "offset2bag"), a.tensor(bag_size_at, "bag_size")) + (
        (per_sample,) if per_sample is not None else ()
    )
    if a.name == "aten::_embedding_bag_sparse_backward":
        written = TensorMeta((looked_up, dim), grad.dtype)
    else:
        written = a.output(0) or TensorMeta((a.int(num_weights_at, "num_weights"), dim), grad.dtype)
    return Work(flops, reads, (written,))


# _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode, padding_idx)
@builtin("aten::_embedding_bag_per_sample_weights_backward")
def _per_sample_weights_backward(a: OpArgs) -> Work:
    # One dot product of a grad row with an embedding row per index: 2 * dim flops.
    grad, table, indices = a.tensor(0, "grad"), a.tensor(1, "weight"), a.tensor(2, "indices")
    dim, looked_up = _row_size(table), numel(indices.shape)
    reads = (grad, indices, a.tensor(4, "offset2bag"), elements(looked_up * dim, table.dtype))
    return Work(2 * looked_up * dim, reads, (a.output(0) or TensorMeta(indices.shape, grad.dtype),))
