"""Chrome trace-event JSON (Perfetto, chrome://tracing) of a profile: what ran where, and what caused it.

Tracks: one per host thread (ops and ranges, nested) and one per GPU stream (kernels, memcpy,
memset). Flow arrows go from each op to the kernels it launched and from each forward op to its
backward ops, as PyTorch's own traces draw ``ac2g`` and ``fwdbwd``. Slices that do not nest with
the others on their thread (overlapping imported ranges) go to an extra track of that thread
rather than being dropped by the viewer. CUDA API calls are not drawn: the launch arrows start on
the op that made them.
"""

from __future__ import annotations

from collections import defaultdict

from ..analysis.compiled import OpCosts, fused_text
from ..analysis.kernel_names import short_name
from ..records import COMPILED, FUSED, GRAPH_CALL, NO_LINK
from . import cells

#: Perfetto reads ``ts``/``dur`` as float µs and truncates ``value * 1000`` to integer ns, so
#: 1.001 µs would come back as 1000 ns and break nesting; a quarter ns added before dividing makes
#: truncation and rounding both give back the exact integer.
_NS_NUDGE = 0.25


def _us(ns: int) -> float:
    return (ns + _NS_NUDGE) / 1000.0


def chrome_trace(profile) -> dict:
    """The profile as a trace-event JSON object: ``{"traceEvents": [...], "otherData": {...}}``."""
    profile.link()
    records = profile.records
    origin = _origin(records)
    builder = _TraceBuilder(origin)
    host_pids = sorted(
        {o.pid for o in records.ops} | {r.pid for r in records.ranges} | {c.pid for c in records.compiles}
    )
    device_pid = _device_pids(host_pids, {w.device for w in list(records.kernels) + list(records.memops)})

    host_tracks = defaultdict(list)
    for i, r in enumerate(records.ranges):
        host_tracks[(r.pid, r.tid)].append((r.start, r.end, 0, _range_event(r), ("range", i)))
    for i, c in enumerate(records.compiles):
        host_tracks[(c.pid, c.tid)].append((c.start, c.end, 0, _compile_event(c), ("compile", i)))
    costs = OpCosts(records.ops)
    for i, op in enumerate(records.ops):
        if op.kind == FUSED:  # no time of its own: listed in its kernel call's args
            continue
        host_tracks[(op.pid, op.tid)].append((op.start, op.end, 1, _op_event(records.ops, i, costs), ("op", i)))
    device_tracks = defaultdict(list)
    for i, k in enumerate(records.kernels):
        device_tracks[(device_pid[k.device], k.stream)].append(
            (k.start, k.end, 0, _kernel_event(records.ops, k), ("kernel", i))
        )
    for i, m in enumerate(records.memops):
        device_tracks[(device_pid[m.device], m.stream)].append(
            (m.start, m.end, 0, _memop_event(records.ops, m), ("memop", i))
        )

    for pid in host_pids:
        builder.process(pid, f"host process {pid}", sort_index=0)
    names = {d.id: d.name for d in records.devices}
    for device, pid in sorted(device_pid.items()):
        label = f"GPU {device}" + (f" {names[device]}" if device in names else "")
        builder.process(pid, label, sort_index=1 + device)
    tracks = {key: (f"thread {key[1]}", slices) for key, slices in host_tracks.items()}
    tracks.update({key: (f"stream {key[1]}", slices) for key, slices in device_tracks.items()})
    builder.tracks(tracks)

    _launch_flows(builder, records)
    _forward_backward_flows(builder, records.ops)
    return {
        "traceEvents": builder.events,
        "displayTimeUnit": "ms",
        "otherData": {
            "producer": "pyprof_live",
            "source": str(profile.meta.get("source", "?")),
            "time_origin_ns": origin,
            "note": "ts are µs since time_origin_ns (the earliest record of the profile)",
        },
    }


def _origin(records) -> int:
    starts = [
        min(x.start for x in items)
        for items in (records.ops, records.ranges, records.kernels, records.memops, records.compiles)
        if items
    ]
    return min(starts) if starts else 0


