"""The private torch functions the GPU path relies on, each behind a guard.

torch may rename or drop any of them in a release; then the GPU path keeps working with the
fallback given here and says once, in a RuntimeWarning, what it can no longer do.
"""

from __future__ import annotations

import warnings

import torch

_warned: set = set()


def _missing(name: str, consequence: str) -> None:
    """One warning per missing function per process."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"pyprof_live: torch {torch.__version__} has no {name}; {consequence}", RuntimeWarning, stacklevel=3
        )


def torch_profiler_running() -> bool:
    """Is torch.profiler (or autograd.profiler) recording now? Read at each call: torch flips it."""
    running = getattr(torch.autograd.profiler, "_is_profiler_enabled", None)
    if running is None:
        _missing(
            "torch.autograd.profiler._is_profiler_enabled", "a torch.profiler running at the same time is not detected"
        )
        return False
    return bool(running)


def demangle(name: str) -> str:
    """The C++ runtime's demangling of ``name`` through torch; the name unchanged without it."""
    demangler = getattr(torch._C, "_demangle", None)
    if demangler is None:
        _missing("torch._C._demangle", "kernel names stay mangled")
        return name
    return demangler(name)


def has_primary_context(device: int) -> bool:
    """Has this process made a CUDA context on ``device``? True when torch cannot tell."""
    check = getattr(torch._C, "_cuda_hasPrimaryContext", None)
    if check is None:
        _missing(
            "torch._C._cuda_hasPrimaryContext",
            "the profile's stop synchronises every visible device, creating a context on unused ones",
        )
        return True
    return check(device)
