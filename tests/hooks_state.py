"""A snapshot of every global hook pyprof_live may install, to check none outlives a profile."""

import sys
import threading

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
    }
