"""Inductor kernel calls of static compiled graphs timed in C (``_hook.KernelCall``): the same raw calls, in the same
order, with the same clock readings, as compiled.py's Python ``kernel_call``."""

from __future__ import annotations

import itertools
import operator
from types import SimpleNamespace

import pytest

from pyprof_live.capture import compiled, recorder
from pyprof_live.records import NO_LINK
from tests.compiled_models import needs_compiled_runs
from tests.test_extern_ops import STEPS, _profile, mlp_step  # noqa: F401 - mlp_step is a fixture
from tests.test_native_hook import captured_raw_ops, needs_native

pytestmark = [pytest.mark.e2e, needs_compiled_runs, needs_native]


@pytest.fixture
def both_kernel_wrappers(monkeypatch):
    """``both_kernel_wrappers(step)`` profiles ``step`` with the Python kernel wrapper, then with the C one:
    [(raw kernel calls, wrapper types made, profile)] * 2. Every clock is a counter moving 1 per reading, fresh per run,
    and every call site of the compiled graphs is forgotten first (their first calls make them again), so equal calls
    mean the same clock readings in the same order, through the same paths."""
    captured_raw_ops(monkeypatch)  # the calibrated dispatch cost is fixed: op records compare equal
    calls: list = []
    build = compiled.CompiledCapture.build_records

    def spy(self, ops):  # a GraphRun is made per profile: its graph's name stands for it
        calls.append([(run.info.name, *rest) for run, *rest in self.kernel_calls])
        return build(self, ops)

    monkeypatch.setattr(compiled.CompiledCapture, "build_records", spy)
    in_c, made = compiled.CompiledCapture._native_kernel_wrapper, []

    def run(native: bool, step):
        def wrapper(*args):
            made.append(type(made_one := in_c(*args)).__name__ if native else "NoneType")
            return made_one if native else None

        monkeypatch.setattr(compiled.CompiledCapture, "_native_kernel_wrapper", wrapper)
        for module in ("recorder", "modules", "functions", "session", "compiled", "extern_ops"):
            monkeypatch.setattr(f"pyprof_live.capture.{module}._now", itertools.count(10**6).__next__)
        for _, info in compiled._graphs.values():
            info.call_sites.clear()
        made.clear()
        p = _profile(step)
        assert p.records.ops  # built on first read
        return calls[-1], list(made), p

    return lambda step: [run(native, step) for native in (False, True)]


def test_the_c_kernel_call_appends_the_python_one_s_raw_calls(mlp_step, both_kernel_wrappers):  # noqa: F811
    """Three MLPBlock(32) training steps: 3 Inductor kernels in each of the 2 graphs (forward: layer norm, GELU, the
    residual add; backward: the bias gradient's sum, GELU's backward, layer norm's backward with its sums) = 6 calls per
    step, 18 per run, each run wrapping the 6 kernels its own way. The raw calls (graph, kernel, wrapper line,
    start, end, thread, direction, link, argument shapes, own time), their types and the records are the same."""
    (raw_py, made_py, p_py), (raw_c, made_c, p_c) = both_kernel_wrappers(mlp_step)
    assert made_py == ["NoneType"] * 6
    assert made_c == ["KernelCall"] * 6
    assert len(raw_py) == len(raw_c) == 6 * STEPS
    assert raw_py == raw_c
    assert [[type(v) for v in call] for call in raw_py] == [[type(v) for v in call] for call in raw_c]
    assert [call[6] for call in raw_c] == (["fwd"] * 3 + ["bwd"] * 3) * STEPS
    assert p_py.records.ops == p_c.records.ops


def test_the_c_kernel_call_takes_any_cap_and_any_clock_as_python_does():
    """The record cap is compared as Python compares it (one past any C integer: no cap), the clock may return floats
    (own time: start - entered + last - end = (2.5 - 1.5) + (4.75 - 4.0) = 1.75), and at the cap the kernel still
    runs, unrecorded, after one clock reading, as in kernel_call."""
    calls: list = []
    capture = SimpleNamespace(recording=True, max_calls=2**70, kernel_calls=calls)
    run = SimpleNamespace(dir="fwd", metas={}, info=SimpleNamespace(dynamic=False))
    readings = iter([1.5, 2.5, 4.0, 4.75, 9.0])
    kernel = recorder.native.KernelCall(
        operator.is_, capture, run, "k", run.metas, compiled._call_site, NO_LINK, lambda: next(readings)
    )
    assert kernel(1, 1) is True
    ((_, name, _, start, end, _, direction, link, _, own),) = calls
    assert (name, start, end, direction, link, own) == ("k", 2.5, 4.0, "fwd", NO_LINK, 1.75)
    capture.max_calls = 1
    assert kernel(1, 2) is False
    assert len(calls) == 1 and next(readings, None) is None
