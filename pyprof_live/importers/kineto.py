"""Kineto (``torch.profiler``) Chrome traces, ``.json`` or ``.json.gz``, into pyprof_live records.

Both dialects are read: the modern one (``cpu_op`` / ``kernel`` / ``cuda_runtime`` / ``ac2g``) and the
2021 TensorBoard-plugin one (``Operator`` / ``Kernel`` / ``Runtime``, lowercase ``external id``, GPU
``tid`` written ``"stream 7"``). Links are NOT made here: the records carry the ids and times that
``correlate.py`` joins, exactly as for a live run.

Events are streamed from the file by :mod:`.trace_json` and each becomes a record (or is dropped) at
once, so memory is the records plus one read window, whatever the file size.

What the trace says and where it goes:

- ``cpu_op``/``Operator`` -> :class:`OpRecord` (``Input Dims``/``Input type``/``Input Strides``/
  ``Concrete Inputs`` -> ``inputs``; ``Sequence number`` -> ``seq`` on forward ops). A backward node
  is an ``autograd::engine::evaluate_function: AddmmBackward0`` range -> ``kind="node"``,
  ``dir="bwd"``, ``altseq`` = its sequence number, name ``AddmmBackward0``; the same-named
  ``AddmmBackward0`` op that Kineto nests right inside it is folded into it (it carries the grad
  shapes), so the op chain reads ``AddmmBackward0 > aten::mm`` as in a live run. In the 2021 dialect
  there is no wrapper: the node op itself (``Fwd thread id`` > 0) becomes the node.
- ``ProfilerStep#``, ``Optimizer.step#``, ``Optimizer.zero_grad#``, ``enumerate(DataLoader)#`` and
  every ``user_annotation`` -> :class:`RangeRecord` ``kind="record_function"``.
- ``cuda_runtime``/``cuda_driver``/``Runtime`` -> :class:`ApiRecord`; ``kernel``/``Kernel`` ->
  :class:`KernelRecord`; ``gpu_memcpy``/``gpu_memset`` -> :class:`MemoryRecord`. GPU events carry
  ``pid`` = device in the file; their record gets the host pid of the API call with the same
  ``correlation`` so correlation's ``(pid, correlation)`` join works (an id that API calls of two
  processes carry places the work in neither, see :mod:`.launches`).
- An API event whose ``External id`` equals its ``correlation`` (HTA traces, e.g. alexnet: all 361
  of them) has no usable op id: its ``external_id`` is set to -1, so correlation falls back to
  time containment on the launching thread. Decided per event, not per file, because some traces
  mix both (the NCCL trace has 113 such events among 8740 good ones).
- ``python_function`` (``with_stack``) and the 2021 ``Call stack`` arg -> ``OpRecord.callsite``
  (user frames, innermost first, ``"file.py:LINE"``); ``nn.Module: Linear_0`` frames
  (``with_modules``) -> ``OpRecord.module`` (``"Owlv2Model_0.Owlv2Encoder_0.Linear_3"``).
- ``record_param_comms`` ops keep the collective's facts in ``kwargs`` (see ``_COLLECTIVE_ARGS``).
- ``[memory]`` instants (``profile_memory=True``) -> ``AllocRecord`` (bytes, device, address, the
  allocator's totals when the dialect has them); ``meta`` keeps their count and ``memory_peak_allocated``.
- Kept in ``Profile.meta`` only: ``cuda_sync`` and ``cuda_profiler_range`` counts, ``distributedInfo``, versions, profiler flags.
- Ignored: ``ac2g``/``async``/``fwdbwd`` flows (they restate ``correlation`` args and sequence
  numbers), ``gpu_user_annotation`` (GPU shadows of ranges), ``overhead``, ``Trace`` and metadata.
"""

from __future__ import annotations

import os
import re
import sys
from bisect import bisect_right
from collections import defaultdict
from operator import attrgetter, itemgetter

