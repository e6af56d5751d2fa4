"""Per-op overhead of pyprof_live against torch.profiler, on a GPT-style training step, in one run.

Configurations (each runs the same ITERS training steps, timed end to end including the
profiler's own teardown and, where stated, building the report):
  plain                      no profiler
  no-op TorchDispatchMode    a dispatch mode that records nothing: the floor of any such recorder
  lean recorder              a dispatch mode that keeps only what the issue requires at the least
                             (op, input/output shapes and dtypes, autograd counter, host times),
                             no records built, no report: the floor of a recorder that records shapes
  lean recorder + lines      the same, then one text line per op (name, shapes, host time): the
                             floor of "capture + a per-op report"
  torch.profiler shapes      record_shapes=True
  torch.profiler shapes+stack record_shapes=True, with_stack=True, + key_averages(...).table()
  pyprof_live                stack_depth=0 (no call sites)
  pyprof_live + table        stack_depth=0, + p.table()
  pyprof_live sites + table  call sites (2 frames), + p.table()
Overhead is (config - plain) / ops, in µs per op; ratios are against torch.profiler shapes.
Rounds alternate the configurations and keep each one's best time (this machine is noisy).

    .venv/bin/python benchmarks/overhead.py [--iters 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_now = time.perf_counter_ns
_peek_seq = torch._C._autograd._get_sequence_nr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pyprof_live  # noqa: E402
from tests.formula_models import gpt_step  # noqa: E402


def run_plain(step, iters):
    for _ in range(iters):
        step()


class _NoopMode(TorchDispatchMode):
    """Does nothing but route every op through Python: the floor of any dispatch-mode recorder."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def run_noop_mode(step, iters):
    with _NoopMode():
        for _ in range(iters):
            step()


def _meta(value):
    """Shape and dtype of a tensor or of each tensor in a list; other values as they are."""
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), value.dtype)
    if isinstance(value, (list, tuple)):
        return [(tuple(v.shape), v.dtype) if isinstance(v, torch.Tensor) else v for v in value]
    return value


class _LeanRecorder(TorchDispatchMode):
    """The least a shape-recording profiler can keep per op: one flat tuple, nothing derived."""

    def __init__(self):
        super().__init__()
        self.raw = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        seq = _peek_seq()
        start = _now()
        out = func(*args, **kwargs) if kwargs else func(*args)
        end = _now()
        self.raw.append(
            (
                func,
                [_meta(a) for a in args],
                _meta(out),
                seq,
                start,
                end,
            )
        )
        return out


def run_lean_recorder(step, iters, lines=False):
    with _LeanRecorder() as recorder:
        for _ in range(iters):
            step()
    if lines:
        "\n".join(f"{func.__name__} {args} {out} {end - start}" for func, args, out, _, start, end in recorder.raw)


def run_torch_profiler(step, iters, with_stack=False):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=with_stack) as prof:
        for _ in range(iters):
            step()
    if with_stack:
        prof.key_averages(group_by_stack_n=5).table(sort_by="self_cpu_time_total", row_limit=50)


def run_pyprof_live(step, iters, stack_depth=0, table=False):
    with pyprof_live.profile(stack_depth=stack_depth) as p:
        for _ in range(iters):
            step()
            p.step()
    if table:
        p.table(sort="sil")
    return p


def run_pyprof_live_id_push(step, iters):
    """pyprof_live with a GPU backend pushing/popping each op's id, on the CPU path.

    cupti-python's push/pop raise without a driver, so the backend's ``push``/``pop`` are bound
    the way CuptiBackend binds cupti's (``functools.partial`` of a C function, kind as first
    argument) but to a dict's ``__setitem__``/``get``. Against "pyprof_live" this measures the
    recorder's GPU branch (two calls, try/finally) and the Python->C call cost per op; it does NOT
    include libcupti's own work per call (a per-thread stack push/pop), measurable only on a GPU.
    """
    import functools
    import types
    from unittest import mock

    from pyprof_live.capture.gpu import GpuCapture

    ids: dict = {}
    backend = types.SimpleNamespace(
        start=lambda: None,
        stop=GpuCapture,
        set_recording=lambda on: None,
        push=functools.partial(ids.__setitem__, 2),
        pop=functools.partial(ids.get, 2),
    )
    with mock.patch.object(pyprof_live.capture.session, "select_backend", lambda option, warnings: backend):
        run_pyprof_live(step, iters)


CONFIGS = {
    "plain": run_plain,
    "no-op TorchDispatchMode (floor)": run_noop_mode,
    "lean recorder (floor with shapes)": run_lean_recorder,
    "lean recorder + one line per op": lambda s, n: run_lean_recorder(s, n, lines=True),
    "torch.profiler shapes": run_torch_profiler,
    "torch.profiler shapes+stack+table": lambda s, n: run_torch_profiler(s, n, with_stack=True),
    "pyprof_live": run_pyprof_live,
    "pyprof_live + GPU id push/pop (CPU)": run_pyprof_live_id_push,
    "pyprof_live + table": lambda s, n: run_pyprof_live(s, n, table=True),
    "pyprof_live sites + table": lambda s, n: run_pyprof_live(s, n, stack_depth=2, table=True),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    step = gpt_step()
    for _ in range(3):
        step()  # warm-up: optimizer state, allocator, lazy init
    ops = len(run_pyprof_live(step, args.iters).records.ops)
    best = {name: float("inf") for name in CONFIGS}
    for _ in range(args.rounds):
        for name, run in CONFIGS.items():
            start = time.perf_counter()
            run(step, args.iters)
            best[name] = min(best[name], time.perf_counter() - start)
    plain = best["plain"]
    reference = (best["torch.profiler shapes"] - plain) / ops * 1e6
    print(f"GPT-style step (fwd+bwd+AdamW) x {args.iters}: {ops} aten ops, torch {torch.__version__}, 1 thread")
    print(f"{'configuration':36} {'total s':>8} {'µs/op over plain':>17} {'vs torch.profiler shapes':>25}")
    for name in CONFIGS:
        per_op = (best[name] - plain) / ops * 1e6
        ratio = "" if name == "plain" else f"{per_op / reference:.2f}x"
        print(f"{name:36} {best[name]:8.3f} {per_op:17.2f} {ratio:>25}")


if __name__ == "__main__":
    main()
