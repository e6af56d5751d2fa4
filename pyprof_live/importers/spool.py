"""Inputs that can be read only once: pipes, FIFOs, process substitution (``<(zcat t.json.gz)``),
devices and standard input (``-``) are copied to a temporary file first, so an importer can read
the head to recognise the file, then the whole of it (SQLite needs a real file anyway).

Only the first :data:`HEAD_BYTES` are read before the kind of input is known: a stream that does
not start like a profile (``/dev/zero``) is refused without being read to its end. Errors name the
input as the user gave it, never the temporary copy.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ..errors import ProfileFormatError

#: The command-line name of standard input.
STDIN = "-"
HEAD_BYTES = 4096
_COPY_CHUNK = 1 << 20


def shown_name(path) -> str:
    return "<stdin>" if str(path) == STDIN else str(path)


def is_stream(path) -> bool:
    """Can ``path`` be read only once (standard input, a pipe, a FIFO, a device)? False for regular
    files and for anything ``stat`` cannot reach (the importer then says what is wrong)."""
    if str(path) == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextmanager
def regular_file(path, looks_like_profile=None):
    """A path to a regular file holding what ``path`` holds: ``path`` itself, or a temporary copy of
    a stream read once (removed on exit). ``looks_like_profile(head)`` refuses a stream by its first
    bytes before the rest is read (it raises ProfileFormatError). A ProfileFormatError raised
    inside names ``path`` as the user gave it."""
    if not is_stream(path):
        yield Path(path)
        return
    name = shown_name(path)
    fd, copy = tempfile.mkstemp(prefix="pyprof_live_input_", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            _copy(path, out, name, looks_like_profile)
        try:
            yield Path(copy)
        except ProfileFormatError as error:
            raise type(error)(name, error.problem) from None
    finally:
        os.unlink(copy)


def _copy(path, out, name: str, looks_like_profile) -> None:
    try:
        stream = sys.stdin.buffer if str(path) == STDIN else open(path, "rb")
        try:
            head = stream.read(HEAD_BYTES)
            if looks_like_profile is not None:
                looks_like_profile(name, head)
            out.write(head)
            shutil.copyfileobj(stream, out, _COPY_CHUNK)
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
    except OSError as error:
        raise ProfileFormatError(name, f"cannot read the input ({error.strerror or error})") from None


def read_once(importer, path, looks_like_profile=None, **kwargs):
    """``importer(path, **kwargs)`` on a regular file, ``path`` copied first when it is a stream (see
    :func:`regular_file`); the Profile's ``meta["path"]`` is ``path`` as given."""
    with regular_file(path, looks_like_profile) as local:
        profile = importer(local, **kwargs)
    if local != Path(path) or str(path) == STDIN:
        profile.meta["path"] = shown_name(path)
    return profile
