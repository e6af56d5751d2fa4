"""The profiler's own time: what routing an op through the op hook costs before and after the
hook's own clock readings can see it.

The hook reads the clock when it is entered and again when it has stored the op, so its own work
around each op is measured (``OpRecord.overhead``). What it cannot see is torch handing the op to a
Python dispatch mode and taking the result back (boxing the arguments, the mode stack, the call
into Python). That part is calibrated once per process: the same tiny op timed with and without a
dispatch mode that only passes it on, the least time of each over a few rounds.
"""

from __future__ import annotations

import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_now = time.perf_counter_ns
_ROUNDS = 7
_CALLS = 128
_calibrated: list = []


class _PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **kwargs) if kwargs else func(*args)


def _time_calls(op, a) -> int:
    start = _now()
    for _ in range(_CALLS):
        op(a, a)
    return _now() - start


def dispatch_cost_ns() -> int:
    """ns one op spends entering and leaving a Python dispatch mode (measured on first use)."""
    if not _calibrated:
        op = torch.ops.aten.add.Tensor
        a = torch.zeros(1)
        plain, routed = [], []
        for _ in range(_ROUNDS):
            plain.append(_time_calls(op, a))
            with _PassThrough():
                routed.append(_time_calls(op, a))
        # The least time of each: the one least disturbed by other processes on the machine.
        _calibrated.append(max(min(routed) - min(plain), 0) // _CALLS)
    return _calibrated[0]
