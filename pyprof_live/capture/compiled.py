"""Notice torch.compile'd code running under a profile.

Compiled code meets the op hook in two ways, and the user is told about both:
- compiled (or recompiled) while the profile records: a dispatch mode makes Dynamo skip the frame
  ("non-infra torch dispatch mode present"), so it runs eagerly; Dynamo reports each skip through
  ``add_skip_reason``.
- compiled before the profile started: its cached graph still runs compiled, and the fused kernels
  inside call no aten op the hook can see; Inductor runs every such graph through
  ``CompiledFxGraph.__call__``.
"""

from __future__ import annotations

import os

from .. import torch_compat
from . import callsite

_restore: list = []  # (object, attribute, original value), undone by unwatch()


def watch(ran_eagerly, ran_compiled) -> None:
    """Call ``ran_eagerly("fn (file:line)")`` for each frame of the user's model Dynamo skips for our
    mode (``"called from train.py:52"`` for a compiled module), and
    ``ran_compiled("model.py:17 <- train.py:52")`` (the compiled function and its caller) each time
    a cached Inductor graph runs.

    Imports Dynamo first: the dispatch mode imports it on the first op anyway, and that import
    would otherwise land inside the user's code and add seconds to its first op.
    """
    reporter = torch_compat.dynamo_skip_reporter()  # imports Dynamo
    our_dir = os.path.dirname(os.path.dirname(__file__))
    if reporter is not None:  # None before torch 2.13 (torch_compat)
        dynamo_dir = os.path.dirname(reporter.__file__)
        original_skip = reporter.add_skip_reason

        def add_skip_reason(reason, frame):
            code = frame.f_code
            if "dispatch mode" in str(reason) and not code.co_filename.startswith(our_dir):  # not our hooks
                if code.co_filename.startswith(dynamo_dir):  # Dynamo's wrapper of a compiled module
                    ran_eagerly("called from " + (_user_call_site(1) or "an unknown call site"))
                else:
                    ran_eagerly(f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})")
            return original_skip(reason, frame)

        _patch(reporter, "add_skip_reason", add_skip_reason)
    graph = torch_compat.compiled_fx_graph_class()  # None: nothing compiled yet
    if graph is not None:
        original_call = graph.__call__

        def call_compiled_graph(self, inputs):
            ran_compiled(_user_call_site(2) or "an unknown call site")
            return original_call(self, inputs)

        _patch(graph, "__call__", call_compiled_graph)


def _user_call_site(depth: int) -> str:
    return " <- ".join(callsite.format_frames(callsite.capture(depth), {}))


def _patch(owner, name: str, value) -> None:
    _restore.append((owner, name, getattr(owner, name)))
    setattr(owner, name, value)


def unwatch() -> None:
    while _restore:
        owner, name, value = _restore.pop()
        setattr(owner, name, value)
