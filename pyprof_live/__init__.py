"""pyprof_live: which kernels each line, module and op of a PyTorch model launched, and how well.

with pyprof_live.profile() as p:
    train_step()
print(p.table(sort="sil"))
"""

from ._version import __version__
from .analysis.peaks import GpuPeak
from .capture import annotations as _annotations
from .capture.annotations import layer
from .capture.functions import wrap
from .capture.live import profile
from .errors import (
    CaptureError,
    ColumnError,
    GpuUnavailableError,
    ProfileFormatError,
    ProfileVersionError,
    PyprofLiveError,
)
from .formulas import register_flops
from .importers import load
from .importers.kineto import load_kineto
from .importers.nsys import load_nsys
from .profile import Profile
from .report.diff import diff


def serve(logdir, port=None, bind_all=False, poll=1.0):
    """Start the dashboard over ``logdir`` in the background; returns the server (``.url``, ``.stop()``).

    The same app as ``pyprof-live serve LOGDIR``; see pyprof_live/dashboard/server.py."""
    from .dashboard.server import serve as start

    return start(logdir, port=port, bind_all=bind_all, poll=poll)


# NVTX entry points are wrapped once, at import, so ranges pushed later are seen (see annotations).
_annotations.install()

__all__ = [
    "CaptureError",
    "ColumnError",
    "GpuPeak",
    "GpuUnavailableError",
    "Profile",
    "ProfileFormatError",
    "ProfileVersionError",
    "PyprofLiveError",
    "__version__",
    "diff",
    "layer",
    "load",
    "load_kineto",
    "load_nsys",
    "profile",
    "register_flops",
    "serve",
    "wrap",
]
