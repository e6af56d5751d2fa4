"""A capture session: the hooks of one live profile, what they record, and start/stop/step.

One session records at a time. Starting installs every hook (op dispatch mode, module hooks,
Function/checkpoint scopes, thread start hook, torch.compile watch); stopping removes them all,
also when the profiled code raises, and turns the raw tuples recorded since start into records,
appended to the ``Records`` and ``meta`` the session was given (those of its LiveProfile).
"""

from __future__ import annotations

import itertools
import operator
import sys
import threading
import time
import warnings
import weakref
from dataclasses import dataclass
from typing import Any

import torch

from .. import torch_compat
from ..errors import CaptureError
from ..gcpause import paused_gc
from ..records import NO_LINK, OpRecord, RangeRecord, Records
from . import annotations as nvtx_annotations
from . import callsite, compiled, fx_graphs
from .compile_events import CompileEvents
from .context import context
from .finalize import build_op_records, undecided_direction
from .functions import FunctionScopes
from .gpu import GpuBackend, select_backend, widen_thread_ids
from .modules import ModuleNames
from .overhead import dispatch_cost_ns
from .recorder import OpRecorder, backward_facts, host_direction, warn_cap

_now = time.perf_counter_ns
_active: list = []  # the session that is recording, if any (one per process)
_start_lock = threading.Lock()
_told_eager: list = []  # the eager-run warning was given (once per process)
#: Stopped sessions whose compiled-code calls are not yet records (see CaptureSession.stop).
_unbuilt_compiled: weakref.WeakSet = weakref.WeakSet()

#: What ``profile(gpu=...)`` accepts.
GPU_OPTIONS = ("auto", "cupti", "off")


@dataclass(slots=True)
class FunctionScope:
    """A wrap()'d function or autograd Function call, open while it runs."""

    name: str
    mod: str
    start: int
    tid: int
    dir: str
    module: str
    layers: tuple
    frames: tuple
    op_id: int = NO_LINK  # id pushed to the GPU backend, so kernels launched directly by it link here
    end: int = 0
    seq: int = NO_LINK
    #: An autograd Function's node number, taken when apply starts (also when its output needs no
    #: grad and so shows no node): no aten op owns it (finalize.py).
    node_number: int = NO_LINK


