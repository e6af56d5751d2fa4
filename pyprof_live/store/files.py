"""Writing export files so that a reader never sees half of one (a browser or Perfetto polling it)."""

from __future__ import annotations

import errno
import gzip
import io
import os
import re
import stat
import tempfile
from pathlib import Path

# Where /dev/stdout, /dev/fd/N and /proc/self/fd/N lead: links to this process's open descriptors.
_DESCRIPTOR_DIRECTORY = re.compile(r"/proc/\d+(/task/\d+)?/fd")
_MAX_SYMLINKS = 40  # Linux's own limit before ELOOP


def write_text_atomically(path, write, compress: bool | None = None) -> None:
    """Call ``write(text_stream)`` into a temporary file beside the file ``path`` names, then rename it
    over that file, so a reader sees the old file or the whole new one.

    The text is UTF-8, gzip-compressed when ``compress`` (default: ``path`` ends in ``.gz``). The
    rest is :func:`write_atomically`'s.
    """
    if compress is None:
        compress = Path(path).suffix == ".gz"
    write_atomically(path, lambda binary: _encode(binary, write, compress))


def write_atomically(path, write) -> None:
    """Call ``write(binary_stream)`` into a temporary file beside the file ``path`` names, then rename
    it over that file, so a reader sees the old file or the whole new one.

    A symlink is followed: its target is replaced and the link stays. A path that cannot be replaced
    is written into, as a shell's ``>`` does: an existing FIFO or device, or an open descriptor
    (/dev/stdout). On any error no temporary file is left, an existing file is left as it was, and
    an OSError names ``path`` (the user's, not the temporary file's). A replaced file keeps its
    permission bits; a new one gets those a plain ``open()`` would give it (mkstemp's are owner-only).
    """
    try:
        target = file_to_replace(path)
        if target is None:
            with open(path, "ab") as stream:  # append: a file behind /dev/stdout may be the shell's `>>`
                write(stream)
        else:
            _replace(target, write)
    except OSError as error:
        if error.errno is None:  # raised by `write` itself, not by the file system
            raise
        raise OSError(error.errno, error.strerror, str(path)) from None


def file_to_replace(path) -> str | None:
    """The path of the regular file ``path`` names (or would create), its symlinks followed; None when
    it must be written into instead: an existing FIFO, device or directory (opening it says what is
    wrong), or a link to an open descriptor, whose file may be one the shell opened for appending."""
    path = os.fspath(path)
    for _ in range(_MAX_SYMLINKS):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return path
        if not stat.S_ISLNK(mode):
            return path if stat.S_ISREG(mode) else None
        directory = os.path.realpath(os.path.dirname(path))
        if _DESCRIPTOR_DIRECTORY.fullmatch(directory):
            return None
        path = os.path.join(directory, os.readlink(path))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


def _replace(path: str, write) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as raw:
            write(raw)
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _encode(binary, write, compress: bool) -> None:
    if compress:
        with gzip.GzipFile(fileobj=binary, mode="wb", mtime=0) as compressed:
            _write_text(compressed, write)
    else:
        _write_text(binary, write)


def _mode_for(path: str) -> int:
    """The permission bits of the file being replaced (a 0600 file stays 0600), else those a plain
    ``open()`` gives a new file."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_text(binary, write) -> None:
    # A lone surrogate (from a trace's "\ud800") cannot be UTF-8: written as an escape, not an error.
    out = io.TextIOWrapper(binary, encoding="utf-8", errors="backslashreplace", newline="\n")
    write(out)
    out.flush()
    out.detach()  # leave closing the binary stream to its own `with`
