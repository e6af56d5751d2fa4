"""Views: the rows of ``p.table()`` and of the summaries, computed from correlated records.

Views return :class:`View` objects (rows + column names + footer notes); turning them into text,
CSV or HTML is the renderers' job (``render/``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from itertools import count, islice, repeat
from operator import eq, itemgetter

from ..analysis import roofline as roofline_cells
from ..analysis.compiled import OpCosts, fused_text, timed_parents
from ..analysis.devicework import DeviceWork
from ..analysis.kernel_names import short_name, uses_tensor_cores
from ..analysis.roofline import RooflineSum
from ..analysis.timeline import CATEGORIES, DEVICE_CATEGORIES, step_breakdown, step_windows
from ..gcpause import paused_gc
from ..records import COMPILED, DIRECTIONS, FUSED, GRAPH_CALL, NO_LINK, KernelRecord
from ..render import cells
from ..render.units import duration
from .columns import COLUMN_NAMES, OVERVIEW, SUMMARY
from .view import View


def _chain(ops, i: int) -> list:
    """Indices of the op and its enclosing ops, outermost first."""
    chain = []
    while i != NO_LINK:
        chain.append(i)
        i = ops[i].parent
    chain.reverse()
    return chain


def _device_work(profile):
    """(op index -> [(host key, record start, record)]) and the unattributed device work as the same
    triples, launch-ordered; the record's type says kernel or memcpy/memset."""
    apis = profile.records.apis
    by_op = defaultdict(list)
    unattributed = []
    for items in (profile.records.kernels, profile.records.memops):
        for item in items:
            launch, op, start = item.launch, item.op, item.start
            entry = (apis[launch].start if launch != NO_LINK else start, start, item)
            (by_op[op] if op != NO_LINK else unattributed).append(entry)
    for entries in by_op.values():
        if len(entries) > 1:  # most ops launch one kernel
            entries.sort(key=_launch_order)
    unattributed.sort(key=_launch_order)
    return by_op, unattributed


_launch_order = itemgetter(0, 1)


def _op_cells(ops, i: int, wanted, fused=None) -> dict:
    """The cells every row of op ``i`` shares; the costlier text cells only when ``wanted``.
    ``fused``: kernel call index -> its fused ops (analysis.compiled.fused_children)."""
    op = ops[i]
    own_seq = op.altseq if op.dir == "bwd" and op.altseq != NO_LINK else op.seq
    cells_ = {
        "seq": own_seq if own_seq != NO_LINK else None,
        "tid": op.tid,
        "layer": ":".join(op.layer) or None,
        "trace": " <- ".join(op.callsite) or None,
        "dir": op.dir or None,
        "mod": op.mod or None,
        "op": op.name,
        "module": op.module or None,
        "graph": op.graph or None,
    }
    if "fused" in wanted:
        cells_["fused"] = fused_text(ops, fused.get(i, ())) or None if fused and op.kind == COMPILED else None
    if "params" in wanted:
        # An emit_nvtx op without `sizes` shows its PyProf marker's arguments, as PyProf did.
        source = op
        while not source.inputs and source.parent != NO_LINK:
            source = ops[source.parent]
        cells_["params"] = cells.params_text(source) or None
    if "ops" in wanted or "altseq" in wanted:
        chain = _chain(ops, i)
        names = [ops[j].name for j in chain]
        if op.node and op.node not in names:
            names.insert(len(names) - 1, op.node)  # live bwd ops: show the autograd node they ran in
        cells_["ops"] = " > ".join(names)
        cells_["altseq"] = ",".join(map(str, sorted({ops[j].seq for j in chain} - {NO_LINK, own_seq}))) or None
    return cells_


def _device_cells(item) -> dict:
    if item.__class__ is KernelRecord:
        tc = uses_tensor_cores(item.name)
        return {
            "kernel": short_name(item.name),
            "sil": item.end - item.start,
            "tc": None if tc is None else int(tc),
            "device": item.device,
            "stream": item.stream,
            "grid": cells.xyz_text(item.grid),
            "block": cells.xyz_text(item.block),
        }
    label = f"[memcpy {item.copy_kind}]" if item.kind == "memcpy" else "[memset]"
    return {"kernel": label, "sil": item.end - item.start, "device": item.device, "stream": item.stream}


