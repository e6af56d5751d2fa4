"""Ops an FX graph's generated code runs, attributed to the node each of its lines runs.

A ``torch.export``'d program (``ep.module()``), a model compiled with a backend that runs its graphs in Python
(``torch.compile(backend="aot_eager")``, a custom FX backend) and an ``fx.symbolic_trace``'d one run their ops from
a GraphModule's generated ``forward`` (``<eval_with_key>.N``), not from their modules' forwards: the module hooks
see one module, the GraphModule, and the op hook's call-site walk skips generated code as plumbing, so every op had
the graph's module and the line that called the graph. The graph's nodes still say which module
(``nn_module_stack``, as Inductor's kernels read it: inductor.py) and which user lines (``stack_trace``) each came
from. So when the module hooks first meet a GraphModule whose nodes say so (``learn``), what each generated line
runs is read, and its code becomes a user frame for the walk until the profile segment ends; when the profile is
built, an op whose frames pass through one of those lines takes that line's node's module and user lines
(``Attribution``), unless the module hooks saw a module below the graph (a ``call_module`` node's leaf module).

Backward ops walk no frames (the op hook's rule): an eagerly differentiated graph's backward ops take their forward
op's module and lines by sequence number as any backward op does; those of a graph AOTAutograd differentiated
(``aot_eager``'s backward graph) keep no module. A graph whose forward is called without ``nn.Module.__call__``
(``backend="eager"`` hands Dynamo ``gm.forward``) never meets the module hooks.
"""

from __future__ import annotations

import re

from . import callsite, inductor
from .compiled import _SELF, _module_path, _user_frame, root_module

#: The file name of the code torch.fx generates for a GraphModule's forward.
_GENERATED = "<eval_with_key>"
#: Nodes that run code (placeholders, get_attr and output run none).
_RUNS = ("call_function", "call_method", "call_module")
#: The outermost frame of a formatted traceback (its first): ``File "model.py", line 12, in forward``.
_OUTERMOST = re.compile(r'File "([^"]+)", line \d+, in (\S+)')


class GraphCall:
    """One GraphModule's generated forward as a profile segment met it: the GraphModule's path, and for each line
    of the code the module path and stack trace of the node it runs. Read when met: the records are built later,
    when the graph may be freed or regenerated."""

    __slots__ = ("lines", "path")

    def __init__(self, path: str, lines: dict):
        self.path = path
        self.lines = lines


def learn(module, path: str, parent_path: str, paths: dict, calls: dict, warnings: list) -> None:
    """Register ``module``, a GraphModule the module hooks just named ``path`` (called inside ``parent_path``), in
    ``calls`` (id(code) -> GraphCall, the profile segment's) if its nodes carry module paths or stack traces.
    Never raises (it runs in a forward pre-hook): a graph it cannot read keeps today's module and call site, and a
    warning says so."""
    try:
        found = _read(module, path, parent_path, paths)
    except Exception as e:  # the user's forward must run whatever its graph holds
        warnings.append(
            f"could not read the FX graph of {path} ({type(e).__name__}: {e}): its ops have its module and the "
            "line that called it"
        )
        return
    if found is not None:
        code, call = found
        calls[id(code)] = call
        callsite.keep_as_user_code(code)


def traced_class_name(module) -> str:
    """The class name of the module a GraphModule was traced from (``GPT`` for ``torch.export.export(GPT(...))``),
    from the root entry of its first node's module stack; "" where no node has one (``symbolic_trace`` names the
    GraphModule's own class after it already)."""
    for node in module.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            entry = next(iter(stack.values()))
            if not isinstance(entry, tuple) or entry[0] != "":
                return ""
            kind = entry[1]
            return kind.__name__ if isinstance(kind, type) else str(kind).rpartition(".")[2]
    return ""


def forget(calls: dict) -> None:
    """The segment ended: its graphs' code is plumbing for the walk again until a segment meets them."""
    for code_id in calls:
        callsite.keep_as_plumbing(code_id)


