"""What the importers share about their input files: the bytes a kind of file starts with, and the one
error for a file that cannot be opened or read. Apart from ``__init__`` (the registry), so that an
importer imports them without importing its package back."""

from __future__ import annotations

from ..errors import ProfileFormatError

#: What a file starts with, for the importers that check it.
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
