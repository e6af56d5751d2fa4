"""Every private torch name pyprof_live relies on, in one place, with the torch releases each serves.

pyprof_live supports torch :data:`OLDEST` to :data:`NEWEST_TESTED` (CI runs the tests on the oldest,
on the pinned 2.13.0 CPU build and on the newest release on the registry; see the README). Each name
below says which releases it was checked on and what changed between them. Names are looked up when
this module is imported and never raise there: a name a release lacks is None (or a fallback), and
:func:`require_supported`, called when a profile is created, turns that into one clear error naming
the supported range, instead of an AttributeError from deep inside a hook.

Imports torch: only ``capture/`` imports it at module level; everything else imports it inside the
function that needs it, so ``import pyprof_live`` and reading an export do not load torch.
"""

from __future__ import annotations

import functools
import operator
import re
import sys
import warnings
from typing import TYPE_CHECKING

import torch

from .errors import UnsupportedTorchError

#: The releases the tests run on (CI: the oldest, 2.13.0+cpu and the newest; 2.10 checked by hand).
OLDEST = (2, 6)
NEWEST_TESTED = (2, 15)


def release(version: str) -> tuple[int, int]:
    """``"2.15.0+cu132"`` -> ``(2, 15)``; ``(0, 0)`` for a version string this cannot read."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


TORCH = release(torch.__version__)


def supported_range() -> str:
    return f"torch {OLDEST[0]}.{OLDEST[1]} to {NEWEST_TESTED[0]}.{NEWEST_TESTED[1]}"


def _attribute(owner, path: str):
    """``owner.a.b`` or None where a release lacks any part of it."""
    for part in path.split("."):
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    return owner


def _module(name: str):
    """An importable torch submodule, or None where this release has no such module."""
    try:
        __import__(name)
    except ImportError:
        return None
    return sys.modules[name]


# -- autograd: sequence numbers tie backward ops to forward ops (capture/recorder.py) --------------------

#: The number the next autograd node created on this thread will get. 2.6-2.15.
peek_sequence_nr = _attribute(torch._C, "_autograd._get_sequence_nr")
#: The graph task autograd's engine runs on this thread, -1 outside backward. 2.6-2.15.
current_graph_task_id = _attribute(torch._C, "_current_graph_task_id")
#: The autograd Node the engine is running on this thread, None outside backward. 2.6-2.15.
current_autograd_node = _attribute(torch._C, "_current_autograd_node")
#: ``node._sequence_nr()`` of a grad_fn / Node (AccumulateGrad answers 2**64-1). 2.6-2.15; a C call, no frame.
node_sequence_nr = operator.methodcaller("_sequence_nr")
#: ``tensor._is_view()``. 2.6-2.15.
is_view = _attribute(torch.Tensor, "_is_view")

# -- the op hook: a dispatch mode pushed on (and popped off) each thread's mode stack --------------------

_dispatch = _module("torch.utils._python_dispatch")
if TYPE_CHECKING:
    from torch.utils._python_dispatch import TorchDispatchMode
else:  # 2.6-2.15. ``object`` where missing, so the recorder class can still be defined (profile() refuses).
    TorchDispatchMode = _attribute(_dispatch, "TorchDispatchMode") or object
#: The mode on top of this thread's stack. 2.6-2.15.
current_dispatch_mode = _attribute(_dispatch, "_get_current_dispatch_mode")
push_dispatch_mode = _attribute(_dispatch, "_push_mode")
pop_dispatch_mode = _attribute(_dispatch, "_pop_mode")
#: The C calls under those three, without their Python frames (capture/extern_ops.py takes the op hook off around
#: each extern kernel call it records itself): how many modes this thread's stack holds (infra modes included), the
#: mode at a position, pop the top one, push one. 2.6-2.15; None where missing (the extern calls keep the hook then).
dispatch_stack_len = _attribute(torch._C, "_len_torch_dispatch_stack")
dispatch_stack_at = _attribute(torch._C, "_get_dispatch_stack_at")
pop_dispatch_stack = _attribute(torch._C, "_pop_torch_dispatch_stack")
push_dispatch_stack = _attribute(torch._C, "_push_on_torch_dispatch_stack")
#: And the two things that keep them on the hook (extern_ops.py): the thread's TorchFunctionMode stack (how many, the
#: mode at a position; a function mode handles ``torch.mm`` before dispatch and may run ops the hook must see), and
#: whether the Python dispatch key is excluded on this thread (``no_dispatch()``: no op reaches the hook at all).
function_stack_len = _attribute(torch._C, "_len_torch_function_stack")
function_stack_at = _attribute(torch._C, "_get_function_stack_at")
dispatch_key_excluded = _attribute(torch._C, "_dispatch_tls_is_dispatch_key_excluded")
#: The TorchFunctionMode ``torch.set_default_device()`` leaves on the stack for good: it only changes factory calls.
default_device_mode = _attribute(_module("torch.utils._device"), "DeviceContext")
#: Sets Dynamo's frame callback for this thread and returns the one it replaced; ``set_eval_frame(None)``
#: keeps Dynamo from tracing frames until it is put back. 2.6-2.15. 2.7+ wrap every TorchDispatchMode
#: subclass's ``__torch_dispatch__`` in ``torch._disable_dynamo`` (two Python frames, four eval-frame
#: calls: 1.3 µs per op measured on 2.13) unless the class's ``_should_skip_dynamo()`` returns False;
#: the op hook does that and sets the callback itself (capture/recorder.py).
set_eval_frame = _attribute(torch._C, "_dynamo.eval_frame.set_eval_frame")


def _forwards_to_op(self, /, *args, **kwargs):  # OpOverload.__call__ of 2.6-2.13, to compare bytecode with
    return self._op(*args, **kwargs)


_OpOverload = _attribute(torch, "_ops.OpOverload")
_overload_call = getattr(vars(_OpOverload).get("__call__") if _OpOverload is not None else None, "__code__", None)
#: Whether ``OpOverload.__call__`` only forwards to ``self._op`` (2.6-2.13; 2.15's checks a Python
#: dispatcher first): then the op hook calls ``_op``, a builtin, and skips a Python frame per op.
_OVERLOAD_CALL_FORWARDS = _overload_call is not None and (
    _overload_call.co_code,
    _overload_call.co_names,
    _overload_call.co_varnames,
) == (_forwards_to_op.__code__.co_code, _forwards_to_op.__code__.co_names, _forwards_to_op.__code__.co_varnames)


def op_callable(func):
    """What calling ``func`` (an aten OpOverload) amounts to: ``func._op`` where ``OpOverload.__call__`` is
    exactly ``return self._op(*args, **kwargs)`` (checked on its bytecode), else ``func`` itself."""
    if _OVERLOAD_CALL_FORWARDS and type(func) is _OpOverload:
        op = getattr(func, "_op", None)
        if op is not None:
            return op
    return func


# -- autograd Functions and activation checkpointing (capture/functions.py) -----------------------------


def function_apply():
    """``Function.apply`` as stored on the class, to wrap and to put back.

    2.6-2.13: a Python classmethod; 2.14.1 and 2.15: ``_C._FunctionBase.__dict__["apply"]``, a C
    ``classmethod_descriptor`` without ``__func__``. Both bind with :func:`bind_apply`.
    """
    return torch.autograd.Function.__dict__["apply"]


def bind_apply(descriptor, cls):
    """``cls.apply`` from what :func:`function_apply` returned: the descriptor protocol serves both kinds."""
    return descriptor.__get__(None, cls)


def set_function_apply(value) -> None:
    setattr(torch.autograd.Function, "apply", value)  # noqa: B010 - assigning a method is the point


def recomputation_hook():
    """The context manager class non-reentrant checkpointing enters around a recompute
    (``torch.utils.checkpoint._recomputation_hook``, 2.6-2.15); None, with one warning, without it."""
    hook = _attribute(_module("torch.utils.checkpoint"), "_recomputation_hook")
    if hook is None:
        _missing(
            "torch.utils.checkpoint._recomputation_hook",
            "ops recomputed by non-reentrant activation checkpointing are labelled fwd, not recompute",
        )
    return hook


# -- nn.Module paths (capture/modules.py) ---------------------------------------------------------------


def register_global_module_hooks(enter, exit_) -> list:
    """Global forward pre-hook and forward hook (``always_call``: it runs also when forward raises);
    their handles. 2.6-2.15 (``always_call`` since 2.1)."""
    from torch.nn.modules import module

    return [
        module.register_module_forward_pre_hook(enter),
        module.register_module_forward_hook(exit_, always_call=True),
    ]


#: True while Dynamo traces (the global module hooks must do nothing then). They are taken off while Dynamo
#: compiles (capture/compile_events.py); this covers a trace that starts without Dynamo's compile callbacks:
#: on 2.6 their path bookkeeping broke Dynamo's side-effect tracking ("... is already tracked for mutation").
#: 2.6-2.15.
is_compiling = _attribute(torch, "compiler.is_compiling") or (lambda: False)

#: ``torch.compile(module)`` returns an OptimizedModule holding the module under this attribute. 2.6-2.15.
COMPILED_MODULE_ATTRIBUTE = "_orig_mod"

# -- torch.compile: Dynamo and Inductor (capture/compiled.py, compile_events.py, inductor.py) -------------

# Dynamo never skips a frame for the op hook, on any release (but see
# :func:`compiled_code_runs_compiled_under_the_op_hook`). 2.6-2.10: Dynamo's check reads a flag only
# ``TorchDispatchMode.__enter__`` sets, and the hook is pushed with ``_push_mode``: Dynamo does not see it.
# 2.11-2.15: Dynamo walks the mode stack (``torch._dynamo.config.inline_torch_dispatch_torch_compile``, on by
# default) and skips a frame under a mode unless its ``ignore_compile_internals()`` (2.9+) returns True, which the
# op hook's does. Dynamo compiles under ``_disable_current_modes()`` on every release: the hook never sees the
# compiler's own ops. (tests/test_torch_compat.py checks it on the release it runs on.)


def compiled_code_runs_compiled_under_the_op_hook() -> bool:
    """Can a graph Dynamo compiled run under the op hook without failing its guards at every call?

    Dynamo compiles with the dispatch modes taken off, and its tensor guards compare each input's dispatch keys
    with the thread's: under the op hook those hold the Python keys a mode adds. 2.10-2.15 mask those keys in
    the comparison (``torch._C._dynamo.guards.set_is_in_mode_without_ignore_compile_internals``, pytorch PR
    164992, 2.10+: checked in the sources of 2.6.0 to 2.15.0). 2.6-2.9 do not: each call under a profile fails
    its guards and recompiles (checked on 2.6: a recompile per step, ``- 0/0:`` with no reason), up to Dynamo's
    recompile limit, after which Dynamo gives up on the function for good, also after the profile.
    """
    guards = _module("torch._C._dynamo.guards")
    return hasattr(guards, "set_is_in_mode_without_ignore_compile_internals")


def compiled_fx_graph_class():
    """Inductor's ``CompiledFxGraph``: every graph Inductor compiles is one, built with
    ``__init__(current_callable, graph, gm, ...)`` and run through ``__call__(self, inputs)``; its
    ``source_code``, ``fx_kwargs["is_backward"/"is_inference"]``, ``cache_key`` and ``current_callable``
    (the wrapper module's ``call``). In ``torch._inductor.output_code`` with that signature in 2.6, 2.13 and
    2.15 (checked); imports Inductor."""
    from torch._inductor.output_code import CompiledFxGraph

    return CompiledFxGraph


def loaded_wrapper_module(cache_key: str):
    """The Python module Inductor loaded a graph's wrapper code into, by the graph's ``cache_key``, or None:
    ``sys.modules["torch._inductor.runtime.compile_tasks." + key]`` (``_reload_python_module``), 2.6-2.15 (release
    sources checked)."""
    return sys.modules.get("torch._inductor.runtime.compile_tasks." + cache_key)


#: The class of an ATen overload (``torch.ops.aten.addmm.default``), what FX graph nodes call. ``torch._ops``,
#: 2.6-2.15.
OpOverload = torch._ops.OpOverload
HigherOrderOperator = torch._ops.HigherOrderOperator


#: Inductor config read when it compiles, set while a profile is installed (module -> key -> value):
#: - ``trace.provenance_tracking_level`` 1: Inductor records which graph nodes each kernel fused (the
#:   ``# [Provenance debug handles]`` comments and :func:`inductor_kernel_nodes`). 2.9-2.15; 2.6-2.8 have no
#:   such setting (:func:`inductor_tracks_provenance` is False; the setting is left out);
#: - ``fx_graph_cache`` / ``enable_autograd_cache`` off, so a graph is regenerated with that provenance rather
#:   than loaded from a cache. Both in 2.6, 2.13 and 2.15.
_PROFILING_COMPILE_CONFIG: dict[str, dict] = {
    "torch._inductor.config": {"trace.provenance_tracking_level": 1, "fx_graph_cache": False},
    "torch._functorch.config": {"enable_autograd_cache": False},
}


def _has_setting(config, dotted: str) -> bool:
    owner = config
    for part in dotted.split("."):
        if not hasattr(owner, part):
            return False
        owner = getattr(owner, part)
    return True


def profiling_compile_config() -> tuple:
    """``(config module, key, value)`` to set while a profile is installed (see
    :data:`_PROFILING_COMPILE_CONFIG`), the settings this release lacks left out; where compiled code cannot run
    compiled under the op hook (2.6-2.9), Dynamo's ``disable``: compiled functions run eagerly under the
    profile, and their compiled code and Dynamo's recompile budget are left as they were. Imports the config
    modules."""
    runs_eagerly = not compiled_code_runs_compiled_under_the_op_hook()
    return (((_module("torch._dynamo.config"), "disable", True),) if runs_eagerly else ()) + _settings_this_torch_has()


@functools.cache
def _settings_this_torch_has() -> tuple:
    """The settings of :data:`_PROFILING_COMPILE_CONFIG` this torch has. Looked up once per process: which
    settings a torch has never changes, and asking its config modules (their ``__getattr__``) took ~60 us at
    each profile's start."""
    settings = []
    for module_name, values in _PROFILING_COMPILE_CONFIG.items():
        config = _module(module_name)
        settings += [(config, key, value) for key, value in values.items() if _has_setting(config, key)]
    return tuple(settings)


def inductor_tracks_provenance() -> bool:
    """Can Inductor say which graph nodes each kernel fused (``trace.provenance_tracking_level``)? 2.9-2.15;
    2.6-2.8: no (release sources 2.6.0 to 2.15.0 checked), so kernel rows there have no fused ops."""
    return _has_setting(_module("torch._inductor.config"), "trace.provenance_tracking_level")


def inductor_kernel_nodes() -> dict:
    """A copy of Inductor's ``"kernel:handle" -> [post-grad node names]`` map of the graph compiling now
    (``torch._inductor.debug._inductor_triton_kernel_to_post_grad_node_info``, filled with provenance
    tracking on, read inside ``CompiledFxGraph.__init__``). 2.7-2.15 (filled from 2.9, with provenance tracking);
    2.6 has none: ``{}`` (release sources 2.6.0 to 2.15.0 checked)."""
    nodes = _attribute(_module("torch._inductor.debug"), "_inductor_triton_kernel_to_post_grad_node_info")
    return dict(nodes or {})


def current_compile_id() -> str:
    """Dynamo's id of the compile in progress ("0/1"), "" outside one.
    ``torch._guards.CompileContext.current_compile_id()``, 2.6-2.15."""
    from torch._guards import CompileContext

    compile_id = CompileContext.current_compile_id()
    return "" if compile_id is None else str(compile_id)


def compile_callbacks():
    """Dynamo's ``callback_handler``: ``register_/remove_start_callback``, ``register_/remove_end_callback``
    and the ``start_callbacks`` / ``end_callbacks`` lists, around each outermost compile. 2.6-2.15
    (``torch._dynamo.callback``). What a callback gets: 2.8+ a ``CallbackArgs`` (``callback_trigger.name``
    ``DYNAMO`` / ``LAZY_BACKWARD``, ``compile_id``); 2.6-2.7 no argument (release sources checked; run on 2.6)."""
    from torch._dynamo.callback import callback_handler

    return callback_handler


def compilation_metrics() -> list:
    """Dynamo's ``CompilationMetrics`` of this process's compiles (``torch._dynamo.utils.get_compilation_metrics``,
    2.6-2.15): ``compile_id``, ``co_name``, ``co_filename``, ``co_firstlineno``, ``start_time_us``, ``is_forward``,
    the ``*_cumulative_compile_time_us`` phases and the cache counts; ``recompile_reason`` 2.7-2.15. Read each with
    ``getattr(m, name, None)``: fields come and go between releases. ``[]`` where torch fails to give them."""
    try:
        from torch._dynamo.utils import get_compilation_metrics

        return list(get_compilation_metrics())
    except Exception:  # a torch without them: compile events keep their times, without names or reasons
        return []


def graph_break_logger():
    """Dynamo's ``graph_breaks`` artifact logger (``torch._dynamo.symbolic_convert.graph_break_log``; message
    "... in user code at F:L\nGraph Break Reason: R"), or None. 2.6, 2.13, 2.15 (checked)."""
    return _attribute(_module("torch._dynamo.symbolic_convert"), "graph_break_log")


def dynamo_never_compile(code, recursive: bool = False) -> None:
    """Tell Dynamo never to compile ``code`` as a frame of its own (``torch._dynamo.eval_frame.skip_code``:
    defined there 2.7+, imported there from ``torch._C._dynamo.eval_frame`` in 2.6; 2.6, 2.13, 2.15 checked);
    ``recursive``: nor any frame it calls (``set_code_exec_strategy`` with FrameAction.SKIP for the frame and its
    callees: 2.13, 2.15 checked; ``code`` alone where torch lacks it, as 2.6 does)."""
    from torch._dynamo import eval_frame

    set_strategy = getattr(eval_frame, "set_code_exec_strategy", None)
    if recursive and set_strategy is not None:
        from torch._dynamo.types import FrameAction, FrameExecStrategy

        set_strategy(code, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))
        return
    skip = getattr(eval_frame, "skip_code", None)
    if skip is not None:
        skip(code)


