"""Inductor's own kernel -> source records, read from a torch.compile structured log (TORCH_TRACE).

A run with ``TORCH_TRACE=<dir>`` (or ``torch._logging`` trace handlers) writes one log per rank:
entries ``V0521 11:50:47.831000 3054118 file.py:967] {json metadata}`` each followed by its payload
lines, tab-indented. With ``torch._inductor.config.trace.provenance_tracking_level`` >= 1 Inductor
adds, per compiled graph, what we need to tie a kernel to the ops and lines it was generated from:

- ``inductor_provenance_tracking_node_mappings`` (``cppCodeToPost``: kernel -> post-grad FX nodes;
  keys carry a call-site handle, ``"triton_poi_fused_mul_1:2"``, in logs with debug handles) or, in
  older logs, ``inductor_triton_kernel_to_post_grad_nodes`` (the same map without handles);
- ``inductor_provenance_tracking_kernel_stack_traces``: kernel -> the user stack of each of its nodes;
- ``after_post_grad_graph`` (``inductor_post_grad_graph`` in torch 2.13): the graph those node names
  belong to, printed as code, with each node's ATen op (``torch.ops.aten.mul.Tensor``), arguments,
  output type (``"f32[10, 30][30, 1]cuda:0"``) and the ``# File: model.py:84 in forward, code: ...``
  line it came from (so a fused node has the shapes its op's formula needs);
- ``inductor_output_code``: the generated wrapper, whose ``Original ATen: [aten.addmm, aten.gelu]``
  comment before each call names the user-level ops a kernel fused;
- ``fx_graph_cache_miss``/``_hit``: the FX graph cache key, which a Kineto trace of the same run names
  in its ``## Call CompiledFxGraph <key> ##`` range (an exact join from trace to graph).

Nothing is guessed from a kernel's name: a kernel the log holds no mapping for has no nodes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from ..errors import ProfileFormatError
from ..formulas.dtypes import canonical_dtype
from ..records import TensorMeta
from .input_files import unreadable

# ``V0521 11:50:47.831000 3054118 /path/compile_fx.py:967] {...}`` (glog prefix: level, date, time, pid, file:line)
_ENTRY = re.compile(r"[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]*\] (\{.*\})\s*\Z")
# ``mul_3: "f32[10, 30][30, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_1, add);  ...``
_NODE = re.compile(r"\s*(\w+)(?:: ([^=]*?))? = torch\.ops\.(\w+)\.(\w+)\.(\w+)\((.*)")
# ``primals_3: "f32[32, 64][64, 1]cpu"`` in a signature or before ``=``: the type of a value
_TYPED_NAME = re.compile(r"(\w+): \"([^\"]+)\"")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:e-?\d+)?|inf)\Z")
# ``# File: /path/model.py:84 in forward, code: z = gelu(y)``
_FILE_COMMENT = re.compile(r"\s*# File: (.*):(\d+) in ")
# ``  File "/path/model.py", line 84, in forward``
_STACK_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_TENSOR_TYPE = re.compile(r"\"?(\w+)\[([^\]]*)\]\[([^\]]*)\]")
_ORIGINAL_ATEN = re.compile(r"\s*(?:#|//) .*Original ATen: \[([^\]]*)\]")
_HANDLE_COMMENT = re.compile(r"\s*(?:#|//) \[Provenance debug handles\] (\S+)")
# A kernel call in the Python wrapper (``k.run(``, ``extern_kernels.mm(``, ``cpp_fused_x(``) or the C++ one
# of AOTInductor (``call_triton_x(``, ``AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_mm_out(``).
_CALL = re.compile(r"\s*(?:(extern_kernels\.\w+)|call_(\w+)|AOTI_TORCH_ERROR_CODE_CHECK\((\w+)|(\w+)\.run|(\w+))\(")
#: Lines between an ``Original ATen`` comment and its call that are not the call.
_NOT_A_CALL = ("#", "//", "stream", "static constexpr")
_AOT_ID = re.compile(r"# AOT ID: \['([^']*)'\]")

#: Inductor's short dtype names in printed graphs (``f32[8, 16]``) -> torch's.
_SHORT_DTYPES = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "u8": "uint8",
    "b8": "bool",
    "c64": "complex64",
    "c128": "complex128",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
}


@dataclass(frozen=True)
class FusedNode:
    """One post-grad FX node a kernel was generated from."""

    name: str  # "mul_3"
    op: str = ""  # "aten::mul.Tensor"; "" when the log has no printed graph holding the node (or no ATen op)
    output: TensorMeta | None = None  # the node's output (shape, dtype, stride) as the graph prints it
    line: str = ""  # user line the node came from, "model.py:84"
    #: Positional arguments: TensorMeta for graph values of known type, numbers, tuples, None, str.
    inputs: tuple = ()
    kwargs: tuple = ()  # ((name, value), ...)


@dataclass(frozen=True)
class KernelProvenance:
    """What Inductor recorded about one kernel (one call site when the log has debug handles)."""

    kernel: str  # "triton_poi_fused_addmm_gelu_2", "cpp_fused_gelu_1", "extern_kernels.mm"
    handle: int | None = None  # provenance debug handle (the call site in the wrapper), when recorded
    nodes: tuple = ()  # FusedNode, in the order Inductor lists them
    #: User lines, innermost frame of each of the kernel's nodes' stacks, "model.py:84", first seen first.
    lines: tuple = ()
    #: The user-level ops the wrapper's comment names for this call ("aten.addmm" -> "aten::addmm").
    original_aten: tuple = ()

    @property
    def extern(self) -> bool:
        """An ATen/library call Inductor made (``extern_kernels.mm``, ``aoti_torch_cuda_mm_out``), not a generated kernel."""
        return self.kernel.startswith(("extern_kernels.", "aoti_torch_"))

    @property
    def ops(self) -> tuple:
        """Distinct ATen ops of the fused nodes, in node order: ``("aten::mul.Tensor", "aten::erf.default")``."""
        return tuple(dict.fromkeys(n.op for n in self.nodes if n.op))


@dataclass
class CompiledGraph:
    """One graph Inductor compiled: its identity and its kernels' provenance."""

    compile_id: str = ""  # "0/0" (Dynamo frame / compile), "" in logs without frame ids
    aot_id: str = ""  # "0_forward", "0_backward", "0_inference" (first line of the generated code)
    cache_key: str = ""  # FX graph cache key ("fe6uirnx..."), as ``## Call CompiledFxGraph <key> ##`` names it
    kernels: list = field(default_factory=list)  # KernelProvenance

    def kernel(self, name: str, handle: int | None = None) -> KernelProvenance | None:
        """The provenance of kernel ``name`` (at call site ``handle`` when given), or None."""
        for k in self.kernels:
            if k.kernel == name and (handle is None or k.handle == handle):
                return k
        return None


