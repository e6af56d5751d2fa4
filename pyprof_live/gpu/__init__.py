"""GPU activity collection for live profiles (kernels, memcpy/memset, API calls), behind one interface.

``select_backend(option, warnings)`` picks what ``profile(gpu=...)`` uses. A backend is used as:

    backend.start()                 # before the op hook is installed
    backend.push(external_id)       # around each recorded op / function scope: the id of its record
    backend.pop()
    capture = backend.stop()        # after the run: synchronises, flushes, returns GpuCapture

``GpuCapture`` holds ApiRecord / KernelRecord / MemoryRecord / DeviceInfo lists whose timestamps are
already on the host clock of the op records (``time.perf_counter_ns``) and whose ``external_id``
fields carry the pushed ids, so ``correlate.py`` links them like any imported profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..errors import GpuUnavailableError


@dataclass
class GpuCapture:
    apis: list = field(default_factory=list)
    kernels: list = field(default_factory=list)
    memops: list = field(default_factory=list)
    devices: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    #: Why the capture may miss GPU work (another CUPTI user took over, records were dropped), or "".
    incomplete: str = ""


def select_backend(option: str, warnings: list):
    """The backend for ``profile(gpu=option)``, or None for a CPU-only profile.

    ``"off"``: None. ``"auto"``: None with a line in ``warnings`` saying why when GPU collection
    cannot work here. ``"cupti"``: raises :class:`GpuUnavailableError` in those cases.
    """
    if option == "off":
        return None
    if not torch.cuda.is_available():
        reason = (f"torch {torch.__version__} sees no CUDA device" + (" (a CPU build)" if torch.version.cuda is None else ""))
        if option == "cupti":
            raise GpuUnavailableError(f"gpu='cupti' needs a CUDA device, and {reason}; use gpu='auto' for a CPU-only profile")
        return None
    reason = "in-process GPU kernel collection (CUPTI) is not built yet"
    if option == "cupti":
        raise GpuUnavailableError(f"gpu='cupti': {reason}")
    warnings.append(f"{reason}: CPU-only report")
    return None
