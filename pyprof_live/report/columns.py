"""Every column of every view: its name, header, kind and meaning, in one place.

``COLUMNS`` is the contract of ``p.table()``: other parts of the package (views, renderers, CLI
``--help``, README) read it; a column exists only if it is listed here. PyProf's 20 columns keep
PyProf's meaning; ``module``, ``host``, ``ops`` and the speed-of-light columns ``ideal``, ``sol%``
and ``bound`` are ours. The summary views, the overview and the views across ranks declare their
columns below, one table each where a name means something else there (the overview's ``kernel``
is time, the kernel summary's a name). A column's kind is what renderers go by: text or a number,
and which unit (``render/units.py``) or pandas dtype its numbers take.
"""

from __future__ import annotations

from typing import NamedTuple

#: Kinds of column: text, or numbers that are counts, percentages, times in ns, bytes or flops.
TEXT, COUNT, PERCENT, TIME, BYTES, FLOPS = "text", "count", "percent", "time", "bytes", "flops"


class Column(NamedTuple):
    name: str
    header: str
    kind: str
    meaning: str


COLUMNS = (
    Column("idx", "Idx", COUNT, "row number, in launch order (host time of the launching call or op)"),
    Column(
        "seq",
        "SeqId",
        COUNT,
        "autograd sequence number tying fwd and bwd: fwd = the node the op created, "
        "bwd = the node it runs in (the forward op's number), as PyProf's seqId",
    ),
    Column("altseq", "AltSeqId", TEXT, "other sequence numbers in the op chain (PyProf's altSeqId)"),
    Column("tid", "TId", COUNT, "host thread that ran the op"),
    Column("layer", "Layer", TEXT, "nested `layer:` NVTX / pyprof_live.layer() names, outermost first, joined by ':'"),
    Column("trace", "Trace", TEXT, "user call site, innermost first: 'model.py:17 <- train.py:52'"),
    Column(
        "dir",
        "Direction",
        TEXT,
        "fwd, bwd, opt (optimizer step and zero_grad), recompute (activation checkpointing), other (outside "
        "forward, backward and the optimizer: input creation, DataLoader fetches, gradient clipping, metrics, "
        ".item())",
    ),
    Column("sub", "Sub", COUNT, "index of the kernel within its op (0, 1, ...); '-' for an op that launched none"),
    Column(
        "mod",
        "Module",
        TEXT,
        "Python API namespace of the op where the source knows it "
        "(torch.nn.functional, Tensor, a wrapped class), else '-'",
    ),
    Column("op", "Op", TEXT, "innermost op the source can see (live: the aten op, aten::addmm)"),
    Column("kernel", "Kernel", TEXT, "short GPU kernel name (memcpy/memset shown as [memcpy HtoD] / [memset])"),
    Column(
        "params",
        "Params",
        TEXT,
        "input shapes and dtypes, then non-tensor arguments (stride, padding, dim, alpha...); "
        "from the nearest enclosing op that recorded them when the op itself did not",
    ),
    Column("sil", "Sil(ns)", TIME, "device time of the kernel in ns (silicon time; never host time)"),
    Column("tc", "TC", COUNT, "1 = the kernel used tensor cores, 0 = it did not, '-' = cannot tell / no kernel"),
    Column("device", "Device", COUNT, "GPU index"),
    Column("stream", "Stream", COUNT, "CUDA stream"),
    Column("grid", "Grid", TEXT, "kernel grid x,y,z"),
    Column("block", "Block", TEXT, "kernel block x,y,z"),
    Column("flops", "FLOPs", FLOPS, "floating-point operations of the op (on its first row; 'na' = no formula)"),
    Column(
        "bytes", "Bytes", BYTES, "bytes the op reads + writes, each tensor once (on its first row; 'na' = no formula)"
    ),
    Column("module", "ModulePath", TEXT, "nn.Module path (ResNet.layer1.0.conv1); bwd ops carry their fwd op's"),
    Column("host", "Host(ns)", TIME, "host time of the op in ns (on its first row)"),
    Column("ops", "Ops", TEXT, "chain of enclosing ops, outermost first, ending with `op`"),
    Column(
        "fused",
        "Fused",
        TEXT,
        "torch.compile'd code: the ATen ops (FX nodes) Inductor fused into the kernel, grouped by the op of "
        "your program they came from: gelu(mul mul add erf mul)",
    ),
    Column("graph", "Graph", TEXT, "torch.compile'd code: the compiled graph the op ran in ('0/0 forward')"),
    Column(
        "ideal",
        "Ideal(ns)",
        TIME,
        "speed-of-light time of the op on its GPU: max(flops / peak math rate, "
        "bytes / DRAM bandwidth), dense peaks (on its first row; '-' = no kernels, formula or peak figures)",
    ),
    Column(
        "sol%", "SOL%", PERCENT, "ideal as a percentage of the device time of all the op's kernels (on its first row)"
    ),
    Column("bound", "Bound", TEXT, "compute or memory: which term of the ideal time is larger (on its first row)"),
)

