"""``profile()``: live, in-process capture of a PyTorch run into a Profile.

A LiveProfile is a Profile (records, views, exports) that holds a :class:`CaptureSession`, which
owns the hooks and what they record (``session.py``); ``start``/``stop``/``step`` drive it, and each
stop appends the session's new records to the profile's.
"""

from __future__ import annotations

import torch

from ..profile import Profile
from .session import CaptureSession


class LiveProfile(Profile):
    """A Profile filled by running code under it. Use through :func:`profile`."""

    def __init__(self, steps=None, stack_depth: int = 2, max_ops: int = 1_000_000, gpu: str = "auto"):
        super().__init__(meta={"source": "live", "torch": torch.__version__, "warnings": []})
        #: The hooks and raw capture state; it writes into this profile's records and meta.
        self.session = CaptureSession(
            self.records, self.meta, steps=steps, stack_depth=stack_depth, max_ops=max_ops, gpu=gpu
        )

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    def start(self) -> LiveProfile:
        """Install every hook and start recording (unless a step schedule says to wait)."""
        self.session.start()
        return self

    def stop(self) -> LiveProfile:
        """Remove every hook and build the records; safe to call after an exception."""
        self.session.stop()
        self.invalidate()
        return self

    def step(self) -> None:
        """Mark the end of one training iteration; with ``steps=``, only chosen ones are recorded."""
        self.session.step()


def profile(steps=None, stack_depth: int = 2, max_ops: int = 1_000_000, gpu: str = "auto") -> LiveProfile:
    """Profile the PyTorch code run inside ``with profile() as p:``; then ``print(p.table())``.

    :param steps: indices of the ``p.step()`` iterations to record (``range(2, 5)``); None = all.
    :param stack_depth: user frames kept per op for the ``trace`` column; 0 turns call sites off.
    :param max_ops: record cap (records take about 0.8 kB per op, 1.4 kB while stop() converts
        them); past it ops are no longer recorded and the report says so.
    :param gpu: ``"auto"`` (GPU kernels when CUDA and CUPTI can be used, else a CPU-only report
        with a warning saying why), ``"cupti"`` (raise if they cannot), ``"off"``.
    """
    return LiveProfile(steps=steps, stack_depth=stack_depth, max_ops=max_ops, gpu=gpu)
