"""CUDA/HIP graph replays in Kineto traces, tied to the launch calls that issued them at capture.

A kernel replayed by ``cudaGraphLaunch``/``hipGraphLaunch`` carries the graph launch's correlation
id; the op that issued it is the one around its launch call while the graph was *captured*
(``...StreamBeginCapture`` .. ``...StreamEndCapture`` on one thread: kernels launched there are
recorded into the graph, not run). Kineto records no graph-node -> capture-call link, so the
replay is matched to a capture by what both show:

- ROCm traces name the kernel on every launch call (``hipModuleLaunchKernel`` ``args.kernel``):
  a replay's kernels, in start order, are aligned with a capture's launch calls by name
  (longest matching subsequence), against the capture whose names match most of them;
- CUDA traces name no kernel on ``cudaLaunchKernel``: a replay is matched by position, and only to
  a capture with exactly as many launch calls as the replay has kernels.

Among captures that fit a replay equally and whose capture-time ops are alike (same op names and
shapes per launch call: vLLM captures one piecewise graph per layer), the n-th such replay is tied
to the n-th such capture, cycling: graphs are replayed in the order they were captured; a replay
whose kernels carry a graph id (CUDA) stays with the capture its graph's first replay got. When
those captures' ops differ (one graph captured at several batch sizes: same kernels, other shapes)
nothing in the trace tells which one a replay ran, so it is not tied (a note says so) rather than
tied to the wrong shapes. What matched is written as ``KernelRecord.capture_correlation``;
correlation then ties each kernel to the op of that launch call. Replays that match no capture
keep their graph launch and are reported per graph ("replay of graph N"), never dropped.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from ..records import COMPILED, FUSED, NO_LINK

_BEGIN_CAPTURE = re.compile(r"(?:cuda|hip|cu)StreamBeginCapture")
_END_CAPTURE = re.compile(r"(?:cuda|hip|cu)StreamEndCapture")
_GRAPH_LAUNCH = re.compile(r"(?:cuda|hip|cu)GraphLaunch")
#: Calls that put a kernel node into a graph being captured.
_KERNEL_LAUNCH = re.compile(
    r"(?:cuda|hip)(?:Ext)?(?:Module)?Launch(?:Cooperative)?Kernel|cuLaunch(?:Cooperative)?Kernel|cudaLaunchKernelExC"
)


def is_graph_launch(name: str) -> bool:
    return _GRAPH_LAUNCH.match(name) is not None


@dataclass
class Capture:
    """The kernel launch calls of one stream capture, in call order."""

    number: int  # 1-based, in capture order over the trace(s)
    correlations: list = field(default_factory=list)
    names: list = field(default_factory=list)  # kernel name per launch call ("" when the trace has none)
    #: Per launch call, the (name, inputs) of the op that issued it, None when the trace does not say:
    #: two captures with the same kernels are the same graph only if these agree.
    ops: list = field(default_factory=list)


def captures(apis, launch_names: dict, ops=()) -> list:
    """The captures in ``apis`` (sorted by start), numbered from 1; ``launch_names``: (pid, correlation) ->
    kernel name; ``ops``: the trace's ops, whose external ids name the op of each launch call."""
    op_of = None  # (pid, external id) -> op, made at the first captured launch (most traces have none)
    found: list[Capture] = []
    open_by_thread: dict = {}
    for api in apis:
        key = (api.pid, api.tid)
        name = api.name
        if _BEGIN_CAPTURE.match(name):
            open_by_thread[key] = Capture(0)
        elif _END_CAPTURE.match(name):
            capture = open_by_thread.pop(key, None)
            if capture is not None and capture.correlations:
                capture.number = len(found) + 1
                found.append(capture)
        elif key in open_by_thread and _KERNEL_LAUNCH.fullmatch(name):
            capture = open_by_thread[key]
            capture.correlations.append(api.correlation)
            capture.names.append(launch_names.get((api.pid, api.correlation), ""))
            if op_of is None:
                op_of = {(op.pid, op.external_id): op for op in ops if op.external_id != NO_LINK}
            op = op_of.get((api.pid, api.external_id)) if api.external_id != NO_LINK else None
            capture.ops.append((op.name, op.inputs) if op is not None else None)
    return found


def replays(apis, kernels) -> list:
    """(graph launch call, its kernels in start order) for each graph launch that replayed kernels."""
    launches = {(a.pid, a.correlation): a for a in apis if is_graph_launch(a.name)}
    by_launch = defaultdict(list)
    for kernel in kernels:
        launch = launches.get((kernel.pid, kernel.correlation))
        if launch is not None:
            by_launch[id(launch)].append(kernel)
    out = []
    for launch in sorted(launches.values(), key=lambda a: a.start):
        replayed = by_launch.get(id(launch))
        if replayed:
            replayed.sort(key=lambda k: (k.start, k.stream))
            out.append((launch, replayed))
    return out


