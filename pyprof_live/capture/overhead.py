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

from ..torch_compat import TorchDispatchMode, set_eval_frame

_now = time.perf_counter_ns
_set_eval_frame = set_eval_frame
_ROUNDS = 7
_CALLS = 128
_calibrated: list = []


class _PassThrough(TorchDispatchMode):
    """Routed as the op hook is (recorder.py): Dynamo's callback set off by the hook, not by torch's wrapper."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        prior = _set_eval_frame(None)
        try:
            return func(*args, **kwargs) if kwargs else func(*args)
        finally:
            _set_eval_frame(prior)


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