def _read(module, path: str, parent_path: str, paths: dict):
    """(code, GraphCall) of ``module``'s generated forward, or None when its nodes say nothing or its forward is
    not generated (a subclass's own: user code, read as such)."""
    nodes = list(module.graph.nodes)
    sources = [inductor.module_source(n) if n.op in _RUNS else "" for n in nodes]
    traces = [(n.meta.get("stack_trace") or "") if n.op in _RUNS else "" for n in nodes]
    if not any(sources) and not any(traces):
        return None
    real_recompile = getattr(module, "real_recompile", None)
    if real_recompile is not None:
        real_recompile()  # a lazy GraphModule generates its code at its first call: this is that call
    code = type(module).forward.__code__
    if not code.co_filename.startswith(_GENERATED):
        return None
    roots = _roots(module, path, parent_path, paths, sources)
    lines = {}
    for relative, index in (getattr(module, "_lineno_map", None) or {}).items():
        if index is not None and index < len(nodes):
            source = sources[index]
            if source.startswith(("L[", "G[")) or (not source and roots):
                # Dynamo's, from a root resolved below; none: the compiled module's own op
                module_path = _module_path(source, roots)
            else:  # relative to the traced module: the GraphModule itself
                module_path = f"{path}.{source}" if source else path
            lines[code.co_firstlineno + relative] = (module_path, traces[index])  # as Dynamo reads _lineno_map
    return code, GraphCall(path, lines)


def _roots(module, path: str, parent_path: str, paths: dict, sources: list) -> dict:
    """Our module path of each root Dynamo's sources start from (``L['self']``): the GraphModule itself where it
    holds the submodules they name (an export that kept Dynamo's sources), else the object the root names in the
    user's frame (the compiled function's: aot_eager), else, for ``self``, the module the graph was called in."""
    by_root: dict = {}
    for source in sources:
        root, parts = inductor.split_source(source)
        if root:
            by_root.setdefault(root, set()).add(".".join(parts))
    roots = {}
    frame = _user_frame() if by_root else None
    for root, submodules in by_root.items():
        if root == _SELF and all(_holds(module, name) for name in submodules):
            roots[root] = path
            continue
        found = root_module(root, frame)
        root_path = paths.get(id(found)) if found is not None and found is not module else None
        roots[root] = root_path or (parent_path if root == _SELF else "")
    return roots


def _holds(module, name: str) -> bool:
    try:
        module.get_submodule(name)
    except AttributeError:
        return False
    return True


class Attribution:
    """The module path and call site of ops run by the registered graphs' lines, resolved once per distinct frames
    tuple of the profile (a training step repeats them)."""

    def __init__(self, calls: dict, depth: int, frame_cache: dict):
        self._calls = calls
        self._depth = depth
        self._frame_cache = frame_cache
        self._traces: dict = {}  # stack trace -> its user lines
        self._resolved: dict = {}  # frames -> (node's module path, call site, graph's path)

    def __bool__(self) -> bool:
        return bool(self._calls)

    def __call__(self, frames: tuple, module: str) -> tuple[str, tuple]:
        """(module path, call site) of an op with ``frames`` (``(id(code), instruction offset)``, innermost first)
        and hooks' module ``module``: a graph line's node's where its frames pass through one."""
        resolved = self._resolved.get(frames)
        if resolved is None:
            resolved = self._resolved[frames] = self._resolve(frames)
        node_module, lines, graph_path = resolved
        return (node_module if node_module and module == graph_path else module), lines

    def _resolve(self, frames: tuple) -> tuple[str, tuple, str]:
        for i, (code_id, offset) in enumerate(frames):
            call = self._calls.get(code_id)
            if call is None:
                continue
            module_path, trace = call.lines.get(callsite.line_at(callsite.code_of(code_id), offset), ("", ""))
            outer = frames[i + 1 :]
            if outer and trace and _starts_in(trace, callsite.code_of(outer[0][0])):
                outer = outer[1:]  # a Dynamo graph's traces start in the frame it compiled, next on the stack
            lines = self._lines(trace)
            before = callsite.format_frames(frames[:i], self._frame_cache)
            after = callsite.format_frames(outer, self._frame_cache)
            return module_path, (before + lines + after)[: self._depth], call.path
        return "", callsite.format_frames(frames, self._frame_cache), ""

    def _lines(self, trace: str) -> tuple:
        lines = self._traces.get(trace)
        if lines is None:
            lines = self._traces[trace] = inductor.user_frames(trace, self._depth) if trace else ()
        return lines


def _starts_in(trace: str, code) -> bool:
    """Does the stack trace start in a frame of ``code`` (same file and function)?"""
    outermost = _OUTERMOST.search(trace)
    return outermost is not None and outermost.groups() == (code.co_filename, code.co_name)