@paused_gc()
def kernel_rows(profile, columns=COLUMN_NAMES) -> tuple[Iterator[dict], dict]:
    """One row per kernel (and memcpy/memset) plus one per innermost op that launched none.

    Op-level quantities (host, flops, bytes, ideal, sol%, bound) are on the op's first row only.
    Returns the rows in launch order, made one at a time as they are consumed, and coverage facts
    for the footer. Until consumed, a row is a (launch key, sub, op index, device record, cost) tuple: a
    CSV report of a million kernels is written without a million row dicts in memory. Text cells
    that cost most to build (params, ops, altseq) are filled only when ``columns`` asks for them.
    """
    order, costs, device_work, facts = kernel_order(profile)
    return _rows_in_order(profile.records.ops, order, columns, costs, device_work), facts


@paused_gc()
def kernel_order(profile) -> tuple[list, OpCosts, DeviceWork, dict]:
    """What :func:`kernel_rows` makes its rows from: the rows in launch order as (launch key, sub, op
    index or NO_LINK, device record or None, cost on the op's first row) tuples, the ops' costs, the
    device work per op (rooflines) and the footer's facts (also read by report/kernel_csv.py)."""
    profile.link()
    ops = profile.records.ops
    by_op, unattributed = _device_work(profile)
    has_children = timed_parents(ops)
    costs = OpCosts(ops)
    # (launch key, sub, op index or NO_LINK, device record or None for an op without one, cost on the op's first row)
    order: list[tuple] = []
    no_formula_ops = 0
    no_formula_time = total_time = 0
    # Live capture gives calls with the same arguments the same tuples: their cost is looked up once
    # by identity (the ops hold the tuples, so the ids stay theirs while this runs).
    same_call: dict = {}
    for i, op in enumerate(ops):
        work = by_op.pop(i, None)  # popped: the triples go as the order grows
        if (not work and i in has_children) or op.kind == FUSED:
            continue
        call = (op.name, op.overload, id(op.inputs), id(op.outputs), id(op.kwargs))
        cost = same_call.get(call) if op.kind != COMPILED else None
        if cost is None:
            cost = costs(i)
            if op.kind != COMPILED:
                same_call[call] = cost
        if not work:
            time = op.end - op.start
        elif len(work) == 1:  # most ops launch one kernel: no generator
            time = work[0][2].end - work[0][2].start
        else:
            time = sum(e[2].end - e[2].start for e in work)
        total_time += time
        if cost.flops is None and cost.bytes is None:
            no_formula_ops += 1
            no_formula_time += time
        if not work:
            order.append((op.start, 0, i, None, cost))
            continue
        order.append((work[0][0], 0, i, work[0][2], cost))
        if len(work) > 1:  # (key, sub, i, item, None) of the rest, made in C
            rest = work[1:]
            order.extend(zip(map(itemgetter(0), rest), count(1), repeat(i), map(itemgetter(2), rest), repeat(None)))
    order.extend((key, 0, NO_LINK, item, None) for key, _, item in unattributed)
    _sort_by_launch(order)
    device_work = DeviceWork(profile)
    facts = {
        "ops_without_formula": no_formula_ops,
        "time_without_formula": no_formula_time,
        "time_total": total_time,
        "unattributed": len(unattributed),
        "unattributed_time": sum(e[2].end - e[2].start for e in unattributed),
        "notes": peak_notes(profile, device_work),
    }
    return order, costs, device_work, facts


def _sort_by_launch(order: list) -> None:
    """Sort ``order`` by (launch key, sub), stable: ties keep op order, unattributed work last. Sorted by
    the key alone first (ints, no key tuple per row): when no two rows share a key (the usual case: each
    launch call has its own start) that is the order; else sorting that by (key, sub) gives it."""
    order.sort(key=itemgetter(0))
    keys = list(map(itemgetter(0), order))
    tied = any(map(eq, keys, islice(keys, 1, None)))
    del keys
    if tied:
        order.sort(key=_launch_order)


