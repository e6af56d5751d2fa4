"""Notice torch.compile'd code running under a profile.

A dispatch mode makes Dynamo skip compiled frames ("non-infra torch dispatch mode present"), so
the code runs eagerly: the profile would silently measure something else than the user runs.
Dynamo reports each skip through ``add_skip_reason``; while a profile records we listen there.
"""

from __future__ import annotations

import sys

_watch: dict = {}


def watch(callback) -> None:
    """Call ``callback("fn (file:line)")`` for each compiled frame Dynamo skips for our mode."""
    convert_frame = sys.modules.get("torch._dynamo.convert_frame")
    if convert_frame is None or not hasattr(convert_frame, "add_skip_reason"):
        return  # Dynamo not imported: nothing compiled can run without importing it first
    original = convert_frame.add_skip_reason

    def add_skip_reason(reason, frame):
        if "dispatch mode" in str(reason):
            code = frame.f_code
            callback(f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})")
        return original(reason, frame)

    convert_frame.add_skip_reason = add_skip_reason
    _watch["module"], _watch["original"] = convert_frame, original


def unwatch() -> None:
    if _watch:
        _watch.pop("module").add_skip_reason = _watch.pop("original")