@dataclass
class _GraphText:
    """What the printed post-grad graph and the generated code say, before the mappings arrive."""

    nodes: dict = field(default_factory=dict)  # name -> FusedNode
    original_aten: dict = field(default_factory=dict)  # "kernel:handle" or "kernel" -> tuple of ops
    aot_id: str = ""
    #: "kernel:handle" of every debug-handle comment in the graph's own wrapper. Inductor numbers handles
    #: per compile, and a backward graph lowered with its forward (not lazily) is logged with the
    #: forward's entries too: only these call sites are the graph's.
    handles: frozenset = frozenset()


def read_provenance(path) -> list[CompiledGraph]:
    """Every compiled graph of a TORCH_TRACE log that carries kernel provenance, in log order.

    Raises :class:`ProfileFormatError` naming the file when it is not such a log.
    """
    graphs: list[CompiledGraph] = []
    text = _GraphText()
    cache_key = ""
    current: CompiledGraph | None = None
    seen_entry = False
    for number, meta, payload in _entries(path):
        seen_entry = True
        artifact = (meta.get("artifact") or {}).get("name", "") if isinstance(meta.get("artifact"), dict) else ""
        if artifact in ("after_post_grad_graph", "inductor_post_grad_graph"):
            text, current, cache_key = _GraphText(nodes=_graph_nodes(payload)), None, ""
        elif (
            "inductor_output_code" in meta or (meta.get("graph_dump") or {}).get("name") == "inductor_aot_wrapper_code"
        ):
            text.original_aten, text.aot_id, text.handles = _wrapper_comments(payload)
        elif artifact in ("fx_graph_cache_miss", "fx_graph_cache_hit"):
            cache_key = _json_payload(path, number, payload).get("key", "") or ""
            if current is not None:
                current.cache_key = cache_key
        elif artifact in (
            "inductor_provenance_tracking_node_mappings",
            "inductor_triton_kernel_to_post_grad_nodes",
            "inductor_provenance_tracking_kernel_stack_traces",
        ):
            mapping = _json_payload(path, number, payload)
            if current is None:
                current = CompiledGraph(_compile_id(meta), text.aot_id, cache_key)
                graphs.append(current)
            _merge(current, artifact, mapping, text)
    if not seen_entry:
        raise ProfileFormatError(path, "not a torch.compile structured log (TORCH_TRACE): no log entry found")
    return graphs


