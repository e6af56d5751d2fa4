"""A snapshot of every global hook pyprof_live may install, to check none outlives a profile."""

import sys
import threading

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
        "dynamo_skip_hook_is_ours": getattr(
            getattr(sys.modules.get("torch._dynamo.convert_frame"), "add_skip_reason", None), "__module__", ""
        )
        == "pyprof_live.capture.compiled",
    }