def _device_pids(host_pids, devices) -> dict:
    """GPU ``d`` is process ``d`` (as in PyTorch's traces) unless a host process already has that pid."""
    clash = any(d in host_pids for d in devices)
    base = max(list(host_pids) + list(devices)) + 1 if clash else 0
    return {d: base + d for d in devices}


class _TraceBuilder:
    """Collects events; remembers where each record's slice went so flows can point at it."""

    def __init__(self, origin: int):
        self.origin = origin
        self.events: list[dict] = []
        self.placed: dict[tuple, tuple] = {}  # ("op", i) / ("kernel", i) / ... -> (pid, tid, anchor ns)
        self._next_flow = 1

    def process(self, pid: int, name: str, sort_index: int) -> None:
        self.events.append(_meta("process_name", pid, 0, {"name": name}))
        self.events.append(_meta("process_sort_index", pid, 0, {"sort_index": sort_index}))

    def tracks(self, tracks: dict) -> None:
        """``{(pid, tid): (name, slices)}``; each lane beyond a track's first becomes an extra track.

        Viewers read tids as uint32 (Perfetto folds larger ones into the process's main thread) and
        live profiles record 64-bit Python thread idents: those, and extra lanes, get the smallest
        free number; the track's name keeps the real tid.
        """
        taken = defaultdict(set)
        for pid, tid in tracks:
            if 0 <= tid < 2**32:
                taken[pid].add(tid)
        for (pid, tid), (name, slices) in sorted(tracks.items()):
            for lane, placed in enumerate(_nest_into_lanes(slices)):
                if lane > 0 or not 0 <= tid < 2**32:
                    track_tid = min(set(range(1, len(taken[pid]) + 2)) - taken[pid])
                    taken[pid].add(track_tid)
                else:
                    track_tid = tid
                label = name if lane == 0 else f"{name} (overlapping slices {lane})"
                self.events.append(_meta("thread_name", pid, track_tid, {"name": label}))
                for (start, end, _, event, key), anchor in placed:
                    event.update(pid=pid, tid=track_tid, ts=_us(start - self.origin), dur=_us(end - start))
                    self.events.append(event)
                    self.placed[key] = (pid, track_tid, anchor)

    def flow(self, category: str, source, target) -> None:
        """An arrow from the slice of record ``source`` to the slice of ``target`` (both must be placed)."""
        flow_id = self._next_flow
        self._next_flow += 1
        for key, phase in ((source, "s"), (target, "f")):
            pid, tid, anchor = self.placed[key]
            event = {
                "ph": phase,
                "cat": category,
                "name": category,
                "id": flow_id,
                "pid": pid,
                "tid": tid,
                "ts": _us(anchor - self.origin),
            }
            if phase == "f":
                event["bp"] = "e"  # bind to the slice enclosing ts (the target), not the next one
            self.events.append(event)


def _meta(name: str, pid: int, tid: int, args: dict) -> dict:
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "ts": 0, "args": args}


def _nest_into_lanes(slices) -> list:
    """Split slices into lanes where each nests properly; returns per lane ``[(slice, anchor ns)]``.

    Parents sort before their children (start, then longest, then ranges before ops). A slice's
    anchor is the middle of its first stretch not covered by a child, so a flow event placed there
    binds to that slice and not to a child starting at the same time.
    """
    ordered = sorted(slices, key=lambda s: (s[0], -s[1], s[2]))
    stacks: list[list] = []  # per lane: open slices as [end, position in ordered]
    lane_of = []
    children = defaultdict(list)
    for position, (start, end, *_rest) in enumerate(ordered):
        for lane, stack in enumerate(stacks):  # noqa: B007 - the lane found is used after the loop
            while stack and stack[-1][0] <= start:
                stack.pop()
            if not stack or end <= stack[-1][0]:
                break
        else:
            lane = len(stacks)
            stacks.append([])
        if stacks[lane]:
            children[stacks[lane][-1][1]].append((start, end))
        stacks[lane].append([end, position])
        lane_of.append(lane)
    lanes: list[list] = [[] for _ in stacks]
    for position, s in enumerate(ordered):
        lanes[lane_of[position]].append((s, _anchor(s[0], s[1], children.get(position, ()))))
    return lanes