def _entries(path):
    """(line number, metadata dict, payload lines) of each entry of the log."""
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as error:
        raise unreadable(path, error) from None
    with f:
        meta = None
        start = 0
        payload: list = []
        try:
            for number, line in enumerate(f, start=1):
                if line.startswith("\t"):
                    if meta is None:
                        raise ProfileFormatError(path, f"line {number}: payload line before any log entry")
                    payload.append(line[1:].rstrip("\n"))
                    continue
                match = _ENTRY.match(line)
                if match is None:
                    if not line.strip():
                        continue
                    raise ProfileFormatError(path, f"line {number}: not a TORCH_TRACE log entry")
                if meta is not None:
                    yield start, meta, payload
                try:
                    meta = json.loads(match.group(1))
                except ValueError:
                    raise ProfileFormatError(path, f"line {number}: entry metadata is not JSON") from None
                if not isinstance(meta, dict):
                    raise ProfileFormatError(path, f"line {number}: entry metadata is not a JSON object")
                start, payload = number, []
        except OSError as error:
            raise unreadable(path, error) from None
        if meta is not None:
            yield start, meta, payload


def _json_payload(path, number: int, payload: list) -> dict:
    try:
        value = json.loads("\n".join(payload))
    except ValueError:
        raise ProfileFormatError(path, f"line {number}: artifact payload is not JSON") from None
    if not isinstance(value, dict):
        raise ProfileFormatError(path, f"line {number}: artifact payload is not a JSON object")
    return value


def _compile_id(meta: dict) -> str:
    frame, compile_ = meta.get("frame_id"), meta.get("frame_compile_id")
    return f"{frame}/{compile_}" if frame is not None and compile_ is not None else ""


def tensor_type(text: str) -> TensorMeta | None:
    """``"f32[10, 30][30, 1]cuda:0"`` -> TensorMeta((10, 30), "float32", (30, 1)); None for other types."""
    match = _TENSOR_TYPE.match(text.strip())
    if match is None:
        return None
    short, shape, stride = match.groups()
    dtype = _SHORT_DTYPES.get(short) or canonical_dtype(short)
    return TensorMeta(_ints(shape), dtype, _ints(stride))


def _ints(text: str) -> tuple:
    return tuple(int(p) if p.strip().lstrip("-").isdigit() else p.strip() for p in text.split(",") if p.strip())


def _graph_nodes(payload: list) -> dict:
    """Node name -> FusedNode from a printed post-grad graph (its ``# File:`` comments give the lines)."""
    types = {name: tensor_type(text) for row in payload for name, text in _TYPED_NAME.findall(row)}
    nodes = {}
    line = ""
    for text in payload:
        if not text.strip():
            line = ""  # a blank line ends the nodes a `# File:` comment covers
            continue
        comment = _FILE_COMMENT.match(text)
        if comment is not None:
            line = f"{os.path.basename(comment.group(1))}:{comment.group(2)}"
            continue
        if text.lstrip().startswith("#"):
            line = ""  # "# No stacktrace found for following nodes"
            continue
        node = _NODE.match(text)
        if node is not None:
            name, annotation, namespace, op, overload, rest = node.groups()
            output = tensor_type(annotation) if annotation else None
            inputs, kwargs = _arguments(rest, types)
            nodes[name] = FusedNode(name, f"{namespace}::{op}.{overload}", output, line, inputs, kwargs)
    return nodes


def _arguments(text: str, types: dict) -> tuple[tuple, tuple]:
    """``mul_1, [1, 0], correction = 0, keepdim = True);  mul_1 = None`` -> (inputs, kwargs)."""
    depth = 0
    parts: list[str] = []
    current: list[str] = []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            if depth == 0:
                break  # the call's closing parenthesis
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    inputs, kwargs = [], []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        key, eq, value = part.partition(" = ")
        if eq and key.isidentifier():
            kwargs.append((key, _value(value.strip(), types)))
        else:
            inputs.append(_value(part, types))
    return tuple(inputs), tuple(kwargs)