from ..correlate import by_start_longest_first, innermost_open
from ..errors import ProfileFormatError
from ..formulas.dtypes import canonical_dtype
from ..gcpause import paused_gc
from ..profile import Profile
from ..record_checks import drop_reversed, first_problem, reversed_warning
from ..records import (
    COMPILED,
    NO_LINK,
    RANGE_PREFIXES,
    AllocRecord,
    ApiRecord,
    DeviceInfo,
    KernelRecord,
    MemoryRecord,
    OpRecord,
    RangeRecord,
    Records,
    TensorMeta,
    Unknown,
)
from .kineto_checks import (
    COLLECTIVE_ARGS,
    device_field_problem,
    event_field_problem,
    event_label,
    event_problem,
    first_event_problem,
    header_problem,
)
from .kineto_compiled import tie_compiled_kernels
from .kineto_graphs import tie_graph_replays
from .launches import LaunchingPids
from .spool import regular_file, shown_name
from .trace_json import Progress, read_trace_events

#: How many user frames an op's call site keeps, innermost first.
CALLSITE_DEPTH = 8

# ----------------------------------------------------------------------------------------------
# Argument values

_INT = re.compile(r"-?\d+\Z")
_LIST_TOKEN = re.compile(r"\[|\]|,|[^\[\],]+")


def _atom(text: str):
    if _INT.match(text):
        return int(text)
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    try:
        return float(text)  # "0.", "1e-05", "inf"
    except ValueError:
        return text


def parse_concrete(text: str):
    """One ``Concrete Inputs`` entry -> a Python value: ``"4"`` -> 4, ``"False"`` -> False,
    ``"[2, 2]"`` -> (2, 2), nested lists -> nested tuples; anything else stays a string."""
    text = text.strip()
    if not text.startswith("["):
        return _atom(text)
    stack: list[list] = [[]]
    for token in _LIST_TOKEN.findall(text):
        token = token.strip()
        if token == "[":
            stack.append([])
        elif token == "]":
            if len(stack) < 2:
                return text
            done = tuple(stack.pop())
            stack[-1].append(done)
        elif token and token != ",":
            stack[-1].append(_atom(token))
    return stack[0][0] if len(stack) == 1 and len(stack[0]) == 1 else text


class _ArgParser:
    """Turns an op's recorded argument lists into ``OpRecord.inputs``; memoises concrete values."""

    def __init__(self):
        self._concrete: dict = {}
        self._dtypes: dict = {}

    def tensor_dtype(self, kind: str) -> str | None:
        """Torch's dtype name for an ``Input type`` that names one (``"c10::BFloat16"``), else None.
        Capitalised kinds are argument kinds (``Scalar``, ``TensorList``; 2021: ``Int``, ``Double``),
        never dtypes, though ``canonical_dtype`` would read ``Int`` as int32."""
        dtype = self._dtypes.get(kind, self)
        if dtype is self:
            dtype = self._dtypes[kind] = None if kind[:1].isupper() else canonical_dtype(kind)
        return dtype

    def concrete(self, text: str):
        value = self._concrete.get(text, self)
        if value is self:
            value = self._concrete[text] = parse_concrete(text)
        return value

    def inputs(self, args: dict) -> tuple:
        dims = args["Input Dims"]
        types = args.get("Input type") or ()
        strides = args.get("Input Strides") or ()
        concrete = args.get("Concrete Inputs") or ()
        out: list = []
        for i, shape in enumerate(dims):
            kind = types[i] if i < len(types) else ""
            stride = strides[i] if i < len(strides) else None
            dtype = self.tensor_dtype(kind)
            if dtype is not None:
                out.append(TensorMeta(tuple(shape), dtype, None if stride is None else tuple(stride)))
            elif kind == "":  # an optional argument that was None; or a trace without Input type
                out.append(TensorMeta(tuple(shape), None, None if stride is None else tuple(stride)) if shape else None)
            elif kind == "TensorList" or (shape and isinstance(shape[0], list)):
                dtype = None if kind == "TensorList" else kind
                stride = stride or ()
                out.append(
                    tuple(
                        TensorMeta(tuple(s), dtype, tuple(stride[j]) if j < len(stride) else None)
                        for j, s in enumerate(shape)
                    )
                )
            elif kind[0].isupper():  # Scalar, ScalarList, GenericList; 2021: Int, Bool, Double
                text = concrete[i] if i < len(concrete) else ""
                out.append(self.concrete(text) if text else Unknown(kind))
            else:  # a dtype this table does not know yet: still a tensor
                out.append(TensorMeta(tuple(shape), kind, None if stride is None else tuple(stride)))
        return tuple(out)