def _rows_in_order(ops, order: list, columns, costs: OpCosts, device_work: DeviceWork) -> Iterator[dict]:
    """The rows of :func:`kernel_rows`' order, numbered; an op's shared cells are made once for
    its consecutive rows (an op's kernels follow each other unless another thread's launches
    interleave)."""
    fused = costs.fused if "fused" in columns else None
    last, shared = NO_LINK, {}
    for idx, (_, sub, i, item, cost) in enumerate(order, start=1):
        if item is None:  # an op without device work: its only row, made from its cells without a copy
            row = _op_cells(ops, i, columns, fused)
            op = ops[i]
            row["host"] = op.end - op.start
            row["flops"] = "na" if cost.flops is None else cost.flops
            row["bytes"] = "na" if cost.bytes is None else cost.bytes
            row["sub"] = None
            row["idx"] = idx
            yield row
            continue
        if i == NO_LINK:
            row = _device_cells(item)
            label = (
                f"replay of graph {item.graph_id}"
                if item.__class__ is KernelRecord and item.graph_id
                else "(unattributed)"
            )
            row.update(op=label, ops=label)
        else:
            if i != last:
                last, shared = i, _op_cells(ops, i, columns, fused)
            row = dict(shared)
            if cost is not None:  # the op's first row
                op = ops[i]
                row.update(host=op.end - op.start, flops=_cost_cell(cost.flops), bytes=_cost_cell(cost.bytes))
                if item is not None:
                    row.update(roofline_cells.cells(device_work.roofline(i, cost)))
            if item is None:
                row["sub"] = None
            else:
                row.update(_device_cells(item), sub=sub)
        row["idx"] = idx
        yield row


def _cost_cell(value):
    """A formula result: the number, or 'na' when no formula could give one."""
    return "na" if value is None else value


def peak_notes(profile, device_work) -> list:
    """Which peak figures the roofline columns used, and which GPUs had none."""
    used = sorted({entry.device for entry in device_work.by_op.values() if entry.kernels_total})
    names = {d.id: d.name for d in profile.records.devices}
    notes = []
    for device in used:
        peak = device_work.peaks.get(device)
        label = names.get(device, "unknown GPU")
        if peak is None:
            notes.append(
                f"no peak figures for device {device} ({label}): ideal, sol% and bound are '-'; "
                "give them with p.set_peak(...)"
            )
        else:
            notes.append(
                f"speed of light on device {device} ({label}): {peak.name} dense peaks, {peak.bandwidth:g} GB/s DRAM"
            )
    return notes


