"""Recommendations: what to change, the ops/kernels it concerns and the time at stake.

Each rule names the facts it needs (``needs``); a rule whose facts the profile lacks is not run and
the view's notes say so, so a CPU-only live profile gets the rules that apply to it (data loading,
autocast casts) and no GPU advice built on missing data. Times are summed over the steps (live
``p.step()`` ranges or Kineto ``ProfilerStep#N``; the whole profile when there are none).

rule            needs                              fires when
fp32-matmul     kernels, a tensor-core GPU         GEMM/conv kernels of float32 ops ran on CUDA cores
tc-alignment    kernels, shapes+dtypes, TC GPU     a 16-bit (8-bit) GEMM/conv has K/N or channel counts
                                                   above 8 (16) that are not multiples of it
launch-bound    kernels                            >= 25% of kernels run shorter than it took to launch them
                                                   and >= 10% of the step the GPU waits (gaps < 1 ms) for a
                                                   launch still in progress
dataloader      (any source)                       DataLoader time not hidden by GPU work >= 5% of the step
host-sync       CUDA API calls or memcpy records   blocking syncs (cudaStreamSynchronize, cudaDeviceSynchronize,
                                                   sync cudaMemcpy, .item() of a CUDA tensor) or DtoH copies
far-from-sol    kernels, shapes, GPU peak figures  ops with >= 2% of kernel time run at < 30% of speed of light
amp-casts       dtypes                             fp32 <-> 16-bit casts inside other ops (autocast)
recompiles      torch.compile events               Dynamo recompiled a function (time at stake: the recompiles)
graph-breaks    torch.compile events               Dynamo broke a graph (time at stake: compiling the frames the
                                                   breaks split off: the rest of a broken frame, the call it
                                                   broke at)

A finding is listed when its time at stake is at least MIN_SHARE (1%) of the step time, or of the
kernel time for the rules about kernels (fp32-matmul, tc-alignment, far-from-sol).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.compiled import OpCosts
from ..analysis.devicework import DeviceWork
from ..analysis.kernel_names import kernel_category, short_name, uses_tensor_cores
from ..analysis.roofline import RooflineSum, op_dtype
from ..analysis.timeline import WHOLE_PROFILE, step_breakdown
from ..formulas import canonical_dtype
from ..formulas.opargs import OpArgs
from ..formulas.work import FormulaInputError
from ..records import NO_LINK, TORCH_LINE, TensorMeta
from ..render.cells import params_text
from ..render.units import duration
from .columns import SUMMARY
from .recompile_advice import recompile_fix
from .view import View

COLUMNS = ("rule", "at_stake", "share%", "kernel%", "advice", "where")

#: What a rule may need, and how the notes name it.
FACTS = {
    "kernels": "GPU kernels",
    "gpu": "CUDA API calls or memcpy records",
    "shapes": "input shapes",
    "dtypes": "tensor dtypes",
    "tensor_cores": "a GPU with tensor cores in the peak table (or p.set_peak)",
    "peak": "peak figures for the GPU (the peak table or p.set_peak)",
    "compiles": "torch.compile events",
}

MIN_SHARE = 1.0  # percent of the step (kernel) time below which a finding is not worth a line
TINY_LAUNCH_SHARE = 0.25  # launch-bound: share of kernels shorter than their launch call
MIN_TINY_KERNELS = 100
MIN_IDLE_SHARE = 0.1  # launch-bound: share of the steps the GPU waits for launches
LAUNCH_GAP_NS = 1_000_000  # launch-bound: longer GPU gaps are not launch overhead
DATALOADER_SHARE = 0.05  # dataloader: share of the steps spent waiting for data
HOTSPOT_SHARE = 0.02  # far-from-sol: share of kernel time an op group must have
HOTSPOT_SOL = 30.0  # far-from-sol: percent of speed of light below which it is flagged
TINY_KERNEL_NS = 10_000  # a kernel without a recorded launch call is "tiny" below this
_MAX_ITEMS = 5

_MATRIX_KINDS = frozenset({"gemm", "conv"})
_FP32_SIMT = re.compile(r"(?i)sgemm|scudnn")  # fp32 CUDA-core GEMM/conv families, for ops without a dtype
_BLOCKING_API = re.compile(r"^cu(?:da)?(?:Stream|Device|Event|Ctx)Synchronize|^cu(?:da)?Memcpy(?!.*Async)")
_CAST_OPS = frozenset({"aten::to", "aten::_to_copy", "aten::copy_", "aten::type_as", "aten::_to_dtype"})
_SIXTEEN_BIT = frozenset({"float16", "bfloat16"})
_EIGHT_BIT = frozenset({"int8", "uint8", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"})
_GEMM_OPERANDS = {  # op -> (index, name) of the two matrix operands
    "aten::mm": ((0, "self"), (1, "mat2")),
    "aten::bmm": ((0, "self"), (1, "mat2")),
    "aten::addmm": ((1, "mat1"), (2, "mat2")),
    "aten::baddbmm": ((1, "batch1"), (2, "batch2")),
    "aten::matmul": ((0, "self"), (1, "other")),
    "aten::_scaled_mm": ((0, "self"), (1, "mat2")),
}
_CONV_OPERANDS = {  # op -> (index, name) of input and weight
    "aten::convolution": ((0, "input"), (1, "weight")),
    "aten::_convolution": ((0, "input"), (1, "weight")),
    "aten::cudnn_convolution": ((0, "self"), (1, "weight")),
    "aten::conv1d": ((0, "input"), (1, "weight")),
    "aten::conv2d": ((0, "input"), (1, "weight")),
    "aten::conv3d": ((0, "input"), (1, "weight")),
    "aten::convolution_backward": ((1, "input"), (2, "weight")),
}


@dataclass(frozen=True)
class Rule:
    name: str
    needs: tuple
    check: Callable  # (Context) -> row dict or None


class Context:
    """What every rule reads, computed once: device work per op, steps, own kernels per op."""

    def __init__(self, profile):
        profile.link()
        self.records = profile.records
        self.ops = profile.records.ops
        self.work = DeviceWork(profile)
        self.steps = step_breakdown(profile)
        self.step_time = sum(s.duration for s in self.steps)
        windows = [(s.start, s.end) for s in self.steps if s.name != WHOLE_PROFILE]
        self._starts = [start for start, _ in windows]
        self._ends = [end for _, end in windows]
        self.own_kernels = defaultdict(list)
        self.kernel_time = 0
        for k in self.records.kernels:
            if self.in_steps(k.start):
                self.kernel_time += k.end - k.start
                if k.op != NO_LINK:
                    self.own_kernels[k.op].append(k)
        self._costs: dict = {}
        self._op_costs = OpCosts(self.ops)

    def in_steps(self, time: int) -> bool:
        """Inside a recorded step (always True when the profile has no steps)."""
        if not self._starts:
            return True
        w = bisect_right(self._starts, time) - 1
        return w >= 0 and time < self._ends[w]

    def cost(self, i: int):
        if i not in self._costs:
            self._costs[i] = self._op_costs(i)
        return self._costs[i]

    def facts(self) -> set:
        records = self.records
        found = set()
        if records.kernels:
            found.add("kernels")
        if records.apis or records.memops:
            found.add("gpu")
        metas = [m for op in self.ops for m in _tensors(op.inputs)]
        if metas:
            found.add("shapes")
        if any(m.dtype for m in metas):
            found.add("dtypes")
        used = {k.device for k in records.kernels}
        peaks = [self.work.peaks.get(d) for d in used]
        if any(p is not None for p in peaks):
            found.add("peak")
        if any(p is not None and (p.fp16 or p.tf32) for p in peaks):
            found.add("tensor_cores")
        if records.compiles:
            found.add("compiles")
        return found

    def row(self, rule: str, at_stake: float, advice: str, items, of_kernels: bool = False) -> dict:
        """A recommendation row; ``items`` are (label, ns) pairs, the largest shown in ``where``.
        ``of_kernels``: the time at stake is kernel time, so ``kernel%`` says what share of it."""
        items = sorted(items, key=lambda item: -item[1])
        where = "; ".join(f"{label} ({duration(ns)})" for label, ns in items[:_MAX_ITEMS])
        if len(items) > _MAX_ITEMS:
            where += f"; and {len(items) - _MAX_ITEMS} more"
        share = round(100.0 * at_stake / self.step_time, 1) if self.step_time else None
        kernel_share = round(100.0 * at_stake / self.kernel_time, 1) if of_kernels and self.kernel_time else None
        return {
            "rule": rule,
            "at_stake": int(at_stake),
            "share%": share,
            "kernel%": kernel_share,
            "advice": advice,
            "where": where,
            "items": items,
        }


def _tensors(values):
    for value in values:
        if isinstance(value, TensorMeta):
            yield value
        elif isinstance(value, tuple):
            yield from (v for v in value if isinstance(v, TensorMeta))


def _grouped(pairs) -> list:
    """(label, ns) pairs summed by label, as ('label xN', ns)."""
    total: defaultdict[str, float] = defaultdict(float)
    count: defaultdict[str, int] = defaultdict(int)
    for label, ns in pairs:
        total[label] += ns
        count[label] += 1
    return [(f"{label} x{count[label]}", ns) for label, ns in total.items()]


# -- rules ----------------------------------------------------------------------------------------


def _matrix_kernels(kernels) -> list:
    return [k for k in kernels if kernel_category(k.name) in _MATRIX_KINDS]


def fp32_matmul(ctx: Context):
    peaks = ctx.work.peaks
    pairs = []
    tf32 = True
    for i, kernels in ctx.own_kernels.items():
        matrix = [k for k in _matrix_kernels(kernels) if uses_tensor_cores(k.name) is False]
        if not matrix:
            continue
        peak = peaks.get(matrix[0].device)
        if peak is None or not (peak.tf32 or peak.fp16):
            continue
        dtype = op_dtype(ctx.ops[i])
        if dtype != "float32" and not (dtype is None and any(_FP32_SIMT.search(k.name) for k in matrix)):
            continue
        tf32 = tf32 and bool(peak.tf32)
        pairs.append((ctx.ops[i].name, sum(k.end - k.start for k in matrix)))
    if not pairs:
        return None
    advice = (
        "float32 GEMMs/convolutions ran on CUDA cores: enable TF32 (torch.backends.cuda.matmul.allow_tf32 = "
        "True, torch.backends.cudnn.allow_tf32 = True) or train with torch.autocast(dtype=torch.bfloat16)"
        if tf32
        else "float32 GEMMs/convolutions ran on CUDA cores and this GPU has only fp16 tensor cores: use "
        "torch.autocast('cuda', dtype=torch.float16) with torch.amp.GradScaler"
    )
    return ctx.row("fp32-matmul", sum(ns for _, ns in pairs), advice, _grouped(pairs), of_kernels=True)


def _matrix_dims(op) -> dict | None:
    """The dims tensor cores want aligned: a GEMM's K and N, a convolution's input and output channels."""
    args = OpArgs(op)
    try:
        if op.name in _GEMM_OPERANDS:
            (ia, na), (ib, nb) = _GEMM_OPERANDS[op.name]
            a, b = args.tensor(ia, na).shape, args.tensor(ib, nb).shape
            return {"K": a[-1], "N": b[-1] if len(b) > 1 else 1}
        if op.name == "aten::linear":
            weight = args.tensor(1, "weight").shape
            return {"K": weight[-1], "N": weight[0]}
        if op.name in _CONV_OPERANDS:
            (ii, ni), (iw, nw) = _CONV_OPERANDS[op.name]
            x, w = args.tensor(ii, ni).shape, args.tensor(iw, nw).shape
            return {"C_in": x[1], "C_out": w[0]}
    except (FormulaInputError, IndexError):
        return None
    return None


def tc_alignment(ctx: Context):
    pairs = []
    for i, kernels in ctx.own_kernels.items():
        matrix = _matrix_kernels(kernels)
        if not matrix:
            continue
        op = ctx.ops[i]
        dtype = op_dtype(op)
        multiple = 8 if dtype in _SIXTEEN_BIT else 16 if dtype in _EIGHT_BIT else None
        dims = _matrix_dims(op) if multiple else None
        if not dims or multiple is None:
            continue
        # dims below the multiple (an RGB input's 3 channels, a matrix-vector N=1) cannot be padded usefully
        odd = {name: d for name, d in dims.items() if isinstance(d, int) and d > multiple and d % multiple}
        if odd:
            label = f"{op.name} " + " ".join(f"{n}={d}" for n, d in odd.items()) + f" (multiple of {multiple} wanted)"
            pairs.append((label, sum(k.end - k.start for k in matrix)))
    if not pairs:
        return None
    advice = (
        "pad GEMM/conv dimensions to multiples of 8 (16-bit) or 16 (8-bit): hidden sizes, vocabulary, "
        "channel counts; tensor cores run unaligned shapes slower or not at all"
    )
    return ctx.row("tc-alignment", sum(ns for _, ns in pairs), advice, _grouped(pairs), of_kernels=True)


def _launch_gaps(ctx: Context, kernels) -> int:
    """GPU idle time the host caused by launching too late: gaps before a kernel whose launch call had
    not returned when the device ran out of work, each at most LAUNCH_GAP_NS (longer gaps are data
    loading, syncs or Python logic, not launch overhead)."""
    apis = ctx.records.apis
    by_device = defaultdict(list)
    for k in kernels:
        by_device[k.device].append((k.start, k.end, k.launch))
    for m in ctx.records.memops:
        if ctx.in_steps(m.start):
            by_device[m.device].append((m.start, m.end, NO_LINK))
    idle = 0
    for items in by_device.values():
        items.sort()
        busy_until = None
        for start, end, launch in items:
            if (
                busy_until is not None
                and start > busy_until
                and launch != NO_LINK
                and apis[launch].end > busy_until
                and start - busy_until <= LAUNCH_GAP_NS
            ):
                idle += start - busy_until
            busy_until = end if busy_until is None else max(busy_until, end)
    return idle


def launch_bound(ctx: Context):
    apis = ctx.records.apis
    kernels = [k for k in ctx.records.kernels if ctx.in_steps(k.start)]
    tiny = [
        k
        for k in kernels
        if k.end - k.start < (apis[k.launch].end - apis[k.launch].start if k.launch != NO_LINK else TINY_KERNEL_NS)
    ]
    if len(tiny) < MIN_TINY_KERNELS or len(tiny) < TINY_LAUNCH_SHARE * len(kernels):
        return None
    idle = _launch_gaps(ctx, kernels)
    if idle < MIN_IDLE_SHARE * ctx.step_time:
        return None
    advice = (
        f"{len(tiny)} of {len(kernels)} kernels ran shorter than their launch took, and the GPU sat idle "
        f"{100.0 * idle / ctx.step_time:.0f}% of the time waiting for the next launch: launch-bound; capture "
        "the step in CUDA graphs (torch.cuda.graphs, torch.compile(mode='reduce-overhead')) or fuse ops with "
        "torch.compile"
    )
    return ctx.row("launch-bound", idle, advice, _grouped((short_name(k.name), k.end - k.start) for k in tiny))


def dataloader(ctx: Context):
    waiting = sum(s.time["dataloader"] for s in ctx.steps)
    if not ctx.step_time or waiting < DATALOADER_SHARE * ctx.step_time:
        return None
    advice = (
        "the step waits for data: DataLoader(num_workers=N > 0, pin_memory=True, persistent_workers=True) "
        "and to(device, non_blocking=True)"
    )
    return ctx.row(
        "dataloader", waiting, advice, [(s.name, s.time["dataloader"]) for s in ctx.steps if s.time["dataloader"]]
    )


def _chain_label(ops, i: int) -> str:
    """'outermost > innermost' op names of op ``i`` ('(no op)' without one)."""
    if i == NO_LINK:
        return "(no op)"
    inner, outer = ops[i].name, i
    while ops[outer].parent != NO_LINK:
        outer = ops[outer].parent
    return inner if outer == i else f"{ops[outer].name} > {inner}"


def host_sync(ctx: Context):
    ops = ctx.ops
    blocking = [a for a in ctx.records.apis if _BLOCKING_API.match(a.name) and ctx.in_steps(a.start)]
    pairs = [(f"{_chain_label(ops, a.op)}: {a.name}", a.end - a.start) for a in blocking]
    at_stake = sum(ns for _, ns in pairs)
    copies = [m for m in ctx.records.memops if m.kind == "memcpy" and m.copy_kind == "DtoH" and ctx.in_steps(m.start)]
    if not blocking:  # the source kept no sync calls: the device-to-host copies are the evidence
        pairs = [(f"{_chain_label(ops, m.op)}: memcpy DtoH", m.end - m.start) for m in copies]
        at_stake = sum(ns for _, ns in pairs)
    if not pairs:
        return None
    synced_ops = {a.op for a in blocking} | {m.op for m in copies}
    items = sum(1 for i in synced_ops if i != NO_LINK and _is_item(ops, i))
    advice = (
        f"the host waits for the GPU {len(pairs)} times"
        + (f" ({items} of them .item()/_local_scalar_dense on a CUDA tensor)" if items else "")
        + (f", {len(copies)} device-to-host copies" if copies else "")
        + ": keep values on the GPU (no .item(), .cpu(), print or Python ifs on CUDA tensors inside the step), "
        "copy with non_blocking=True, drop explicit torch.cuda.synchronize()"
    )
    return ctx.row("host-sync", at_stake, advice, _grouped(pairs))


def _is_item(ops, i: int) -> bool:
    while i != NO_LINK:
        if ops[i].name in ("aten::_local_scalar_dense", "aten::item"):
            return True
        i = ops[i].parent
    return False


def far_from_sol(ctx: Context):
    work = ctx.work
    groups: defaultdict[tuple, RooflineSum] = defaultdict(RooflineSum)
    kernel_time = 0
    for i in ctx.own_kernels:
        device = work.get(i)
        kernel_time += device.kernel_self
        if device.kernel_self != device.kernel_total:
            continue  # its callees launched kernels too: they are judged on their own
        line = work.roofline(i, ctx.cost(i))
        if line is not None:
            op = ctx.ops[i]
            groups[(op.name, params_text(op))].add(line, device.kernel_total)
    pairs = []
    for (name, params), total in groups.items():
        cells = total.cells()
        if total.time >= HOTSPOT_SHARE * kernel_time and cells["sol%"] is not None and cells["sol%"] < HOTSPOT_SOL:
            pairs.append(
                (f"{name} {params} at {cells['sol%']}% of SOL, {cells['bound']}-bound", total.time - total.ideal)
            )
    if not pairs:
        return None
    advice = (
        "these ops run far below their roofline: check layouts (channels_last for convs), fuse their "
        "elementwise neighbours (torch.compile), larger batches, or a better kernel"
    )
    return ctx.row("far-from-sol", sum(ns for _, ns in pairs), advice, pairs, of_kernels=True)


def _cast_dtypes(op) -> tuple:
    args = OpArgs(op)
    try:
        source = canonical_dtype(args.tensor(0, "self").dtype)
        out = args.output(0)
        target = canonical_dtype(out.dtype) if out is not None and out.dtype else args.dtype(1, "dtype")
    except (FormulaInputError, IndexError):
        return None, None
    return source, target


def _is_amp_cast(op) -> bool:
    if op.name != "aten::_to_copy" or op.dir not in ("fwd", "recompute"):
        return False
    source, target = _cast_dtypes(op)
    return {source, target} in ({"float32", "float16"}, {"float32", "bfloat16"})


def _cast_cause(ops, i: int, next_compute: dict) -> int:
    """The op autocast cast for: the nearest enclosing op that is not a cast (traces record autocast's
    casts inside the op's range); a live profile's dispatch mode runs below autocast and sees the casts
    as top-level ops just before the op, so there it is the next op of the same module that computes."""
    parent = ops[i].parent
    while parent != NO_LINK:
        if ops[parent].name not in _CAST_OPS:
            return parent
        parent = ops[parent].parent
    if ops[i].parent != NO_LINK:
        return NO_LINK  # a cast the user wrote (x.to(...)), not autocast's
    return next_compute.get(i, NO_LINK)


def _next_compute_ops(ctx: Context, casts: list) -> dict:
    """Top-level cast -> the next op on its thread, in its module and direction, with flops > 0."""
    by_thread = defaultdict(list)
    for i, op in enumerate(ctx.ops):
        if op.parent == NO_LINK:
            by_thread[(op.pid, op.tid)].append(i)
    position = {i: (key, n) for key, members in by_thread.items() for n, i in enumerate(members)}
    found = {}
    for i in casts:
        if ctx.ops[i].parent != NO_LINK or not ctx.ops[i].module:
            continue
        key, n = position[i]
        members = by_thread[key]
        for j in members[n + 1 : n + 1 + 16]:
            op = ctx.ops[j]
            if op.module != ctx.ops[i].module or op.dir != ctx.ops[i].dir:
                break
            if op.name not in _CAST_OPS and (ctx.cost(j).flops or 0) > 0:
                found[i] = j
                break
    return found


def amp_casts(ctx: Context):
    ops = ctx.ops
    casts = [i for i, op in enumerate(ops) if _is_amp_cast(op) and ctx.in_steps(op.start)]
    if not casts:
        return None
    next_compute = _next_compute_ops(ctx, casts)
    device = bool(ctx.records.kernels)
    pairs = []
    for i in casts:
        cause = _cast_cause(ops, i, next_compute)
        if cause == NO_LINK:
            continue
        time = ctx.work.get(i).dev_total if device else ops[i].end - ops[i].start
        where = f" ({ops[cause].module})" if ops[cause].module else ""
        pairs.append((f"{ops[cause].name}{where}", time))
    if not pairs:
        return None
    at_stake = sum(ns for _, ns in pairs)
    advice = (
        f"autocast casts float32 tensors to 16-bit (and back) inside these ops, {len(pairs)} casts: "
        "keep weights and activations in bf16/fp16 where accuracy allows (model.to(torch.bfloat16) for "
        "inference), avoid mixing float32 tensors into autocast regions"
    )
    return ctx.row("amp-casts", at_stake, advice, _grouped(pairs))


_RESUME_FRAME = "torch_dynamo_resume_in_"


def recompiles(ctx: Context):
    groups = defaultdict(list)
    for c in ctx.records.compiles:
        if c.kind == "recompile":
            groups[(c.name, " <- ".join(c.callsite))].append(c)
    if not groups:
        return None
    pairs = [
        (
            f"{name or '?'} ({where or '?'}): {events[0].reason or 'no reason recorded'}",
            sum(c.end - c.start for c in events),
        )
        for (name, where), events in groups.items()
    ]
    (name, where), events = max(groups.items(), key=lambda item: sum(c.end - c.start for c in item[1]))
    reason = events[0].reason
    advice = (
        f"recompiled {len(events)} time{'s' if len(events) > 1 else ''} at {where or name or '?'}"
        + (f" ({reason})" if reason else "")
        + f": {recompile_fix(reason)}"
    )
    return ctx.row("recompiles", sum(ns for _, ns in pairs), advice, _grouped(pairs))


def graph_breaks(ctx: Context):
    breaks = [c for c in ctx.records.compiles if c.kind == "graph_break"]
    if not breaks:
        return None
    # Compiling the frames the breaks split off: the rest of each broken frame, and each call a frame broke at (a
    # Hugging Face model's logging call breaks four nested frames, each then compiled on its own, none resumed).
    split_off = sum(c.end - c.start for c in ctx.records.compiles if c.after_break or c.name.startswith(_RESUME_FRAME))
    lines: defaultdict[tuple, list] = defaultdict(list)
    for c in breaks:
        # A break inside nested calls is logged once per frame it unwinds (each with that frame's callers): one item,
        # at the break's own line, shown with the first one's callers.
        lines[(c.callsite[0] if c.callsite else "?", c.reason)].append(c)
    # The user's own breaks first: one in torch's code (torch.optim's step breaks on purpose) is not theirs to remove.
    (line, reason), events = max(lines.items(), key=lambda item: (not item[0][0].startswith(TORCH_LINE), len(item[1])))
    where = " <- ".join(events[0].callsite) or line
    how_many = f"{len(breaks)} graph break{'s' if len(breaks) > 1 else ''}"
    if where.startswith(TORCH_LINE):
        advice = (
            f"{how_many}, all in torch's own code, first at {where} ({reason}): torch breaks the graph there itself "
            "(torch.optim's step does so on purpose, to run its update under no_grad); nothing in your code to remove"
        )
    else:
        advice = (
            f"{how_many}, first at {where} ({reason}): code after a break runs in another graph and what breaks runs "
            "eagerly; remove the cause (print, .item(), data-dependent Python control flow, unsupported calls) or "
            "move it out of the compiled function"
        )
    items = [
        (f"{' <- '.join(seen[0].callsite) or '?'}: {why} x{len(seen)}", split_off * len(seen) / len(breaks))
        for (_, why), seen in lines.items()
    ]
    return ctx.row("graph-breaks", split_off, advice, items)


RULES = (
    Rule("fp32-matmul", ("kernels", "tensor_cores"), fp32_matmul),
    Rule("tc-alignment", ("kernels", "shapes", "dtypes", "tensor_cores"), tc_alignment),
    Rule("launch-bound", ("kernels",), launch_bound),
    Rule("dataloader", (), dataloader),
    Rule("host-sync", ("gpu",), host_sync),
    Rule("far-from-sol", ("kernels", "shapes", "peak"), far_from_sol),
    Rule("amp-casts", ("dtypes",), amp_casts),
    Rule("recompiles", ("compiles",), recompiles),
    Rule("graph-breaks", ("compiles",), graph_breaks),
)


def _worth_a_line(row: dict) -> bool:
    """At least MIN_SHARE percent of what it is measured against: the kernel time for kernel rules,
    else the step time."""
    share = row["kernel%"] if row["kernel%"] is not None else row["share%"]
    return share is None or share >= MIN_SHARE


def recommendations(profile):
    """Every rule whose facts the profile has, run once; rows sorted by time at stake, largest first."""

    ctx = Context(profile)
    found = ctx.facts()
    rows, skipped = [], []
    for rule in RULES:
        missing = [FACTS[need] for need in rule.needs if need not in found]
        if missing:
            skipped.append(f"{rule.name} (needs {', '.join(missing)})")
            continue
        row = rule.check(ctx)
        if row is not None:
            rows.append(row)
    rows = sorted((r for r in rows if _worth_a_line(r)), key=lambda r: -r["at_stake"])
    notes = [
        f"{len(RULES) - len(skipped)} of {len(RULES)} rules checked; times are summed over "
        f"{len(ctx.steps)} step(s), {duration(ctx.step_time)}"
    ]
    if skipped:
        notes.append("not checked, the profile lacks what they need: " + "; ".join(skipped))
    return View("recommendations", COLUMNS, rows, notes, SUMMARY)
