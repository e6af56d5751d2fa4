"""Collective communication as Kineto records it: ``record_param_comms`` with the collective's name,
element counts, dtype and group size (as ``op.kwargs``), the op NCCL kernels are attributed to.

Bytes are the local buffers the collective reads and writes (input and output messages, each
once, at the dtype's size): device-memory traffic, not the bytes sent over the network. Flops are
the reductions a ring algorithm performs on each rank: (p - 1) / p adds per input element for the
reducing collectives (all-reduce, reduce, reduce-scatter), 0 for the others.
"""

from __future__ import annotations

from .opargs import OpArgs
from .registry import builtin
from .work import NO_WORK, FormulaInputError, Work, elements

_REDUCING = {
    "allreduce",
    "allreduce_coalesced",
    "reduce",
    "reduce_scatter",
    "_reduce_scatter_base",
    "reduce_scatter_tensor_coalesced",
    "reduce_scatter_base",
}
_MOVING = {
    "broadcast",
    "allgather",
    "_allgather_base",
    "allgather_coalesced",
    "allgather_into_tensor_coalesced",
    "all_gather",
    "all_gather_into_tensor",
    "gather",
    "scatter",
    "alltoall",
    "alltoall_base",
    "all_to_all",
    "all_to_allv",
    "send",
    "recv",
    "recvAnySource",
}
_SYNCHRONIZING = {"wait", "barrier", "init", "split", "coalesced"}


@builtin("record_param_comms")
def _collective(a: OpArgs) -> Work:
    collective = a.keyword("collective")
    if collective in _SYNCHRONIZING:
        return NO_WORK
    if collective not in _REDUCING and collective not in _MOVING:
        raise FormulaInputError(f"no formula for collective {collective!r}")
    dtype = a.keyword("dtype", None)
    sent, received = int(a.keyword("in_msg_nelems")), int(a.keyword("out_msg_nelems"))
    group = int(a.keyword("group_size", 1))
    flops = sent * (group - 1) // group if collective in _REDUCING and group > 0 else 0
    return Work(flops, (elements(sent, dtype),), (elements(received, dtype),))
