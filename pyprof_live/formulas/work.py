"""What a built-in formula returns, and the shape arithmetic formulas share.

A formula returns :class:`Work`: its flop count and the tensors it reads and writes. Bytes are
derived from that list in one place (:func:`traffic_bytes`), so every formula follows the same
DRAM model: each tensor read once and written once, at its dtype's element size. Keeping the
tensors rather than a byte total lets flops survive when a source recorded shapes but no dtypes.
"""

from __future__ import annotations

from math import prod
from typing import NamedTuple

from ..records import TensorMeta, Unknown
from .dtypes import itemsize


class FormulaInputError(Exception):
    """The recorded arguments do not give what a formula needs; ``reason`` says what is missing."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Work(NamedTuple):
    """Flops of one op call and the tensors it moves.

    ``reads``/``writes`` hold TensorMeta (its shape and dtype give the bytes) or Unknown (the
    bytes cannot be known: the formula still has flops, bytes become ``na`` with that reason).
    """

    flops: int
    reads: tuple = ()
    writes: tuple = ()


NO_WORK = Work(0)


def present(*tensors) -> tuple:
    """The tensors that are there (optional arguments may be None)."""
    return tuple(t for t in tensors if t is not None)


def check_shape(shape, what: str = "tensor") -> tuple:
    """``shape`` as a tuple of non-negative ints, or FormulaInputError naming the bad value."""
    if not isinstance(shape, (tuple, list)) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        raise FormulaInputError(f"bad shape for {what}: {shape!r}")
    return tuple(shape)


def numel(shape) -> int:
    return prod(shape)


def elements(count: int, dtype: str | None) -> TensorMeta:
    """A flat stand-in tensor of ``count`` elements: traffic whose shape no argument carries."""
    return TensorMeta((int(count),), dtype)


def stored_elements(tensor: TensorMeta) -> int:
    """Distinct elements a tensor occupies: a broadcast (stride-0) dimension is read once, not per index."""
    if tensor.stride is not None and len(tensor.stride) == len(tensor.shape) and 0 not in tensor.shape:
        return prod(size for size, step in zip(tensor.shape, tensor.stride) if step != 0)
    return prod(tensor.shape)


def broadcast_shapes(*shapes) -> tuple:
    """numpy/torch broadcasting of shapes; FormulaInputError when they are incompatible."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            raise FormulaInputError(f"shapes do not broadcast: {' vs '.join(str(tuple(s)) for s in shapes)}")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def normalize_dim(dim: int, ndim: int) -> int:
    """A possibly negative dim as an index into a shape of ``ndim`` dims (0-dim tensors accept 0 and -1)."""
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise FormulaInputError(f"dim {dim} out of range for {ndim} dims")
    return dim % size


def traffic_bytes(work: Work) -> int:
    """Bytes read + written by ``work``; FormulaInputError when a dtype or a tensor is not known."""
    total = 0
    for index, tensor in enumerate(work.reads + work.writes):
        if isinstance(tensor, Unknown):
            raise FormulaInputError(f"bytes unknown: inputs lack {tensor.what}")
        size = itemsize(tensor.dtype)
        if size is None:
            raise FormulaInputError("dtype not recorded" if tensor.dtype is None else f"unknown dtype {tensor.dtype!r}")
        count = stored_elements(tensor) if index < len(work.reads) else prod(tensor.shape)
        total += count * size
    return total
