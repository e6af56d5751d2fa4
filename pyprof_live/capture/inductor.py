"""What an Inductor-compiled graph says about its kernels, read while it is compiled.

Inductor writes each graph as a Python wrapper module whose ``Runner.call`` calls the graph's
kernels one after the other: C++ kernels (``cpp_fused_gelu_1(buf5, buf6)``), Triton launches
(``triton_poi_fused_gelu_1.run(buf5, buf6, 8192, stream=stream0)``) and extern calls
(``extern_kernels.addmm(..., out=buf7)``). With provenance tracking on, Inductor writes a debug
handle before each call (``# [Provenance debug handles] cpp_fused_gelu_1:3``) and maps each handle
to the post-grad FX nodes the kernel was generated from; those nodes carry the module stack, the
user's stack trace, the ATen op they were decomposed from and their shapes.

This module turns that into a :class:`GraphInfo`: the graph's call sites by wrapper line, each
with the ops it fused. Everything torch-internal about compiled graphs is read here (and in
``compiled.py``), so a torch version that moves it is handled in one place.
"""

from __future__ import annotations

import functools
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

import torch

from .. import torch_compat
from ..records import TensorMeta
from . import callsite
from .finalize import to_arg

#: The post-grad node's module stack: ``nn_module_stack`` in forward graphs; backward nodes carry
#: their forward node's as ``fwd_nn_module_stack``.
_MODULE_STACK_KEYS = ("nn_module_stack", "fwd_nn_module_stack")

_HANDLE_COMMENT = re.compile(r"#\s*\[Provenance debug handles\]\s*([\w.]+):(\d+)")
_CPP_KERNEL = re.compile(r"(?ms)^(\w+) = async_compile\.cpp_pybinding\(.*?\bvoid\s+kernel\(([^)]*)\)")
_TRACE_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_AOT_ID = re.compile(r"# AOT ID: \['(\d+)_")
#: Argument names of Inductor kernels: what the kernel does with the tensor behind each.
_READ, _WRITE, _BOTH = "read", "write", "both"


@dataclass(slots=True)
class FusedOp:
    """One post-grad FX node a kernel (or extern call) was generated from: what its record holds."""

    name: str  # "aten::mul"
    overload: str
    inputs: tuple
    outputs: tuple
    kwargs: tuple
    module: str  # Dynamo's source of the innermost module: "L['self'].blocks.0.act"; "" if none
    callsite: tuple  # user frames of the node's stack trace, innermost first: ("model.py:12", ...)
    origin: str  # the ATen op it was decomposed from: "aten::gelu"


@dataclass(slots=True)
class CallSite:
    """One call in the wrapper's ``Runner.call``: a kernel (or extern call) and what it fused."""

    kernel: str  # "cpp_fused_gelu_1", "triton_poi_fused_gelu_1", "extern_kernels.addmm"
    handle: int
    fused: tuple  # FusedOp, in Inductor's order
    roles: tuple = ()  # per tensor argument, in call order: "read" | "write" | "both" ("" unknown)


