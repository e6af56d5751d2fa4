"""Flops and bytes of every op a training step runs: one formula table shared by live capture and
every importer, keyed by op name strings (``"aten::addmm"``).

``evaluate(op)`` returns ``Cost(flops, bytes, reason)``; ``None`` means ``na`` and ``reason`` says
why (no formula for the name, an argument the source did not record, a bad shape). It never raises.

Conventions every formula follows:
* flops: 2 per multiply-accumulate; matmul, convolution and attention counts are
  torch.utils.flop_counter's own, so they equal FlopCounterMode's; elementwise ops charge a
  documented weight per element, transcendental functions ``TRANSCENDENTAL`` (20) each;
* bytes: DRAM model, each tensor read once and written once at its dtype's size;
* views, allocations and metadata ops are 0 / 0 by rule (views.py), never by omission;
* no fallback: an op gets numbers only from a formula written for it;
* composite ops an importer shows above their kernels' ops (``aten::linear``, ``aten::conv2d``,
  ``aten::batch_norm``...) carry their whole work, which overlaps their children's: sum flops over
  leaf ops, not over a parent and its children.

Families, one module each: matmul_conv, attention, pointwise, reductions, softmax, normalization,
losses, embedding, pooling, resampling, indexing, memory, optimizers, rnn, collectives, views.
"""

from . import (
    attention,
    collectives,
    embedding,
    indexing,
    losses,
    matmul_conv,
    memory,
    normalization,
    optimizers,
    pointwise,
    pooling,
    reductions,
    resampling,
    rnn,
    softmax,
    views,
)
from .dtypes import canonical_dtype, itemsize
from .pointwise import TRANSCENDENTAL
from .registry import Cost, DuplicateFormulaError, covered_names, evaluate, has_formula, register_flops

__all__ = [
    "TRANSCENDENTAL",
    "Cost",
    "DuplicateFormulaError",
    "canonical_dtype",
    "covered_names",
    "evaluate",
    "has_formula",
    "itemsize",
    "register_flops",
]