def _anchor(start: int, end: int, kids) -> int:
    cursor = start
    for kid_start, kid_end in kids:
        if kid_start > cursor:
            break
        cursor = max(cursor, kid_end)
    gap_end = end
    for kid_start, _ in kids:
        if kid_start > cursor:
            gap_end = kid_start
            break
    return (cursor + gap_end) // 2 if cursor < gap_end else start


def _op_event(ops, i: int, costs) -> dict:
    op = ops[i]
    cost = costs(i)
    args = {
        "index": i,
        "dir": op.dir,
        "module": op.module,
        "layer": ":".join(op.layer),
        "seq": op.seq if op.seq != NO_LINK else None,
        "altseq": op.altseq if op.altseq != NO_LINK else None,
        "node": op.node,
        "params": cells.params_text(op),
        "flops": cost.flops,
        "bytes": cost.bytes,
        "callsite": " <- ".join(op.callsite),
        "forward op": ops[op.fwd].name if op.fwd != NO_LINK else None,
        "graph": op.graph,
        "fused": fused_text(ops, costs.fused.get(i, ())) if op.kind == COMPILED else None,
    }
    return {
        "ph": "X",
        "cat": op.kind if op.kind in ("function", COMPILED, GRAPH_CALL) else "op",
        "name": op.name,
        "args": {k: v for k, v in args.items() if v not in (None, "")},
    }


def _compile_event(c) -> dict:
    args = {
        "compile id": c.compile_id,
        "function": c.name,
        "where": " <- ".join(c.callsite),
        "reason": c.reason,
        "graphs": c.graphs,
        "kernels": c.kernels,
        "cache": c.cache,
        **{f"{phase} (ns)": ns for phase, ns in c.phases.items()},
    }
    name = "graph break" if c.kind == "graph_break" else f"torch.compile {c.kind} {c.compile_id}".strip()
    return {"ph": "X", "cat": "compile", "name": name, "args": {k: v for k, v in args.items() if v not in (None, "")}}


def _range_event(r) -> dict:
    args = {"domain": r.domain} if r.domain else {}
    return {"ph": "X", "cat": r.kind, "name": r.name, "args": args}


def _kernel_event(ops, k) -> dict:
    args = {
        "kernel": k.name,
        "device": k.device,
        "stream": k.stream,
        "correlation": k.correlation,
        "grid": cells.xyz_text(k.grid),
        "block": cells.xyz_text(k.block),
        "registers per thread": k.registers,
        "shared memory": k.shared_static + k.shared_dynamic,
        "op": ops[k.op].name if k.op != NO_LINK else "(unattributed)",
    }
    return {"ph": "X", "cat": "kernel", "name": short_name(k.name), "args": args}


def _memop_event(ops, m) -> dict:
    duration = m.end - m.start
    args = {
        "bytes": m.bytes,
        "device": m.device,
        "stream": m.stream,
        "correlation": m.correlation,
        "GB/s": round(m.bytes / duration, 3) if duration > 0 else None,  # bytes per ns = GB/s
        "op": ops[m.op].name if m.op != NO_LINK else "(unattributed)",
    }
    name = f"memcpy {m.copy_kind}" if m.kind == "memcpy" else "memset"
    return {"ph": "X", "cat": m.kind, "name": name, "args": {k: v for k, v in args.items() if v is not None}}


def _launch_flows(builder, records) -> None:
    for kind, items in (("kernel", records.kernels), ("memop", records.memops)):
        for i, item in enumerate(items):
            if item.op != NO_LINK:
                builder.flow("launch", ("op", item.op), (kind, i))


def _forward_backward_flows(builder, ops) -> None:
    """One arrow per backward op whose enclosing op does not already point at the same forward op."""
    for i, op in enumerate(ops):
        if op.fwd == NO_LINK or (op.parent != NO_LINK and ops[op.parent].fwd == op.fwd):
            continue
        builder.flow("fwdbwd", ("op", op.fwd), ("op", i))