def _path_order(path: str) -> tuple:
    """Module paths in tree order, numbered children by number (layers.2 before layers.10)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in path.split("."))


def has_device_time(profile) -> bool:
    return bool(profile.records.kernels or profile.records.memops)


_ROOFLINE_COLUMNS = ("ideal", "sol%", "bound")


#: How p.ops() groups: by op name; by op and its tensors' shapes and dtypes plus the non-float
#: arguments (stride, dim...: a step size that changes every step does not split a group); or by
#: op and every argument.
OP_GROUPINGS = ("op", "op+shape", "op+params")


@paused_gc()
def op_summary(profile, by: str = "op") -> View:
    """Per op (or op + input shapes): calls, host total/self, device total/self, flops, bytes, roofline.

    ``dev`` counts the kernels and memcpy/memset an op launched and those of the ops it called;
    ``dev_self`` only its own. The roofline of a group sums ``ideal`` and device time over its calls.
    """
    if by not in OP_GROUPINGS:
        raise ValueError(f"by must be one of {', '.join(map(repr, OP_GROUPINGS))}, not {by!r}")
    profile.link()
    ops = profile.records.ops
    child_time: defaultdict[int, int] = defaultdict(int)
    for op in ops:
        if op.parent != NO_LINK:
            child_time[op.parent] += op.end - op.start
    work = DeviceWork(profile)
    costs = OpCosts(ops)
    groups: dict = {}
    lines: dict = {}
    for i, op in enumerate(ops):
        if op.kind == FUSED:  # part of its kernel call's row, which counts the call and its time
            continue
        shapes = cells.params_text(op, floats=by == "op+params") if by != "op" else ""
        # Inductor numbers kernels per graph: the same name in two graphs is two kernels.
        key = (op.name, shapes, op.graph if op.kind in (COMPILED, GRAPH_CALL) else "")
        g = groups.get(key)
        if g is None:
            g = groups[key] = {
                "op": op.name,
                "graph": key[2] or None,
                "params": shapes or None,
                "calls": 0,
                "host": 0,
                "host_self": 0,
                "dev": 0,
                "dev_self": 0,
                "flops": 0,
                "bytes": 0,
            }
            lines[key] = RooflineSum()
        device = work.get(i)
        g["calls"] += 1
        host = op.end - op.start
        g["host"] += host
        g["host_self"] += host - child_time[i]
        g["dev"] += device.dev_total
        g["dev_self"] += device.dev_self
        cost = costs(i)
        for name in ("flops", "bytes"):
            value = getattr(cost, name)
            if value is None or g[name] == "na":
                g[name] = "na"
            else:
                g[name] += value
        lines[key].add(work.roofline(i, cost), device.kernel_total)
    for key, g in groups.items():
        g.update(lines[key].cells())
    rows = sorted(groups.values(), key=lambda g: (-g["dev"], -g["host_self"], g["op"], g["graph"] or ""))
    columns: tuple[str, ...] = ("op", "params") if by != "op" else ("op",)
    if any(g["graph"] for g in rows):
        columns += ("graph",)
    columns += ("calls", "host", "host_self")
    if has_device_time(profile):
        columns += ("dev", "dev_self")
    columns += ("flops", "bytes")
    if any(g["ideal"] is not None for g in rows):
        columns += _ROOFLINE_COLUMNS
    return View(f"ops by {by}", columns, rows, peak_notes(profile, work), SUMMARY)


@paused_gc()
def module_summary(profile) -> View:
    """The nn.Module tree (paths in tree order), each inclusive of its children: host and device time,
    forward and backward, and the roofline of the ops it ran.

    Host times come from innermost ops (so nested ops are not counted twice); device time from every
    op's own kernels and memcpy/memset, so each is counted once, at the op that launched it.
    """
    profile.link()
    ops = profile.records.ops
    work = DeviceWork(profile)
    has_children = timed_parents(ops)
    costs = OpCosts(ops)
    totals: dict = {}
    lines: dict = {}
    for i, op in enumerate(ops):
        if not op.module or op.kind == FUSED:
            continue
        innermost = i not in has_children
        device = work.get(i)
        if not innermost and not device.dev_self:
            continue
        # the roofline of the op that launched the kernels, when none of its callees launched any
        launched = device.kernel_self and device.kernel_self == device.kernel_total
        line = work.roofline(i, costs(i)) if launched else None
        parts = op.module.split(".")
        for depth in range(1, len(parts) + 1):
            path = ".".join(parts[:depth])
            t = totals.get(path)
            if t is None:
                t = totals[path] = {
                    "module": path,
                    "depth": depth - 1,
                    "ops": 0,
                    "host_self": 0,
                    "host": 0,
                    "fwd": 0,
                    "bwd": 0,
                    "dev": 0,
                    "dev_self": 0,
                    "dev_fwd": 0,
                    "dev_bwd": 0,
                }
                lines[path] = RooflineSum()
            own = depth == len(parts)
            if innermost:
                host = op.end - op.start
                t["ops"] += 1
                t["host"] += host
                if own:
                    t["host_self"] += host
                if op.dir in ("fwd", "bwd"):
                    t[op.dir] += host
            lines[path].add(line, device.kernel_total)
            t["dev"] += device.dev_self
            if own:
                t["dev_self"] += device.dev_self
            if op.dir in ("fwd", "bwd"):
                t["dev_" + op.dir] += device.dev_self
    rows = [totals[k] for k in sorted(totals, key=_path_order)]
    for row in rows:
        row.update(lines[row["module"]].cells())
    columns: tuple[str, ...] = ("module", "ops", "host", "host_self", "fwd", "bwd")
    if has_device_time(profile):
        columns += ("dev", "dev_self", "dev_fwd", "dev_bwd")
    if any(r["ideal"] is not None for r in rows):
        columns += _ROOFLINE_COLUMNS
    return View("modules", columns, rows, peak_notes(profile, work), SUMMARY)


@paused_gc()
def kernel_summary(profile) -> View:
    """Per kernel name: calls, total/mean/min/max device time, tensor cores, and the roofline over the
    calls that were their op's only kernel (a kernel sharing its op with others has no ideal of its own).

    Inductor kernels that ran on the host (C++ kernels of torch.compile'd code on the CPU) are kernels
    too: one row per kernel and graph, with their calls' host time (``host``) and no device time."""
    profile.link()
    work = DeviceWork(profile)
    ops = profile.records.ops
    costs = OpCosts(ops)
    groups: dict = {}
    lines: dict = {}
    line_of_op: dict = {}
    for k in profile.records.kernels:
        name = short_name(k.name)
        d = k.end - k.start
        g = groups.get(name)
        if g is None:
            tc = uses_tensor_cores(k.name)
            g = groups[name] = {
                "kernel": name,
                "calls": 0,
                "sil": 0,
                "min": d,
                "max": d,
                "tc": None if tc is None else int(tc),
            }
            lines[name] = RooflineSum()
        g["calls"] += 1
        g["sil"] += d
        g["min"] = min(g["min"], d)
        g["max"] = max(g["max"], d)
        if k.op != NO_LINK and work.get(k.op).kernels_total == 1:
            if k.op not in line_of_op:
                line_of_op[k.op] = work.roofline(k.op, costs(k.op))
            lines[name].add(line_of_op[k.op], d)
    rows = sorted(groups.values(), key=lambda g: (-g["sil"], g["kernel"]))
    for g in rows:
        g["mean"] = g["sil"] // g["calls"]
        g.update(lines[g["kernel"]].cells())
    host_rows = _host_kernels(ops, work)
    rows += host_rows
    columns: tuple[str, ...] = ("kernel", "calls", "sil", "mean", "min", "max", "tc")
    if host_rows:
        columns = ("kernel", "graph", "calls", "host", "sil", "mean", "min", "max", "tc")
    if any(g["ideal"] is not None for g in rows):
        columns += _ROOFLINE_COLUMNS
    notes = peak_notes(profile, work) if rows else [_why_no_kernels(profile)]
    return View("kernels", columns, rows, notes, SUMMARY)


def _host_kernels(ops, work) -> list:
    """Rows of the Inductor kernel calls that launched no device kernel, per (kernel, graph), most host time first."""
    groups: dict = {}
    for i, op in enumerate(ops):
        if op.kind != COMPILED or work.get(i).kernels_total:
            continue
        g = groups.get((op.name, op.graph))
        if g is None:
            g = groups[(op.name, op.graph)] = {"kernel": op.name, "graph": op.graph or None, "calls": 0, "host": 0}
            g.update(dict.fromkeys(("sil", "mean", "min", "max", "tc", "ideal", "sol%", "bound")))
        g["calls"] += 1
        g["host"] += op.end - op.start
    return sorted(groups.values(), key=lambda g: (-g["host"], g["kernel"]))


def _why_no_kernels(profile) -> str:
    """The note of an empty kernel summary: why this profile holds no GPU kernel."""
    reasons = [w for w in profile.meta.get("warnings", []) if "GPU kernels were not collected" in w]
    if reasons:
        return "no GPU kernels: " + reasons[0]
    if profile.meta.get("source") == "live":
        return (
            "no GPU kernels: nothing ran on a GPU while this profile recorded (a CPU-only run); "
            "p.ops() and p.table() show the ops"
        )
    return f"no GPU kernels: the {profile.meta.get('source', '?')} source holds no kernel records"


@paused_gc()
def overview(profile) -> View:
    """One row per step (and a total): wall time split into kernel, memcpy, memset, runtime, dataloader,
    CPU exec and other (see analysis/timeline.py), GPU busy and idle. The notes say what the profile
    holds and list its top recommendations."""
    profile.link()
    steps = step_breakdown(profile)
    rows = []
    for step in steps:
        row = {"step": step.name, "dur": step.duration, "compile": step.compile, **step.time}
        rows.append(_with_busy(row))
    if len(steps) > 1:
        total = {"step": "total", "dur": sum(s.duration for s in steps), "compile": sum(s.compile for s in steps)}
        total.update({c: sum(s.time[c] for s in steps) for c in CATEGORIES})
        rows.append(_with_busy(total))
    device = has_device_time(profile)
    shown = CATEGORIES if device else tuple(c for c in CATEGORIES if c not in DEVICE_CATEGORIES + ("runtime",))
    if not any(s.time["profiler"] for s in steps):  # not a live profile: no profiler time to show
        shown = tuple(c for c in shown if c != "profiler")
    compiling = ("compile",) if any(s.compile for s in steps) else ()  # cut out of dur
    columns = ("step", "dur") + compiling + shown + (("gpu_busy", "gpu_idle", "busy%") if device else ())
    return View("overview", columns, rows, _overview_notes(profile), OVERVIEW)


def profiler_time_notes(profile) -> list:
    """What live capture added to the run it recorded (ops' ``overhead``), for the footers."""
    own = sum(op.overhead for op in profile.records.ops)
    if not own:
        return []
    windows = step_windows(profile)
    span = sum(end - start for _, start, end in windows)
    share = f" ({100.0 * own / span:.0f}% of the recorded time)" if span else ""
    return [
        f"pyprof_live's own recording added {duration(own)}{share}: shown as 'profiler' in p.overview(), "
        "never in an op's host time"
    ]


def _with_busy(row: dict) -> dict:
    busy = sum(row[c] for c in DEVICE_CATEGORIES)
    row.update(
        gpu_busy=busy,
        gpu_idle=row["dur"] - busy,
        **{"busy%": round(100.0 * busy / row["dur"], 1) if row["dur"] else None},
    )
    return row


def _overview_notes(profile) -> list:
    records = profile.records
    notes = [f"source: {profile.meta.get('source', '?')}"]
    used = {k.device for k in records.kernels}
    for d in records.devices:
        if d.id in used or not used:
            notes.append(f"device {d.id}: {d.name}")
    has_children = timed_parents(records.ops)
    by_dir: defaultdict[str, int] = defaultdict(int)
    for i, op in enumerate(records.ops):
        if i not in has_children and op.kind != FUSED:
            by_dir[op.dir or "other"] += op.end - op.start
    spent = ", ".join(f"{d} {duration(by_dir[d])}" for d in DIRECTIONS if by_dir.get(d))
    notes.append(f"{len(records.ops)} ops" + (f"; innermost op host time: {spent}" if spent else ""))
    notes.extend(profiler_time_notes(profile))
    if records.kernels:
        notes.append(
            f"{len(records.kernels)} kernels, {profile.correlation.kernels_unattributed} of them launched "
            "outside any recorded op"
        )
    compiled = compile_note(profile)
    if compiled:
        notes.append(compiled)
    from .recommendations import recommendations

    advice = recommendations(profile)
    for row in advice.rows[:3]:
        notes.append(f"recommendation [{row['rule']}]: {row['advice']} ({duration(row['at_stake'])} at stake)")
    if len(advice.rows) > 3:
        notes.append(f"... {len(advice.rows) - 3} more: p.recommendations()")
    notes.extend(profile.meta.get("warnings", []))
    return notes


# -- torch.compile ---------------------------------------------------------------------------------

_COMPILE_PHASES = ("dynamo", "aot", "inductor")
#: The reason of a frame compiled on its own because its caller's graph broke (CompileRecord.after_break).
_SPLIT_OFF = "split off by a graph break: the frame calling it broke its graph there"


@paused_gc()
def compile_summary(profile) -> View:
    """torch.compile's events, in time order: each compile (Dynamo, AOTAutograd, Inductor times),
    recompile (the guard that failed), lazily compiled backward graph and graph break (its line)."""
    rows = []
    for c in sorted(profile.records.compiles, key=lambda c: (c.start, c.end)):
        row = {
            "event": c.kind,
            "id": c.compile_id or None,
            "function": c.name or None,
            "where": " <- ".join(c.callsite) or None,
            "time": c.end - c.start if c.kind != "graph_break" else None,
            "graphs": c.graphs if c.kind != "graph_break" else None,
            "kernels": c.kernels if c.kind != "graph_break" else None,
            "cache": c.cache or None,
            "reason": c.reason or (_SPLIT_OFF if c.after_break else None),
        }
        row.update({phase: c.phases.get(phase) for phase in _COMPILE_PHASES})
        rows.append(row)
    columns = ("event", "id", "function", "where", "time", *_COMPILE_PHASES, "graphs", "kernels", "cache", "reason")
    note = compile_note(profile)
    return View(
        "compiles",
        columns,
        rows,
        [note] if note else ["no torch.compile events in this profile"],
        SUMMARY,
    )


def compile_note(profile) -> str:
    """One line on what torch.compile did during the profile ("" when nothing)."""
    compiles = profile.records.compiles
    if not compiles:
        return ""
    kinds: defaultdict[str, int] = defaultdict(int)
    for c in compiles:
        kinds[c.kind] += 1
    spent = sum(c.end - c.start for c in compiles)
    phases = {p: sum(c.phases.get(p, 0) for c in compiles) for p in _COMPILE_PHASES}
    parts = [f"{kinds['compile'] + kinds['recompile']} frame compiles"]
    if kinds["recompile"]:
        parts.append(f"{kinds['recompile']} of them recompiles")
    split_off = sum(c.after_break for c in compiles)
    if split_off:
        parts.append(f"{split_off} split off by graph breaks")
    if kinds["backward"]:
        parts.append(f"{kinds['backward']} backward graphs")
    if kinds["graph_break"]:
        parts.append(f"{kinds['graph_break']} graph breaks")
    split = ", ".join(f"{p} {duration(phases[p])}" for p in _COMPILE_PHASES if phases[p])
    graphs = sum(c.graphs for c in compiles)
    kernels = sum(c.kernels for c in compiles)
    return (
        f"torch.compile: {', '.join(parts)}; {graphs} graphs, {kernels} Inductor kernels; {duration(spent)} compiling"
        + (f" ({split})" if split else "")
        + ", not counted in step times: p.compiles()"
    )