def _collective_kwargs(args: dict) -> tuple:
    out = []
    for key, name in COLLECTIVE_ARGS.items():
        if key in args:
            value = args[key]
            if name == "dtype":
                value = canonical_dtype(value) or value
            elif isinstance(value, str) and value.startswith("["):
                value = parse_concrete(value)
            out.append((name, value))
    return tuple(out)


# ----------------------------------------------------------------------------------------------
# Python frames

_FRAME = re.compile(r"(.*)\((\d+)\): ")
_INTERNAL_FILE = re.compile(r"(?:^|[/\\])(?:torch|pyprof_live)[/\\]|(?:^|[/\\])(?:contextlib|threading)\.py$")
_MODULE_PREFIX = "nn.Module: "


def _frame_of(name: str) -> tuple[str, str]:
    """A python_function name -> ("module", "Linear_0") | ("frame", "train.py:52") | ("", "")
    for frames of torch, pyprof_live, contextlib/threading plumbing and built-ins (as live capture)."""
    if name.startswith(_MODULE_PREFIX):
        return "module", name[len(_MODULE_PREFIX) :]
    match = _FRAME.match(name)
    if match is None:
        return "", ""
    path = match.group(1)
    if path.startswith("<") or _INTERNAL_FILE.search(path):
        return "", ""
    return "frame", f"{os.path.basename(path)}:{match.group(2)}"


class _PythonStacks:
    """``python_function`` events -> (callsite, module) of the Python frame an op runs in."""

    def __init__(self):
        self.events: list = []  # (pid, tid, start, end, python id, parent id, name)
        self._links: dict = {}  # (pid, python id) -> (parent id, name)
        self._frames: dict = {}  # name -> _frame_of(name)
        self._context: dict = {}  # (pid, python id) -> (callsite, module)

    def annotate(self, ops: list) -> None:
        """Give each op without a call site / module those of its innermost enclosing Python frame."""
        if not self.events:
            return
        by_thread = defaultdict(list)
        for event in self.events:
            by_thread[(event[0], event[1])].append(event)
        ops_by_thread = defaultdict(list)
        for op in ops:
            if (op.pid, op.tid) in by_thread:
                ops_by_thread[(op.pid, op.tid)].append(op)
        self._links = {(e[0], e[4]): (e[5], e[6]) for e in self.events}
        for key, thread_ops in ops_by_thread.items():
            events = by_thread[key]
            by_start_longest_first(events, itemgetter(2), itemgetter(3))
            thread_ops.sort(key=lambda op: op.start)
            self._sweep(key[0], events, thread_ops)

    def _sweep(self, pid: int, events: list, ops: list) -> None:
        spans = [(event[2], event[3], event) for event in events]
        for op, event in zip(ops, innermost_open([op.start for op in ops], spans)):
            if event is not None:
                callsite, module = self._context_of(pid, event[4])
                if not op.callsite:
                    op.callsite = callsite
                if not op.module:
                    op.module = module

    def _context_of(self, pid: int, python_id) -> tuple:
        """Memoised walk up the Python parent chain; iterative, as stacks can be deep. A chain that
        comes back to itself (a damaged trace: an event its own parent) ends where it loops."""
        context = self._context
        chain: dict = {}  # the frames walked, in order (a dict: ordered, and a loop is found in O(1))
        key = (pid, python_id)
        while key not in context and key in self._links and key not in chain:
            chain[key] = None
            key = (pid, self._links[key][0])
        callsite, module = context.get(key, ((), ""))
        for key in reversed(chain):
            name = self._links[key][1]
            frame = self._frames.get(name)
            if frame is None:
                frame = self._frames[name] = _frame_of(name)
            kind, text = frame
            if kind == "frame":
                callsite = (text,) + callsite[: CALLSITE_DEPTH - 1]
            elif kind == "module":
                module = f"{module}.{text}" if module else text
            context[key] = (callsite, module)
        return callsite, module


