"""What every GPU backend is and gives (the package docstring says how a live profile drives one):
the :class:`GpuBackend` shape, its :class:`GpuCapture`, and how a backend that cannot work says so.
Apart from ``__init__``, so that a backend module imports them without importing its package back."""

from __future__ import annotations

import warnings as python_warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ...errors import GpuUnavailableError
from ...records import Records


@dataclass
class GpuCapture:
    """What a backend collected: API calls, kernels, memcpy/memset and devices (no ops, no ranges)."""

    records: Records = field(default_factory=Records)
    meta: dict = field(default_factory=dict)
    #: Why the capture may miss GPU work (another CUPTI user took over, records were dropped), or "".
    incomplete: str = ""


class GpuBackend(Protocol):
    """What a live profile drives, in the order of the module docstring."""

    #: Around each recorded op / function scope: the id of its record (CUPTI external correlation).
    push: Callable[[int], object]
    pop: Callable[[], object]

    def start(self) -> None: ...

    def set_recording(self, on: bool) -> None: ...

    def stop(self) -> GpuCapture: ...


def report_unavailable(option: str, warnings: list, reason: str) -> None:
    """gpu="cupti": raise. gpu="auto": one line for the report's footer, and one Python warning."""
    if option == "cupti":
        raise GpuUnavailableError(f"gpu='cupti' cannot collect GPU kernels: {reason}")
    message = f"GPU kernels were not collected, this is a CPU-only report: {reason}"
    warnings.append(message)
    python_warnings.warn("pyprof_live: " + message, RuntimeWarning, stacklevel=4)
