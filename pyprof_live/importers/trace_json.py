"""Streaming reader of Chrome/Kineto trace JSON: the ``traceEvents`` array, one event at a time.

The array is decoded from a window of ``CHUNK_CHARS`` characters, so memory is one window plus what
the caller keeps of each event, whatever the file size; and as no tree of 100k dicts is kept alive,
this is also about twice as fast as ``json.load`` (less GC work). Knows JSON and the trace's outer
layout only; what events mean is :mod:`.kineto`'s job (the CUPTI replay reads traces with it too).
"""

from __future__ import annotations

import gzip
import io
import json
import json.scanner
import os
import re
import zlib
from collections.abc import Callable, Generator, Iterator

from ..errors import ProfileFormatError
from ..store.inflate import inflation_limit, too_inflated
from .input_files import GZIP_MAGIC, unreadable

#: Characters decoded per read; an event larger than this makes the window grow (doubling).
CHUNK_CHARS = 1 << 20

Progress = Callable[[float, str], None]  # (fraction of the file read, stage), as load_nsys calls it


_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _JsonWindow:
    """A sliding window over a text stream that decodes one JSON value at a time."""

    def __init__(self, text, raw, size: int, progress: Progress | None, limit: int | None = None):
        self._text = text
        self._raw = raw
        self._size = size
        self._progress = progress
        self._limit = limit  # most characters to decode (gzip: the inflation limit), None: no limit
        self._decoded = 0
        # strict=False: raw control characters in strings load. torch 2.6's Python tracer (with_stack) can
        # write a function name from freed memory ("custom_graph_pass.py(0): \x10\x1a\xcdAE\x7f").
        decoder = json.JSONDecoder(strict=False)
        self._decode = decoder.raw_decode
        self.scan = json.scanner.make_scanner(decoder)  # type: ignore[arg-type]  # typeshed: the C class
        self.buf = ""
        self.pos = 0
        self.eof = False

    def _refill(self) -> None:
        """Append the next chunk, at least as large as what is already buffered (so retries of a
        huge value cost O(n log n), not O(n^2))."""
        chunk = self._text.read(max(CHUNK_CHARS, len(self.buf) - self.pos))
        self._decoded += len(chunk)
        if self._limit is not None and self._decoded > self._limit:
            raise too_inflated(self._size)
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        if not chunk:
            self.eof = True
        if self._progress is not None:
            self._progress(min(self._raw.tell() / self._size, 1.0), "trace events")

    def peek(self) -> str:
        """The next non-blank character ("" at end of file), without consuming it."""
        while True:
            self.pos = _WHITESPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # \s* always matches
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                return ""
            self._refill()

    def expect(self, chars: str, where: str) -> str:
        char = self.peek()
        if not char or char not in chars:
            found = repr(char) if char else "end of file"
            raise ValueError(f"expected {' or '.join(map(repr, chars))} {where}, found {found}")
        self.pos += 1
        return char

    def value(self):
        """Decode the value at the cursor; a value that touches the window's end is re-read with
        more text, since a number or a truncated object may continue past it."""
        self.peek()
        while True:
            try:
                value, end = self._decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if not self.eof:
                    self._refill()
                    continue
                if exc.pos >= len(self.buf.rstrip()) or exc.msg.startswith("Unterminated string"):
                    raise ValueError("the file ends inside a JSON value (truncated?)") from None
                raise
            if end < len(self.buf) or self.eof:
                self.pos = end
                return value
            self._refill()


def read_trace_events(
    path, header: dict | None = None, progress: Progress | None = None
) -> Generator[dict, None, None]:
    """Yield the raw event dicts of a Kineto/Chrome trace, as the file holds them, streaming.

    ``header`` (when given) receives the file's other top-level entries (``deviceProperties``,
    ``distributedInfo``, versions...); it is complete once the iterator is exhausted, since they may
    follow ``traceEvents``. A bare JSON array of events is accepted too. Raises
    :class:`ProfileFormatError` for anything that is not such a trace (also for later replay tests
    and tools that want the events without building records).
    """
    header = {} if header is None else header
    try:
        raw = open(path, "rb")
    except OSError as error:
        raise unreadable(path, error) from None
    with raw:
        try:
            size = os.fstat(raw.fileno()).st_size
            if size == 0:
                raise ProfileFormatError(path, "empty file")
            compressed = raw.read(2) == GZIP_MAGIC
            raw.seek(0)
            binary = gzip.GzipFile(fileobj=raw) if compressed else raw
            text = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace")
            window = _JsonWindow(text, raw, size, progress, inflation_limit(size) if compressed else None)
            yield from _trace_events(window, header)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise ProfileFormatError(path, f"truncated or corrupt gzip data ({exc})") from None
        except OSError as error:  # a read that fails part way (I/O error)
            raise unreadable(path, error) from None
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise ProfileFormatError(path, f"not a Kineto trace: {exc}") from None
        except RecursionError:  # json's decoder recurses once per nesting level
            raise ProfileFormatError(path, "not a Kineto trace: JSON nested too deeply") from None


def _trace_events(window: _JsonWindow, header: dict) -> Iterator[dict]:
    first = window.peek()
    if first == "[":
        yield from _array(window)
        _end_of_file(window)
        return
    if first != "{":
        raise ValueError("a trace is a JSON object with a traceEvents array")
    window.pos += 1
    found = False
    if window.peek() == "}":
        window.pos += 1
    else:
        while True:
            key = window.value()
            if not isinstance(key, str):
                raise ValueError("malformed JSON object")
            window.expect(":", "after a key")
            if key == "traceEvents":
                found = True
                yield from _array(window)
            else:
                header[key] = window.value()
            if window.expect(",}", "between top-level entries") == "}":
                break
    if not found:
        raise ValueError("no traceEvents array")
    _end_of_file(window)


def _end_of_file(window: _JsonWindow) -> None:
    """Nothing but blanks may follow the trace: a second trace (two files, or two gzip members,
    concatenated) would otherwise be ignored without a word."""
    if window.peek():
        raise ValueError("data after the end of the trace (two traces concatenated?)")


_SEPARATOR = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")


def _array(window: _JsonWindow) -> Iterator:
    """The elements of a JSON array. Fast path: decode straight from the window with the C scanner
    while whole events and their separator fit in it; at the window's end, the careful path
    (refill, retry, precise errors) takes one element, then the fast path resumes."""
    window.expect("[", "for traceEvents")
    if window.peek() == "]":
        window.pos += 1
        return
    scan = window.scan
    separator = _SEPARATOR.match
    while True:
        window.peek()  # the scanner starts at a value, never at the blank after a comma (",\n" in Kineto's files)
        buf = window.buf
        pos = window.pos
        limit = len(buf)
        try:
            while True:
                element, end = scan(buf, pos)
                match = separator(buf, end)
                if match is None or match.end() >= limit:
                    break
                yield element
                pos = match.end()
                if match.group(1) == "]":
                    window.pos = pos
                    return
        except (StopIteration, json.JSONDecodeError):  # cut at the window's end, or bad JSON:
            pass  # the careful path refills, or explains
        window.pos = pos
        yield window.value()
        if window.expect(",]", "between trace events") == "]":
            return