def _aligned(capture: Capture, names: list) -> list:
    """(capture position, replay position) pairs: by name where the capture names its kernels, by position otherwise."""
    if not any(capture.names):
        return list(zip(range(len(names)), range(len(names)))) if len(capture.names) == len(names) else []
    matcher = SequenceMatcher(None, capture.names, names, autojunk=False)
    return [(a + i, b + i) for a, b, size in matcher.get_matching_blocks() for i in range(size)]


def tie_replays(apis, kernels, all_captures: list) -> tuple[dict, list]:
    """Set ``capture_correlation`` (and, where the trace has none, ``graph_id`` = capture number) on
    replayed kernels; returns the facts for ``Profile.meta["graph_replays"]`` and the captures used."""
    graph_replays = replays(apis, kernels)
    if not graph_replays:
        return {}, []
    chooser = _CaptureChooser(all_captures)
    untied_graphs: dict = {}  # signature of a replay without capture -> its graph number
    tied = ambiguous = 0
    used: dict = {}  # capture number -> capture, for the captures some replay was tied to
    for _launch, replayed in graph_replays:
        names = [k.name for k in replayed]
        capture, pairs = chooser.choose(names, replayed[0].graph_id)
        if capture is not None:
            for a, b in pairs:
                replayed[b].capture_correlation = capture.correlations[a]
            tied += len(pairs)
            used[capture.number] = capture
        elif pairs:  # several captures fit, with different ops
            ambiguous += len(replayed)
        if not any(k.graph_id for k in replayed):  # ROCm: the trace has no graph ids; number them
            if capture is not None:
                number = capture.number
            else:
                number = untied_graphs.setdefault(tuple(names), len(all_captures) + len(untied_graphs) + 1)
            for k in replayed:
                k.graph_id = number
    count = sum(len(r) for _, r in graph_replays)
    if not all_captures:
        method = "no capture in the profile"
    elif any(any(c.names) for c in all_captures):
        method = "kernel names of the capture's launch calls"
    else:
        method = "position in the capture"
    facts = {
        "launches": len(graph_replays),
        "kernels": count,
        "kernels_tied_to_capture": tied,
        "captures": len(all_captures),
        "method": method,
    }
    if ambiguous:
        facts["kernels_of_ambiguous_replays"] = ambiguous
    return facts, [used[n] for n in sorted(used)]


class _CaptureChooser:
    """Which capture each replay came from, remembering what earlier replays were given."""

    def __init__(self, all_captures: list):
        self.all_captures = all_captures
        self.by_signature: defaultdict[tuple, list] = defaultdict(list)
        for capture in all_captures:
            self.by_signature[tuple(capture.names)].append(capture)
        self.used: defaultdict[tuple, int] = defaultdict(int)  # candidate captures -> replays tied to them so far
        self.of_graph: dict = {}  # graph id (CUDA) -> (capture, aligned positions) of its first replay

    def choose(self, names: list, graph_id: int) -> tuple:
        """(capture, aligned (capture, replay) positions) for a replay of kernels ``names``; (None, []) when
        no capture fits, (None, pairs) when several fit whose ops differ."""
        if graph_id and graph_id in self.of_graph:
            return self.of_graph[graph_id]
        candidates, pairs = self._candidates(names)
        if not candidates:
            return None, []
        if not all(_alike(c.ops, candidates[0].ops) for c in candidates[1:]):
            return None, pairs
        # Alike captures: the n-th replay <- the n-th capture, cycling.
        key = tuple(c.number for c in candidates)
        capture = candidates[self.used[key] % len(candidates)]
        self.used[key] += 1
        if len(candidates) > 1:
            pairs = _aligned(capture, names)
        if graph_id:
            self.of_graph[graph_id] = (capture, pairs)
        return capture, pairs

    def _candidates(self, names: list) -> tuple[list, list]:
        """The captures that fit a replay best (all aligned alike), and the positions aligned in the first."""
        same = self.by_signature.get(tuple(names))
        if same:  # the same kernels in the same order
            return same, [(i, i) for i in range(len(names))]
        best: list = []
        best_pairs: list = []
        for capture in self.all_captures:
            if abs(len(capture.names) - len(names)) > max(len(names), len(capture.names)) // 2:
                continue  # cannot match half of the kernels
            pairs = _aligned(capture, names)
            if len(pairs) > len(best_pairs):
                best, best_pairs = [capture], pairs
            elif pairs and len(pairs) == len(best_pairs):
                best.append(capture)
        if 2 * len(best_pairs) < len(names):
            return [], []
        return best, best_pairs


def _alike(ops: list, others: list) -> bool:
    """Whether two captures' launch calls were issued by the same ops (a launch whose op is unknown agrees)."""
    return len(ops) == len(others) and all(a is None or b is None or a == b for a, b in zip(ops, others))