def _call_stack(text: str, cache: dict) -> tuple:
    """The 2021 ``Call stack`` arg ("file.py(52): fn;outer.py(9): main", innermost first) -> callsite."""
    callsite = cache.get(text)
    if callsite is None:
        frames = []
        for name in text.split(";"):
            kind, frame = _frame_of(name)
            if kind == "frame":
                frames.append(frame)
                if len(frames) == CALLSITE_DEPTH:
                    break
        callsite = cache[text] = tuple(frames)
    return callsite


# ----------------------------------------------------------------------------------------------
# Building records

_EVALUATE_FUNCTION = "autograd::engine::evaluate_function: "
_NUMBER = re.compile(r"-?\d+")
_PROFILER_FLAGS = ("record_shapes", "with_stack", "profile_memory", "with_flops", "with_modules")
_DEVICE_TYPES = {0: "cpu", 1: "cuda"}


def _number(text: str) -> int:
    """A pid/tid written as text: "25738" or "stream 7" (2021 dialect)."""
    match = _NUMBER.search(text)
    return int(match.group()) if match else 0


def _ns(us) -> int:
    """Kineto µs (int, or float with 3 decimals) -> exact integer ns. ``round(us * 1000)`` is off
    by 1 ns for some values above 2**42 µs (the product rounds again), which can put a child's end
    1 ns past its parent's; the fractional part alone converts exactly."""
    if us.__class__ is int:
        return us * 1000
    whole = int(us)
    return whole * 1000 + round((us - whole) * 1000)


def _id_arg(args: dict, name: str) -> int:
    """An optional id argument; 0 (none) when absent or not an integer."""
    value = args.get(name, 0)
    return value if value.__class__ is int else 0


def event_times(event: dict) -> tuple[int, int]:
    """(start, end) of a trace event in integer ns (public: the CUPTI replay reads traces with it too)."""
    start = _ns(event["ts"])
    return start, start + _ns(event.get("dur", 0))


def host_ids(event: dict) -> tuple[int, int]:
    """(pid, tid) of a trace event as integers (the 2021 dialect writes some as strings)."""
    pid = event["pid"]
    tid = event["tid"]
    if pid.__class__ is str:
        pid = _number(pid)
    if tid.__class__ is str:
        tid = _number(tid)
    return pid, tid


class _Shared:
    """One object per distinct name, pid/tid/sequence number and launch shape. The decoder makes a
    new object for every value of every event, and a trace repeats a few hundred names and shapes
    over a million events: shared, they cost nothing per record (a third of an import's memory).
    A value is only ever swapped for an equal one of its own type (the checks of record_checks
    must still see a float or a bool where the file wrote one)."""

    def __init__(self):
        self._ints: dict = {}
        self._shapes: dict = {}

    @staticmethod
    def name(text):
        return sys.intern(text) if text.__class__ is str else text

    def int(self, value):
        return self._ints.setdefault(value, value) if value.__class__ is int else value

    def host(self, event: dict) -> tuple:
        """:func:`host_ids`, shared."""
        pid, tid = host_ids(event)
        ints = self._ints
        if pid.__class__ is int:
            pid = ints.setdefault(pid, pid)
        if tid.__class__ is int:
            tid = ints.setdefault(tid, tid)
        return pid, tid

    def shape(self, value) -> tuple:
        """A grid or block list -> a tuple; one per distinct shape of ints."""
        shape = tuple(value)
        if all(v.__class__ is int for v in shape):
            return self._shapes.setdefault(shape, shape)
        return shape