@dataclass(slots=True)
class GraphInfo:
    """A compiled graph: its name as records show it and its call sites keyed by wrapper line."""

    name: str  # "0/0 forward"
    compile_id: str  # "0/0"
    backward: bool
    sites: dict = field(default_factory=dict)  # wrapper line -> CallSite
    kernels: int = 0  # C++ kernels and Triton kernels it defines (extern calls excluded)
    #: Their names: read from the source once, not at each profile's first call of the graph.
    defined: tuple = ()
    #: The names a profile looks for among the wrapper module's globals to wrap: the kernels called at
    #: ``sites``, then those ``defined``; worked out at the graph's first instrumentation (``sites`` and
    #: ``defined`` never change after the graph is read), not at each profile's (~10 us per graph).
    wrapped: tuple | None = None
    #: Dynamo sources of the roots the module paths start from ("L['self']") -> our path ("MLP").
    roots: dict = field(default_factory=dict)
    #: Those sources, found among the fused nodes' modules (None: not looked for yet).
    root_sources: frozenset | None = None
    provenance: bool = True  # False: compiled without Inductor's provenance (before the profile)
    dynamic: bool = False  # sizes are symbols: argument shapes change between calls
    #: Ops Inductor left to ATen (``torch.ops.aten.X.default(...)``): (name, overload) -> their call
    #: sites in wrapper order; the op hook records them, matched in call order.
    fallbacks: dict = field(default_factory=dict)
    #: Dynamic graphs: (symbol, graph input index, dim or -1 for an int input) giving each size
    #: symbol's value at a call, so the fused ops' symbolic shapes can be made concrete.
    symbols: tuple = ()
    #: Worked out from ``sites`` at the first profile's stop and kept for later ones (static graphs):
    #: wrapper line -> ((FusedOp, our module path), ...), the call's module, the call's user line;
    site_facts: dict = field(default_factory=dict)
    #: (wrapper line, dir, tid) -> (name, the record fields after ``end``) of each fused op's record.
    fused_fields: dict = field(default_factory=dict)
    #: wrapper line -> (read, written) arguments of the kernel call there (static graphs: their shapes
    #: never change, so later profiles reuse them).
    site_args: dict = field(default_factory=dict)
    #: The code objects of its wrapper module are marked as plumbing (callsite.mark_internal): once per
    #: graph, not at each profile's first call (the module's globals take ~0.2 ms to walk).
    wrapper_marked: bool = False
    #: (id of the wrapper code calling a kernel, instruction offset) -> (wrapper line, argument shapes of a
    #: static graph, that code, the site's serial number): see compiled.GraphRun.
    call_sites: dict = field(default_factory=dict)
    #: (extern call site's serial, the profile's stack depth) -> what extern_ops.remember() kept of the op a static
    #: graph's extern call there was learned to run: later profiles take the site's calls off the op hook from the
    #: first one (~15 us less for each site's first call in each profile).
    learned_externs: dict = field(default_factory=dict)


def graph_name(compile_id: str, backward: bool, inference: bool) -> str:
    kind = "backward" if backward else "inference" if inference else "forward"
    return f"{compile_id} {kind}".strip()


def read_graph(compiled, gm, kernel_nodes: dict, compile_id: str, stack_depth: int) -> GraphInfo:
    """GraphInfo of a freshly compiled graph: ``compiled`` is Inductor's CompiledFxGraph, ``gm`` its
    post-grad GraphModule, ``kernel_nodes`` Inductor's ``"kernel:handle" -> [node names]`` map."""
    kwargs = getattr(compiled, "fx_kwargs", None) or {}
    backward = bool(kwargs.get("is_backward"))
    info = GraphInfo(graph_name(compile_id, backward, bool(kwargs.get("is_inference"))), compile_id, backward)
    source = compiled.source_code or ""
    nodes = {node.name: node for node in gm.graph.nodes} if gm is not None else {}
    roles = _cpp_roles(source)
    calls = list(call_lines(source))
    functions = _top_level_functions(source.splitlines())
    fused_of: dict = {}  # "kernel:handle" -> (node, fused op) pairs, in the order the wrapper first calls each
    higher_order_in: dict = {}  # higher-order op node -> the keys of the kernels Inductor says it fused into
    for line, kernel, handle in calls:
        key = f"{kernel}:{handle}"
        if key in fused_of:
            continue
        # A control-flow subgraph's calls (torch.cond's branches) run in a function of their own, named as the
        # subgraph, whose provenance names that subgraph's nodes.
        subgraph = getattr(gm, functions[line - 1] or "", None) if gm is not None else None
        scope = nodes
        if isinstance(subgraph, torch.fx.GraphModule):
            scope = {node.name: node for node in subgraph.graph.nodes}
        generated_from = [scope[n] for n in kernel_nodes.get(key, ()) if n in scope]
        pairs = [(node, op) for node, op in ((n, _fused_op(n, stack_depth)) for n in generated_from) if op is not None]
        for node, _ in pairs:
            if isinstance(node.target, torch_compat.HigherOrderOperator):
                higher_order_in.setdefault(node, []).append(key)
        fused_of[key] = pairs or [
            (None, op) for op in _input_copies(generated_from, stack_depth, roles.get(kernel, ()))
        ]
    # A template's provenance lists its op for the kernels preparing its inputs too (flex attention's block mask):
    # the op's work is counted once, in the template's kernel (Triton's are named so; else the last, after its inputs).
    for node, keys in higher_order_in.items():
        keep = next((key for key in keys if "_tem_" in key), keys[-1])
        for key in keys:
            if key != keep:
                fused_of[key] = [(n, op) for n, op in fused_of[key] if n is not node]
    for line, kernel, handle in calls:
        fused = tuple(op for _, op in fused_of[f"{kernel}:{handle}"])
        info.sites[line] = CallSite(kernel, handle, fused, roles.get(kernel, ()))
    info.defined = tuple(kernel_names(source))
    info.kernels = len(info.defined)
    for line in sorted(info.sites):
        op = fallback_op(info.sites[line].kernel)
        if op is not None:
            info.fallbacks.setdefault(op, []).append(info.sites[line])
    info.symbols = _input_symbols(gm) if gm is not None else ()
    info.dynamic = gm is None or bool(info.symbols) or _symbolic_sizes(gm)
    return info