def graph_notes(kernels, facts: dict, capture_path=None) -> list:
    """Footer lines: how many replayed kernels are tied to capture-time ops, and the replays without one."""
    if not facts:
        return []
    where = f" in {capture_path}" if capture_path else ""
    notes = [
        f"{facts['kernels_tied_to_capture']} of {facts['kernels']} kernels replayed by {facts['launches']} graph "
        f"launch(es) tied to the launch calls of {facts['captures']} graph capture(s){where}, by {facts['method']}"
    ]
    if capture_path and facts["kernels_tied_to_capture"]:
        notes.append(f"the capture-time ops added from {capture_path} keep the host times of the capture")
    if facts.get("kernels_of_ambiguous_replays"):
        notes.append(
            f"{facts['kernels_of_ambiguous_replays']} replayed kernels fit several captures whose ops differ "
            "(the same kernels captured with other shapes): not tied, since the trace does not tell which one ran"
        )
    untied: defaultdict[int, list[int]] = defaultdict(lambda: [0, 0])
    for k in kernels:
        if k.graph_id and k.capture_correlation == NO_LINK:
            entry = untied[k.graph_id]
            entry[0] += 1
            entry[1] += k.end - k.start
    if untied:
        graphs = ", ".join(f"graph {g}: {n} kernels, {t} ns" for g, (n, t) in sorted(untied.items()))
        notes.append(f"replays without their capture in the profile, shown as 'replay of graph N' ({graphs})")
    return notes


def tie_graph_replays(profile, launch_names: dict, captured=None, capture_names=None, capture_path=None) -> None:
    """Tie ``profile``'s replayed kernels to their capture, in the same trace or in ``captured`` (the
    uncorrelated Profile of the capture trace, whose launch calls and ops of the captures used are then
    added to ``profile``); facts go to ``meta["graph_replays"]``, report lines to ``meta["gpu_notes"]``."""
    records = profile.records
    notes = []
    if captured is None:
        facts, _used = tie_replays(records.apis, records.kernels, captures(records.apis, launch_names, records.ops))
    else:
        found = captures(captured.records.apis, capture_names or {}, captured.records.ops)
        facts, used = tie_replays(records.apis, records.kernels, found)
        _add_capture_records(records, captured.records, used)
        profile.meta["capture_path"] = str(capture_path)
        if not facts:
            notes.append(f"no CUDA/HIP graph replay in this trace: the capture trace {capture_path} was not used")
    if facts:
        profile.meta["graph_replays"] = facts
        notes += graph_notes(records.kernels, facts, capture_path)
    if notes:
        profile.meta.setdefault("gpu_notes", []).extend(notes)


def _add_capture_records(records, captured, used: list) -> None:
    """Copy into ``records`` the capture trace's launch calls of the ``used`` captures and the ops around
    them (the ops correlation ties the replayed kernels to); their ids are shifted past the replay trace's."""
    launch_ids = {c for capture in used for c in capture.correlations}
    if not launch_ids:
        return
    shift = 1 + max(
        [a.correlation for a in records.apis]
        + [a.external_id for a in records.apis]
        + [o.external_id for o in records.ops]
        + [0]
    )
    launches = [a for a in captured.apis if a.correlation in launch_ids]
    by_thread = defaultdict(list)
    for api in launches:
        by_thread[(api.pid, api.tid)].append(api.start)
    external_ids = {(a.pid, a.external_id) for a in launches if a.external_id != NO_LINK}
    ops = []
    for op in captured.ops:  # an op fused into a kernel call (start == end) goes with its call
        if (op.pid, op.external_id) in external_ids or _contains_any(op, by_thread):
            ops.append(op)
        elif op.kind == FUSED and ops and ops[-1].kind in (COMPILED, FUSED) and ops[-1].start == op.start:
            ops.append(op)
    for api in launches:
        api.correlation += shift
        if api.external_id != NO_LINK:
            api.external_id += shift
    for op in ops:
        if op.external_id != NO_LINK:
            op.external_id += shift
    for kernel in records.kernels:
        if kernel.capture_correlation != NO_LINK:
            kernel.capture_correlation += shift
    records.apis = sorted(records.apis + launches, key=lambda a: a.start)
    records.ops = _merged(records.ops, ops)


def _merged(ops: list, more: list) -> list:
    """Two time-ordered op lists in one, each op fused into a kernel call kept right after its call."""
    groups: list[list] = []
    for op in ops + more:
        if op.kind == FUSED and groups:
            groups[-1].append(op)
        else:
            groups.append([op])
    groups.sort(key=lambda g: (g[0].start, -g[0].end))
    return [op for group in groups for op in group]


def _contains_any(op, starts_by_thread) -> bool:
    """Whether ``op`` is open at one of the launch calls of its thread (it encloses a capture-time launch)."""
    starts = starts_by_thread.get((op.pid, op.tid))
    if not starts:
        return False
    i = bisect_left(starts, op.start)
    return i < len(starts) and starts[i] <= op.end
