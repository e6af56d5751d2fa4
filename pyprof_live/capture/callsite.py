"""The user's call site of an op: the innermost frames outside torch and pyprof_live.

Capture keeps ``(id(code), instruction offset)`` pairs, cheap to take in the op hook: a code
object hashes its bytecode and constants each time it is hashed (keying by it cost microseconds per
frame), and ``f_lineno`` walks the code's line table from its start. The code objects seen are kept
here, so their ids stay theirs. Lines and ``"train.py:52"`` are worked out once per distinct pair
when the profile is finalized.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from types import FrameType

import torch

_INTERNAL_DIRS = tuple(
    os.path.dirname(os.path.abspath(str(m.__file__))) + os.sep for m in (torch, sys.modules[__name__.rsplit(".", 2)[0]])
) + tuple(os.path.abspath(str(m.__file__)) for m in (contextlib, threading))

_internal_code: dict = {}  # id(code) -> is it torch/pyprof_live/stdlib plumbing?
_codes: dict = {}  # id(code) -> code, for every code object in _internal_code (keeps the ids unique)


def _is_internal(code) -> bool:
    key = id(code)
    internal = _internal_code.get(key)
    if internal is None:
        name = code.co_filename
        internal = name.startswith(_INTERNAL_DIRS) or name.startswith("<frozen")
        _codes[key] = code
        _internal_code[key] = internal
    return internal


def capture(depth: int, skip: int = 2) -> tuple:
    """Up to ``depth`` user frames as ``(id(code), f_lasti)``, innermost first; ``skip`` drops our own frames."""
    frames = []
    frame: FrameType | None = sys._getframe(skip)
    known = _internal_code
    while frame is not None:
        code = frame.f_code
        internal = known.get(id(code))  # _is_internal(), inlined for the frames seen before: this runs per op
        if internal is None:
            internal = _is_internal(code)
        if not internal:
            frames.append((id(code), frame.f_lasti))
            if len(frames) == depth:
                break
        frame = frame.f_back
    return tuple(frames)


def format_frames(frames: tuple, cache: dict) -> tuple:
    """``((id(code), f_lasti), ...)`` -> ``("train.py:52", ...)``, memoised in ``cache`` across a profile
    (whole call sites and single frames: a training step repeats both)."""
    out = cache.get(frames)
    if out is not None:
        return out
    texts = []
    for key in frames:
        text = cache.get(key)
        if text is None:
            code = _codes[key[0]]
            text = f"{os.path.basename(code.co_filename)}:{_line_at(code, key[1])}"
            cache[key] = text
        texts.append(text)
    out = cache[frames] = tuple(texts)
    return out


def _line_at(code, offset: int):
    """The source line of the instruction at byte ``offset`` (what ``frame.f_lineno`` said then)."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return code.co_firstlineno
