"""The record model every source produces: live capture, CUPTI, nsys, nvprof and Kineto importers.

Records are passive: plain slotted dataclasses with no behaviour beyond what their fields mean.
Correlation (``correlate.py``) fills the link fields (``OpRecord.parent``, ``OpRecord.fwd``,
``KernelRecord.op``, ...); analysis and renderers only read them.

Conventions shared by all records:
- times are integer nanoseconds on one clock per profile (host ops and GPU activity aligned);
- ``pid``/``tid`` are the host process and thread that issued the work;
- an index field (``op``, ``launch``, ``parent``, ``fwd``) holds a position in the owning
  :class:`~pyprof_live.profile.Profile` list, ``-1`` when there is no link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

NO_LINK = -1

#: OpRecord kinds of torch.compile'd code: one Inductor kernel call, an ATen op fused into it, and one
#: call of a compiled graph (its kernel calls and the ops it still dispatches lie inside it: its self
#: time is the generated wrapper's own Python between them).
COMPILED = "compiled"
FUSED = "fused"
GRAPH_CALL = "graph"

#: How a compile event's line in torch's own code starts (``CompileRecord.callsite``): ``"torch/optim/optimizer.py:79"``,
#: its path in torch, where the user's lines are ``"train.py:52"``.
TORCH_LINE = "torch/"

#: Direction of an op, PyProf's ``dir`` column widened: ``opt`` is inside ``optimizer.step()`` or
#: ``zero_grad()``, ``recompute`` is a forward re-run by activation checkpointing during backward,
#: ``other`` is outside forward, backward and the optimizer (input creation, DataLoader fetches,
#: gradient clipping, metrics, ``.item()``).
DIRECTIONS = ("fwd", "bwd", "opt", "recompute", "other")

#: record_function range (``RangeRecord.name``) that PyTorch's DataLoader opens around fetching a batch.
DATALOADER_PREFIX = "enumerate(DataLoader)#"
#: record_function ranges torch opens that set the dir of the ops inside them (innermost wins),
#: live and in traces alike: the optimizer's step and zero_grad, the DataLoader's fetch.
SCOPE_DIRS = (("Optimizer.step#", "opt"), ("Optimizer.zero_grad#", "opt"), (DATALOADER_PREFIX, "other"))
#: record_function ranges kept as ranges (not ops) when a trace holds them: the profiler's step and SCOPE_DIRS.
RANGE_PREFIXES = ("ProfilerStep#", *(prefix for prefix, _ in SCOPE_DIRS))


class TensorMeta(NamedTuple):
    """What a formula or a report needs of a tensor argument, never the tensor itself.

    ``dtype`` is torch's name without the ``torch.`` prefix (``float32``, ``bfloat16``,
    ``float8_e4m3fn``) or ``None`` when the source does not say (nsys ``sizes = [...]``).
    ``stride`` is ``None`` unless the source recorded it.
    """

    shape: tuple
    dtype: str | None = None
    stride: tuple | None = None


class Unknown(NamedTuple):
    """An argument the source did not record (e.g. a conv stride in an nsys ``sizes`` marker)."""

    what: str = ""


#: One op argument as records keep it: a TensorMeta, a tuple of TensorMeta (tensor lists such as
#: ``aten::cat``'s), a plain Python value (int, float, bool, str, None, tuple of numbers), or Unknown.
Arg = TensorMeta | tuple | int | float | bool | str | None | Unknown


def positional_inputs(op) -> tuple:
    """``op.inputs`` without the keyword values live capture appends to them (in schema order, and
    names in ``op.kwargs`` too); importers keep keyword values only in ``op.kwargs``."""
    inputs, kwargs = op.inputs, op.kwargs
    if kwargs and len(inputs) >= len(kwargs) and inputs[len(inputs) - len(kwargs) :] == tuple(v for _, v in kwargs):
        return inputs[: len(inputs) - len(kwargs)]
    return inputs


@dataclass(slots=True)
class OpRecord:
    """One operator call: an aten op seen by the dispatch mode, an emit_nvtx range, a Kineto cpu_op,
    an autograd node range in an import, or a wrapped Python function (``kind="function"``).

    torch.compile'd code: each call of an Inductor kernel is a record of kind ``"compiled"`` (name =
    the kernel, ``cpp_fused_gelu_1``; inputs/outputs = the tensors it reads/writes). Each ATen op
    (FX node) Inductor fused into it is a record of kind ``"fused"`` placed right after it in the
    list, with ``start == end ==`` the kernel call's start (no time of its own) and the node's
    shapes, module and call site: correlation makes the kernel call its parent, and a fused record
    is never a parent itself. Extern calls (``aten::mm`` out=) stay ordinary ops with ``graph`` set.
    """

    name: str  # qualified op name: "aten::addmm", "AddmmBackward0", "MyFunction.forward"
    start: int
    end: int
    tid: int = 0
    pid: int = 0
    overload: str = ""  # "default", "Tensor", "dim_IntList"
    #: "op" | "function" (wrap()/custom autograd Function) | "node" (imported bwd node range) |
    #: "compiled" (one Inductor kernel call) | "fused" (an ATen op fused into the kernel call before it) |
    #: "graph" (one call of a compiled graph, named "compiled graph")
    kind: str = "op"
    dir: str = ""  # one of DIRECTIONS; "" = not known yet (correlation inherits it from the parent op)
    seq: int = NO_LINK  # autograd sequence number of the node this (forward) op created
    altseq: int = NO_LINK  # backward: sequence number of the autograd node running this op
    node: str = ""  # backward: name of that autograd node ("AddmmBackward0")
    #: Thread whose autograd counter ``seq``/``altseq`` come from (counters are per thread); 0 when
    #: the source does not say, and the numbers are then matched process-wide.
    seq_thread: int = 0
    inputs: tuple = ()  # tuple[Arg, ...], positional then keyword values in schema order
    outputs: tuple = ()  # tuple[Arg, ...]
    kwargs: tuple = ()  # ((name, Arg), ...) keyword arguments the source recorded by name
    module: str = ""  # nn.Module path "model.layer1.0.conv1"
    layer: tuple = ()  # nested `layer:` range names, outermost first
    callsite: tuple = ()  # user frames "train.py:52", innermost first
    mod: str = ""  # PyProf's Python API namespace ("torch.nn.functional", "Tensor") when known
    param: str = ""  # AccumulateGrad: the parameter whose gradient this op accumulates
    external_id: int = NO_LINK  # the id the source uses to tie API calls to this op
    #: torch.compile'd graph the op ran in or was fused into: "<Dynamo compile id> <forward|backward|
    #: inference>" ("0/0 forward", "1/2 backward"); "" outside compiled code.
    graph: str = ""
    #: kind "fused": the ATen op of the user's program Inductor decomposed this node from
    #: ("aten::gelu" for a node ``aten::erf``; Inductor's ``original_aten``); "" when not known.
    origin: str = ""
    #: Live capture: ns the profiler itself spent around this op (its hook's work before and after
    #: the op, plus the dispatch into the hook; see capture/overhead.py), and in the module, scope and
    #: Function hooks that ran since the op before; 0 from other sources.
    overhead: int = 0
    # Link fields, filled by correlation:
    parent: int = NO_LINK  # enclosing op on the same thread
    fwd: int = NO_LINK  # backward op -> the forward op it belongs to


@dataclass(slots=True)
class ApiRecord:
    """A CUDA runtime or driver API call on the host (``cudaLaunchKernel``)."""

    name: str
    start: int
    end: int
    correlation: int
    tid: int = 0
    pid: int = 0
    kind: str = "runtime"  # "runtime" | "driver"
    external_id: int = NO_LINK  # the op id pushed around this call (CUPTI external correlation)
    # Link field, filled by correlation:
    op: int = NO_LINK


@dataclass(slots=True)
class KernelRecord:
    """One GPU kernel execution."""

    name: str  # demangled name as the source gives it
    start: int
    end: int
    device: int = 0
    stream: int = 0
    correlation: int = NO_LINK
    pid: int = 0
    context: int = 0
    grid: tuple = (0, 0, 0)
    block: tuple = (0, 0, 0)
    registers: int = 0
    shared_static: int = 0
    shared_dynamic: int = 0
    graph_id: int = 0
    graph_node_id: int = 0
    #: A kernel replayed from a CUDA graph: the correlation id of the launch call that issued it while
    #: the graph was captured (from CUPTI's graph-node records live, by matching replays to captures in
    #: imports), so correlation ties it to the op recorded at capture; NO_LINK when not known.
    capture_correlation: int = NO_LINK
    # Link fields, filled by correlation:
    launch: int = NO_LINK  # ApiRecord index (for a replayed kernel: the graph launch)
    op: int = NO_LINK  # OpRecord index (for a replayed kernel: the op that issued it at capture, when known)


@dataclass(slots=True)
class MemoryRecord:
    """A GPU memcpy or memset."""

    kind: str  # "memcpy" | "memset"
    start: int
    end: int
    bytes: int
    copy_kind: str = ""  # memcpy: "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"; memset: ""
    device: int = 0
    stream: int = 0
    correlation: int = NO_LINK
    pid: int = 0
    # Link fields, filled by correlation:
    launch: int = NO_LINK
    op: int = NO_LINK


@dataclass(slots=True)
class RangeRecord:
    """A host time range that is not an op: NVTX ranges, ``record_function`` scopes, layers."""

    name: str
    start: int
    end: int
    tid: int = 0
    pid: int = 0
    kind: str = "nvtx"  # "nvtx" | "record_function" | "layer" | "user_annotation" | "marker"
    domain: str = ""


@dataclass(slots=True)
class CompileRecord:
    """One event of torch.compile's compiler: a frame compiled or recompiled (Dynamo, then AOTAutograd
    and Inductor for its graphs), a backward graph compiled lazily, or a graph break.

    ``start``/``end`` bound the compilation on the profile's clock (a graph break is an instant:
    ``start == end``); step times exclude compile time.
    """

    kind: str  # "compile" | "recompile" | "backward" (lazily compiled backward graphs) | "graph_break"
    start: int
    end: int
    compile_id: str = ""  # Dynamo's "<frame>/<recompile>": "0/0", "0/1"; what OpRecord.graph starts with
    name: str = ""  # the compiled function ("forward", "train_step")
    #: Lines, innermost first: the compiled function's ("model.py:17") or the graph break's, then the user's lines
    #: of the call it was compiled in ("train.py:52"). A line of torch's own code starts with TORCH_LINE.
    callsite: tuple = ()
    reason: str = ""  # recompile: the guard that failed; graph break: why Dynamo stopped the graph
    graphs: int = 0  # graphs Inductor produced (forward/backward/inference)
    kernels: int = 0  # Inductor kernels in those graphs
    #: ns spent per compiler phase, where the compiler says: {"dynamo": ns, "aot": ns, "inductor": ns}
    phases: dict = field(default_factory=dict)
    cache: str = ""  # what compile caches gave: "fx graph hit 2", "fx graph miss 2, aot autograd hit 1"
    #: A frame compiled on its own because the frame calling it broke its graph there (without the break Dynamo
    #: inlines the call): the function a break left out of the graph, or the rest of the broken frame.
    after_break: bool = False
    tid: int = 0
    pid: int = 0


@dataclass(slots=True)
class AllocRecord:
    """One allocation (``bytes`` > 0) or free (``bytes`` < 0) by a memory allocator: a Kineto
    ``[memory]`` event (``profile_memory=True``), the CUDA caching allocator's history, or (live) the
    storage of an op's output."""

    time: int
    bytes: int
    device: str = "cpu"  # "cpu", "cuda:0", ... (Kineto's Device Type + Device Id)
    addr: int = 0  # address of the block; 0 = the source does not say (frees cannot be matched)
    total_allocated: int = -1  # the allocator's total on that device after this event; -1 = not said
    total_reserved: int = -1  # what the caching allocator holds from the driver; -1 = not said
    tid: int = 0
    pid: int = 0
    by_op: int = NO_LINK  # the op that made it, when the source knows (live); else found by time


@dataclass(slots=True)
class DeviceInfo:
    """A GPU the profile ran on (or that the export lists)."""

    id: int
    name: str
    compute_capability: tuple = ()  # (major, minor)
    sm_count: int = 0
    memory_bytes: int = 0
    extra: dict = field(default_factory=dict)


@dataclass
class Records:
    """The raw record lists of one profile (see records.py), as every source fills them."""

    ops: list[OpRecord] = field(default_factory=list)
    apis: list[ApiRecord] = field(default_factory=list)
    kernels: list[KernelRecord] = field(default_factory=list)
    memops: list[MemoryRecord] = field(default_factory=list)
    ranges: list[RangeRecord] = field(default_factory=list)
    devices: list[DeviceInfo] = field(default_factory=list)
    compiles: list[CompileRecord] = field(default_factory=list)
    allocs: list[AllocRecord] = field(default_factory=list)  # in time order


#: Every record list a Profile holds, in the order save files and importers use.
RECORD_TYPES = {
    "ops": OpRecord,
    "apis": ApiRecord,
    "kernels": KernelRecord,
    "memops": MemoryRecord,
    "ranges": RangeRecord,
    "devices": DeviceInfo,
    "compiles": CompileRecord,
    "allocs": AllocRecord,
}
