"""Indexing, gather/scatter, joins, masks, sorting and padding: data movement with little arithmetic.

Flops are 0 except where values combine: scatter_add/index_add/index_put(accumulate) add once per
source element, scatter_reduce once per source element, sort/argsort charge
n * ceil(log2(size along dim)) comparisons, topk n * ceil(log2 k).
Bytes: what is gathered or scattered (elements actually touched, e.g. the selected rows of
index_select, not the whole source), the index tensors, and the outputs. An out-of-place
scatter/index_add first copies ``self`` into the output: that copy is counted.
Data-dependent sizes (nonzero, masked_select, boolean-mask indexing) come from the recorded
output; when the source recorded none, the upper bound (every mask element true) is used.
"""

from __future__ import annotations

from math import ceil, log2, prod

from ..records import TensorMeta
from .opargs import OpArgs
from .registry import builtin
from .work import FormulaInputError, Work, broadcast_shapes, elements, normalize_dim, numel


def _copy_of_self(a: OpArgs, x: TensorMeta) -> tuple[tuple, tuple]:
    """(reads, writes) of the self -> output copy an out-of-place scatter does first; nothing in place."""
    if a.inplace:
        return (), ()
    return (x,), (a.output(0) or TensorMeta(x.shape, x.dtype),)


@builtin("aten::index_select")
def _index_select(a: OpArgs) -> Work:
    # index_select(self, dim, index): reads the selected slices only.
    x, index = a.tensor(0, "self"), a.tensor(2, "index")
    dim = normalize_dim(a.int(1, "dim"), len(x.shape))
    shape = x.shape[:dim] + (numel(index.shape),) + x.shape[dim + 1 :] if x.shape else ()
    out = a.output(0) or TensorMeta(shape, x.dtype)
    return Work(0, (index, elements(numel(out.shape), x.dtype)), (out,))


@builtin("aten::gather", "aten::take_along_dim", "aten::take")
def _gather(a: OpArgs) -> Work:
    # gather(self, dim, index) / take(self, index) / take_along_dim(self, indices, dim): output has index's shape.
    x = a.tensor(0, "self")
    index = (
        a.tensor(2, "index")
        if a.name == "aten::gather"
        else a.tensor(1, "index" if a.name == "aten::take" else "indices")
    )
    out = a.output(0) or TensorMeta(index.shape, x.dtype)
    return Work(0, (index, elements(numel(out.shape), x.dtype)), (out,))


# scatter(self, dim, index, src | value[, reduce]); scatter_add(self, dim, index, src);
# scatter_reduce.two(self, dim, index, src, reduce, include_self)
@builtin(
    "aten::scatter",
    "aten::scatter_",
    "aten::scatter_add",
    "aten::scatter_add_",
    "aten::scatter_reduce",
    "aten::scatter_reduce_",
)
def _scatter(a: OpArgs) -> Work:
    x, index = a.tensor(0, "self"), a.tensor(2, "index")
    normalize_dim(a.int(1, "dim"), len(x.shape))
    source = a.tensor_or_value(3, "value" if a.op.overload.startswith("value") else "src")
    moved = numel(index.shape)
    combines = a.name.startswith(("aten::scatter_add", "aten::scatter_reduce")) or a.value(4, "reduce", None) not in (
        None,
        "",
    )
    reads, writes = _copy_of_self(a, x)
    reads += (index,) + ((elements(moved, source.dtype),) if isinstance(source, TensorMeta) else ())
    if combines:  # reads the destination elements it combines with
        reads += (elements(moved, x.dtype),)
    writes += (elements(moved, x.dtype),) if a.inplace else ()
    return Work(moved if combines else 0, reads, writes)


# slice_scatter(self, src, dim, start, end, step); select_scatter(self, src, dim, index); diagonal_scatter(self, src,
# offset, dim1, dim2); as_strided_scatter(self, src, size, stride, storage_offset): a write into a view of self, out
# of place, as functionalized (compiled) graphs have it: self copied into the output, src over the view's elements.
@builtin("aten::slice_scatter", "aten::select_scatter", "aten::diagonal_scatter", "aten::as_strided_scatter")
def _view_scatter(a: OpArgs) -> Work:
    x, src = a.tensor(0, "self"), a.tensor(1, "src")
    reads, writes = _copy_of_self(a, x)
    return Work(0, (*reads, src), writes)


