"""Importers: functions ``path -> Profile``; ``load`` recognises a file by its content, not its name."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from ..errors import ProfileFormatError

# What a file starts with, for the importers that check it (submodules import these from here).
SQLITE_MAGIC = b"SQLite format 3\x00"
GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"


def unreadable(path, error: OSError) -> ProfileFormatError:
    """The one-line error for a file that cannot be opened or read, whichever importer tried."""
    if isinstance(error, FileNotFoundError):
        return ProfileFormatError(path, "no such file")
    if isinstance(error, IsADirectoryError):
        return ProfileFormatError(path, "is a directory, not a profile file")
    return ProfileFormatError(path, f"cannot read the file ({error.strerror or error})")


def load(path, progress=None, capture=None, provenance=None):
    """Read a saved profile (``.pplive``, or Parquet from a run directory), an Nsight Systems or nvprof
    SQLite export, or a PyTorch profiler trace.

    ``progress(fraction, stage)`` is called as a long import advances (the CLI draws a bar with it).
    ``capture`` and ``provenance`` are :func:`~pyprof_live.importers.kineto.load_kineto`'s, for
    PyTorch profiler traces only. A pipe, FIFO, device or ``"-"`` (standard input) is read once,
    into a temporary file.
    """
    from .spool import read_once

    return read_once(_load_file, path, _check_head, progress=progress, capture=capture, provenance=provenance)


_BOM = b"\xef\xbb\xbf"
_NOT_A_PROFILE = (
    "not a profile pyprof_live can read (expected a saved profile, an Nsight Systems "
    "or nvprof SQLite export, or a PyTorch profiler JSON trace)"
)


def _check_head(path, head: bytes) -> None:
    """Refuse, by its first bytes, what cannot be any profile (a stream is not read further)."""
    if not head:
        raise ProfileFormatError(path, "file is empty")
    if not head.startswith((SQLITE_MAGIC, GZIP_MAGIC, PARQUET_MAGIC)) and not _looks_like_json(head):
        raise ProfileFormatError(path, _NOT_A_PROFILE)


def _looks_like_json(text: bytes) -> bool:
    return text.removeprefix(_BOM).lstrip()[:1] in (b"{", b"[")


def _load_file(path, progress=None, capture=None, provenance=None):
    path = Path(path)
    kind = file_kind(path)
    if kind != "kineto" and (capture is not None or provenance is not None):
        raise ProfileFormatError(
            path, "a graph capture trace or a provenance log goes with a PyTorch profiler trace, not this file"
        )
    if kind == "nsys":
        from .nsys import load_nsys

        return load_nsys(path, progress=progress)
    if kind == "columnar":
        from .saved import load_columnar

        return load_columnar(path)
    if kind == "saved":
        from .saved import load_saved

        return load_saved(path)
    from .kineto import load_kineto

    return load_kineto(path, progress=progress, capture=capture, provenance=provenance)


def file_kind(path) -> str:
    """What a file holds, from its first bytes: "nsys" (SQLite: nsys or nvprof), "columnar" (Parquet),
    "saved" (a saved profile) or "kineto" (JSON); ProfileFormatError for anything else."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as error:
        raise unreadable(path, error) from None
    _check_head(path, head)
    if head.startswith(SQLITE_MAGIC):
        return "nsys"
    if head.startswith(PARQUET_MAGIC):
        return "columnar"
    text = head
    if head.startswith(GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as f:
                text = f.read(4096)
        except (OSError, EOFError, zlib.error) as e:
            raise ProfileFormatError(path, f"damaged gzip data ({e})") from None
    from ..store.savefile import is_saved_profile

    if is_saved_profile(text):
        return "saved"
    if _looks_like_json(text):
        return "kineto"
    raise ProfileFormatError(path, _NOT_A_PROFILE)
