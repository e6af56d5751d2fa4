"""Importers: functions ``path -> Profile``; ``load`` recognises a file by its content, not its name."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ProfileFormatError
from ..profile import Profile
from ..store.savefile import is_saved_profile
from .input_files import GZIP_MAGIC, PARQUET_MAGIC, SQLITE_MAGIC, unreadable
from .spool import read_once


@dataclass(frozen=True)
class Importer:
    """One kind of file ``load`` reads: how to recognise it, and the function that reads it.

    ``recognizes(head, text)`` gets the file's first 4 KiB as stored (``head``) and, for a gzip'd
    file, the first 4 KiB of its content (``text``; else the same bytes). ``read(path, progress,
    **options)`` imports its module only when such a file comes; ``options`` names the keyword
    arguments of ``load`` it takes. A new importer is one more entry in ``IMPORTERS``.
    """

    kind: str  # what file_kind() says of its files
    recognizes: Callable[[bytes, bytes], bool]
    read: Callable[..., Profile]
    options: tuple[str, ...] = ()


def _read_sqlite(path: Path, progress: Callable | None) -> Profile:
    from .nsys import load_nsys  # tells Nsight Systems and nvprof exports apart by their tables

    return load_nsys(path, progress=progress)


def _read_columnar(path: Path, progress: Callable | None) -> Profile:
    from .saved import load_columnar

    return load_columnar(path)


def _read_saved(path: Path, progress: Callable | None) -> Profile:
    from .saved import load_saved

    return load_saved(path)


def _read_kineto(path: Path, progress: Callable | None, **options) -> Profile:
    from .kineto import load_kineto

    return load_kineto(path, progress=progress, **options)


#: In the order they are tried.
IMPORTERS = [
    Importer("nsys", lambda head, _: head.startswith(SQLITE_MAGIC), _read_sqlite),  # nsys or nvprof SQLite
    Importer("columnar", lambda head, _: head.startswith(PARQUET_MAGIC), _read_columnar),  # a run's Parquet
    Importer("saved", lambda _, text: is_saved_profile(text), _read_saved),
    Importer("kineto", lambda _, text: _looks_like_json(text), _read_kineto, options=("capture", "provenance")),
]

_BOM = b"\xef\xbb\xbf"
_NOT_A_PROFILE = (
    "not a profile pyprof_live can read (expected a saved profile, an Nsight Systems "
    "or nvprof SQLite export, or a PyTorch profiler JSON trace)"
)


def _looks_like_json(text: bytes) -> bool:
    """A JSON document starts here (after a UTF-8 byte-order mark and blanks, if any)."""
    return text.removeprefix(_BOM).lstrip()[:1] in (b"{", b"[")


def load(path, progress=None, capture=None, provenance=None) -> Profile:
    """Read a saved profile (``.pplive``, or Parquet from a run directory), an Nsight Systems or nvprof
    SQLite export, or a PyTorch profiler trace.

    ``progress(fraction, stage)`` is called as a long import advances (the CLI draws a bar with it).
    ``capture`` and ``provenance`` are :func:`~pyprof_live.importers.kineto.load_kineto`'s, for
    PyTorch profiler traces only. A pipe, FIFO, device or ``"-"`` (standard input) is read once,
    into a temporary file.
    """
    return read_once(_load_file, path, _check_stream_head, progress=progress, capture=capture, provenance=provenance)


def _check_stream_head(path, head: bytes) -> None:
    """Refuse a stream by its first bytes when they cannot start any profile (it is not read further)."""
    if not head:
        raise ProfileFormatError(path, "file is empty")
    if not head.startswith((SQLITE_MAGIC, GZIP_MAGIC, PARQUET_MAGIC)) and not _looks_like_json(head):
        raise ProfileFormatError(path, _NOT_A_PROFILE)


def _load_file(path, progress=None, capture=None, provenance=None) -> Profile:
    path = Path(path)
    importer = _importer_of(path)
    options = {name: value for name, value in (("capture", capture), ("provenance", provenance)) if value is not None}
    if set(options) - set(importer.options):
        raise ProfileFormatError(
            path, "a graph capture trace or a provenance log goes with a PyTorch profiler trace, not this file"
        )
    return importer.read(path, progress, **options)


def file_kind(path) -> str:
    """What a file holds, from its first bytes: "nsys" (SQLite: nsys or nvprof), "columnar" (Parquet),
    "saved" (a saved profile) or "kineto" (JSON); ProfileFormatError for anything else."""
    return _importer_of(path).kind


def _importer_of(path) -> Importer:
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as error:
        raise unreadable(path, error) from None
    if not head:
        raise ProfileFormatError(path, "file is empty")
    text = head
    if head.startswith(GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as f:
                text = f.read(4096)
        except (OSError, EOFError, zlib.error) as e:
            raise ProfileFormatError(path, f"damaged gzip data ({e})") from None
    for importer in IMPORTERS:
        if importer.recognizes(head, text):
            return importer
    raise ProfileFormatError(path, _NOT_A_PROFILE)
