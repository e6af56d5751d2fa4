"""The column contract of ``p.table()``: every column's name, header and meaning, in one place.

Other parts of the package (views, renderers, CLI ``--help``, README) read this table; a column
exists only if it is listed here. PyProf's 20 columns keep PyProf's meaning; ``module``, ``host``,
``ops`` and the speed-of-light columns ``ideal``, ``sol%`` and ``bound`` are ours.
"""

from __future__ import annotations

from typing import NamedTuple


class Column(NamedTuple):
    name: str
    header: str
    numeric: bool
    meaning: str


COLUMNS = (
    Column("idx", "Idx", True, "row number, in launch order (host time of the launching call or op)"),
    Column(
        "seq",
        "SeqId",
        True,
        "autograd sequence number tying fwd and bwd: fwd = the node the op created, "
        "bwd = the node it runs in (the forward op's number), as PyProf's seqId",
    ),
    Column("altseq", "AltSeqId", False, "other sequence numbers in the op chain (PyProf's altSeqId)"),
    Column("tid", "TId", True, "host thread that ran the op"),
    Column("layer", "Layer", False, "nested `layer:` NVTX / pyprof_live.layer() names, outermost first, joined by ':'"),
    Column("trace", "Trace", False, "user call site, innermost first: 'model.py:17 <- train.py:52'"),
    Column(
        "dir",
        "Direction",
        False,
        "fwd, bwd, opt (optimizer step and zero_grad), recompute (activation checkpointing), other (outside "
        "forward, backward and the optimizer: input creation, DataLoader fetches, gradient clipping, metrics, "
        ".item())",
    ),
    Column("sub", "Sub", True, "index of the kernel within its op (0, 1, ...); '-' for an op that launched none"),
    Column(
        "mod",
        "Module",
        False,
        "Python API namespace of the op where the source knows it "
        "(torch.nn.functional, Tensor, a wrapped class), else '-'",
    ),
    Column("op", "Op", False, "innermost op the source can see (live: the aten op, aten::addmm)"),
    Column("kernel", "Kernel", False, "short GPU kernel name (memcpy/memset shown as [memcpy HtoD] / [memset])"),
    Column(
        "params",
        "Params",
        False,
        "input shapes and dtypes, then non-tensor arguments (stride, padding, dim, alpha...); "
        "from the nearest enclosing op that recorded them when the op itself did not",
    ),
    Column("sil", "Sil(ns)", True, "device time of the kernel in ns (silicon time; never host time)"),
    Column("tc", "TC", True, "1 = the kernel used tensor cores, 0 = it did not, '-' = cannot tell / no kernel"),
    Column("device", "Device", True, "GPU index"),
    Column("stream", "Stream", True, "CUDA stream"),
    Column("grid", "Grid", False, "kernel grid x,y,z"),
    Column("block", "Block", False, "kernel block x,y,z"),
    Column("flops", "FLOPs", True, "floating-point operations of the op (on its first row; 'na' = no formula)"),
    Column(
        "bytes", "Bytes", True, "bytes the op reads + writes, each tensor once (on its first row; 'na' = no formula)"
    ),
    Column("module", "ModulePath", False, "nn.Module path (ResNet.layer1.0.conv1); bwd ops carry their fwd op's"),
    Column("host", "Host(ns)", True, "host time of the op in ns (on its first row)"),
    Column("ops", "Ops", False, "chain of enclosing ops, outermost first, ending with `op`"),
    Column(
        "fused",
        "Fused",
        False,
        "torch.compile'd code: the ATen ops (FX nodes) Inductor fused into the kernel, grouped by the op of "
        "your program they came from: gelu(mul mul add erf mul)",
    ),
    Column("graph", "Graph", False, "torch.compile'd code: the compiled graph the op ran in ('0/0 forward')"),
    Column(
        "ideal",
        "Ideal(ns)",
        True,
        "speed-of-light time of the op on its GPU: max(flops / peak math rate, "
        "bytes / DRAM bandwidth), dense peaks (on its first row; '-' = no kernels, formula or peak figures)",
    ),
    Column("sol%", "SOL%", True, "ideal as a percentage of the device time of all the op's kernels (on its first row)"),
    Column("bound", "Bound", False, "compute or memory: which term of the ideal time is larger (on its first row)"),
)

BY_NAME = {c.name: c for c in COLUMNS}
COLUMN_NAMES = tuple(c.name for c in COLUMNS)

#: PyProf's default was idx,dir,sub,mod,op,kernel,params,sil; we add where and how much.
DEFAULT_COLUMNS = ("idx", "dir", "sub", "module", "op", "kernel", "params", "host", "sil", "tc", "flops", "bytes")
