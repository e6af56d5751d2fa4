"""pyprof_live: which kernels each line, module and op of a PyTorch model launched, and how well.

with pyprof_live.profile() as p:
    train_step()
print(p.table(sort="sil"))

Public names load their module on first use (PEP 562): ``import pyprof_live`` does not import torch,
so reading a saved profile or a trace (the CLI) does not pay torch's import; live capture does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__
from .capture import annotations as _annotations
from .errors import (
    CaptureError,
    ColumnError,
    GpuUnavailableError,
    ProfileFormatError,
    ProfileVersionError,
    PyprofLiveError,
)
from .profile import Profile

if TYPE_CHECKING:
    from .analysis.peaks import GpuPeak
    from .capture.annotations import layer
    from .capture.functions import wrap
    from .capture.live import profile
    from .dashboard.server import serve
    from .formulas import register_flops
    from .importers.kineto import load_kineto
    from .importers.nsys import load_nsys
    from .report.diff import diff
    from .run import Run, load, load_run

#: Public name -> the module that defines it, imported when the name is first used.
_LAZY = {
    "GpuPeak": "pyprof_live.analysis.peaks",
    "diff": "pyprof_live.report.diff",
    "layer": "pyprof_live.capture.annotations",
    "Run": "pyprof_live.run",
    "load": "pyprof_live.run",  # a directory opens as a Run, a file as a Profile
    "load_run": "pyprof_live.run",
    "load_kineto": "pyprof_live.importers.kineto",
    "load_nsys": "pyprof_live.importers.nsys",
    "profile": "pyprof_live.capture.live",  # imports torch
    "register_flops": "pyprof_live.formulas",
    "serve": "pyprof_live.dashboard.server",  # the dashboard, in the background (pyprof-live serve)
    "wrap": "pyprof_live.capture.functions",  # imports torch
}

# Importing the module pyprof_live.profile (above, so that it never happens later) bound the name
# "profile" here; the public name is the function, found by __getattr__.
globals().pop("profile", None)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pyprof_live' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# NVTX entry points are wrapped now if their modules are loaded already (torch imported before
# pyprof_live, the usual order); the others when a profile starts or layer() is first used.
_annotations.install(only_imported=True)

__all__ = [
    "CaptureError",
    "ColumnError",
    "GpuPeak",
    "GpuUnavailableError",
    "Profile",
    "ProfileFormatError",
    "ProfileVersionError",
    "PyprofLiveError",
    "Run",
    "__version__",
    "diff",
    "layer",
    "load",
    "load_kineto",
    "load_nsys",
    "load_run",
    "profile",
    "register_flops",
    "serve",
    "wrap",
]
