"""Notice torch.compile'd code running under a profile.

A dispatch mode makes Dynamo skip compiled frames ("non-infra torch dispatch mode present"), so
the code runs eagerly: the profile would silently measure something else than the user runs.
Dynamo reports each skip through ``add_skip_reason``; while a profile records we listen there.
If Dynamo is not imported yet, ``torch.compile`` is wrapped until the first call imports it.
"""

from __future__ import annotations

import functools
import sys

import torch

_restore: list = []  # (object, attribute, original value), undone by unwatch()


def watch(callback) -> None:
    """Call ``callback("fn (file:line)")`` for each compiled frame Dynamo skips for our mode."""
    convert_frame = sys.modules.get("torch._dynamo.convert_frame")
    if convert_frame is None:
        _watch_first_compile(callback)
        return
    if not hasattr(convert_frame, "add_skip_reason"):
        return  # a torch whose Dynamo reports skips differently: nothing to listen to
    original = convert_frame.add_skip_reason

    def add_skip_reason(reason, frame):
        if "dispatch mode" in str(reason):
            code = frame.f_code
            callback(f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})")
        return original(reason, frame)

    _patch(convert_frame, "add_skip_reason", add_skip_reason)


def _watch_first_compile(callback) -> None:
    """Wrap torch.compile (until unwatch) so that its first call, which imports Dynamo, starts the watch."""
    original = torch.compile
    watching = []

    @functools.wraps(original)
    def compile_then_watch(*args, **kwargs):
        compiled = original(*args, **kwargs)
        # A reference kept past stop() (compile = torch.compile inside the profile) must not watch again.
        still_watched = any(value is original for _, _, value in _restore)
        if still_watched and not watching and "torch._dynamo.convert_frame" in sys.modules:
            watching.append(True)
            watch(callback)
        return compiled

    _patch(torch, "compile", compile_then_watch)


def _patch(owner, name: str, value) -> None:
    _restore.append((owner, name, getattr(owner, name)))
    setattr(owner, name, value)


def unwatch() -> None:
    while _restore:
        owner, name, value = _restore.pop()
        setattr(owner, name, value)
