"""pyprof_live: which kernels each line, module and op of a PyTorch model launched, and how well.

    with pyprof_live.profile() as p:
        train_step()
    print(p.table(sort="sil"))
"""

from .capture import annotations as _annotations
from .capture.annotations import layer
from .capture.functions import wrap
from .errors import (
    CaptureError,
    ColumnError,
    GpuUnavailableError,
    ProfileFormatError,
    ProfileVersionError,
    PyprofLiveError,
)
from .formulas import register_flops
from .analysis.peaks import GpuPeak
from .importers import load
from .importers.kineto import load_kineto
from .importers.nsys import load_nsys
from .live import profile
from .profile import Profile

__version__ = "0.1.0"

# NVTX entry points are wrapped once, at import, so ranges pushed later are seen (see annotations).
_annotations.install()

__all__ = [
    "profile",
    "load",
    "load_nsys",
    "load_kineto",
    "layer",
    "wrap",
    "register_flops",
    "Profile",
    "GpuPeak",
    "PyprofLiveError",
    "CaptureError",
    "ColumnError",
    "GpuUnavailableError",
    "ProfileFormatError",
    "ProfileVersionError",
    "__version__",
]
