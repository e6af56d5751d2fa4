"""The guarded private torch functions: present, they answer; renamed away, one warning and a fallback."""

import warnings

import pytest
import torch

from pyprof_live.capture.gpu import torch_internals

MANGLED = "_ZN2at6native6detail4fillEv"


@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(torch_internals, "_warned", set())


def test_present_functions_answer(monkeypatch):
    assert torch_internals.demangle(MANGLED) == "at::native::detail::fill()"
    assert torch_internals.torch_profiler_running() is False
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        assert torch_internals.torch_profiler_running() is True
    monkeypatch.setattr(torch._C, "_cuda_hasPrimaryContext", lambda device: device == 1, raising=False)
    assert [torch_internals.has_primary_context(d) for d in (0, 1)] == [False, True]


def test_missing_functions_fall_back_and_warn_once_each(monkeypatch, fresh_warnings):
    monkeypatch.delattr(torch.autograd.profiler, "_is_profiler_enabled")
    monkeypatch.delattr(torch._C, "_demangle")
    monkeypatch.delattr(torch._C, "_cuda_hasPrimaryContext", raising=False)  # CPU builds lack it anyway
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            assert torch_internals.torch_profiler_running() is False
            assert torch_internals.demangle(MANGLED) == MANGLED
            assert torch_internals.has_primary_context(0) is True
    assert [str(w.message).split(";")[0] for w in caught] == [
        f"pyprof_live: torch {torch.__version__} has no torch.autograd.profiler._is_profiler_enabled",
        f"pyprof_live: torch {torch.__version__} has no torch._C._demangle",
        f"pyprof_live: torch {torch.__version__} has no torch._C._cuda_hasPrimaryContext",
    ]
    assert all(w.category is RuntimeWarning for w in caught)
