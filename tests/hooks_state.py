"""A snapshot of every global hook pyprof_live may install, to check none outlives a profile."""

import sys
import threading
import warnings

import torch
from torch.nn.modules import module as nn_module

from pyprof_live import torch_compat
from pyprof_live.capture import session
from pyprof_live.capture.annotations import sink


def hooks_state() -> dict:
    return {
        "dispatch_mode": torch_compat.current_dispatch_mode(),
        "forward_pre_hooks": len(nn_module._global_forward_pre_hooks),
        "forward_hooks": len(nn_module._global_forward_hooks),
        "function_apply": torch_compat.function_apply(),
        "recompute_enter": torch_compat.recomputation_hook().__dict__.get("__enter__"),
        "thread_profile": threading.getprofile(),
        "sink": sink.session,
        "profiler": torch_compat.torch_profiler_running(),
        "torch_compile": torch.compile,
        "active_profiles": tuple(session._active),
        **_compile_state(),
    }


def _compile_state() -> dict:
    """Whether the compiled-code capture's patches are in place (False where torch has not loaded
    what they patch: a test may load it half-way)."""
    output_code = sys.modules.get("torch._inductor.output_code")
    graph = output_code.CompiledFxGraph if output_code is not None else None
    config = sys.modules.get("torch._inductor.config")
    callback = sys.modules.get("torch._dynamo.callback")
    callbacks = callback.callback_handler.start_callbacks if callback is not None else []
    return {
        "compiled_graph_patched": graph is not None
        and any(graph.__dict__[name].__module__.startswith("pyprof_live") for name in ("__init__", "__call__")),
        "provenance_patched": config is not None
        and torch_compat.inductor_tracks_provenance()  # 2.9+
        and config.trace.provenance_tracking_level == 1,
        "dynamo_disabled": getattr(sys.modules.get("torch._dynamo.config"), "disable", False),
        "compile_callbacks_ours": any(
            type(getattr(cb, "__self__", None)).__name__ == "CompileEvents" for cb in callbacks
        ),
        "warning_filter_ours": any(
            f[1] is not None and f[1].pattern.startswith("Using `torch") for f in warnings.filters
        ),
    }
