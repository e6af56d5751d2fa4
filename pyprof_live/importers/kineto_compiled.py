"""Inductor kernels in Kineto traces of torch.compile'd programs: tied to their compiled graph and, where
an Inductor provenance log of the same run is at hand, to the ATen ops they fused.

What the trace holds (torch.profiler of a compiled model):

- each Triton launch is a ``cpu_op`` named after the kernel, with Inductor's ``kernel_backend`` /
  ``kernel_hash`` / ``kernel_file`` args (the importer makes it ``kind="compiled"``); a C++ kernel is a
  ``graph_0_cpp_fused_gelu_1`` range when Inductor's ``cpp.enable_kernel_profile`` was on;
- ``Torch-Compiled Region: 0/0`` (Dynamo's compile id) around the compiled code, ``CompiledFunction`` /
  ``CompiledFunctionBackward`` (AOTAutograd) around a training graph's forward / backward, and
  ``## Call CompiledFxGraph <FX graph cache key> ##`` around each call of an Inductor graph.

Each kernel call gets ``graph = "<compile id> <forward|backward|inference>"`` (OpRecord.graph; the
backward's compile id is its forward's, found by the autograd sequence number both AOTAutograd nodes
carry; where no Dynamo region is around, as in vLLM's piecewise graphs, the FX cache key stands for the
compile id); ops run inside a ``## Call CompiledFxGraph`` range (extern calls such as ``aten::mm``) get
it too. A trace names no fused op: those come from a
TORCH_TRACE log of the same run (:mod:`.provenance`), given as ``load_kineto(path, provenance=...)`` or
found next to the trace. A kernel call of graph G is matched to the log's graph by the FX cache key
(exact), else by compile id and direction; within one graph call, the n-th call of a kernel is its n-th
call site. Each fused node becomes a ``kind="fused"`` OpRecord right after its kernel call (start ==
end == the call's start), with the node's argument shapes, so the op formulas give the call's flops.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from pathlib import Path

from ..records import COMPILED, FUSED, NO_LINK, OpRecord
from .provenance import read_provenance

_REGION = "Torch-Compiled Region: "
_FX_CALL = re.compile(r"## Call CompiledFxGraph (\S+) ##")
_CPP_KERNEL = re.compile(r"graph_\d+_(cpp_fused_\w+)\Z")
_DIRECTION = {"CompiledFunction": "forward", "CompiledFunctionBackward": "backward"}
_AOT_DIRECTION = {"forward": "forward", "backward": "backward", "inference": "inference"}
#: Logs ``TORCH_TRACE=<dir>`` writes: looked for beside the trace and in its folder's subfolders.
LOG_PATTERN = "dedicated_log_torch_trace*.log"


def find_logs(trace_path) -> list:
    """TORCH_TRACE logs next to a trace: in its folder or one folder down, sorted."""
    folder = Path(trace_path).parent
    return sorted({*folder.glob(LOG_PATTERN), *folder.glob(f"*/{LOG_PATTERN}")})


def tie_compiled_kernels(profile, provenance=None, trace_path=None) -> None:
    """Mark Inductor kernel calls, give them (and the ops of compiled graph calls) their graph, add the
    fused ops of the calls a provenance log covers; facts go to ``meta["compiled"]``."""
    records = profile.records
    ops = records.ops
    for op in ops:
        match = _CPP_KERNEL.match(op.name) if op.kind == "op" else None
        if match is not None:
            op.name, op.kind = match.group(1), COMPILED
    calls = [i for i, op in enumerate(ops) if op.kind == COMPILED and not op.graph]  # not yet placed
    logs = [provenance] if isinstance(provenance, (str, Path)) else list(provenance or ())
    if provenance is None and trace_path is not None and calls:
        logs = find_logs(trace_path)
    fused = 0
    if calls:
        keys = _graph_of_calls(ops, records.ranges, calls)
        if logs:
            fused = _add_fused_ops(records, calls, keys, [g for log in logs for g in read_provenance(log)])
    ops = records.ops
    placed = [op for op in ops if op.kind == COMPILED]  # also calls copied from a capture trace, placed there
    if not placed:
        return
    facts = {
        "kernel_calls": len(placed),
        "kernel_calls_in_compiled_graph": sum(1 for op in placed if op.graph),
        "provenance_logs": [str(p) for p in logs],
    }
    if logs:
        facts["kernel_calls_with_fused_ops"] = fused
    profile.meta["compiled"] = facts


def _graph_of_calls(ops, ranges, calls) -> dict:
    """Set ``graph`` on kernel calls and on the ops inside their graph calls; returns call index ->
    (FX cache key or "", start of its ``## Call CompiledFxGraph`` range or NO_LINK)."""
    fx_ranges: defaultdict[tuple, list] = defaultdict(list)  # (pid, tid) -> [(start, end, key)]
    for r in ranges:
        match = _FX_CALL.match(r.name)
        if match is not None:
            key = match.group(1)
            fx_ranges[(r.pid, r.tid)].append((r.start, r.end, "" if key == "None" else key))
    for spans in fx_ranges.values():
        spans.sort()
    by_thread: defaultdict[tuple, list] = defaultdict(list)  # (pid, tid) -> [(start, end, index)]: regions, AOT nodes
    for i, op in enumerate(ops):
        if op.name.startswith(_REGION) or op.name in _DIRECTION:
            by_thread[(op.pid, op.tid)].append((op.start, op.end, i))
    for thread_spans in by_thread.values():
        thread_spans.sort()
    enclosing = _Enclosing(by_thread)

    def is_region(j):
        return ops[j].name.startswith(_REGION)

    # A forward CompiledFunction's region; its backward finds it through the autograd sequence number.
    regions_by_seq = {}
    for op in ops:
        if op.name == "CompiledFunction" and op.seq != NO_LINK:
            region = enclosing.innermost(op, is_region)
            if region is not None:
                regions_by_seq[(op.pid, op.seq)] = ops[region].name[len(_REGION) :]
    keys = {}
    range_graph: dict = {}  # ((pid, tid), range start) -> graph of the kernel calls inside it
    for i in calls:
        op = ops[i]
        key, call_start = _around(fx_ranges, op)
        keys[i] = (key, call_start)
        node = enclosing.innermost(op, lambda j: ops[j].name in _DIRECTION)
        direction = _DIRECTION[ops[node].name] if node is not None else "inference"
        region = enclosing.innermost(op, is_region)
        if direction == "backward":
            compile_id = regions_by_seq.get((op.pid, ops[node].altseq), "")
        else:
            compile_id = ops[region].name[len(_REGION) :] if region is not None else ""
        # No Dynamo region (vLLM runs its piecewise Inductor graphs itself): the FX graph names the graph.
        name = compile_id or key
        op.graph = f"{name} {direction}" if name else ""
        if call_start != NO_LINK:
            range_graph.setdefault(((op.pid, op.tid), call_start), op.graph)
    for op in ops:  # extern calls (aten::mm out=) and other ops run by the graph's wrapper
        if not op.graph and op.kind != COMPILED:
            _key, call_start = _around(fx_ranges, op)
            if call_start != NO_LINK:
                op.graph = range_graph.get(((op.pid, op.tid), call_start), "")
    return keys


def _around(fx_ranges, op) -> tuple[str, int]:
    """(key, start) of the ``## Call CompiledFxGraph`` range around ``op``, or ("", NO_LINK)."""
    spans = fx_ranges.get((op.pid, op.tid), ())
    pos = bisect_right(spans, (op.start, float("inf"), "")) - 1
    if pos >= 0 and spans[pos][1] >= op.end:
        return spans[pos][2], spans[pos][0]
    return "", NO_LINK


class _Enclosing:
    """The innermost span of a thread (regions, AOTAutograd nodes) around an op, with a predicate."""

    def __init__(self, by_thread):
        self.by_thread = by_thread

    def innermost(self, op, wanted):
        spans = self.by_thread.get((op.pid, op.tid), ())
        pos = bisect_right(spans, (op.start, float("inf"), 0)) - 1
        for j in range(pos, -1, -1):
            start, end, index = spans[j]
            if end >= op.end and start <= op.start and wanted(index):
                return index
        return None


def _add_fused_ops(records, calls, keys, compiled: list) -> int:
    """Insert the fused ops of each kernel call the logs cover; returns how many calls got them."""
    ops = records.ops
    by_key = {g.cache_key: g for g in compiled if g.cache_key}
    by_graph: dict = {}
    for g in compiled:
        direction = _AOT_DIRECTION.get(g.aot_id.rpartition("_")[2], "")
        if g.compile_id and direction:
            by_graph.setdefault(f"{g.compile_id} {direction}", g)
    seen: defaultdict[tuple, int] = defaultdict(int)  # (graph call, kernel) -> calls so far
    fused_after: dict = {}
    covered = 0
    for i in calls:
        op = ops[i]
        key, call_start = keys[i]
        graph = by_key.get(key) if key else None
        if graph is None:  # by compile id and direction, unless both name their (different) cache keys
            graph = by_graph.get(op.graph)
            if graph is not None and key and graph.cache_key:
                graph = None
        if graph is None:
            continue
        sites = [k for k in graph.kernels if k.kernel == op.name]
        if not sites:
            continue
        nth = seen[(op.pid, op.tid, call_start, op.graph, op.name)]
        seen[(op.pid, op.tid, call_start, op.graph, op.name)] += 1
        site = sorted(sites, key=lambda k: k.handle or 0)[nth % len(sites)]
        if site.lines:
            op.callsite = site.lines
        nodes = [n for n in site.nodes if n.op]
        if not nodes:
            continue
        covered += 1
        # Inductor's "Original ATen: [aten.addmm, aten.gelu]" is per call, not per node: it gives the
        # nodes an origin only when it names exactly one op.
        origin = site.original_aten[0] if len(site.original_aten) == 1 else ""
        fused_after[i] = [_fused_record(op, n, origin) for n in nodes]
    if fused_after:
        merged = []
        for i, op in enumerate(ops):
            merged.append(op)
            merged.extend(fused_after.get(i, ()))
        records.ops = merged
    return covered


def _fused_record(call, node, origin: str) -> OpRecord:
    """``origin``: the user's op the node came from, when the wrapper's comment names only one for the call."""
    qualified, _, overload = node.op.rpartition(".")
    return OpRecord(
        qualified,
        call.start,
        call.start,
        call.tid,
        call.pid,
        overload=overload,
        kind=FUSED,
        dir=call.dir,
        inputs=node.inputs,
        outputs=(node.output,) if node.output is not None else (),
        kwargs=node.kwargs,
        module=call.module,
        callsite=(node.line,) if node.line else call.callsite,
        graph=call.graph,
        origin=origin,
    )
