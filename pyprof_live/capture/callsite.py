"""The user's call site of an op: the innermost frames outside torch and pyprof_live.

Capture keeps ``(code, line)`` pairs, cheap to take in the op hook; formatting to
``"train.py:52"`` happens once per distinct pair when the profile is finalized.
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

_internal_code: dict = {}  # code object -> is it torch/pyprof_live/stdlib plumbing?


def _is_internal(code) -> bool:
    internal = _internal_code.get(code)
    if internal is None:
        name = code.co_filename
        internal = name.startswith(_INTERNAL_DIRS) or name.startswith("<frozen")
        _internal_code[code] = internal
    return internal


def capture(depth: int, skip: int = 2) -> tuple:
    """Up to ``depth`` user frames as ``(code, line)``, innermost first; ``skip`` drops our own frames."""
    frames = []
    frame: FrameType | None = sys._getframe(skip)
    while frame is not None:
        code = frame.f_code
        if not _is_internal(code):
            frames.append((code, frame.f_lineno))
            if len(frames) == depth:
                break
        frame = frame.f_back
    return tuple(frames)


def format_frames(frames: tuple, cache: dict) -> tuple:
    """``((code, 52), ...)`` -> ``("train.py:52", ...)``, memoised in ``cache`` across a profile."""
    out = []
    for key in frames:
        text = cache.get(key)
        if text is None:
            text = f"{os.path.basename(key[0].co_filename)}:{key[1]}"
            cache[key] = text
        out.append(text)
    return tuple(out)
