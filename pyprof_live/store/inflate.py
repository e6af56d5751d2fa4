"""Inflating gzip files without letting a decompression bomb take the machine.

A gzip'd trace or saved profile inflates 8 to 30 times (every real recording in ../shared/data);
deflate can reach about 1000 times, so a 1 MB file could ask for 1 GB of memory and seconds of
work before anything is known to be wrong with it. Inflation stops, with an error, once it passes
:data:`MAX_RATIO` times the compressed size (and :data:`ALWAYS_ALLOWED` bytes, for small files).
"""

from __future__ import annotations

import gzip
import os

MAX_RATIO = 200
ALWAYS_ALLOWED = 64 << 20


class InflationError(ValueError):
    """The data inflates to more than the limit for its compressed size."""


def inflation_limit(compressed_bytes: int) -> int:
    """Most bytes a gzip file of ``compressed_bytes`` may inflate to."""
    return max(ALWAYS_ALLOWED, MAX_RATIO * compressed_bytes)


def too_inflated(compressed_bytes: int) -> InflationError:
    return InflationError(
        f"inflates to more than {MAX_RATIO} times its {compressed_bytes} compressed bytes "
        "(a decompression bomb, or damaged)"
    )


def read_gzip(path) -> bytes:
    """The inflated content of the gzip file at ``path``; InflationError past the limit (gzip's own
    errors, OSError and EOFError, as ``gzip.open(path).read()`` raises them)."""
    with open(path, "rb") as raw:
        size = os.fstat(raw.fileno()).st_size
        limit = inflation_limit(size)
        with gzip.GzipFile(fileobj=raw) as inflated:
            data = inflated.read(limit + 1)
    if len(data) > limit:
        raise too_inflated(size)
    return data