def _symbolic_sizes(gm) -> bool:
    """Does a tensor of the graph have a size that is a symbol: an input's (dynamic shapes) or a node's
    (data-dependent sizes, ``nonzero``)? Then its calls' argument shapes can change between calls."""
    for node in gm.graph.nodes:
        value = node.meta.get("val")
        for tensor in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(tensor, torch.Tensor) and not all(isinstance(d, int) for d in tensor.shape):
                return True
    return False


def _input_symbols(gm) -> tuple:
    """(symbol, input index, dim) of each size symbol a graph input carries (dim -1: an int input)."""
    found: dict[str, tuple[int, int]] = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for index, node in enumerate(placeholders):
        value = node.meta.get("val")
        sizes = [(d, size) for d, size in enumerate(value.shape)] if isinstance(value, torch.Tensor) else [(-1, value)]
        for dim, size in sizes:
            if isinstance(size, torch.SymInt) and size.node.expr.is_Symbol:
                found.setdefault(str(size.node.expr), (index, dim))
    return tuple((name, index, dim) for name, (index, dim) in found.items())


def symbol_values(symbols, inputs) -> dict:
    """{symbol: int} at one call of a dynamic graph, read from its inputs."""
    values = {}
    for name, index, dim in symbols:
        value = inputs[index]
        values[name] = int(value.shape[dim]) if dim >= 0 else int(value)
    return values


_concrete: dict = {}  # (expression text, values) -> int


def concrete(value, values: dict):
    """A recorded argument with its symbolic sizes ("s0", "2*s0") replaced by their values at a call."""
    if isinstance(value, TensorMeta):
        return value._replace(shape=tuple(concrete(d, values) for d in value.shape))
    if isinstance(value, tuple):
        return tuple(concrete(v, values) for v in value)
    if isinstance(value, str) and values:
        key = (value, tuple(sorted(values.items())))
        result = _concrete.get(key)
        if result is None:
            try:
                import sympy

                result = int(sympy.sympify(value).subs(values))
            except (TypeError, ValueError, SyntaxError, AttributeError):  # not a size expression: text stays
                result = value
            _concrete[key] = result
        return result
    return value