# -- GPU path (capture/gpu/) and importers ---------------------------------------------------------------

_warned: set = set()


def _missing(name: str, consequence: str) -> None:
    """One RuntimeWarning per missing optional name per process."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"pyprof_live: torch {torch.__version__} has no {name}; {consequence}", RuntimeWarning, stacklevel=3
        )


def torch_profiler_running() -> bool:
    """Is torch.profiler (or autograd.profiler) recording now? A module flag torch flips; read each call.
    2.6-2.15."""
    running = getattr(torch.autograd.profiler, "_is_profiler_enabled", None)
    if running is None:
        _missing(
            "torch.autograd.profiler._is_profiler_enabled", "a torch.profiler running at the same time is not detected"
        )
        return False
    return bool(running)


def demangle(name: str) -> str:
    """The C++ runtime's demangling of ``name`` (c10::demangle: ``__cxa_demangle``); unchanged without it.
    ``torch._C._demangle``, 2.6-2.15."""
    demangler = getattr(torch._C, "_demangle", None)
    if demangler is None:
        _missing("torch._C._demangle", "kernel names stay mangled")
        return name
    return demangler(name)


def has_primary_context(device: int) -> bool:
    """Has this process made a CUDA context on ``device``? True when torch cannot tell.
    ``torch._C._cuda_hasPrimaryContext``: CUDA builds 2.6-2.15 (CPU builds have none, and no device)."""
    check = getattr(torch._C, "_cuda_hasPrimaryContext", None)
    if check is None:
        _missing(
            "torch._C._cuda_hasPrimaryContext",
            "the profile's stop synchronises every visible device, creating a context on unused ones",
        )
        return True
    return check(device)


# -- op schemas (formulas, render) -----------------------------------------------------------------------


def op_schema(name: str, overload: str):
    """torch's FunctionSchema of ``name.overload`` (``"aten::add"``, ``"Tensor"``; ``""`` = the default
    overload, not ``"default"``), or None where this torch has no such op. ``torch._C._get_schema``, 2.6-2.15."""
    try:
        return torch._C._get_schema(name, overload)
    except RuntimeError:  # "Found no matching schema"
        return None


# -- flop counts: torch.utils.flop_counter, so totals equal FlopCounterMode's (formulas) --------------------


def flop_counter():
    """torch.utils.flop_counter: ``mm_flop``, ``bmm_flop``, ``conv_flop_count`` keep their signatures 2.6-2.15."""
    from torch.utils import flop_counter

    return flop_counter


def _query_heads(query_shape, shape) -> tuple:
    """``shape`` (batch, kv heads, seq, dim) with the query's head count, for a head count that divides it."""
    heads, kv_heads = query_shape[1], shape[1]
    return (shape[0], heads, *shape[2:]) if kv_heads and heads != kv_heads and heads % kv_heads == 0 else shape