class _Builder:
    """Collects records event by event; :meth:`finish` folds, annotates and returns the Profile."""

    def __init__(self):
        self.ops: list = []
        self.apis: list = []
        self.kernels: list = []
        self.memops: list = []
        self.ranges: list = []
        self.python = _PythonStacks()
        self._shared = _Shared()
        self._args = _ArgParser()
        self._call_stacks: dict = {}
        self._wrappers = defaultdict(list)  # (pid, tid, node name) -> op indices of evaluate_function ranges
        self._node_ops: list = []  # op indices of node-apply ops (Fwd thread id > 0, AccumulateGrad)
        self.external_is_correlation = 0
        self.launch_names: dict = {}  # (pid, correlation) -> kernel name, where launch calls name it (ROCm)
        self.launch_warnings: list = []  # LaunchingPids' warnings (it is dropped once GPU rows have pids)
        self.allocs: list = []
        self.memory_peak: dict = {}
        self.left_out: dict = {}  # record list -> events left out because they end before they start
        self.counts = defaultdict(int)  # categories kept only as counts
        self.handlers = {
            "cpu_op": self.cpu_op,
            "Operator": self.cpu_op,
            "user_annotation": self.user_annotation,
            "cuda_runtime": self.runtime,
            "Runtime": self.runtime,
            "cuda_driver": self.driver,
            "kernel": self.kernel,
            "Kernel": self.kernel,
            "gpu_memcpy": self.memcpy,
            "Memcpy": self.memcpy,
            "gpu_memset": self.memset,
            "Memset": self.memset,
            "python_function": self.python_function,
            "cpu_instant_event": self.instant,
            "cuda_sync": self.count,
            "cuda_profiler_range": self.count,
        }

    # -- one method per category -------------------------------------------------------------

    def cpu_op(self, event: dict) -> None:
        shared = self._shared
        name = shared.name(event["name"])
        start, end = event_times(event)
        pid, tid = shared.host(event)
        if name.startswith(RANGE_PREFIXES):
            self.ranges.append(RangeRecord(name, start, end, tid, pid, "record_function"))
            return
        args = event.get("args") or {}
        seq = shared.int(args.get("Sequence number", NO_LINK))
        op = OpRecord(name, start, end, tid, pid, external_id=args.get("External id", NO_LINK))
        if "kernel_backend" in args:  # an Inductor kernel launch (Triton's _RecordFunctionFast)
            op.kind = COMPILED
        if "Input Dims" in args:
            op.inputs = self._args.inputs(args)
        if name.startswith(_EVALUATE_FUNCTION):
            op.name = op.node = shared.name(name[len(_EVALUATE_FUNCTION) :])
            op.kind, op.dir, op.altseq = "node", "bwd", seq
            self._wrappers[(pid, tid, op.name)].append(len(self.ops))
        elif args.get("Fwd thread id", 0) > 0 or name.endswith("AccumulateGrad"):
            op.node = name
            op.kind, op.dir, op.altseq = "node", "bwd", seq
            self._node_ops.append(len(self.ops))
        else:
            op.seq = seq
        stack = args.get("Call stack")
        if stack:
            op.callsite = _call_stack(stack, self._call_stacks)
        if name == "record_param_comms":
            op.kwargs = _collective_kwargs(args)
        self.ops.append(op)

    def user_annotation(self, event: dict) -> None:
        start, end = event_times(event)
        pid, tid = self._shared.host(event)
        self.ranges.append(RangeRecord(self._shared.name(event["name"]), start, end, tid, pid, "record_function"))

    def runtime(self, event: dict) -> None:
        name = event["name"]
        driver = name.startswith("cu") and not name.startswith("cuda")  # 2021 'Runtime' holds both
        self._api(event, "driver" if driver else "runtime")

    def driver(self, event: dict) -> None:
        self._api(event, "driver")

    def _api(self, event: dict, kind: str) -> None:
        args = event["args"]
        start, end = event_times(event)
        pid, tid = self._shared.host(event)
        correlation = args.get("correlation", NO_LINK)
        external = args.get("External id")
        if external is None:
            external = args.get("external id", NO_LINK)
        if external == correlation and external != NO_LINK:
            external = NO_LINK
            self.external_is_correlation += 1
        kernel = args.get("kernel")
        if kernel.__class__ is str:
            self.launch_names[(pid, correlation)] = kernel
        self.apis.append(ApiRecord(self._shared.name(event["name"]), start, end, correlation, tid, pid, kind, external))

    def kernel(self, event: dict) -> None:
        args = event["args"]
        start, end = event_times(event)
        shared = self._shared
        self.kernels.append(
            KernelRecord(
                shared.name(event["name"]),
                start,
                end,
                device=args.get("device", 0),
                stream=args.get("stream", 0),
                correlation=args.get("correlation", NO_LINK),
                context=args.get("context", 0),
                grid=shared.shape(args.get("grid", (0, 0, 0))),
                block=shared.shape(args.get("block", (0, 0, 0))),
                registers=args.get("registers per thread", 0),
                shared_static=shared.int(args.get("shared memory", 0)),  # Kineto writes static + dynamic summed
                graph_id=_id_arg(args, "graph id"),  # CUDA 12+ Kineto; ROCm traces have none
                graph_node_id=_id_arg(args, "graph node id"),
            )
        )

    def memcpy(self, event: dict) -> None:
        words = event["name"].split()  # "Memcpy HtoD (Pageable -> Device)"
        self._memop(event, "memcpy", self._shared.name(words[1]) if len(words) > 1 else "")

    def memset(self, event: dict) -> None:
        self._memop(event, "memset", "")

    def _memop(self, event: dict, kind: str, copy_kind: str) -> None:
        args = event["args"]
        start, end = event_times(event)
        device = args.get("device", args.get("inDevice", 0))  # peer copies write in/from/toDevice
        self.memops.append(
            MemoryRecord(
                kind,
                start,
                end,
                self._shared.int(args.get("bytes", 0)),
                copy_kind,
                device,
                args.get("stream", 0),
                args.get("correlation", NO_LINK),
            )
        )

    def python_function(self, event: dict) -> None:
        args = event["args"]
        start, end = event_times(event)
        pid, tid = self._shared.host(event)
        self.python.events.append(
            (pid, tid, start, end, args.get("Python id"), args.get("Python parent id"), event["name"])
        )

    def instant(self, event: dict) -> None:
        if event.get("name") == "[memory]":
            self.memory(event)

    def memory(self, event: dict) -> None:
        args = event.get("args") or {}
        kind = args.get("Device Type", 0)
        device = _DEVICE_TYPES.get(kind, f"device_type{kind}")
        if device != "cpu":
            device = self._shared.name(f"{device}:{args.get('Device Id', 0)}")
        allocated = args.get("Total Allocated")
        if allocated is not None and allocated > self.memory_peak.get(device, -1):
            self.memory_peak[device] = allocated
        pid, tid = self._shared.host(event)
        self.allocs.append(
            AllocRecord(
                _ns(event["ts"]),
                int(args["Bytes"]),
                device,
                int(args.get("Addr", 0)),
                int(-1 if allocated is None else allocated),
                int(args.get("Total Reserved", -1)),
                tid,
                pid,
            )
        )

    def count(self, event: dict) -> None:
        self.counts[event["cat"]] += 1

    # -- after the last event ------------------------------------------------------------------

    def check(self, devices: list) -> None:
        """Refuse (:class:`_BadRecord`) a value the file gave that a later stage cannot use; leave out,
        counted, the events that end before they start."""
        problem = first_problem(self, _FIELDS_FROM_FILE) or first_problem(Records(devices=devices), {"devices": None})
        if problem is not None:
            raise _BadRecord(problem)
        self.left_out = drop_reversed(self)

    def finish(self, path, header: dict) -> Profile:
        devices = devices_from_properties(header.get("deviceProperties") or ())
        self.check(devices)
        self._fold_node_applies()
        self.python.annotate(self.ops)
        self._give_device_work_host_pids()
        by_start_longest_first(self.ops, attrgetter("start"), attrgetter("end"))
        for records in (self.apis, self.kernels, self.memops, self.ranges):
            records.sort(key=lambda r: r.start)
        self.allocs.sort(key=lambda a: a.time)
        if not (self.ops or self.kernels or self.apis or self.memops or self.ranges):
            problem = "trace has no PyTorch profiler events (cpu_op, kernel, cuda_runtime...)"
            if self.left_out:
                problem += f" left once the {sum(self.left_out.values())} that end before they start are left out"
            raise ProfileFormatError(path, problem)
        return Profile(
            ops=self.ops,
            apis=self.apis,
            kernels=self.kernels,
            memops=self.memops,
            ranges=self.ranges,
            devices=devices,
            meta=self._meta(path, header),
            allocs=self.allocs,
        )

    def _fold_node_applies(self) -> None:
        """Fold the ``AddmmBackward0`` op nested in its ``evaluate_function: AddmmBackward0`` range
        into that range's node record; API calls that named the folded op name the node."""
        wrappers = {key: sorted((self.ops[i].start, i) for i in found) for key, found in self._wrappers.items()}
        folded = set()
        alias = {}
        for i in self._node_ops:
            op = self.ops[i]
            candidates = wrappers.get((op.pid, op.tid, op.name))
            if not candidates:
                continue  # 2021 dialect: no wrapper, this op is the node
            pos = bisect_right(candidates, (op.start, len(self.ops))) - 1
            if pos < 0 or self.ops[candidates[pos][1]].end < op.end:
                continue
            node = self.ops[candidates[pos][1]]
            node.inputs = node.inputs or op.inputs
            if node.altseq == NO_LINK:
                node.altseq = op.altseq
            if op.external_id != NO_LINK:
                alias[(op.pid, op.external_id)] = node.external_id
            folded.add(i)
        if folded:
            _drop_indices(self.ops, folded)
        if alias:
            for api in self.apis:
                api.external_id = alias.get((api.pid, api.external_id), api.external_id)

    def _give_device_work_host_pids(self) -> None:
        """GPU events carry pid = device; the launching process is the API call's (same correlation)."""
        pids = LaunchingPids(self.apis, {op.pid for op in self.ops})
        for item in self.kernels + self.memops:
            item.pid = pids.pid(item.correlation)
        self.launch_warnings = pids.warnings()

    def _meta(self, path, header: dict) -> dict:
        meta = {"source": "kineto", "path": str(path), "schemaVersion": header.get("schemaVersion")}
        versions = {k: v for k, v in header.items() if k.endswith("_version") and not isinstance(v, (dict, list))}
        if versions:
            meta["versions"] = versions
        flags = {k: header[k] for k in _PROFILER_FLAGS if k in header}
        if flags:
            meta["profiler_flags"] = flags
        if "baseTimeNanoseconds" in header:
            meta["base_time_ns"] = header["baseTimeNanoseconds"]
        if "traceName" in header:
            meta["trace_name"] = header["traceName"]
        if isinstance(header.get("distributedInfo"), dict):
            meta["distributed"] = header["distributedInfo"]
        if self.allocs:
            meta["memory_events"] = len(self.allocs)
            if self.memory_peak:
                meta["memory_peak_allocated"] = self.memory_peak
        for category, count in self.counts.items():
            meta[f"{category}_events"] = count
        warnings = []
        if self.external_is_correlation:
            warnings.append(
                f"{self.external_is_correlation} of {len(self.apis)} CUDA API events carry External id == "
                "correlation: linked to ops by time containment on the launching thread"
            )
        warnings += self.launch_warnings
        if self.left_out:
            warnings.append(reversed_warning(self.left_out))
        if self.counts.get("cuda_profiler_range"):
            warnings.append(
                "cuda_profiler_range events (CUPTI range profiler replays) are counted, not kept as kernels"
            )
        if warnings:
            meta["warnings"] = warnings
        return meta