def _value(text: str, types: dict):
    """One printed argument: a graph value (its TensorMeta), a list, a number, None/True/False, else the text."""
    if text.startswith("[") and text.endswith("]"):
        inner, _ = _arguments(text[1:-1] + ")", types)
        return inner
    if text in types:
        return types[text]
    if text in ("None", "True", "False"):
        return None if text == "None" else text == "True"
    if _NUMBER.match(text):
        return float(text) if any(c in text for c in ".ei") else int(text)
    if text.startswith("torch."):  # torch.float32, torch.contiguous_format
        return canonical_dtype(text[len("torch.") :]) or text
    return text


def _wrapper_comments(payload: list) -> tuple[dict, str, frozenset]:
    """``Original ATen`` comment of each kernel call in the generated wrapper, keyed by
    ``"kernel:handle"`` when the call carries a debug handle, else by kernel name; the AOT id; and
    the debug handles of all its calls."""
    found: dict = {}
    handles = set()
    aot_id = ""
    aten: tuple | None = None
    handle = ""
    for text in payload:
        if not aot_id:
            match = _AOT_ID.match(text.lstrip("/ "))
            if match is not None:
                aot_id = match.group(1)
                continue
        match = _HANDLE_COMMENT.match(text)
        if match is not None:
            handles.add(match.group(1))
            handle = match.group(1) if aten is not None else handle
            continue
        match = _ORIGINAL_ATEN.match(text)
        if match is not None:
            aten = tuple(_aten_name(a) for a in match.group(1).split(",") if a.strip())
            handle = ""
            continue
        if aten is None:
            continue
        if text.lstrip().startswith(_NOT_A_CALL):
            continue  # more comments, the stream fetched before a launch, C++ shape constants
        call = _CALL.match(text)
        if call is not None:
            name = next(g for g in call.groups() if g)
            found.setdefault(handle or name, aten)
        aten = None
    return found, aot_id, frozenset(handles)


def _aten_name(text: str) -> str:
    """``aten.addmm`` -> ``aten::addmm``."""
    namespace, _, rest = text.strip().partition(".")
    return f"{namespace}::{rest}" if rest else namespace


def _split_handle(key: str) -> tuple[str, int | None]:
    """``"triton_poi_fused_mul_1:2"`` -> ("triton_poi_fused_mul_1", 2); no handle -> (key, None)."""
    name, sep, handle = key.rpartition(":")
    if sep and handle.isdigit():
        return name, int(handle)
    return key, None


def _stack_line(stack: str) -> str:
    """The innermost frame of a printed stack (``File "x.py", line 84, in f``) as ``x.py:84``."""
    stack = stack.replace("\\n", "\n")  # some logs hold the stack JSON-escaped twice
    frames = _STACK_FRAME.findall(stack)
    if not frames:
        return ""
    path, line = frames[-1]
    return f"{os.path.basename(path)}:{line}"


def _merge(graph: CompiledGraph, artifact: str, mapping: dict, text: _GraphText) -> None:
    """Fold one provenance artifact into the graph's kernels (the artifacts of a graph complete each other)."""
    by_key = {(k.kernel, k.handle): i for i, k in enumerate(graph.kernels)}
    if artifact == "inductor_provenance_tracking_node_mappings":
        entries = mapping.get("cppCodeToPost") or {}
    else:
        entries = mapping
    for key, values in entries.items():
        if not isinstance(values, list):
            continue
        name, handle = _split_handle(key)
        if handle is not None and text.handles and key not in text.handles:
            continue  # a call site of another graph of the same compile
        index = by_key.get((name, handle))
        old = graph.kernels[index] if index is not None else KernelProvenance(name, handle)
        if artifact == "inductor_provenance_tracking_kernel_stack_traces":
            lines = tuple(dict.fromkeys(filter(None, (_stack_line(s) for s in values if isinstance(s, str)))))
            new = KernelProvenance(name, handle, old.nodes, lines, old.original_aten)
        else:
            if old.nodes:
                continue  # the newer artifact came first; the older one restates it
            nodes = tuple(text.nodes.get(n) or FusedNode(n) for n in values if isinstance(n, str))
            lines = old.lines or tuple(dict.fromkeys(n.line for n in nodes if n.line))
            aten = text.original_aten.get(key) or text.original_aten.get(name, ())
            new = KernelProvenance(name, handle, nodes, lines, aten)
        if index is None:
            by_key[(name, handle)] = len(graph.kernels)
            graph.kernels.append(new)
        else:
            graph.kernels[index] = new
