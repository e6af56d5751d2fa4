"""A snapshot of every global hook pyprof_live may install, to check none outlives a profile."""

import sys
import threading
import warnings

import torch
from torch.autograd.function import Function
from torch.nn.modules import module as nn_module
from torch.utils import checkpoint
from torch.utils._python_dispatch import _get_current_dispatch_mode

from pyprof_live.capture import session
from pyprof_live.capture.annotations import sink


def hooks_state() -> dict:
    return {
        "dispatch_mode": _get_current_dispatch_mode(),
        "forward_pre_hooks": len(nn_module._global_forward_pre_hooks),
        "forward_hooks": len(nn_module._global_forward_hooks),
        "function_apply": Function.__dict__["apply"],
        "recompute_enter": checkpoint._recomputation_hook.__dict__.get("__enter__"),
        "thread_profile": threading.getprofile(),
        "sink": sink.session,
        "profiler": torch.autograd.profiler._is_profiler_enabled,
        "torch_compile": torch.compile,
        "active_profiles": tuple(session._active),
        "dynamo_skip_hook_is_ours": getattr(
            getattr(sys.modules.get("torch._dynamo.convert_frame"), "add_skip_reason", None), "__module__", ""
        )
        == "pyprof_live.capture.compiled",
        **_compile_state(),
    }


def _compile_state() -> dict:
    """What the compiled-code capture patches, where torch has loaded it."""
    state = {"warning_filters": len(warnings.filters)}
    output_code = sys.modules.get("torch._inductor.output_code")
    if output_code is not None:
        graph = output_code.CompiledFxGraph
        state.update(graph_init=graph.__dict__["__init__"], graph_call=graph.__dict__["__call__"])
    config = sys.modules.get("torch._inductor.config")
    if config is not None:
        state.update(provenance=config.trace.provenance_tracking_level, fx_graph_cache=config.fx_graph_cache)
    callback = sys.modules.get("torch._dynamo.callback")
    if callback is not None:
        handler = callback.callback_handler
        state.update(compile_callbacks=(len(handler.start_callbacks), len(handler.end_callbacks)))
    return state