class CaptureSession:
    """The capture state of one live profile, over all its start/stop segments.

    The hooks call back into it (``add_range``, ``open_function``, ``hit_cap``...); the records it
    builds at each stop go into ``records`` and its notes into ``meta``.
    """

    def __init__(
        self,
        records: Records,
        meta: dict,
        steps=None,
        stack_depth: int = 2,
        max_ops: int = 1_000_000,
        gpu: str = "auto",
    ):
        if gpu not in GPU_OPTIONS:
            raise ValueError(f'gpu must be "auto", "cupti" or "off", not {gpu!r}')
        # Weak: the session's hooks hold it in reference cycles (bound methods, CompiledCapture), and a
        # strong reference would keep every record of a dropped profile alive until the garbage
        # collector's next full pass, which then walks them all; the LiveProfile holds the records.
        self._records = weakref.ref(records)
        self.meta = meta
        self.steps = None if steps is None else frozenset(steps)
        self.stack_depth = _count("stack_depth", stack_depth)
        self.max_ops = _count("max_ops", max_ops)
        self.gpu = gpu
        self.raw_ops: list = []
        self.op_infos: list = []
        #: Ids of op and function records (pushed to the GPU backend), unique over every start/stop.
        self.next_id = itertools.count().__next__
        self.raw_functions: list = []
        self.raw_ranges: list = []
        self._module_names = ModuleNames(meta["warnings"])
        self.param_names = self._module_names.param_names  # id(parameter) -> name, for AccumulateGrad
        self.recording = False
        self._step = 0
        self._step_start = 0
        self._ops_at_step_start = 0
        self._recorder: OpRecorder | None = None
        self._gpu: GpuBackend | None = None
        self._thread_profile_hook: Any = None  # the user's threading.setprofile() hook, if any
        self._mode_pushed = False  # the op hook is on the starting thread's dispatch-mode stack
        self._hook_thread = 0  # the thread whose dispatch-mode stack holds the op hook
        self._scopes = FunctionScopes()
        self._compiled = compiled.CompiledCapture(self)
        self._compile_events = CompileEvents(self._pause_hooks, self._resume_hooks, self.stack_depth)
        self._start_peek = 0
        self._start_tid = 0
        self._started_once = False
        self._last_peek: dict = {}  # tid -> autograd counter value last seen (finalize.py)
        self._resyncs: list = []  # (raw op index, tid, counter value) where recording (re)started
        self._cap_hit = False
        #: (hooks' time after the last op, the stopping thread) of a stop() whose records are built on
        #: first read (:meth:`complete`); None when nothing waits.
        self._unbuilt: tuple | None = None
        self._completing = threading.Lock()
        self._frame_cache: dict = {}
        self._off_for_compile: set = set()  # threads whose op hook is off their mode stack while torch compiles

    @property
    def records(self) -> Records:
        """The records this session appends to (its LiveProfile's)."""
        records = self._records()
        if records is None:
            raise CaptureError("the profile this capture session recorded into no longer exists")
        return records

    @property
    def active(self) -> bool:
        """Between start() and stop()."""
        return self in _active

    # -- control -------------------------------------------------------------------------------

    def start(self) -> None:
        """Install every hook and start recording (unless a step schedule says to wait)."""
        _complete_compiled()  # before this profile's hooks change the compiled graphs' state they read
        self.complete()  # the last segment's records first: the record cap counts them, numbering carries on
        with _start_lock:
            if _active:
                raise CaptureError(
                    "a pyprof_live profile is already recording; nested or concurrent profile() is not supported"
                )
            _active.append(self)
        if torch_compat.torch_profiler_running():
            # On a GPU the backend says why it collects no kernels (torch.profiler owns CUPTI).
            self.meta["warnings"].append(
                "torch.profiler was recording when this profile started: host times include its own recording"
            )
        try:
            self._gpu = select_backend(self.gpu, self.meta["warnings"])
            nvtx_annotations.install()
            peek = torch_compat.peek_sequence_nr()
            if not self._started_once:  # sequence numbers stay relative to the first start
                self._start_peek, self._start_tid, self._started_once = peek, threading.get_ident(), True
            context.reset()  # a fresh thread context: no stale module/layer state from before
            dynamo_used = "torch._dynamo.eval_frame" in sys.modules  # before the compile hooks import it
            self._module_names.graph_calls.clear()  # the last segment's records are built (complete() above)
            self._module_names.install()
            self._scopes.install()
            self._compile_events.install()  # takes our hooks off while torch.compile compiles
            self._compiled.install()
            if not torch_compat.compiled_code_runs_compiled_under_the_op_hook():
                self._note_compiled_code_runs_eagerly(dynamo_used)
            # The op hook and a Function's wrapper run the user's code inside them: only they are skipped.
            compiled.never_compiled((OpRecorder.__torch_dispatch__, *self._scopes.hook_functions()))
            # The module hooks run none: neither they nor what they call is ever compiled (naming a module first
            # seen walks nn.Module.named_modules, which Dynamo compiled, breaking twice, inside a compiled DDP step).
            compiled.never_compiled((self._module_names._enter, self._module_names._exit), recursive=True)
            dispatch_cost_ns()  # calibrated once, after Dynamo was imported and before any op is recorded
            if self._gpu is not None:
                self._gpu.start()
            self._recorder = OpRecorder(self, self._gpu)
            nvtx_annotations.sink.session = self
            self._thread_profile_hook = threading.getprofile()
            threading.setprofile(self._enter_new_thread)
            self._step_start = _now()
            self._ops_at_step_start = 0
            self._set_recording(self.steps is None or self._step in self.steps)
        except BaseException:
            try:
                self._remove_hooks()
            finally:
                if self._gpu is not None:
                    self._gpu.stop()  # releases CUPTI, so a later profile can collect again
            raise

    def stop(self) -> None:
        """Remove every hook and build the records; safe to call after an exception. On another thread
        than the one that started the profile, CaptureError (see :meth:`_check_hook_thread`)."""
        if not self.active:
            raise CaptureError("this profile is not recording (stop() without start())")
        self._check_hook_thread("stop()")
        self._back_after_compile()
        self._close_step()
        hooks_after_last_op = context.hook_ns if self.recording else 0  # removing the hooks resets it
        try:
            self._remove_hooks()
        finally:
            gpu_capture = self._gpu.stop() if self._gpu is not None else None
        if gpu_capture is None:
            # Built on first read, as torch.profiler builds its events: a CPU profile holds only its raw
            # tuples until then. GPU data is finished here, while the CUPTI buffers are as recorded, and
            # so are compile events: Dynamo's metrics they read are a bounded buffer of the process's.
            self.records.compiles.extend(self._compile_events.records(self._compiled.graph_infos))
            self._unbuilt = (hooks_after_last_op, threading.get_ident())
            if self._compiled.has_calls():
                # Its records read the compiled graphs' shared state (GraphInfo), which only a recording
                # profile changes: every profile's start() builds them first (_complete_compiled).
                _unbuilt_compiled.add(self)
        else:
            self._finalize(gpu_capture, hooks_after_last_op)

    def complete(self) -> None:
        """Build what the last stop() left for the first read of the records (its op, kernel-call and
        graph-call records, then those of the ops each Inductor kernel call fused); LiveProfile.records calls
        it, and every profile's start() (see _complete_compiled)."""
        with self._completing:
            _unbuilt_compiled.discard(self)
            if self._unbuilt is not None:
                hooks_after_last_op, stop_thread = self._unbuilt
                self._unbuilt = None
                if self._records() is None:  # its profile is gone: nobody can read these records
                    self._drop_raw()
                    return
                self._finalize(None, hooks_after_last_op, stop_thread)
            self._compiled.expand_fused(self.records.ops)

    def step(self) -> None:
        """Mark the end of one training iteration; with ``steps=``, only chosen ones are recorded."""
        self._back_after_compile()
        if self.recording != (self.steps is None or self._step + 1 in self.steps):
            self._check_hook_thread("step()")  # the op hook comes off or goes on: only its thread can
        self._close_step()
        self._step += 1
        self._step_start = _now()
        self._ops_at_step_start = len(self.raw_ops)
        self._set_recording(self.steps is None or self._step in self.steps)

    def _set_recording(self, on: bool) -> None:
        """Record or not; between recorded steps the op hook is taken off this thread's mode stack, so
        those steps run at full speed (it stays, inert, if another mode was pushed above it)."""
        if on and self.recording:  # each step() of a recording profile: every flag is set already
            return
        recorder = self._recorder
        if on and not self.recording and recorder is not None:
            # Nodes numbered while not recording (between start/stop segments, in steps not
            # recorded) belong to no recorded op: numbering resumes from here (finalize.py).
            self._resyncs.append((len(self.raw_ops), threading.get_ident(), torch_compat.peek_sequence_nr()))
            context.hook_ns = 0  # hook time of the steps not recorded is no recorded op's
        self.recording = on
        self._compiled.recording = on
        if recorder is not None:
            recorder.recording = on
            if on and not self._mode_pushed:
                torch_compat.push_dispatch_mode(recorder)
                self._mode_pushed = True
                self._hook_thread = threading.get_ident()
            elif not on and self._mode_pushed and torch_compat.current_dispatch_mode() is recorder:
                torch_compat.pop_dispatch_mode()
                self._mode_pushed = False
        if self._gpu is not None:
            self._gpu.set_recording(on)  # GPU work of steps not recorded is dropped too

    def _close_step(self) -> None:
        if self.recording and len(self.raw_ops) > self._ops_at_step_start:
            self.add_range(f"step {self._step}", self._step_start, _now(), self._start_tid, "step")

    def _remove_hooks(self) -> None:
        """Undo every hook; each removal runs even if an earlier one failed (the first error is raised)."""
        recorder = self._recorder
        self._recorder = None
        self.recording = False
        removals = [
            lambda: self._take_off(recorder),
            self._restore_thread_hook,
            lambda: setattr(nvtx_annotations.sink, "session", None),
            self._compile_events.remove,
            self._compiled.remove,
            self._scopes.remove,
            self._module_names.remove,
            # torch skips always_call forward hooks on KeyboardInterrupt: the module stack could keep
            # the user's model alive (and its GPU memory, in a notebook) until the next profile.
            context.reset,
        ]
        error = None
        for remove in removals:
            try:
                remove()
            except Exception as e:  # noqa: PERF203 - every hook must come off
                error = error or e
        self._off_for_compile.clear()  # the op hook is off every stack now
        with _start_lock:
            if self in _active:
                _active.remove(self)
        if error is not None:
            raise error

    def _check_hook_thread(self, what: str) -> None:
        """The op hook sits on the dispatch-mode stack of the thread that pushed it, and a thread's
        stack can be changed only from that thread: ``what`` (stop() or a step() that starts or ends
        recording) called on another thread while that one runs would leave the hook there for good
        (every later op of that thread through Python dispatch, torch.compile skipping its frames).
        So it raises CaptureError and changes nothing: the profile records on, and its own thread can
        stop it. Once that thread has ended its stack is gone, and any thread may stop the profile."""
        here = threading.get_ident()
        if self._mode_pushed and self._hook_thread != here and self._hook_thread in sys._current_frames():
            raise CaptureError(
                f"{what} was called on thread {here}, but this profile's op hook is on the dispatch-mode stack "
                f"of thread {self._hook_thread}, which started it and is still running: only that thread can take "
                f"the hook off, so call {what} there (leaving the `with` block does); the profile keeps recording"
            )

    def _take_off(self, recorder) -> None:
        if recorder is None:
            return
        recorder.detach()  # threads started while recording keep it on their stack: make it inert
        if not self._mode_pushed:
            return
        self._mode_pushed = False
        if self._hook_thread != threading.get_ident():  # its thread has ended (_check_hook_thread): no stack left
            return
        # Modes the user entered after start() stay, in their order: only the op hook comes out.
        above = []
        try:
            while (mode := torch_compat.current_dispatch_mode()) is not None and mode is not recorder:
                above.append(torch_compat.pop_dispatch_mode())
            if mode is recorder:
                torch_compat.pop_dispatch_mode()
        except Exception:  # the user's code left the mode stack broken; the recorder is inert now
            pass
        finally:
            for mode in reversed(above):
                torch_compat.push_dispatch_mode(mode)

    def _restore_thread_hook(self) -> None:
        """Put back the thread start hook found at start(), unless the user has set their own since."""
        if threading.getprofile() == self._enter_new_thread:
            threading.setprofile(self._thread_profile_hook)

    def _enter_new_thread(self, frame, event, arg):
        """Runs first in each thread started while recording: put the op hook on that thread too.

        The mode stays on that thread's stack until the thread ends (a thread's mode stack can only be
        changed from the thread itself); after stop() it passes every op through untouched.
        """
        previous = self._thread_profile_hook
        sys.setprofile(previous)  # the user's own per-thread profiler, if any, carries on
        recorder = self._recorder
        if recorder is not None:
            torch_compat.push_dispatch_mode(recorder)
        if previous is not None:
            previous(frame, event, arg)

    # -- callbacks from hooks --------------------------------------------------------------------

    def add_range(self, name: str, start: int, end: int, tid: int, kind: str) -> None:
        if self.recording:
            self.raw_ranges.append(RangeRecord(name=name, start=start, end=end, tid=tid, kind=kind))

    def open_function(self, name: str, mod: str) -> FunctionScope:
        ctx = context
        recorder = self._recorder
        if torch_compat.current_graph_task_id() == -1:
            direction = host_direction(ctx.host_dir, torch.is_grad_enabled(), ctx.module)
        else:
            direction = backward_facts(ctx, self.param_names)[0]
        scope = FunctionScope(
            name=name,
            mod=mod,
            start=_now(),
            tid=threading.get_ident(),
            dir=direction,
            module=ctx.module,
            layers=ctx.layers,
            frames=callsite.capture(self.stack_depth, skip=3) if self.stack_depth and recorder else (),
            op_id=self.next_id(),
        )
        self.raw_functions.append(scope)
        if self._gpu is not None:
            self._gpu.push(scope.op_id)
        return scope

    def close_function(self, scope: FunctionScope) -> None:
        scope.end = _now()
        if self._gpu is not None:
            self._gpu.pop()

    def hit_cap(self) -> None:
        if not self._cap_hit:
            self._cap_hit = True
            self.meta["truncated"] = True
            self.meta["warnings"].append(f"record cap of {self.max_ops:,} ops reached; later ops were not recorded")
            warn_cap(self.max_ops)

    def _pause_hooks(self) -> None:
        """torch.compile is compiling: the Python hooks come off, so Dynamo neither traces them into a
        graph nor guards on them (the graphs and guards are those of a run without the profile)."""
        self._module_names.suspend()
        self._scopes.suspend()
        # torch compiles with the dispatch modes off (ignore_compile_internals), except where it forgets to: its
        # DDP path (DDPOptimizer, 2.13) traces with the op hook on, which recorded the compile's fake-tensor ops
        # (1158 prim::device, 298 empty in a compiled DDP GPT's first step) as the user's. Off this thread's stack
        # while compiling, as torch would have had it.
        if self._recorder is not None and torch_compat.current_dispatch_mode() is self._recorder:
            torch_compat.pop_dispatch_mode()
            self._off_for_compile.add(threading.get_ident())

    def _back_after_compile(self) -> None:
        """The op hook back on this thread's stack if a compile took it off. Dynamo tells only the outermost of
        concurrent compiles' end, on the thread that ends last: a thread whose compile ended earlier gets its hook
        back at its next step() or stop()."""
        here = threading.get_ident()
        if here in self._off_for_compile:
            self._off_for_compile.discard(here)
            if self._recorder is not None:
                torch_compat.push_dispatch_mode(self._recorder)

    def _note_compiled_code_runs_eagerly(self, dynamo_used: bool) -> None:
        """torch 2.6-2.9: torch.compile'd code runs eagerly under the profile (torch_compat.profiling_compile_config
        turns Dynamo off while it is installed). ``meta["compiled_code_runs_eagerly"]``; where torch.compile was
        used before the profile started, a warning in meta and, once per process, a RuntimeWarning."""
        self.meta["compiled_code_runs_eagerly"] = True
        if not dynamo_used:
            return
        message = (
            f"torch {torch.__version__}: torch.compile'd code runs eagerly under pyprof_live.profile() (this torch's "
            "Dynamo would recompile it at every call under the profile's dispatch mode); with torch 2.10 or later "
            "it runs compiled and each Inductor kernel call is a row"
        )
        self.meta["warnings"].append(message)
        if not _told_eager:
            _told_eager.append(True)
            warnings.warn("pyprof_live: " + message, RuntimeWarning, stacklevel=4)

    def _resume_hooks(self) -> None:
        self._back_after_compile()
        if self.active:
            self._module_names.resume()
            self._scopes.resume()

    # -- records ---------------------------------------------------------------------------------

    def _drop_raw(self) -> None:
        self.raw_ops.clear()
        self._resyncs.clear()
        self.raw_functions.clear()
        self.raw_ranges.clear()
        self._compiled.drop_calls()

    @paused_gc()
    def _finalize(self, gpu_capture, hooks_after_last_op: int = 0, stop_thread: int | None = None) -> None:
        """Turn what this start/stop recorded into records, appended to earlier ones; the raw
        tuples are dropped (the records hold everything, and keeping both doubled the memory).
        ``hooks_after_last_op``: the hooks' time after this thread's last op (the outermost modules'
        exits), which no later op carries: that op takes it (``stop_thread``: the thread that stopped, by
        default this one)."""
        function_numbers = {(scope.tid, scope.node_number) for scope in self.raw_functions if scope.node_number >= 0}
        ops = build_op_records(
            self.raw_ops,
            self.op_infos,
            self._start_peek,
            self._start_tid,
            self._last_peek,
            self._frame_cache,
            function_numbers,
            self._resyncs,
            dispatch_cost_ns(),
            fx_graphs.Attribution(self._module_names.graph_calls, self.stack_depth, self._frame_cache) or None,
        )
        if hooks_after_last_op:
            here = threading.get_ident() if stop_thread is None else stop_thread
            last = next((op for op in reversed(ops) if op.tid == here), None)
            if last is not None:
                last.overhead += hooks_after_last_op
        for scope in self.raw_functions:
            ops.append(
                OpRecord(
                    name=scope.name,
                    start=scope.start,
                    end=scope.end or _now(),
                    tid=scope.tid,
                    kind="function",
                    seq_thread=scope.tid,
                    dir=scope.dir or undecided_direction(scope.seq if scope.seq >= 0 else NO_LINK),
                    seq=scope.seq - self._start_peek if scope.seq >= 0 else NO_LINK,
                    module=scope.module,
                    layer=scope.layers,
                    mod=scope.mod,
                    external_id=scope.op_id,
                    callsite=callsite.format_frames(scope.frames, self._frame_cache),
                )
            )
        ops.extend(self._compiled.build_records(ops))
        records = self.records
        records.ops.extend(ops)
        records.ranges.extend(self.raw_ranges)
        records.compiles.extend(self._compile_events.records(self._compiled.graph_infos))
        self._drop_raw()
        if gpu_capture is not None:
            widen_thread_ids(gpu_capture, {op.tid for op in records.ops})
            for name in ("apis", "kernels", "memops"):
                getattr(records, name).extend(getattr(gpu_capture.records, name))
            known = {d.id for d in records.devices}
            records.devices.extend(d for d in gpu_capture.records.devices if d.id not in known)
            self.meta.update(gpu_capture.meta)
            if gpu_capture.incomplete:
                self.meta["warnings"].append(f"GPU data is incomplete: {gpu_capture.incomplete}")


def _count(name: str, value) -> int:
    """``value`` as an int (a numpy integer too), 0 or more: the hooks compare and slice with it."""
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {value!r}") from None
    if count < 0:
        raise ValueError(f"{name} must be 0 or more, not {count}")
    return count


def _complete_compiled() -> None:
    """Build the records of every stopped profile whose compiled-code calls wait for a first read: they
    read the graphs' GraphInfo (module roots, per-site caches), which the next recording profile may change."""
    for session in list(_unbuilt_compiled):
        session.complete()