def _drop_indices(items: list, dropped: set) -> None:
    """Remove the items at ``dropped`` from ``items`` in place, keeping the order of the rest (a
    filtered copy of a 10 M-event trace's ops list was part of its import's peak)."""
    kept = 0
    for i, item in enumerate(items):
        if i not in dropped:
            items[kept] = item
            kept += 1
    del items[kept:]


def devices_from_properties(properties) -> list:
    """DeviceInfo records from a trace header's ``deviceProperties``."""
    devices = []
    for i, prop in enumerate(properties):
        if not isinstance(prop, dict):
            continue
        extra = {
            k: v
            for k, v in prop.items()
            if k not in ("id", "name", "computeMajor", "computeMinor", "numSms", "totalGlobalMem")
        }
        major, minor = prop.get("computeMajor"), prop.get("computeMinor")
        capability = (major, minor) if major is not None and minor is not None else ()
        devices.append(
            DeviceInfo(
                id=prop.get("id", i),
                name=prop.get("name", ""),
                compute_capability=capability,
                sm_count=prop.get("numSms", 0),
                memory_bytes=prop.get("totalGlobalMem", 0),
                extra=extra,
            )
        )
    return devices


#: What a wrong type or a missing key in a trace raises while records are built from it.
_MALFORMED = (LookupError, TypeError, AttributeError, ValueError, ArithmeticError)