def fallback_op(kernel: str):
    """("aten::_foo", "default") for a call site ``torch.ops.aten._foo.default``; None for a kernel."""
    parts = kernel.split(".")
    if parts[:2] == ["torch", "ops"] and len(parts) == 5:
        return f"{parts[2]}::{parts[3]}", parts[4]
    return None


def wrapper_module(compiled):
    """The Python module Inductor generated for ``compiled`` (its kernels are this module's globals)."""
    call = getattr(compiled, "current_callable", None)
    function = getattr(call, "__func__", None)
    globals_ = getattr(function, "__globals__", None)
    if globals_ is not None and ("Runner" in globals_ or "call" in globals_):
        return sys.modules.get(globals_.get("__name__", "")) or _Namespace(globals_)
    return torch_compat.loaded_wrapper_module(str(getattr(compiled, "cache_key", "")))


class _Namespace:
    """A module dict seen as a module (the wrapper's module object is not always in sys.modules)."""

    def __init__(self, globals_):
        self.__dict__ = globals_


def wrapper_code(module):
    """Code objects of the wrapper's Python functions (``Runner.call``...): plumbing, not user code."""
    for value in list(vars(module).values()):
        for function in [value, *vars(value).values()] if isinstance(value, type) else [value]:
            code = getattr(function, "__code__", None)
            if code is not None:
                yield code


def read_uninstrumented_graph(compiled) -> GraphInfo:
    """GraphInfo of a graph compiled before the profile (no provenance, no node metadata): its
    kernels are known by name and line, what they fused is not. Its Dynamo compile id is not
    kept either: it is named after Inductor's AOT graph id ("aot0 forward")."""
    kwargs = getattr(compiled, "fx_kwargs", None) or {}
    backward = bool(kwargs.get("is_backward"))
    source = compiled.source_code or ""
    aot = _AOT_ID.search(source)
    name = graph_name(f"aot{aot.group(1)}" if aot else "", backward, bool(kwargs.get("is_inference")))
    info = GraphInfo(name, "", backward, provenance=False, dynamic=True)
    roles = _cpp_roles(source)
    kernels = kernel_names(source)
    for line, text in enumerate(source.splitlines(), start=1):
        for kernel in kernels:
            if _calls(text, kernel):
                info.sites[line] = CallSite(kernel, 0, (), roles.get(kernel, ()))
    info.defined = tuple(kernels)
    info.kernels = len(kernels)
    return info


def kernel_names(source: str) -> list:
    """The C++ and Triton kernels a wrapper defines (``name = async_compile.cpp_pybinding(`` / ``.triton(``)."""
    return re.findall(r"(?m)^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", source)


def call_lines(source: str):
    """(wrapper line, kernel, handle) of each call that follows a provenance handle comment."""
    lines = source.splitlines()
    for index, text in enumerate(lines):
        match = _HANDLE_COMMENT.search(text)
        if match is None:
            continue
        kernel, handle = match.group(1), int(match.group(2))
        for offset in range(index + 1, min(index + 6, len(lines))):
            if _calls(lines[offset], kernel):
                yield offset + 1, kernel, handle
                break


def _top_level_functions(lines: list) -> list:
    """For each wrapper line, the top-level function it is in (``def true_graph_0(args):``), or None: in the
    wrapper's ``call`` (a method) or at module level."""
    functions = []
    current = None
    for text in lines:
        if text and not text[0].isspace():
            match = _TOP_LEVEL_DEF.match(text)
            current = match.group(1) if match else None
        functions.append(current)
    return functions


_TOP_LEVEL_DEF = re.compile(r"def (\w+)\(")


def _calls(text: str, kernel: str) -> bool:
    stripped = text.lstrip()
    return not stripped.startswith("#") and (f"{kernel}(" in stripped or f"{kernel}.run(" in stripped)


def _cpp_roles(source: str) -> dict:
    """kernel -> role of each pointer argument, from its C++ signature (in_ptr / out_ptr / in_out_ptr)."""
    roles = {}
    for match in _CPP_KERNEL.finditer(source):
        params = [p.strip().split()[-1].lstrip("*") for p in match.group(2).split(",") if p.strip()]
        roles[match.group(1)] = tuple(pointer_role(p) for p in params)
    return roles


