"""Writing export files so that a reader never sees half of one (a browser or Perfetto polling it)."""

from __future__ import annotations

import gzip
import io
import os
import tempfile
from pathlib import Path


def write_text_atomically(path, write, compress: bool | None = None) -> None:
    """Call ``write(text_stream)`` into a temporary file beside ``path``, then rename it over ``path``.

    The text is UTF-8, gzip-compressed when ``compress`` (default: ``path`` ends in ``.gz``). On any
    error the temporary file is removed and an existing ``path`` is left as it was. The file gets
    the permissions a plain ``open()`` would give it (mkstemp's are owner-only).
    """
    path = Path(path)
    if compress is None:
        compress = path.suffix == ".gz"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            if compress:
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as compressed:
                    _write_text(compressed, write)
            else:
                _write_text(raw, write)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_text(binary, write) -> None:
    out = io.TextIOWrapper(binary, encoding="utf-8", newline="\n")
    write(out)
    out.flush()
    out.detach()  # leave closing the binary stream to its own `with`