#: The record fields whose values come from the trace, by record list (the rest are set here).
_FIELDS_FROM_FILE = {
    "ops": ("name", "start", "end", "tid", "pid", "seq", "altseq", "external_id", "inputs", "kwargs"),
    "apis": ("name", "start", "end", "correlation", "tid", "pid", "external_id"),
    "kernels": (
        "name",
        "start",
        "end",
        "device",
        "stream",
        "correlation",
        "context",
        "grid",
        "block",
        "registers",
        "shared_static",
        "graph_id",
        "graph_node_id",
    ),
    "memops": ("start", "end", "bytes", "device", "stream", "correlation"),
    "ranges": ("name", "start", "end", "tid", "pid"),
}


class _BadRecord(Exception):
    """A record made of the trace breaks a rule of :mod:`pyprof_live.record_checks`."""

    def __init__(self, problem):
        super().__init__(str(problem))
        self.problem = problem


def load_kineto(path, progress: Progress | None = None, capture=None, provenance=None) -> Profile:
    """Read a PyTorch profiler trace (``.json`` or ``.json.gz``) into an uncorrelated Profile.

    ``progress(fraction, stage)`` is called once per chunk read (as for :func:`load_nsys`). Raises
    :class:`ProfileFormatError` naming the file for anything that is not a readable Kineto trace.
    A pipe or FIFO is read once, into a temporary file.

    Kernels replayed from CUDA/HIP graphs are tied to the ops that issued them while the graph was
    captured (see :mod:`.kineto_graphs`): captured in the same trace, or in the trace ``capture``
    names (vLLM and SGLang capture their graphs at start-up, then replay them).

    Inductor kernels of a compiled program are tied to their compiled graph, and to the ATen ops they
    fused where a TORCH_TRACE log of the same run is given (``provenance``: a path or a list of paths)
    or lies next to the trace (see :mod:`.kineto_compiled`).
    """
    with regular_file(path) as local:
        profile, builder = _load(local, progress)
    profile.meta["path"] = shown_name(path)
    if capture is None:
        tie_graph_replays(profile, builder.launch_names)
    else:
        with regular_file(capture) as local:
            captured, capture_builder = _load(local, None)
        tie_compiled_kernels(captured, provenance, capture)  # its graph calls are not copied over
        tie_graph_replays(profile, builder.launch_names, captured, capture_builder.launch_names, capture)
    tie_compiled_kernels(profile, provenance, path)
    return profile