def pointer_role(name: str) -> str:
    """What a kernel does with the argument called ``name``; "" for a size or other non-tensor."""
    if name.startswith("in_out_ptr"):
        return _BOTH
    if name.startswith("in_ptr"):
        return _READ
    if name.startswith("out_ptr"):
        return _WRITE
    return ""


def triton_roles(kernel) -> tuple:
    """Roles of a Triton kernel's arguments (a CachingAutotuner), from its signature."""
    signature = (getattr(kernel, "triton_meta", None) or {}).get("signature") or {}
    return tuple(pointer_role(name) for name in signature)


#: Higher-order ops Inductor lowers to a kernel that computes what the op does (flex attention's template): fused ops
#: like an aten op, named as the formulas know them. Control flow (cond, while_loop) runs in the wrapper, not in a kernel.
_KERNEL_HIGHER_ORDER_OPS = frozenset({"flex_attention", "flex_attention_backward"})


def _fused_op(node, stack_depth: int) -> FusedOp | None:
    """The record template of one post-grad node; None for what is no ATen op (getitem, placeholders)."""
    target = node.target
    if node.op != "call_function":
        return None
    if isinstance(target, torch_compat.OpOverload):
        name, overload = target._schema.name, target._overloadname
    elif isinstance(target, torch_compat.HigherOrderOperator) and target.name() in _KERNEL_HIGHER_ORDER_OPS:
        name, overload = target.name(), ""
    else:
        return None
    args = tuple(_meta(a) for a in node.args)
    kwargs = tuple((k, _meta(v)) for k, v in node.kwargs.items())
    inputs = args + tuple(v for _, v in kwargs)
    value = node.meta.get("val")
    outputs = tuple(_meta(v) for v in value) if isinstance(value, (tuple, list)) else (_meta(value),)
    original = node.meta.get("original_aten")
    return FusedOp(
        name=name,
        overload=overload,
        inputs=inputs,
        outputs=outputs if value is not None else (),
        kwargs=kwargs,
        module=module_source(node),
        callsite=user_frames(node.meta.get("stack_trace") or "", stack_depth),
        origin=original._schema.name if isinstance(original, torch_compat.OpOverload) else "",
    )


def _input_copies(nodes: list, stack_depth: int, roles: tuple) -> tuple:
    """A kernel Inductor generated from no ATen op copies tensors into the layout or alignment an op needs: the graph
    inputs or constants it was made from (``cpp_fused_0`` from ``primals_1, primals_3``: a convolution's inputs into
    channels-last; a frozen bfloat16 bias written out for oneDNN's linear), or the inputs of the pattern-matched op it
    was made for (with freezing, a convolution and relu fused into one oneDNN call made ``cpp_fused_relu_0``, which
    puts that call's input in channels-last; its frozen weights, graph constants, are packed already). One
    ``aten::copy`` per tensor, at the module and line of the op using it. A pattern's replacement is a lowering
    Inductor binds with functools.partial, unlike a higher-order op's (flex attention's kernel computes); it copies
    as many of the op's inputs as the kernel reads (``roles``, where known), the first ones (X before the residual)."""
    if not nodes:
        return ()
    if all(node.op in ("placeholder", "get_attr") for node in nodes):
        copied = [(node, next((u for u in node.users if u.op == "call_function"), None)) for node in nodes]
    elif all(node.op == "call_function" and isinstance(node.target, functools.partial) for node in nodes):
        copied = [
            (arg, node)
            for node in nodes
            for arg in node.args
            if isinstance(arg, torch.fx.Node) and arg.op != "get_attr" and isinstance(arg.meta.get("val"), torch.Tensor)
        ]
        reads = sum(role in ("read", "both") for role in roles)
        copied = copied[:reads] if reads else copied
    else:
        return ()
    copies = []
    for tensor, user in copied:
        value = _meta(tensor)
        copies.append(
            FusedOp(
                name="aten::copy",
                overload="default",
                inputs=(value, value),
                outputs=(value,),
                kwargs=(),
                module=module_source(user) if user is not None else "",
                callsite=user_frames(user.meta.get("stack_trace") or "", stack_depth) if user is not None else (),
                origin="",
            )
        )
    return tuple(copies)


