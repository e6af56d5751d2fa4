"""Runs: the workers (ranks) of one job as one object, and the views across them.

``load`` here is the package's ``pyprof_live.load``: a directory opens as a Run, a file as a Profile.
"""

from __future__ import annotations

from pathlib import Path

from .run import RUN_VIEW_NAMES, Run, Worker, load_run

__all__ = ["RUN_VIEW_NAMES", "Run", "Worker", "load", "load_run"]


def load(path, progress=None, capture=None, provenance=None):
    """A Profile from a file (any kind ``importers.load`` reads; ``capture``/``provenance`` as
    :func:`~pyprof_live.importers.kineto.load_kineto` takes them), or a Run from a run directory."""
    if Path(path).is_dir():
        if capture is not None or provenance is not None:
            raise ValueError("capture= and provenance= go with one PyTorch profiler trace, not a run directory")
        return load_run(path)
    from ..importers import load as load_file

    return load_file(path, progress, capture, provenance)
