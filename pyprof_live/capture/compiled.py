"""torch.compile'd code under a profile: it runs compiled, and each Inductor kernel call is a record.

While a profile is installed (torch 2.10+; on 2.6-2.9 compiled code runs eagerly under a profile:
``torch_compat.compiled_code_runs_compiled_under_the_op_hook``):
- the op hook ignores compile internals (``OpRecorder.ignore_compile_internals``): Dynamo compiles
  as it would without the profile, and at run time the hook sees what the compiled code still
  dispatches (extern calls such as ``aten::addmm`` out=); the profile's Python hooks come off
  while the compiler runs (``compile_events.py``), so no graph and no guard ever holds them;
- graphs compiled under the profile are compiled with Inductor's provenance tracking, and the
  FX-graph and AOTAutograd caches are bypassed, so Inductor regenerates each graph with its node
  metadata (the kernels themselves still come from its kernel cache: no C++/Triton rebuild);
  ``inductor.py`` reads which ops each kernel call fused;
- on a graph's first call, the kernels of its wrapper module are wrapped: each call is timed and
  keyed by its wrapper line (a kernel can be called from several lines; a static graph's C++ kernels by
  ``_hook.KernelCall``, the same in C, where the extension is built), a Triton launch pushes an
  external correlation id so CUPTI's kernel record links to it, and extern calls are timed so the
  aten ops the hook records inside them get their node's module and call site. stop() puts every
  wrapped kernel back.
A graph compiled before the profile started still runs compiled and its kernels are still rows;
which ops they fused is not known then (Inductor kept no provenance), and the report says so.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
import threading
import time
import warnings
import weakref
from bisect import bisect_left, bisect_right
from collections import defaultdict
from types import FrameType

import torch

from .. import torch_compat
from ..gcpause import paused_gc
from ..records import COMPILED, FUSED, GRAPH_CALL, NO_LINK, OpRecord
from . import callsite, extern_ops, inductor
from . import recorder as _recorder_module
from .context import context
from .finalize import to_arg
from .recorder import host_direction

_now = time.perf_counter_ns
_getframe = sys._getframe
_get_ident = threading.get_ident
_graph_task = torch_compat.current_graph_task_id
_peek_seq = torch_compat.peek_sequence_nr
_grad_enabled = torch.is_grad_enabled
_Tensor = torch.Tensor
#: Tells the warnings module its filters changed (a private function of CPython's; absent: nothing to tell).
_filters_mutated = getattr(warnings, "_filters_mutated", lambda: None)

#: What ``warnings.filterwarnings("ignore", message=..., category=UserWarning)`` would put in ``warnings.filters``
#: for torch's warning at each call of a compiled module while global module hooks exist (ours are the
#: profile's own). Built once: filterwarnings compiles the message and looks for an equal filter to replace at
#: each profile's start; this one is put in front and taken out again.
_GLOBAL_HOOKS_FILTER = (
    "ignore",
    re.compile(r"Using `torch\.compile\(module\)` when there are global hooks", re.I),
    UserWarning,
    None,
    0,
)

#: Name of the records of compiled graph calls (kind GRAPH_CALL; their ``graph`` says which graph).
GRAPH_CALL_NAME = "compiled graph"
#: GraphInfo of graphs compiled while a profile was installed: id(CompiledFxGraph) -> (weakref, info).
#: Kept across profiles of a process: a graph compiled under one profile is known to the next.
_graphs: dict = {}
#: Dynamo compile id's frame ("0" of "0/1") -> roots resolved for it (see GraphInfo.roots).
_roots: dict = {}


def _forget(key):
    return lambda _: _graphs.pop(key, None)


class GraphRun:
    """A compiled graph while it is instrumented: its info and the facts of its current call."""

    __slots__ = ("dir", "info", "metas", "module", "optimizer", "roles", "undo")

    #: ``metas``: (id of the caller's code, instruction offset) -> (wrapper line, argument shapes, the
    #: code, held so its id stays its own, a serial number no other site has). Keyed by the offset because
    #: a frame's ``f_lineno`` decodes its code's line table from the start, and by the code's id because
    #: hashing a code object hashes its constants and names, uncached: ~2.6 us per kernel call for a
    #: wrapper's long ``Runner.call``.

    def __init__(self, info, optimizer: bool):
        self.info = info
        self.optimizer = optimizer  # compiled from an optimizer's step(): its kernels are dir "opt"
        self.dir = "fwd"  # of the current call
        self.module = ""  # an optimizer graph: the module all the parameters it updates are in
        self.roles: dict = {}  # Triton kernel -> role of each argument, from its signature
        #: call site -> (line, argument shapes, code, serial); shapes of static graphs only. The graph's,
        #: kept for later profiles (a call site's line never changes, nor a static graph's shapes).
        self.metas: dict = info.call_sites
        self.undo: list = []


class CompiledCapture:
    """Compiled-code hooks of one capture session and what they record."""

    def __init__(self, session):
        # A proxy: the session holds this capture, and a strong hold back made the two a reference cycle,
        # so a dropped profile's records waited for a garbage collection inside a later profiled step.
        self.session = weakref.proxy(session)
        self.recording = False
        self.kernel_calls: list = []  # (run, kernel, line, start, end, tid, dir, op id, arg shapes, own ns)
        self.extern_calls: list = []  # (run, line, start, end, tid)
        self.graph_calls: list = []  # (run, start, end, tid, module, frames, symbol sizes, dir, own ns)
        self.graph_infos: dict = defaultdict(list)  # compile id -> GraphInfo compiled during this profile
        self._runs: dict = {}  # id(CompiledFxGraph) -> GraphRun
        self._patches: list = []  # (owner, name, original)
        self._config: list = []  # (config module, key, value before the profile)
        self._unprovenanced: set = set()  # graph names compiled before the profile, warned once
        self._filter = None
        self.max_calls = session.max_ops  # the record cap holds for kernel calls too
        #: (kernel call record, fields of the records of the ops it fused) not yet built: see expand_fused.
        self._fused: list = []
        #: Serial of a static graph's extern call site -> its ExternOp (extern_ops.py), or None: its calls go
        #: through the op hook. Learned from each site's first call in a profile segment (the raw tuples' op
        #: indices are the segment's).
        self.extern_ops: dict = {}

    # -- install / remove --------------------------------------------------------------------------

    def install(self) -> None:
        # The record cap counts the records of earlier start/stops, fused ones too.
        self.expand_fused(self.session.records.ops)
        self.extern_ops.clear()
        # torch warns at each call of a compiled module while global module hooks exist: ours are
        # the profile's own (they see the compiled module and the module it wraps as one path).
        warnings.filters.insert(0, _GLOBAL_HOOKS_FILTER)  # type: ignore[attr-defined]  # a list at run time
        _filters_mutated()
        self._filter = _GLOBAL_HOOKS_FILTER

        graph = torch_compat.compiled_fx_graph_class()
        self._patch(graph, "__init__", self._compiling(graph.__init__))
        self._patch(graph, "__call__", self._calling(graph.__call__))
        # Set and put back by hand, not with config.patch(): its undo lives in a ContextVar, so a
        # profile stopped on another thread (its starting thread gone) could not put it back.
        for config, key, value in torch_compat.profiling_compile_config():
            self._config.append((config, key, getattr(config, key)))
            setattr(config, key, value)

    def remove(self) -> None:
        """Put every patch and wrapped kernel back; each undo runs even if an earlier one fails."""
        self.recording = False
        undo = [run_undo for run in self._runs.values() for run_undo in run.undo]
        undo += [lambda owner=o, name=n, value=v: setattr(owner, name, value) for o, n, v in reversed(self._patches)]
        undo += [lambda c=c, k=k, v=v: setattr(c, k, v) for c, k, v in reversed(self._config)]
        undo.append(self._remove_filter)
        self._runs, self._patches, self._config = {}, [], []
        error = None
        for step in undo:
            try:
                step()
            except Exception as e:  # noqa: PERF203 - every patch must come off
                error = error or e
        if error is not None:
            raise error

    def _remove_filter(self) -> None:
        filters = warnings.filters
        for k, installed in enumerate(filters):  # by identity: an equal filter of the user's stays
            if installed is self._filter:
                del filters[k]  # type: ignore[attr-defined]  # a list at run time
                _filters_mutated()
                break
        self._filter = None

    def _patch(self, owner, name: str, value) -> None:
        self._patches.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, value)

    # -- compile time ------------------------------------------------------------------------------

    def _compiling(self, original):
        capture = self

        def __init__(self_, *args, **kwargs):
            original(self_, *args, **kwargs)
            gm = args[2] if len(args) > 2 else kwargs.get("gm")
            try:
                capture._read(self_, gm)
            except Exception as e:  # reading Inductor's metadata must never fail the user's compile
                capture.session.meta["warnings"].append(
                    f"could not read what Inductor fused in a compiled graph ({type(e).__name__}: {e})"
                )

        return __init__

    def _read(self, compiled, gm) -> None:
        compile_id = torch_compat.current_compile_id()
        kernel_nodes = torch_compat.inductor_kernel_nodes()
        info = inductor.read_graph(compiled, gm, kernel_nodes, compile_id, self.session.stack_depth)
        key = id(compiled)
        _graphs[key] = (weakref.ref(compiled, _forget(key)), info)
        self.graph_infos[compile_id].append(info)

    # -- run time ----------------------------------------------------------------------------------

    def _calling(self, original):
        capture = self

        def __call__(self_, inputs):
            if not capture.recording:
                return original(self_, inputs)
            entered = _now()
            run = capture._runs.get(id(self_))
            if run is None:  # instrumenting the graph is the profiler's time too (once per graph and profile)
                run = capture._first_call(self_)
                if run.optimizer:
                    run.module = capture._parameters_module(inputs)
            ctx = context
            if _graph_task() != -1:
                run.dir = "bwd"
            elif run.optimizer:
                run.dir = "opt"
            else:
                # Called outside every module, a compiled graph is still the model's forward, never UNDECIDED.
                run.dir = host_direction(ctx.host_dir, _grad_enabled(), ctx.module or "compiled graph")
            module = ctx.module  # where the graph was called: kept for kernels without provenance
            stack_depth = capture.session.stack_depth
            frames = callsite.capture(stack_depth) if stack_depth else ()
            symbols = run.info.symbols
            sizes = inductor.symbol_values(symbols, inputs) if symbols else None  # read before the call empties inputs
            outer, outer_facts = ctx.graph_call, ctx.graph_backward_facts
            ctx.graph_call = (_getframe(), stack_depth, frames)  # the ops inside reuse this call site
            ctx.graph_backward_facts = None
            start = _now()
            try:
                out = original(self_, inputs)
            finally:
                end = _now()
                ctx.graph_call, ctx.graph_backward_facts = outer, outer_facts
            own = start - entered + _now() - end  # this hook's own time: the profiler's, not the graph's
            capture.graph_calls.append((run, start, end, _get_ident(), module, frames, sizes, run.dir, own))
            return out

        return __call__

    def _parameters_module(self, inputs) -> str:
        """The module path every parameter among ``inputs`` lies in ("GPT" for a whole model's)."""
        names = self.session.param_names
        return inductor.common_module([names[id(t)].rpartition(".")[0] for t in inputs if id(t) in names])

    def _first_call(self, compiled) -> GraphRun:
        try:
            return self._instrument(compiled)
        except Exception as e:  # an Inductor artifact we cannot read must not fail the user's call
            self.session.meta["warnings"].append(
                f"could not time the kernels of a compiled graph ({type(e).__name__}: {e}); they are not in the report"
            )
            run = self._runs[id(compiled)] = GraphRun(inductor.GraphInfo("", "", False, provenance=False), False)
            return run

    def _instrument(self, compiled) -> GraphRun:
        """Wrap the kernels of ``compiled``'s wrapper module (once per graph and profile)."""
        known = _graphs.get(id(compiled))
        info = known[1] if known is not None and known[0]() is compiled else None
        if info is None:
            info = inductor.read_uninstrumented_graph(compiled)
            self._note_unprovenanced(info.name)
        run = self._runs[id(compiled)] = GraphRun(info, _in_optimizer_step())
        if not info.roots:
            roots = _resolve_roots(info, self.session)
            if roots != info.roots:  # resolved now: what earlier profiles worked out without them goes
                info.roots = roots
                info.site_facts.clear()
                info.fused_fields.clear()
        module = inductor.wrapper_module(compiled)
        if module is None:
            return run
        if not info.wrapper_marked:
            for code in inductor.wrapper_code(module):
                callsite.mark_internal(code)
            info.wrapper_marked = True
        globals_ = module.__dict__
        if info.wrapped is None:
            info.wrapped = tuple(dict.fromkeys([*(site.kernel for site in info.sites.values()), *info.defined]))
        for kernel in info.wrapped:
            target = globals_.get(kernel)
            if target is None:
                continue
            if hasattr(target, "run") and hasattr(target, "launchers"):  # a Triton CachingAutotuner
                run.roles[kernel] = inductor.triton_roles(target)
                target.run = self._triton_wrapper(run, kernel, target)
                run.undo.append(lambda t=target: t.__dict__.pop("run", None))
            elif callable(target):
                globals_[kernel] = self._native_kernel_wrapper(run, kernel, target) or self._kernel_wrapper(
                    run, kernel, target
                )
                run.undo.append(lambda k=kernel, t=target: globals_.__setitem__(k, t))
        externs = globals_.get("extern_kernels")
        if externs is not None:
            globals_["extern_kernels"] = _ExternCalls(self, run, externs)
            run.undo.append(lambda e=externs: globals_.__setitem__("extern_kernels", e))
        return run

    def _kernel_wrapper(self, run, kernel: str, fn):
        capture = self
        calls = self.kernel_calls
        metas = run.metas
        static = not run.info.dynamic

        def kernel_call(*args):
            entered = _now()
            if not capture.recording or len(calls) >= capture.max_calls:
                return fn(*args)
            start = _now()
            out = fn(*args)
            end = _now()
            line, meta, _, _ = _call_site(metas, static, args)
            own = start - entered + _now() - end  # the wrapper's own time: the profiler's, not the kernel's
            calls.append((run, kernel, line, start, end, _get_ident(), run.dir, NO_LINK, meta, own))
            return out

        callsite.mark_internal(kernel_call.__code__)
        return kernel_call

    def _native_kernel_wrapper(self, run, kernel: str, fn):
        """``_hook.KernelCall``: kernel_call in C for a static graph's kernels (no Python frame: ~0.35 us less per
        call on warm caches, ~1 us of its own time in a compiled GPT-2 step), or None where the C extension is not in
        use or the graph is dynamic."""
        native = _recorder_module.native
        if native is None or run.info.dynamic:
            return None
        clock = None if _now is time.perf_counter_ns else _now  # None: the C clock, perf_counter_ns's
        return native.KernelCall(fn, self, run, kernel, run.metas, _call_site, NO_LINK, clock)

    def _triton_wrapper(self, run, kernel: str, autotuner):
        capture = self
        calls = self.kernel_calls
        metas = run.metas
        static = not run.info.dynamic
        session = self.session
        launch = autotuner.run  # bound before the instance attribute shadows it

        def run_kernel(*args, **kwargs):
            entered = _now()
            gpu = session._gpu
            if not capture.recording or len(calls) >= capture.max_calls:
                return launch(*args, **kwargs)
            # A first call may autotune (benchmark launches): its kernels are left unattributed.
            ready = getattr(autotuner, "_cached_launcher", None) is not None or len(autotuner.launchers) == 1
            op_id = session.next_id() if ready else NO_LINK
            start = _now()
            if gpu is None or not ready:
                out = launch(*args, **kwargs)
            else:
                gpu.push(op_id)
                try:
                    out = launch(*args, **kwargs)
                finally:
                    gpu.pop()
            end = _now()
            line, meta, _, _ = _call_site(metas, static, args)
            own = start - entered + _now() - end  # the wrapper's own time: the profiler's, not the kernel's
            calls.append((run, kernel, line, start, end, _get_ident(), run.dir, op_id, meta, own))
            return out

        callsite.mark_internal(run_kernel.__code__)
        return run_kernel

    def _note_unprovenanced(self, name: str) -> None:
        if name in self._unprovenanced:
            return
        self._unprovenanced.add(name)
        if len(self._unprovenanced) == 1:
            message = (
                "torch.compile'd code compiled before the profile started ran under it: its Inductor kernels are "
                "timed, but which ops each one fused (and so their flops, modules and lines) is not known, as "
                "Inductor kept no provenance for them. Let the first call of the compiled code happen inside "
                "the profile (profile(steps=...) can skip the warm-up steps) to see them."
            )
            self.session.meta["warnings"].append(message)
            warnings.warn("pyprof_live: " + message, RuntimeWarning, stacklevel=4)

    # -- records -----------------------------------------------------------------------------------

    def has_calls(self) -> bool:
        """Whether compiled code ran while recording (graph or kernel calls not yet made into records)."""
        return bool(self.kernel_calls or self.graph_calls)

    def build_records(self, ops: list) -> list:
        """New op records: one per graph call, one per kernel call followed by the ops it fused;
        ``ops``, the hook's records of this segment, get the graph, module and call site of the
        compiled code they ran in. Raw calls are dropped afterwards."""
        frame_cache = self.session._frame_cache
        stack_depth = self.session.stack_depth
        graph_calls = defaultdict(list)  # tid -> (start, end, module, frames, sizes) of each graph call
        for _, start, end, tid, module, frames, sizes, *_ in self.graph_calls:
            graph_calls[tid].append((start, end, module, frames, sizes))
        for calls in graph_calls.values():
            calls.sort(key=lambda call: call[0])
        records = []
        # A static graph's call site fuses the same nodes at every call, and a kernel's arguments repeat
        # their shapes: both are worked out once per graph (kept on its GraphInfo, for later profiles
        # too), not once per call (a step calls each often).
        split: dict = {}  # (id of the argument shapes, roles) -> (read, written)
        for run, kernel, line, start, end, tid, direction, op_id, meta, own in self.kernel_calls:
            info = run.info
            site = info.sites.get(line)
            roles = site.roles if site is not None and site.roles else run.roles.get(kernel, ())
            static = not info.dynamic
            parts = info.site_args.get(line) if static else None
            if parts is None:
                parts = split.get((id(meta), roles))  # a static site's shapes are one object, kept by its calls
                if parts is None:
                    parts = split[(id(meta), roles)] = _split_by_role(meta, roles)
                if static:
                    info.site_args[line] = parts
            reads, writes = parts
            sizes = _enclosing_call(graph_calls.get(tid, ()), start)[2] if info.symbols else None
            facts = None if sizes else info.site_facts.get(line)
            if facts is None:
                fused = site.fused if site is not None else ()
                if sizes:  # a dynamic graph: its nodes' shapes hold symbols, given values by this call
                    fused = [_with_sizes(f, sizes) for f in fused]
                paths = [_module_path(f.module, info.roots) for f in fused]
                facts = (
                    tuple(zip(fused, paths)),
                    inductor.common_module(paths),
                    inductor.most_common([f.callsite for f in fused]),
                )
                if not sizes:
                    info.site_facts[line] = facts
            templates, module, where = facts
            key = (line, direction, tid)
            fields = info.fused_fields.get(key) if not sizes else None
            if fields is None:
                fields = [_fused_fields(f, path, direction, tid, info.name) for f, path in templates]
                if not sizes:
                    info.fused_fields[key] = fields
            if not module or not where:  # no provenance, or code outside the user's (an optimizer's
                # step): where the graph was called from
                called_in, frames, _ = _enclosing_call(graph_calls.get(tid, ()), start)
                module = module or run.module or called_in
                where = where or callsite.format_frames(frames[:stack_depth], frame_cache)
            records.append(
                OpRecord(
                    name=kernel,
                    start=start,
                    end=end,
                    tid=tid,
                    kind=COMPILED,
                    dir=direction,
                    inputs=reads,
                    outputs=writes,
                    module=module,
                    callsite=where,
                    external_id=op_id,
                    graph=info.name,
                    overhead=own,
                )
            )
            # Most records of a compiled profile are fused ops (~50 per call of a compiled optimizer
            # step): they are built on first use of the profile's records (expand_fused), not in stop().
            self._fused.append((records[-1], fields))
        self._attribute(ops, frame_cache, stack_depth)
        # Each graph call is a row too: its self time is the wrapper's Python between its calls
        # (buffers allocated and freed, size asserts), which no kernel or op row holds.
        records.extend(
            OpRecord(
                name=GRAPH_CALL_NAME,
                start=start,
                end=end,
                tid=tid,
                kind=GRAPH_CALL,
                dir=direction,
                module=run.module or module,
                callsite=callsite.format_frames(frames[:stack_depth], frame_cache),
                graph=run.info.name,
                overhead=own,
            )
            for run, start, end, tid, module, frames, _, direction, own in self.graph_calls
        )
        self.drop_calls()
        return records

    def drop_calls(self) -> None:
        """Forget the raw calls recorded since the last build."""
        self.kernel_calls.clear()
        self.extern_calls.clear()
        self.graph_calls.clear()

    def expand_fused(self, ops: list) -> None:
        """Put the records of the ops each kernel call fused right after its record in ``ops`` (the
        profile's records, in place), built from the fields worked out once per call site: a fused
        record is the kernel call's start and these. Called before anything reads the records
        (``LiveProfile.records``), so the records are the same as if stop() had built them."""
        if self._fused:
            self._expand(ops)

    @paused_gc()
    def _expand(self, ops: list) -> None:
        fused = {id(kernel): fields for kernel, fields in self._fused}
        expanded: list = []
        append, extend = expanded.append, expanded.extend
        for record in ops:
            append(record)
            fields = fused.get(id(record))
            if fields is not None:
                start = record.start
                extend([OpRecord(name, start, start, *rest) for name, rest in fields])
        ops[:] = expanded
        self._fused.clear()

    def _attribute(self, ops, frame_cache, stack_depth) -> None:
        """Ops recorded inside a compiled graph take its name; inside an extern call, also the module
        and call site of the node Inductor generated the call from."""
        if not self.graph_calls:
            return
        by_thread = defaultdict(list)
        for i, op in enumerate(ops):
            by_thread[op.tid].append((op.start, i))
        for entries in by_thread.values():
            entries.sort()
        for run, start, end, tid, *_ in self.graph_calls:
            fallbacks = run.info.fallbacks
            seen: dict = defaultdict(int)
            for i in _within(by_thread.get(tid, ()), start, end):
                op = ops[i]
                op.graph = run.info.name
                sites = fallbacks.get((op.name, op.overload))
                if sites:  # the k-th call of an op Inductor left to ATen is its k-th call site
                    k = seen[(op.name, op.overload)]
                    seen[(op.name, op.overload)] += 1
                    if k < len(sites):
                        _from_node(op, sites[k], run.info.roots)
        for run, line, start, end, tid in self.extern_calls:
            site = run.info.sites.get(line)
            if site is None or not site.fused:
                continue
            for i in _within(by_thread.get(tid, ()), start, end):
                if ops[i].end <= end:
                    _from_node(ops[i], site, run.info.roots)


def _from_node(op, site, roots) -> None:
    """An op of a compiled graph takes the module and call site of the node it was generated from."""
    if site.fused:
        node = site.fused[0]
        op.module = _module_path(node.module, roots) or op.module
        op.callsite = node.callsite or op.callsite


class _ExternCalls:
    """Stands for a wrapper module's ``extern_kernels``: each call is timed with its wrapper line."""

    def __init__(self, capture, run, real):
        self._capture = capture
        self._run = run
        self._real = real

    def __getattr__(self, name):
        fn = getattr(self._real, name)
        if not callable(fn):
            return fn
        capture, run, calls = self._capture, self._run, self._capture.extern_calls
        lines = run.metas
        static = not run.info.dynamic
        known = capture.extern_ops
        learned = run.info.learned_externs
        depth = capture.session.stack_depth

        def extern_call(*args, **kwargs):
            if not capture.recording:
                return fn(*args, **kwargs)
            site = _call_site(lines, True, ())
            if static:  # a site seen before may record its op without the hook (extern_ops.py)
                op = known.get(site[3], _UNSEEN)
                if op is _UNSEEN:  # its first call in this segment: as an earlier profile learned it, else learnt now
                    recorder = capture.session._recorder
                    op = extern_ops.relearned(recorder, learned.get((site[3], depth)), fn, run, site[0], calls)
                    if op is None:
                        return hooked_call(site, args, kwargs, True)
                    known[site[3]] = op
                if op is not None:
                    out = op.call(fn, args, kwargs)
                    if out is not extern_ops.NOT_TAKEN:
                        return out
            return hooked_call(site, args, kwargs)

        def hooked_call(site, args, kwargs, first=False):
            """The call with its op through the op hook, timed; a static site's ``first`` call learns its ExternOp."""
            if first:
                recorder = capture.session._recorder
                before = len(recorder.raw) if recorder is not None and recorder.raw is not None else -1
                alone = extern_ops.hook_alone(recorder)
                peek = _peek_seq()
            ctx = context
            try:
                if static:  # the C op hook takes the shapes of this site's first op from its first call
                    ctx.extern_site = site[3]
                start = _now()
                out = fn(*args, **kwargs)
            finally:
                ctx.extern_site = None
            end = _now()
            calls.append((run, site[0], start, end, _get_ident()))
            if first:
                op = extern_ops.learn(recorder, before, peek, run, site[0], calls, alone)
                if op is not extern_ops.RELEARN:
                    known[site[3]] = op
                    if op is not None:
                        learned[(site[3], depth)] = extern_ops.remember(recorder, op, fn)
            return out

        callsite.mark_internal(extern_call.__code__)
        callsite.mark_internal(hooked_call.__code__)
        # A static graph's learned sites in C where the C extension is in use (_hook.ExternCall: extern_call's work for
        # them, without its Python frames); every other call goes to extern_call.
        call = extern_ops.native_extern_call(fn, capture, lines, known, extern_call, hooked_call) if static else None
        call = call or extern_call
        setattr(self, name, call)  # later calls find it without __getattr__
        return call


def _call_site(sites: dict, static: bool, args, frame: FrameType | None = None) -> tuple:
    """(wrapper line, argument shapes, caller's code, serial) of the call a kernel wrapper runs in (``frame``, by
    default its caller's), keyed by the frame's code and instruction offset (see GraphRun.metas); a static graph's
    shapes are taken at the first call."""
    frame = frame or _getframe(2)
    code = frame.f_code
    key = (id(code), frame.f_lasti)
    site = sites.get(key)
    if site is None:
        site = sites[key] = (frame.f_lineno, _shapes(args) if static else None, code, _next_site())
    return site if static else (site[0], _shapes(args), *site[2:])


#: A call site not seen yet in this profile segment (CompiledCapture.extern_ops).
_UNSEEN = object()

#: Numbers call sites for the op hook's cache of their shapes (_hook.c): never reused, unlike ids.
_next_site = itertools.count().__next__


def _enclosing_call(calls, time: int) -> tuple:
    """(module, frames, sizes) of the graph call (start, end, module, frames, sizes) running at ``time``."""
    k = bisect_right(calls, time, key=lambda call: call[0]) - 1
    if k >= 0 and calls[k][1] >= time:
        return calls[k][2:]
    return "", (), None


#: OpRecord's fields in constructor order: a fused record is built positionally as
#: ``OpRecord(name, start, start, *rest)``, ``rest`` holding the fields after ``end``.
_RECORD_FIELDS = OpRecord.__slots__
if _RECORD_FIELDS[:3] != ("name", "start", "end"):  # pragma: no cover - records.py changed its order
    raise ImportError("OpRecord no longer starts with name, start, end: update capture/compiled.py")


def _fused_fields(op, path: str, direction: str, tid: int, graph: str) -> tuple:
    """(name, the fields after ``end``) of the records of fused op ``op`` at one call site."""
    record = OpRecord(
        name=op.name,
        start=0,
        end=0,
        tid=tid,
        overload=op.overload,
        kind=FUSED,
        dir=direction,
        inputs=op.inputs,
        outputs=op.outputs,
        kwargs=op.kwargs,
        module=path,
        callsite=op.callsite,
        graph=graph,
        origin=op.origin,
    )
    return op.name, tuple(getattr(record, field) for field in _RECORD_FIELDS[3:])


def _with_sizes(op, sizes: dict):
    """A fused op template with its symbolic sizes made concrete."""
    return inductor.FusedOp(
        op.name,
        op.overload,
        inductor.concrete(op.inputs, sizes),
        inductor.concrete(op.outputs, sizes),
        tuple((k, inductor.concrete(v, sizes)) for k, v in op.kwargs),
        op.module,
        op.callsite,
        op.origin,
    )


def _within(entries, start: int, end: int):
    """Indices of the ops in ``entries`` ((start, index), sorted) that start inside [start, end]."""
    k = bisect_left(entries, (start, -1))
    while k < len(entries) and entries[k][0] <= end:
        yield entries[k][1]
        k += 1


def _shapes(args) -> tuple:
    return tuple([(tuple(a.shape), a.dtype) if isinstance(a, _Tensor) else None for a in args])


def _split_by_role(meta, roles) -> tuple[tuple, tuple]:
    """The kernel's tensor arguments as (read, written), by the role of each argument position
    (its signature: in_ptr, out_ptr, in_out_ptr); without roles all count as read."""
    reads, writes = [], []
    for index, value in enumerate(meta):
        if value is None:  # not a tensor (a size)
            continue
        role = roles[index] if index < len(roles) else "read"
        arg = to_arg(value)
        if role in ("read", "both", ""):
            reads.append(arg)
        if role in ("write", "both"):
            writes.append(arg)
    return tuple(reads), tuple(writes)


def _module_path(source: str, roots: dict) -> str:
    """Our path of a node's module; a node outside every submodule ran in the compiled module itself."""
    root, parts = inductor.split_source(source or _SELF)
    prefix = roots.get(root)
    if not prefix:
        return ""
    return ".".join((prefix, *parts))


#: The root of a compiled module's sources: its forward's ``self``.
_SELF = "L['self']"


def _resolve_roots(info, session) -> dict:
    """Our module path of each root a graph's module sources start from (``L['self']`` -> ``MLP``),
    from the compiled frame on the stack; a backward graph reuses its forward's."""
    frame_id = info.compile_id.split("/")[0]
    known = _roots.get(frame_id)
    if info.backward:
        return known or {}
    wanted = info.root_sources
    if wanted is None:  # once per graph: a compiled optimizer step's graph fuses ~800 nodes (~100 us)
        sources = {inductor.split_source(site_op.module)[0] for site in info.sites.values() for site_op in site.fused}
        wanted = info.root_sources = frozenset((sources | {_SELF}) - {""})
    frame = _user_frame()
    if frame is None:
        return known or {}
    roots = {}
    paths = session._module_names.paths
    for root in wanted:
        obj = root_module(root, frame)
        if obj is not None:
            path = paths.get(id(obj)) or type(getattr(obj, torch_compat.COMPILED_MODULE_ATTRIBUTE, obj)).__name__
            roots[root] = path
    if frame_id:
        _roots[frame_id] = roots
    return roots


_OPTIMIZERS = os.path.dirname(torch.optim.__file__) + os.sep


def _in_optimizer_step() -> bool:
    """Is an optimizer's step() on the stack? (Dynamo ignores the step's record_function, which is
    how eager optimizer ops get dir "opt".)"""
    frame: FrameType | None = _getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith(_OPTIMIZERS):
            return True
        frame = frame.f_back
    return False


def _root_object(root: str, frame):
    """What ``root`` (``L['self']``, ``G['model']``, ``L['args'][0]``: inductor.split_source) is in ``frame``."""
    name, _, items = root[3:].partition("']")
    found = (frame.f_locals if root[0] == "L" else frame.f_globals).get(name)
    try:
        for index in _ITEM.findall(items):
            found = found[int(index)]
    except (TypeError, LookupError):  # not a sequence, or too short: no module there
        return None
    return found


_ITEM = re.compile(r"\[(\d+)\]")


def root_module(root: str, frame):
    """The module a Dynamo root (``L['self']``) names in the user's ``frame`` (None: no user frame), else in the
    innermost frame on the stack above ``root_module``'s caller that has it; None if none does."""
    obj = _root_object(root, frame) if frame is not None else None
    return obj if isinstance(obj, torch.nn.Module) else _innermost_module(root)


def _innermost_module(root: str):
    """The module ``root`` names in the innermost frame on the stack that has it: torch.compile of one of torch.nn's
    own modules (an ``nn.Sequential``) compiles a wrapper of torch's calling it, whose ``fn`` is Dynamo's root
    (``L['fn']``), not a frame of the user's; None if no frame has it. The walk starts at root_module's caller's
    caller."""
    frame: FrameType | None = _getframe(3)
    while frame is not None:
        obj = _root_object(root, frame)
        if isinstance(obj, torch.nn.Module):
            return obj
        frame = frame.f_back
    return None


def _user_frame():
    """The innermost frame of real user code: the compiled function itself, running Dynamo's code."""
    frame = _getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        user = _user_files.get(filename)
        if user is None:
            user = _user_files[filename] = not callsite.internal_file(filename) and os.path.exists(filename)
        if user:
            return frame
        frame = frame.f_back
    return None


#: file name -> is it user code (a file of the user's, not torch's or ours)? Asked at each profile's first call
#: of each compiled graph, for every frame on the stack (~40 us for a compiled training step's stack).
_user_files: dict = {}


def never_compiled(functions, recursive: bool = False) -> None:
    """Tell Dynamo never to compile these as frames of their own (``recursive``: nor what they call): the profile's
    hooks run inside a compiled module's call (its own forward hooks, and every hook where a graph broke) and would
    otherwise each cost a compile attempt, shown to the user as compiles and graph breaks of pyprof_live's code."""
    for function in functions:
        code = getattr(getattr(function, "__func__", function), "__code__", None)
        if code is not None:
            torch_compat.dynamo_never_compile(code, recursive)