def _meta(value):
    """An FX argument as records keep it: a node becomes its value's shape and dtype."""
    if isinstance(value, torch.fx.Node):
        value = value.meta.get("val")
    if isinstance(value, torch.Tensor):
        return to_arg((tuple(_dim(d) for d in value.shape), value.dtype))
    if isinstance(value, (list, tuple)):
        return tuple(_meta(v) for v in value)
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return _dim(value)
    return to_arg(value)


def _dim(size):
    """A size: an int, or the symbol's text when the graph is dynamic (formulas then give na)."""
    if isinstance(size, int):
        return size
    try:
        return int(size.node.maybe_as_int()) if size.node.maybe_as_int() is not None else str(size)
    except AttributeError:
        return str(size)


def module_source(node) -> str:
    for key in _MODULE_STACK_KEYS:
        stack = node.meta.get(key)
        if stack:
            entry = list(stack.values())[-1]
            return entry[0] if isinstance(entry, tuple) else str(entry)
    return ""


def user_frames(stack_trace: str, depth: int) -> tuple:
    """``("model.py:12", "model.py:20")``: the user frames of a formatted traceback, innermost first."""
    frames = []
    for filename, line in reversed(_TRACE_FRAME.findall(stack_trace)):
        if not callsite.internal_file(filename):
            frames.append(callsite.file_line(filename, int(line)))
            if len(frames) == depth:
                break
    return tuple(frames)


#: ``L['self']``, ``G['model']``, ``L['args'][0]`` (a decorated forward's ``self``, as Hugging Face's are): the root a
#: Dynamo source starts from, a local or global and the items taken from it; then its attribute path.
_ROOT = re.compile(r"^([LG]\['[^']+'\](?:\[\d+\])*)(.*)$")
_PART = re.compile(r"\.(\w+)|\[(\d+)\]|\['([^']+)'\]")


@functools.lru_cache(maxsize=4096)
def split_source(source: str) -> tuple[str, tuple]:
    """``"L['self'].blocks[0]._modules['act']"`` -> ``("L['self']", ("blocks", "0", "act"))``,
    ``"L['args'][0].model"`` -> ``("L['args'][0]", ("model",))``; the
    ``_modules`` hops and torch.compile's ``_orig_mod`` wrapper are left out of the path. Cached: each
    stop() reads the same few sources once per extern op of every compiled graph call."""
    match = _ROOT.match(source)
    if match is None:
        return "", ()
    parts = [a or b or c for a, b, c in _PART.findall(match.group(2))]
    return match.group(1), tuple(p for p in parts if p not in ("_modules", torch_compat.COMPILED_MODULE_ATTRIBUTE))


def common_module(paths) -> str:
    """The deepest module path every one of ``paths`` lies in ("" when they share none)."""
    split = [p.split(".") for p in set(paths) if p]  # each once: a compiled optimizer step passes ~2 per module
    if not split:
        return ""
    # What all share is what the first and the last in order share (C's min/max, not a loop over them all:
    # ~40 us at each profile's first optimizer-step call in the compiled GPT step).
    first, last = min(split), max(split)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return ".".join(first[:n])


def most_common(values) -> tuple:
    """The value most of ``values`` have (the first of them on a tie); () when there is none."""
    counts = Counter(v for v in values if v)
    if not counts:
        return ()
    best = max(counts.values())
    return next(v for v in values if v and counts[v] == best)
