"""Views: the rows of ``p.table()`` and of the summaries, computed from correlated records.

Views return :class:`View` objects (rows + column names + footer notes); turning them into text,
CSV or HTML is the renderers' job (``render/``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from . import cells
from .formulas import evaluate
from .kernel_names import short_name, uses_tensor_cores
from .records import NO_LINK


@dataclass
class View:
    """Rows (dicts keyed by column name) with the columns to show and notes for the footer."""

    title: str
    columns: tuple
    rows: list
    notes: list = field(default_factory=list)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def __str__(self):
        from .render.text import render_view

        return render_view(self)

    def _repr_html_(self):
        from .render.html import view_html

        return view_html(self)


def _chain(ops, i: int) -> list:
    """Indices of the op and its enclosing ops, outermost first."""
    chain = []
    while i != NO_LINK:
        chain.append(i)
        i = ops[i].parent
    chain.reverse()
    return chain


def _device_work(profile):
    """(op index -> [(host key, kind, record)]) and the unattributed device work, launch-ordered."""
    apis = profile.records.apis
    by_op = defaultdict(list)
    unattributed = []
    for kind, items in (("kernel", profile.records.kernels), ("mem", profile.records.memops)):
        for item in items:
            key = apis[item.launch].start if item.launch != NO_LINK else item.start
            entry = (key, kind, item)
            (by_op[item.op] if item.op != NO_LINK else unattributed).append(entry)
    for entries in by_op.values():
        entries.sort(key=lambda e: (e[0], e[2].start))
    unattributed.sort(key=lambda e: (e[0], e[2].start))
    return by_op, unattributed


def _op_cells(profile, i: int) -> dict:
    """The cells every row of op ``i`` shares."""
    ops = profile.records.ops
    op = ops[i]
    chain = _chain(ops, i)
    names = [ops[j].name for j in chain]
    if op.node and op.node not in names:
        names.insert(len(names) - 1, op.node)  # live bwd ops: show the autograd node they ran in
    own_seq = op.altseq if op.dir == "bwd" and op.altseq != NO_LINK else op.seq
    other_seqs = sorted({ops[j].seq for j in chain} - {NO_LINK, own_seq})
    return {
        "seq": own_seq if own_seq != NO_LINK else None,
        "altseq": ",".join(map(str, other_seqs)) or None,
        "tid": op.tid,
        "layer": ":".join(op.layer) or None,
        "trace": " <- ".join(op.callsite) or None,
        "dir": op.dir or None,
        "mod": op.mod or None,
        "op": op.name,
        "params": cells.params_text(op) or None,
        "module": op.module or None,
        "ops": " > ".join(names),
    }


def _device_cells(kind: str, item) -> dict:
    if kind == "kernel":
        tc = uses_tensor_cores(item.name)
        return {
            "kernel": short_name(item.name), "sil": item.end - item.start, "tc": None if tc is None else int(tc),
            "device": item.device, "stream": item.stream,
            "grid": cells.xyz_text(item.grid), "block": cells.xyz_text(item.block),
        }
    label = f"[memcpy {item.copy_kind}]" if item.kind == "memcpy" else "[memset]"
    return {"kernel": label, "sil": item.end - item.start, "device": item.device, "stream": item.stream}


def kernel_rows(profile) -> tuple[list, dict]:
    """One row per kernel (and memcpy/memset) plus one per innermost op that launched none.

    Op-level quantities (host, flops, bytes) are on the op's first row only. Returns the rows in
    launch order and coverage facts for the footer.
    """
    profile.correlation  # noqa: B018 - links must be filled before reading them
    ops = profile.records.ops
    by_op, unattributed = _device_work(profile)
    has_children = {op.parent for op in ops if op.parent != NO_LINK}
    keyed = []
    no_formula_ops = 0
    no_formula_time = total_time = 0
    for i, op in enumerate(ops):
        work = by_op.get(i)
        if not work and i in has_children:
            continue
        shared = _op_cells(profile, i)
        cost = evaluate(op)
        first = dict(shared, host=op.end - op.start, flops=_cost_cell(cost.flops), bytes=_cost_cell(cost.bytes))
        time = sum(e[2].end - e[2].start for e in work) if work else op.end - op.start
        total_time += time
        if cost.flops is None and cost.bytes is None:
            no_formula_ops += 1
            no_formula_time += time
        if not work:
            keyed.append(((op.start, 0), dict(first, sub=None)))
            continue
        for sub, (key, kind, item) in enumerate(work):
            row = first if sub == 0 else dict(shared)
            row.update(_device_cells(kind, item), sub=sub)
            keyed.append(((key, sub), row))
    for key, kind, item in unattributed:
        row = _device_cells(kind, item)
        row.update(op="(unattributed)", ops="(unattributed)")
        keyed.append(((key, 0), row))
    keyed.sort(key=lambda kr: kr[0])
    rows = []
    for idx, (_, row) in enumerate(keyed, start=1):
        row["idx"] = idx
        rows.append(row)
    facts = {
        "ops_without_formula": no_formula_ops,
        "time_without_formula": no_formula_time,
        "time_total": total_time,
        "unattributed": len(unattributed),
        "unattributed_time": sum(e[2].end - e[2].start for e in unattributed),
    }
    return rows, facts


def _cost_cell(value):
    """A formula result: the number, or 'na' when no formula could give one."""
    return "na" if value is None else value


def op_summary(profile, by: str = "op") -> View:
    """Per op (or op + input shapes): calls, host total/self, device time, flops, bytes."""
    if by not in ("op", "op+shape"):
        raise ValueError(f'by must be "op" or "op+shape", not {by!r}')
    profile.correlation  # noqa: B018
    ops = profile.records.ops
    child_time = defaultdict(int)
    for op in ops:
        if op.parent != NO_LINK:
            child_time[op.parent] += op.end - op.start
    device = defaultdict(int)
    for item in list(profile.records.kernels) + list(profile.records.memops):
        if item.op != NO_LINK:
            device[item.op] += item.end - item.start
    groups: dict = {}
    for i, op in enumerate(ops):
        shapes = cells.params_text(op) if by == "op+shape" else ""
        key = (op.name, shapes)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"op": op.name, "params": shapes or None, "calls": 0, "host": 0, "host_self": 0,
                               "sil": 0, "flops": 0, "bytes": 0}
        g["calls"] += 1
        host = op.end - op.start
        g["host"] += host
        g["host_self"] += host - child_time[i]
        g["sil"] += device[i]
        cost = evaluate(op)
        for name in ("flops", "bytes"):
            value = getattr(cost, name)
            if value is None or g[name] == "na":
                g[name] = "na"
            else:
                g[name] += value
    rows = sorted(groups.values(), key=lambda g: (-g["sil"], -g["host_self"], g["op"]))
    columns = ("op", "params", "calls", "host", "host_self", "sil", "flops", "bytes") if by == "op+shape" else \
        ("op", "calls", "host", "host_self", "sil", "flops", "bytes")
    return View(f"ops by {by}", columns, rows)


def module_summary(profile) -> View:
    """Per nn.Module path, inclusive of its children: ops, host time fwd/bwd/opt, device time."""
    profile.correlation  # noqa: B018
    ops = profile.records.ops
    device = defaultdict(int)
    for item in list(profile.records.kernels) + list(profile.records.memops):
        if item.op != NO_LINK:
            device[item.op] += item.end - item.start
    has_children = {op.parent for op in ops if op.parent != NO_LINK}
    totals: dict = {}
    for i, op in enumerate(ops):
        if i in has_children or not op.module:
            continue  # innermost ops only, so nested imports are not counted twice
        parts = op.module.split(".")
        for depth in range(1, len(parts) + 1):
            path = ".".join(parts[:depth])
            t = totals.get(path)
            if t is None:
                t = totals[path] = {"module": path, "ops": 0, "host_self": 0, "host": 0, "fwd": 0, "bwd": 0,
                                    "sil": 0}
            host = op.end - op.start
            t["ops"] += 1
            t["host"] += host
            if depth == len(parts):
                t["host_self"] += host
            if op.dir in ("fwd", "bwd"):
                t[op.dir] += host
            t["sil"] += device[i]
    rows = [totals[k] for k in sorted(totals)]
    return View("modules", ("module", "ops", "host", "host_self", "fwd", "bwd", "sil"), rows)


def kernel_summary(profile) -> View:
    """Per kernel name: calls, total/mean/min/max device time, tensor cores."""
    groups: dict = {}
    for k in profile.records.kernels:
        name = short_name(k.name)
        d = k.end - k.start
        g = groups.get(name)
        if g is None:
            tc = uses_tensor_cores(k.name)
            g = groups[name] = {"kernel": name, "calls": 0, "sil": 0, "min": d, "max": d,
                                "tc": None if tc is None else int(tc)}
        g["calls"] += 1
        g["sil"] += d
        g["min"] = min(g["min"], d)
        g["max"] = max(g["max"], d)
    rows = sorted(groups.values(), key=lambda g: (-g["sil"], g["kernel"]))
    for g in rows:
        g["mean"] = g["sil"] // g["calls"]
    return View("kernels", ("kernel", "calls", "sil", "mean", "min", "max", "tc"), rows)


DATALOADER_PREFIX = "enumerate(DataLoader)#"


def overview(profile) -> View:
    """Where the time went: host op time per direction, device time per kind, data loading, steps."""
    profile.correlation  # noqa: B018
    ops = profile.records.ops
    has_children = {op.parent for op in ops if op.parent != NO_LINK}
    rows = [{"metric": "source", "value": profile.meta.get("source", "?")}]
    for d in profile.records.devices:
        rows.append({"metric": f"device {d.id}", "value": d.name})
    steps = [r for r in profile.records.ranges if r.kind == "step"]
    if steps:
        rows.append({"metric": "steps recorded", "value": len(steps)})
        rows.append({"metric": "step time (ns)", "value": sum(r.end - r.start for r in steps)})
    by_dir = defaultdict(int)
    for i, op in enumerate(ops):
        if i not in has_children:
            by_dir[op.dir or "other"] += op.end - op.start
    rows.append({"metric": "ops", "value": len(ops)})
    for direction in ("fwd", "bwd", "opt", "recompute", "other"):
        if by_dir.get(direction):
            rows.append({"metric": f"host op time {direction} (ns)", "value": by_dir[direction]})
    loading = sum(r.end - r.start for r in profile.records.ranges if r.name.startswith(DATALOADER_PREFIX))
    if loading:
        rows.append({"metric": "data loading (ns)", "value": loading})
    rows.append({"metric": "kernels", "value": len(profile.records.kernels)})
    if profile.records.kernels:
        rows.append({"metric": "kernel time (ns)", "value": sum(k.end - k.start for k in profile.records.kernels)})
        rows.append({"metric": "kernels unattributed", "value": profile.correlation.kernels_unattributed})
    for kind in ("memcpy", "memset"):
        items = [m for m in profile.records.memops if m.kind == kind]
        if items:
            rows.append({"metric": f"{kind} time (ns)", "value": sum(m.end - m.start for m in items)})
    return View("overview", ("metric", "value"), rows, notes=list(profile.meta.get("warnings", [])))
