"""Writing export files so that a reader never sees half of one (a browser or Perfetto polling it)."""

from __future__ import annotations

import gzip
import io
import os
import tempfile
from pathlib import Path


def write_text_atomically(path, write) -> None:
    """Call ``write(text_stream)`` into a temporary file beside ``path``, then rename it over ``path``.

    The text is UTF-8, gzip-compressed when ``path`` ends in ``.gz``. On any error the temporary
    file is removed and an existing ``path`` is left as it was.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            if path.suffix == ".gz":
                with gzip.GzipFile(fileobj=raw, mode="wb") as compressed:
                    _write_text(compressed, write)
            else:
                _write_text(raw, write)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _write_text(binary, write) -> None:
    out = io.TextIOWrapper(binary, encoding="utf-8", newline="\n")
    write(out)
    out.flush()
    out.detach()  # leave closing the binary stream to its own `with`