COLUMN_NAMES = tuple(c.name for c in COLUMNS)


def _by_name(*columns: Column) -> dict[str, Column]:
    return {c.name: c for c in columns}


#: The per-kernel table (``p.table()``, ``p.kernel_view()``).
TABLE = _by_name(*COLUMNS)


def _named(kind: str, meaning: str, *names: str) -> tuple[Column, ...]:
    """Columns of one kind and meaning; a name the per-kernel table has keeps its header there
    (``op`` -> ``Op``, ``host`` -> ``Host(ns)``), any other name is its own header."""
    return tuple(Column(name, TABLE[name].header if name in TABLE else name, kind, meaning) for name in names)


_SPEED_OF_LIGHT = (
    *_named(TIME, "speed-of-light time of the row's ops (see the table's ideal)", "ideal"),
    *_named(PERCENT, "ideal as a percentage of the row's device time", "sol%"),
    *_named(TEXT, "compute or memory: which term of the ideal time is larger", "bound"),
)
#: The summaries: ``p.ops()``, ``p.modules()``, ``p.kernels()``, ``p.memory()``, ``p.compiles()``,
#: ``p.recommendations()`` and ``diff``.
SUMMARY = _by_name(
    *_named(TEXT, "what the row groups by", "op", "params", "module", "kernel", "graph", "device"),
    *_named(COUNT, "how many", "calls", "ops", "tc", "blocks", "graphs", "kernels"),
    *_named(TIME, "host time in ns", "host", "host_self", "fwd", "bwd"),
    *_named(TIME, "device time in ns", "dev", "dev_self", "dev_fwd", "dev_bwd", "sil", "mean", "min", "max"),
    *_named(FLOPS, "floating-point operations", "flops"),
    *_named(BYTES, "bytes", "bytes", "live_bytes", "allocated"),
    *_SPEED_OF_LIGHT,
    # torch.compile's events (p.compiles())
    *_named(TEXT, "what the compile event was and where", "event", "id", "function", "where", "cache", "reason"),
    *_named(TIME, "time of the compile event, in all and per phase, in ns", "time", "dynamo", "aot", "inductor"),
    # recommendations
    *_named(TEXT, "the rule, what to change, and the ops or kernels concerned", "rule", "advice", "where"),
    *_named(TIME, "the time the change could save, in ns", "at_stake"),
    *_named(PERCENT, "at_stake as a share of the profile's time, and of its kernel time", "share%", "kernel%"),
    # diff of two profiles: A, B and B - A
    *_named(COUNT, "calls in A, B and their change", "calls_a", "calls_b", "d_calls"),
    *_named(
        TIME,
        "self time in A, B and its change, in ns",
        "host_self_a",
        "host_self_b",
        "d_host_self",
        "dev_self_a",
        "dev_self_b",
        "d_dev_self",
    ),
    *_named(FLOPS, "flops in A, B and their change", "flops_a", "flops_b", "d_flops"),
)
#: The overview (``p.overview()``) and the dashboard's workers, whose rows are overview totals.
OVERVIEW = _by_name(
    *_named(TEXT, "the step, or the worker", "step", "worker"),
    *_named(COUNT, "steps of the worker", "steps"),
    *_named(
        TIME,
        "wall time of the step in ns, and its parts (analysis/timeline.py)",
        "dur",
        "compile",
        "kernel",
        "memcpy",
        "memset",
        "runtime",
        "dataloader",
        "cpu_exec",
        "profiler",
        "other",
        "gpu_busy",
        "gpu_idle",
    ),
    *_named(PERCENT, "gpu_busy as a percentage of dur", "busy%"),
)
#: The views across the ranks of a run (``load_run(...).ranks()``...).
RUN = _by_name(
    *_named(TEXT, "the collective, op or kernel", "collective", "op", "kernel"),
    *_named(
        COUNT,
        "ranks, steps and counts",
        "rank",
        "step",
        "collectives",
        "last",
        "collective_no",
        "ranks",
        "first",
        "calls",
        "min_rank",
        "max_rank",
    ),
    *_named(
        TIME,
        "time in ns",
        "wall",
        "compute",
        "comm",
        "overlap",
        "memory",
        "idle",
        "wait",
        "at_stake",
        "skew",
        "end_skew",
        "total",
        "min",
        "median",
        "max",
    ),
    *_named(PERCENT, "comm time hidden under compute", "overlap%"),
)

#: PyProf's default was idx,dir,sub,mod,op,kernel,params,sil; we add where and how much.
DEFAULT_COLUMNS = ("idx", "dir", "sub", "module", "op", "kernel", "params", "host", "sil", "tc", "flops", "bytes")
