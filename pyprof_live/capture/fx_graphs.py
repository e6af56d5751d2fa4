"""Ops an FX graph's generated code runs, attributed to the node each of its lines runs.

A ``torch.export``'d program (``ep.module()``), a model compiled with a backend that runs its graphs in Python
(``torch.compile(backend="eager")``, ``"aot_eager"``, a custom FX backend) and an ``fx.symbolic_trace``'d one run
their ops from a GraphModule's generated ``forward`` (``<eval_with_key>.N``), not from their modules' forwards: the
module hooks see one module, the GraphModule, and the op hook's call-site walk skips generated code as plumbing,
so every op had the graph's module and the line that called the graph. The graph's nodes still say which module
(``nn_module_stack``, as Inductor's kernels read it: inductor.py) and which user lines (``stack_trace``) each came
from. So when the module hooks first meet a GraphModule whose nodes say so (``learn``), its generated code becomes
a user frame for the walk, and when the profile is built an op whose frames pass through one of its lines takes
that line's node's module and user lines (``Attribution``).

Backward ops walk no frames (the op hook's rule): an eagerly differentiated graph's backward ops take their forward
op's module and lines by sequence number as any backward op does; those of a graph AOTAutograd differentiated
(``aot_eager``'s backward graph) keep no module.
"""

from __future__ import annotations

import weakref

import torch

from . import callsite, inductor
from .compiled import _innermost_module, _module_path, _root_object, _user_frame

#: id(code) of a graph's generated forward -> its GraphModule (weakly): codes the walk keeps as user frames.
_graph_of_code: dict = {}


class GraphCall:
    """Where one GraphModule's node module paths start in this profile: its own path (paths relative to the traced
    module, as torch.export and symbolic_trace write them) and our path of each root Dynamo names (``L['self']``)."""

    __slots__ = ("path", "roots")

    def __init__(self, path: str, roots: dict):
        self.path = path
        self.roots = roots


def learn(module, path: str, parent_path: str, paths: dict, calls: dict) -> None:
    """Register ``module``, a GraphModule just named ``path`` (called inside ``parent_path``), if its nodes carry
    module paths or stack traces: its generated forward's code becomes a user frame, and ``calls`` (id(code) ->
    GraphCall, the profile's) says where its module paths start."""
    nodes = [n for n in module.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
    if not any(inductor.module_source(n) or n.meta.get("stack_trace") for n in nodes):
        return
    real_recompile = getattr(module, "real_recompile", None)
    if real_recompile is not None:
        real_recompile()  # a lazy GraphModule generates its code at its first call: this is that call
    code = type(module).forward.__code__
    if not code.co_filename.startswith(_GENERATED):  # a subclass's own forward: a user's code, read as such
        return
    roots = {}
    frame = _user_frame()
    for root in {inductor.split_source(inductor.module_source(n))[0] for n in nodes} - {""}:
        found = _root_object(root, frame) if frame is not None else None
        if not isinstance(found, torch.nn.Module):
            found = _innermost_module(root)
        root_path = paths.get(id(found)) if found is not None and found is not module else None
        roots[root] = root_path or (parent_path if root == _SELF else "")
    calls[id(code)] = GraphCall(path, roots)
    _graph_of_code[id(code)] = weakref.ref(module)
    callsite.keep_as_user_code(code)


#: The file name of the code torch.fx generates for a GraphModule's forward.
_GENERATED = "<eval_with_key>"
_SELF = "L['self']"


class Attribution:
    """The module path and call site of ops run by the registered graphs' lines, resolved once per distinct frames
    tuple of the profile (a training step repeats them)."""

    def __init__(self, calls: dict, depth: int, frame_cache: dict):
        self._calls = calls
        self._depth = depth
        self._frame_cache = frame_cache
        self._nodes: dict = {}  # (id(code), line) -> (module path, user lines) of the node on that line
        self._graph_nodes: dict = {}  # id(code) -> its graph's nodes, in order
        self._resolved: dict = {}  # frames -> (module path, call site)

    def __bool__(self) -> bool:
        return bool(self._calls)

    def __call__(self, frames: tuple, module: str) -> tuple[str, tuple]:
        """(module path, call site) of an op with ``frames`` (``(id(code), instruction offset)``, innermost first)
        and context module ``module``: a graph line's node's where its frames pass through one."""
        resolved = self._resolved.get(frames)
        if resolved is None:
            resolved = self._resolved[frames] = self._resolve(frames)
        node_module, lines = resolved
        return node_module or module, lines

    def _resolve(self, frames: tuple) -> tuple[str, tuple]:
        for i, (code_id, offset) in enumerate(frames):
            call = self._calls.get(code_id)
            if call is not None:
                node_module, node_lines = self._node(call, code_id, offset)
                before = callsite.format_frames(frames[:i], self._frame_cache)
                # A Dynamo graph's stack traces start in the frame it compiled, the next user frame at run time.
                after = callsite.format_frames(frames[i + 2 if call.roots else i + 1 :], self._frame_cache)
                return node_module, (before + node_lines + after)[: self._depth]
        return "", callsite.format_frames(frames, self._frame_cache)

    def _node(self, call: GraphCall, code_id: int, offset: int) -> tuple[str, tuple]:
        code = callsite.code_of(code_id)
        line = callsite.line_at(code, offset)
        key = (code_id, line)
        found = self._nodes.get(key)
        if found is None:
            found = self._nodes[key] = self._read_node(call, code_id, code.co_firstlineno, line)
        return found

    def _read_node(self, call: GraphCall, code_id: int, first_line: int, line: int) -> tuple[str, tuple]:
        graph = _graph_of_code.get(code_id)
        module = graph() if graph is not None else None
        if module is None:  # freed since: its lines stand for nothing we can read
            return "", ()
        index = (module._lineno_map or {}).get(line - first_line)  # as Dynamo reads it
        if index is None:
            return "", ()
        nodes = self._graph_nodes.get(code_id)
        if nodes is None:
            nodes = self._graph_nodes[code_id] = list(module.graph.nodes)
        node = nodes[index]
        source = inductor.module_source(node)
        if source.startswith(("L[", "G[")) or (not source and call.roots):
            # Dynamo's, from a root it resolved in the user's frame; none: the compiled module's own op
            path = _module_path(source, call.roots)
        else:  # relative to the traced module: the GraphModule itself
            path = f"{call.path}.{source}" if source else call.path
        return path, inductor.user_frames(node.meta.get("stack_trace") or "", self._depth)