def sdpa_flop_count(query_shape, key_shape, value_shape) -> int:
    """Forward attention flops; grouped-query key/value heads are broadcast to the query's first.

    2.6-2.11's counter asserts equal head counts; 2.12+ broadcast them themselves: every key/value
    head serves heads/kv_heads query heads, so the count is that of full-headed key/value in every release.
    """
    return flop_counter().sdpa_flop_count(
        query_shape, _query_heads(query_shape, key_shape), _query_heads(query_shape, value_shape)
    )


def sdpa_backward_flop_count(grad_shape, query_shape, key_shape, value_shape) -> int:
    """Backward attention flops; grouped-query heads broadcast as in :func:`sdpa_flop_count`."""
    return flop_counter().sdpa_backward_flop_count(
        grad_shape, query_shape, _query_heads(query_shape, key_shape), _query_heads(query_shape, value_shape)
    )


# -- the supported range ---------------------------------------------------------------------------------

#: What live capture cannot work without: (name, what this module holds for it).
_REQUIRED = (
    ("torch._C._autograd._get_sequence_nr", peek_sequence_nr),
    ("torch._C._current_graph_task_id", current_graph_task_id),
    ("torch._C._current_autograd_node", current_autograd_node),
    ("torch.Tensor._is_view", is_view),
    ("torch.utils._python_dispatch.TorchDispatchMode", None if TorchDispatchMode is object else TorchDispatchMode),
    ("torch.utils._python_dispatch._get_current_dispatch_mode", current_dispatch_mode),
    ("torch.utils._python_dispatch._push_mode", push_dispatch_mode),
    ("torch.utils._python_dispatch._pop_mode", pop_dispatch_mode),
    ("torch._C._dynamo.eval_frame.set_eval_frame", set_eval_frame),
)
_told_newer = False


def require_supported() -> None:
    """Called when a profile is created: raise :class:`UnsupportedTorchError` naming the supported range
    for a torch older than it or missing what capture needs; warn once per process for a newer torch."""
    global _told_newer
    missing = [name for name, value in _REQUIRED if value is None]
    if TORCH < OLDEST or missing:
        why = f"it lacks {', '.join(missing)}" if missing else "it is older than the supported range"
        raise UnsupportedTorchError(
            f"pyprof_live needs {supported_range()} for live capture; torch {torch.__version__} cannot be used "
            f"({why}). Upgrade torch (pip install 'torch>={OLDEST[0]}.{OLDEST[1]}'); loading traces and "
            "exports works with any torch."
        )
    if TORCH > NEWEST_TESTED and not _told_newer:
        _told_newer = True
        warnings.warn(
            f"pyprof_live was tested with {supported_range()}; torch {torch.__version__} is newer. Profiling "
            "goes ahead, but results may be incomplete where torch changed its internals: please report problems.",
            RuntimeWarning,
            stacklevel=3,
        )