# index_add(self, dim, index, source, alpha); index_copy(self, dim, index, source); index_fill(self, dim, index, value)
@builtin(
    "aten::index_add",
    "aten::index_add_",
    "aten::index_copy",
    "aten::index_copy_",
    "aten::index_fill",
    "aten::index_fill_",
    "aten::index_reduce",
    "aten::index_reduce_",
)
def _index_add(a: OpArgs) -> Work:
    x, index = a.tensor(0, "self"), a.tensor(2, "index")
    dim = normalize_dim(a.int(1, "dim"), len(x.shape))
    rows = numel(index.shape) * (numel(x.shape) // x.shape[dim] if x.shape and x.shape[dim] else 1)
    reads, writes = _copy_of_self(a, x)
    reads += (index,)
    flops = 0
    if a.name.startswith(("aten::index_add", "aten::index_reduce")):
        alpha = a.float(4, "alpha", 1, modifier=True) if a.name.startswith("aten::index_add") else 1
        flops = rows * (1 if alpha == 1 else 2)
        reads += (elements(rows, x.dtype), elements(rows, a.tensor(3, "source").dtype))
    elif a.name.startswith("aten::index_copy"):
        reads += (elements(rows, a.tensor(3, "source").dtype),)
    writes += (elements(rows, x.dtype),) if a.inplace else ()
    return Work(flops, reads, writes)


def _advanced_index_shape(x: TensorMeta, indices: tuple) -> tuple:
    """Result shape of x[indices] for integer or boolean index tensors (None = full slice), torch's rules.

    A boolean mask stands for as many positions as it has elements (the upper bound: all true).
    """
    dims, index_shapes, positions = 0, [], []
    for position, index in enumerate(indices):
        if index is None:
            dims += 1
            continue
        if index.dtype in ("bool", "uint8"):
            index_shapes.append((numel(index.shape),))
            positions.append(position)
            dims += len(index.shape)
        else:
            index_shapes.append(index.shape)
            positions.append(position)
            dims += 1
    if dims > len(x.shape):
        raise FormulaInputError(f"too many indices for a tensor of shape {x.shape}")
    broadcast = broadcast_shapes(*index_shapes) if index_shapes else ()
    # Map each index position to the dims of x it consumes.
    consumed, cursor = [], 0
    for index in indices:
        width = len(index.shape) if index is not None and index.dtype in ("bool", "uint8") else 1
        consumed.append((cursor, cursor + width))
        cursor += width
    kept = [x.shape[start:end] for (start, end), index in zip(consumed, indices) if index is None]
    rest = x.shape[cursor:]
    adjacent = positions == list(range(positions[0], positions[-1] + 1)) if positions else True
    if adjacent and positions:
        before = sum(kept[: positions[0]], ())
        after = sum(kept[positions[0] :], ())
        return before + broadcast + after + rest
    return broadcast + sum(kept, ()) + rest


@builtin("aten::index", "aten::_unsafe_index")
def _index(a: OpArgs) -> Work:
    # index(self, indices): advanced indexing x[idx...]; reads the index tensors and the gathered elements.
    x = a.tensor(0, "self")
    indices = a.tensor_list(1, "indices", allow_none=True)
    out = a.output(0) or TensorMeta(_advanced_index_shape(x, indices), x.dtype)
    reads = tuple(i for i in indices if i is not None) + (elements(numel(out.shape), x.dtype),)
    return Work(0, reads, (out,))


# index_put(self, indices, values, accumulate); _index_put_impl_(self, indices, values, accumulate, unsafe)
@builtin("aten::index_put", "aten::index_put_", "aten::_index_put_impl_", "aten::_unsafe_index_put")
def _index_put(a: OpArgs) -> Work:
    x = a.tensor(0, "self")
    indices = a.tensor_list(1, "indices", allow_none=True)
    values = a.tensor(2, "values")
    accumulate = a.bool(3, "accumulate", False, modifier=True)
    written = numel(_advanced_index_shape(x, indices))
    reads, writes = _copy_of_self(a, x)
    reads += tuple(i for i in indices if i is not None) + (values,)
    if accumulate:
        reads += (elements(written, x.dtype),)
    writes += (elements(written, x.dtype),) if a.inplace else ()
    return Work(written if accumulate else 0, reads, writes)


@builtin("aten::masked_select")
def _masked_select(a: OpArgs) -> Work:
    # masked_select(self, mask): reads both, writes the selected elements (recorded, else all of them).
    x, mask = a.tensor(0, "self"), a.tensor(1, "mask")
    out = a.output(0) or TensorMeta((numel(broadcast_shapes(x.shape, mask.shape)),), x.dtype)
    return Work(0, (x, mask), (out,))


@builtin("aten::masked_scatter", "aten::masked_scatter_")
def _masked_scatter(a: OpArgs) -> Work:
    # masked_scatter(self, mask, source): copies source elements into the true positions (upper bound: all).
    x, mask, source = a.tensor(0, "self"), a.tensor(1, "mask"), a.tensor(2, "source")
    touched = min(numel(broadcast_shapes(x.shape, mask.shape)), numel(source.shape))
    reads, writes = _copy_of_self(a, x)
    return Work(
        0,
        reads + (mask, elements(touched, source.dtype)),
        writes + ((elements(touched, x.dtype),) if a.inplace else ()),
    )


@builtin("aten::nonzero", "aten::argwhere", "aten::nonzero_static")
def _nonzero(a: OpArgs) -> Work:
    # (n, ndim) int64 coordinates of the nonzero elements; n recorded, else the upper bound numel.
    x = a.tensor(0, "self")
    if a.name == "aten::nonzero_static":
        rows = a.int(1, "size")
    else:
        rows = numel(x.shape)
    out = a.output(0) or TensorMeta((rows, len(x.shape)), "int64")
    return Work(0, (x,), (out,))


@builtin("aten::cat", "aten::concat", "aten::concatenate", "aten::_cat")
def _cat(a: OpArgs) -> Work:
    # cat(tensors, dim): every input read, the joined output written. Legacy 1-d empty inputs are skipped.
    tensors = a.tensor_list(0, "tensors")
    parts = [t for t in tensors if t.shape != (0,)]
    if not parts:
        return Work(0, tensors, (a.output(0) or TensorMeta((0,), tensors[0].dtype if tensors else None),))
    dim = normalize_dim(a.int(1, "dim", 0), len(parts[0].shape))
    shape = parts[0].shape[:dim] + (sum(t.shape[dim] for t in parts),) + parts[0].shape[dim + 1 :]
    return Work(0, tuple(parts), (a.output(0) or TensorMeta(shape, parts[0].dtype),))


@builtin(
    "aten::stack", "aten::hstack", "aten::vstack", "aten::dstack", "aten::column_stack", "aten::flatten_dense_tensors"
)
def _stack(a: OpArgs) -> Work:
    # Every input read, an output with all their elements written.
    tensors = a.tensor_list(0, "tensors")
    if not tensors:
        raise FormulaInputError("stack of no tensors")
    return Work(0, tensors, (a.output(0) or elements(sum(numel(t.shape) for t in tensors), tensors[0].dtype),))


@builtin(
    "aten::flip",
    "aten::roll",
    "aten::tril",
    "aten::tril_",
    "aten::triu",
    "aten::triu_",
    "aten::rot90",
    "aten::fliplr",
    "aten::flipud",
    "aten::narrow_copy",
    "aten::pixel_shuffle",
    "aten::pixel_unshuffle",
    "aten::channel_shuffle",
    "aten::native_channel_shuffle",
)
def _permuting_copy(a: OpArgs) -> Work:
    # A reordered (or masked, for tril/triu) copy: output has self's element count.
    x = a.tensor(0, "self")
    if a.name == "aten::narrow_copy":
        dim = normalize_dim(a.int(1, "dim"), len(x.shape))
        shape = x.shape[:dim] + (a.int(3, "length"),) + x.shape[dim + 1 :]
        return Work(0, (elements(numel(shape), x.dtype),), (a.output(0) or TensorMeta(shape, x.dtype),))
    out = x if a.inplace else a.output(0) or TensorMeta(x.shape, x.dtype)
    return Work(0, (x,), (out,))


@builtin("aten::repeat", "aten::tile", "aten::repeat_interleave", "aten::expand_copy")
def _repeat(a: OpArgs) -> Work:
    # Output = self repeated: each source element read once, every output element written.
    x = a.tensor(0, "self")
    out = a.output(0)
    if out is None:
        if a.name != "aten::repeat":
            raise FormulaInputError(f"{a.name}: output size not recorded")
        repeats = a.ints(1, "repeats")
        padded = (1,) * (len(repeats) - len(x.shape)) + x.shape
        out = TensorMeta(tuple(r * s for r, s in zip(repeats, padded)), x.dtype)
    return Work(0, (x,), (out,))


# constant_pad_nd(self, pad, value); reflection_pad2d(self, padding); replication_pad2d(self, padding)
@builtin(
    "aten::constant_pad_nd",
    "aten::pad",
    "aten::reflection_pad1d",
    "aten::reflection_pad2d",
    "aten::reflection_pad3d",
    "aten::replication_pad1d",
    "aten::replication_pad2d",
    "aten::replication_pad3d",
    "aten::_pad_circular",
)
def _pad(a: OpArgs) -> Work:
    x = a.tensor(0, "self")
    out = a.output(0)
    if out is None:
        pad = a.ints(1, "pad")
        if len(pad) % 2 or len(pad) // 2 > len(x.shape):
            raise FormulaInputError(f"bad pad {pad} for shape {x.shape}")
        shape = list(x.shape)
        for i in range(len(pad) // 2):
            shape[-1 - i] += pad[2 * i] + pad[2 * i + 1]
        out = TensorMeta(tuple(shape), x.dtype)
    return Work(0, (x,), (out,))


@builtin(
    "aten::reflection_pad1d_backward",
    "aten::reflection_pad2d_backward",
    "aten::reflection_pad3d_backward",
    "aten::replication_pad1d_backward",
    "aten::replication_pad2d_backward",
    "aten::replication_pad3d_backward",
)
def _pad_backward(a: OpArgs) -> Work:
    # (grad_output, self, padding): each grad_output element added into grad_input.
    grad, x = a.tensor(0, "grad_output"), a.tensor(1, "self")
    return Work(numel(grad.shape), (grad,), (a.output(0) or TensorMeta(x.shape, x.dtype),))


def _sort_dim(a: OpArgs) -> int:
    """sort(self, dim, descending) or sort.stable(self, *, stable, dim, descending): where dim is."""
    if a.op.overload:
        stable = a.op.overload == "stable"
    else:  # Kineto, nsys: sort.stable's second argument is a bool (or None), sort's an int
        second = a.recorded(1, "dim") if a.has(1, "dim") else 0
        stable = second is None or isinstance(second, bool)
    return a.int(2 if stable else 1, "dim", -1)


@builtin("aten::sort", "aten::argsort", "aten::msort")
def _sort(a: OpArgs) -> Work:
    # n * ceil(log2(size along dim)) comparisons; writes values (not argsort) and int64 indices.
    x = a.tensor(0, "self")
    dim = normalize_dim(0 if a.name == "aten::msort" else _sort_dim(a), len(x.shape))
    size = x.shape[dim] if x.shape else 1
    flops = numel(x.shape) * ceil(log2(size)) if size > 1 else 0
    writes: tuple[TensorMeta, ...] = (TensorMeta(x.shape, "int64"),)
    if a.name != "aten::argsort":
        writes = (TensorMeta(x.shape, x.dtype),) + (writes if a.name == "aten::sort" else ())
    return Work(flops, (x,), writes)


@builtin("aten::topk", "aten::kthvalue", "aten::median", "aten::nanmedian", "aten::mode")
def _select_k(a: OpArgs) -> Work:
    # topk(self, k, dim, largest, sorted): n * ceil(log2 k) comparisons (a k-heap); kthvalue/median/mode:
    # n * ceil(log2 size) (a sort along dim). Writes values and int64 indices.
    x = a.tensor(0, "self")
    if a.name == "aten::topk":
        k = a.int(1, "k")
        dim = normalize_dim(a.int(2, "dim", -1), len(x.shape))
        shape = x.shape[:dim] + (k,) + x.shape[dim + 1 :] if x.shape else ()
        flops = numel(x.shape) * max(1, ceil(log2(k))) if k > 1 else numel(x.shape)
    else:
        dim_at = 2 if a.name == "aten::kthvalue" else 1
        if not a.has(dim_at, "dim"):  # median(self) / nanmedian(self): over everything, one value
            return Work(numel(x.shape) * max(1, ceil(log2(max(numel(x.shape), 2)))), (x,), (TensorMeta((), x.dtype),))
        dim = normalize_dim(a.int(dim_at, "dim", -1), len(x.shape))
        keepdim = a.bool(dim_at + 1, "keepdim", False)
        shape = x.shape[:dim] + ((1,) if keepdim else ()) + x.shape[dim + 1 :]
        size = x.shape[dim] if x.shape else 1
        flops = numel(x.shape) * max(1, ceil(log2(max(size, 2))))
    values = a.output(0) or TensorMeta(shape, x.dtype)
    return Work(flops, (x,), (values, a.output(1) or TensorMeta(values.shape, "int64")))


@builtin("aten::searchsorted", "aten::bucketize")
def _searchsorted(a: OpArgs) -> Work:
    # Binary search of each value: ceil(log2 n) comparisons. searchsorted(sorted_sequence, self, ...),
    # bucketize(self, boundaries, ...).
    if a.name == "aten::bucketize":
        values, boundaries = a.tensor_or_value(0, "self"), a.tensor_or_value(1, "boundaries")
    else:
        boundaries, values = a.tensor_or_value(0, "sorted_sequence"), a.tensor_or_value(1, "self")
    if not isinstance(boundaries, TensorMeta):
        raise FormulaInputError("boundaries are not a tensor")
    shape = values.shape if isinstance(values, TensorMeta) else ()
    steps = ceil(log2(boundaries.shape[-1])) if boundaries.shape and boundaries.shape[-1] > 1 else 1
    reads = (boundaries,) + ((values,) if isinstance(values, TensorMeta) else ())
    return Work(prod(shape) * steps, reads, (a.output(0) or TensorMeta(shape, "int64"),))


@builtin("aten::_unique2", "aten::unique_consecutive", "aten::unique_dim", "aten::_unique")
def _unique(a: OpArgs) -> Work:
    # Sort-based: n * ceil(log2 n) comparisons (unique_consecutive: one pass, n). Outputs (values, inverse,
    # counts) are data-dependent: recorded, else the upper bound (every element unique).
    x = a.tensor(0, "self")
    n = numel(x.shape)
    flops = n if a.name == "aten::unique_consecutive" else n * ceil(log2(n)) if n > 1 else 0
    recorded = tuple(t for t in (a.output(i) for i in range(3)) if t is not None)
    return Work(flops, (x,), recorded or (TensorMeta((n,), x.dtype),))


# -- Inductor's masked forms (ops of torch.compile'd graphs) --------------------------------------
@builtin("aten::_unsafe_masked_index")
def _masked_index(a: OpArgs) -> Work:
    # _unsafe_masked_index(self, mask, indices, fill): index() where mask is true, fill elsewhere.
    x, mask = a.tensor(0, "self"), a.tensor(1, "mask")
    indices = a.tensor_list(2, "indices", allow_none=True)
    out = a.output(0) or TensorMeta(_advanced_index_shape(x, indices), x.dtype)
    reads = (mask, *(i for i in indices if i is not None), elements(numel(out.shape), x.dtype))
    return Work(0, reads, (out,))


@builtin("aten::_unsafe_masked_index_put_accumulate")
def _masked_index_put_accumulate(a: OpArgs) -> Work:
    # _unsafe_masked_index_put_accumulate(self, mask, indices, values): index_put(accumulate=True)
    # of the values whose mask is true (all counted: the mask's content is not recorded).
    x, mask, values = a.tensor(0, "self"), a.tensor(1, "mask"), a.tensor(3, "values")
    indices = a.tensor_list(2, "indices", allow_none=True)
    written = numel(values.shape)
    reads, writes = _copy_of_self(a, x)
    reads += (mask, *(i for i in indices if i is not None), values, elements(written, x.dtype))
    return Work(written, reads, writes)
