"""Importers: functions ``path -> Profile``; ``load`` recognises a file by its content, not its name."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from ..errors import ProfileFormatError

_SQLITE_MAGIC = b"SQLite format 3\x00"
_GZIP_MAGIC = b"\x1f\x8b"


def load(path, progress=None):
    """Read a saved profile, an Nsight Systems or nvprof SQLite export, or a PyTorch profiler trace.

    ``progress(fraction, stage)`` is called as a long import advances (the CLI draws a bar with it).
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise ProfileFormatError(path, f"cannot read: {e.strerror or e}") from None
    if not head:
        raise ProfileFormatError(path, "file is empty")
    if head.startswith(_SQLITE_MAGIC):
        from .nsys import load_nsys

        return load_nsys(path, progress=progress)
    text = head
    if head.startswith(_GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as f:
                text = f.read(4096)
        except (OSError, EOFError, zlib.error) as e:
            raise ProfileFormatError(path, f"damaged gzip data ({e})") from None
    from ..savefile import is_saved_profile, load_saved

    if is_saved_profile(text):
        return load_saved(path)
    if text.lstrip()[:1] in (b"{", b"["):
        from .kineto import load_kineto

        return load_kineto(path, progress=progress)
    raise ProfileFormatError(path, "not a profile pyprof_live can read (expected a saved profile, an Nsight Systems "
                                   "or nvprof SQLite export, or a PyTorch profiler JSON trace)")