def _load(path, progress: Progress | None) -> tuple[Profile, _Builder]:
    builder = _Builder()
    handlers = builder.handlers
    memory = builder.memory
    header: dict = {}
    with paused_gc():
        try:
            for index, event in enumerate(read_trace_events(path, header, progress)):  # noqa: B007 - index names a bad event
                handler = handlers.get(event.get("cat"))
                if handler is not None:
                    handler(event)
                elif event.get("name") == "[memory]":  # 2021 dialect: no category
                    memory(event)
        except _MALFORMED:
            problem = event_problem(event, index) or f"{event_label(event, index)} has a value of an unexpected type"
            raise ProfileFormatError(path, problem) from None
        try:
            return builder.finish(path, header), builder
        except _BadRecord as bad:
            raise ProfileFormatError(path, _where_in_trace(path, header, bad.problem)) from None
        except _MALFORMED:  # a header entry, or ids that are used only once every event is in
            problem = (
                header_problem(header)
                or first_event_problem(read_trace_events(path))
                or "a value of an unexpected type in the trace"
            )
            raise ProfileFormatError(path, problem) from None


def _where_in_trace(path, header: dict, problem) -> str:
    """The event (or header entry) and field of the trace that gave a record ``problem``: the trace is
    read again and each event's records are built alone until one shows it."""
    if problem.records == "devices":
        return device_field_problem(header.get("deviceProperties"), problem) or str(problem)
    scratch = _Builder()
    lists = (scratch.ops, scratch.apis, scratch.kernels, scratch.memops, scratch.ranges)
    fields = {problem.records: (problem.field,)}
    for index, event in enumerate(read_trace_events(path)):
        handler = scratch.handlers.get(event.get("cat"))
        if handler is None:
            continue
        for records in lists:
            records.clear()
        handler(event)
        found = first_problem(scratch, fields)
        if found is not None:  # a field check of kineto_checks, when one fails, says it in the trace's terms
            return event_problem(event, index) or event_field_problem(event, index, found)
    return str(problem)
