"""GPU activity collection for live profiles (kernels, memcpy/memset, API calls), behind one interface.

``select_backend(option, warnings)`` picks what ``profile(gpu=...)`` uses: a :class:`GpuBackend`
(a new GPU collector, another vendor's say, is one more class of that shape here). It is used as:

    backend.start()                 # before the op hook is installed
    backend.push(external_id)       # around each recorded op / function scope: the id of its record
    backend.pop()
    backend.set_recording(on)       # optional, when profile(steps=...) starts or stops recording:
                                    # work launched while not recording is left out
    capture = backend.stop()        # after the run: synchronises, flushes, returns GpuCapture

``GpuCapture.records`` holds ApiRecord / KernelRecord / MemoryRecord / DeviceInfo lists whose timestamps are
already on the host clock of the op records (``time.perf_counter_ns``) and whose ``external_id``
fields carry the pushed ids, so ``correlate.py`` links them like any imported profile. Its ``meta``
goes into ``Profile.meta``: ``gpu`` (backend, clock alignment, counts), ``gpu_graph_replays`` and
``gpu_communication`` (per graph / per stream), ``gpu_notes`` (lines for the report's footer).
API records keep CUPTI's 32-bit thread ids until :func:`widen_thread_ids` gives them the op
records' ones.

The backend is ``cupti_backend.CuptiBackend`` (cupti-python's Activity API). The tests drive the
same class with a stand-in CUDA process that replays real Kineto traces (``tests/gpu_replay.py``).
"""

from __future__ import annotations

import torch

from ...errors import GpuUnavailableError
from .backend import GpuBackend, GpuCapture, report_unavailable

__all__ = ["GpuBackend", "GpuCapture", "report_unavailable", "select_backend", "widen_thread_ids"]


def widen_thread_ids(capture: GpuCapture, op_tids) -> None:
    """Give each API call the thread id the op records use (in place).

    CUPTI keeps only the low 32 bits of ``pthread_self``; ops carry the whole
    ``threading.get_ident()``. Only the profile knows those of every launching thread: autograd's
    device threads and other C++ threads are not in ``threading.enumerate()``. An id whose low
    bits two op threads share is left as CUPTI gave it, as is one no op thread has.
    """
    widths: dict = {}
    for tid in op_tids:
        widths.setdefault(tid & 0xFFFFFFFF, set()).add(tid)
    wide = {low: tids.pop() for low, tids in widths.items() if len(tids) == 1}
    for api in capture.records.apis:
        api.tid = wide.get(api.tid, api.tid)


def select_backend(option: str, warnings: list) -> GpuBackend | None:
    """The backend for ``profile(gpu=option)``, or None for a CPU-only profile.

    ``"off"``: None. ``"auto"``: None with a line in ``warnings`` saying why when GPU collection
    cannot work here (and silently None without CUDA: there are no kernels to miss). ``"cupti"``:
    raises :class:`GpuUnavailableError` in those cases. Conditions that show only when CUPTI is
    first called (no driver, another CUPTI client) are handled the same way by the backend's start.
    """
    if option == "off":
        return None
    if not torch.cuda.is_available():
        reason = f"torch {torch.__version__} sees no CUDA device" + (
            " (a CPU build)" if torch.version.cuda is None else ""
        )
        if option == "cupti":
            raise GpuUnavailableError(
                f"gpu='cupti' needs a CUDA device, and {reason}; use gpu='auto' for a CPU-only profile"
            )
        return None
    try:
        from . import cupti_backend
    except ImportError as exc:  # cupti-python is an optional extra
        major = (torch.version.cuda or "13").split(".")[0]
        reason = f"cupti-python is not installed ({exc}); pip install 'cupti-python=={major}.*'"
    else:
        reason = cupti_backend.unusable_reason()
    if reason:
        report_unavailable(option, warnings, reason)
        return None
    return cupti_backend.CuptiBackend(option, warnings)
