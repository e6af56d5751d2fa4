"""PyTorch's NVTX marker texts -> op facts, and NVTX ranges -> OpRecords and RangeRecords.

Nsight Systems and nvprof only keep the text of each NVTX range; this module reads back what
PyTorch and PyProf/DLProf wrote into it. Every text is either parsed into a :class:`Marker` or
rejected (``None``, the range stays a plain NVTX range): no text makes ``parse_marker`` raise.
Parsing uses regular expressions and a small literal reader, never ``eval``.

Forms understood (``parse_marker``):

- ``emit_nvtx`` op ranges, written by ``getNvtxStr`` in torch/csrc/profiler/util.cpp:
  ``name[, seq = N][, op_id = M][, sizes = [[..], ..]][, input_op_ids = [(id,nr), ..]]``, and the
  older ``name, seq=N`` (torch/csrc/autograd/profiler.cpp, PyTorch <= 1.0). Ops that record no
  sequence number are pushed with their bare name; a bare name is taken as an op only in a
  PyTorch op namespace (``aten::empty``), so other libraries' ``Foo::bar`` ranges stay ranges.
- Names without a namespace come from PyTorch < 1.6, which named aten ops ``embedding``: they
  are renamed ``aten::embedding`` so that they read (and match formulas) like today's names.
- Autograd node ranges (``AddmmBackward0, seq = 12``, ``NllLossBackward, seq = 128``,
  ``torch::autograd::AccumulateGrad``, old ``ThresholdBackward, stashed seq=5``): kind ``node``,
  dir ``bwd``, ``altseq`` = the node's sequence number, i.e. the ``seq`` of the forward op that
  created it. ``GraphRoot`` is created by ``backward()`` itself, so it gets no ``altseq``.
- PyProf/DLProf dict markers (apex/pyprof/nvtx/nvmarker.py), pushed as trace ⊃ module ⊃ args:
  ``{'mod': 'torch.nn.functional', 'op': 'conv2d', 'args': [...]}`` becomes an op of kind
  ``function`` named ``conv2d`` with ``mod`` and its arguments (tensors as TensorMeta, named
  arguments in ``kwargs``); ``{'traceMarker': [...]}`` gives the call site of the ops it
  encloses (user frames only, innermost first, as ``file.py:line``); ``{'mod': 'Conv2d',
  'strRepr': '3, 6, kernel_size=(3, 3)'}`` gives them ``module = "Conv2d(3, 6, kernel_size=(3, 3))"``.
- ``layer:NAME`` ranges (PyProf's user annotation): NAME is everything after ``layer:``
  (``layer:a:b`` -> ``a:b``, where PyProf kept only ``a``); nested layer ranges give one name
  each in ``OpRecord.layer``, outermost first.

What no record field holds is skipped, not parsed: ``input_op_ids`` (graph edges) and PyProf's call ids.
``op_id`` is kept as ``external_id``: it is the RecordFunction handle that Kineto calls
``External id``; no nsys/nvprof API row carries it, so correlation links by time containment.
"""

from __future__ import annotations

import math
import os
import re
import sys
from typing import NamedTuple

from ..record_checks import INT64_MAX, MAX_DIMS, arg_problem
from ..records import NO_LINK, OpRecord, RangeRecord, TensorMeta, Unknown
from ._sqlite import decode

LAYER_PREFIX = "layer:"


class Marker(NamedTuple):
    """What one NVTX text says.

    ``kind``: ``op`` (emit_nvtx op), ``node`` (autograd node), ``function`` (PyProf wrapped
    call), ``trace`` (call site), ``module`` (nn.Module repr) or ``layer``.
    """

    kind: str
    name: str = ""
    seq: int = NO_LINK
    altseq: int = NO_LINK
    op_id: int = NO_LINK
    inputs: tuple = ()
    kwargs: tuple = ()
    mod: str = ""
    callsite: tuple = ()


# ---------------------------------------------------------------------------------------------
# emit_nvtx texts
# ---------------------------------------------------------------------------------------------

# A name holds no comma, so each optional field that follows starts unambiguously at ", ".
_EMIT_NVTX = re.compile(
    r"(?P<name>[^,]+)"
    r"(?:, (?P<stashed>stashed )?seq ?= ?(?P<seq>\d+))?"
    r"(?:, op_id = (?P<op_id>\d+))?"
    r"(?:, sizes = (?P<sizes>\[(?:\[[\d, ]*\](?:, )?)*\]))?"
    r"(?:, input_op_ids = \[(?:\(\d+, ?-?\d+\)(?:, )?)*\])?"  # matched so the text is an op, not kept
)
_SHAPE = re.compile(r"\[([\d, ]*)\]")
# Namespaces of PyTorch operator libraries; a bare name elsewhere (nvFuser's ``Fusion::get``) is
# some library's own range, not an op.
_BARE_OP = re.compile(r"(?:aten|prim|c10d|_c10d_functional|quantized|torchvision)::[A-Za-z_][\w.]*\Z")
_NODE = re.compile(r"(?:torch::autograd::\w+|[A-Z]\w*Backward\d*s?)\Z")
_AUTOGRAD_PREFIX = "torch::autograd::"
_OLD_ATEN_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
_NODES_WITHOUT_FORWARD = ("torch::autograd::GraphRoot", "GraphRoot")


def _emit_nvtx(text: str) -> Marker | None:
    match = _EMIT_NVTX.fullmatch(text)
    if match is None:
        return None
    name, seq, op_id, sizes = match.group("name", "seq", "op_id", "sizes")
    if match.end("name") == len(text):  # a bare name, no field after it
        if name.startswith(_AUTOGRAD_PREFIX) and _NODE.match(name):
            return Marker("node", sys.intern(name))
        if _BARE_OP.match(name):
            return Marker("op", sys.intern(name))
        return None
    seq_nr = int(seq) if seq is not None else NO_LINK
    inputs = tuple(_shape_arg(dims) for dims in _SHAPE.findall(sizes)) if sizes else ()
    op_id_nr = int(op_id) if op_id is not None else NO_LINK
    if seq_nr > INT64_MAX or op_id_nr > INT64_MAX:  # no counter gets there: not PyTorch's text
        return None
    if match.group("stashed") or _NODE.match(name):
        altseq = NO_LINK if name in _NODES_WITHOUT_FORWARD else seq_nr
        return Marker("node", sys.intern(name), altseq=altseq, op_id=op_id_nr, inputs=inputs)
    if _OLD_ATEN_NAME.match(name):
        name = "aten::" + name
    return Marker("op", sys.intern(name), seq=seq_nr, op_id=op_id_nr, inputs=inputs)


def _shape_arg(dims: str):
    """One entry of ``sizes``: a tensor's shape; ``[]`` is a non-tensor, a 0-dim or an undefined tensor."""
    if not dims.strip(", "):
        return Unknown("no shape recorded")
    shape = tuple(int(d) for d in dims.replace(",", " ").split())
    return TensorMeta(shape) if len(shape) <= MAX_DIMS and max(shape) <= INT64_MAX else Unknown("shape out of range")


# ---------------------------------------------------------------------------------------------
# PyProf / DLProf dict markers: Python reprs, read by a small tokenizer, never eval
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
    r"|(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<word>[A-Za-z_]\w*)"
    r"|(?P<punct>[][{}(),:]))",
    re.S,
)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}
_WORDS = {"True": True, "False": False, "None": None, "inf": float("inf"), "nan": float("nan")}
_CLOSING = {"[": "]", "(": ")", "{": "}"}
_MAX_DEPTH = 32


class _Rejected(Exception):
    """The text is not a Python literal this reader understands."""


def _unescape(match) -> str:
    code = match.group(1)
    if code[0] in "xuU" and len(code) > 1:
        value = int(code[1:], 16)
        if value > sys.maxunicode:
            raise _Rejected
        return chr(value)
    return _SIMPLE_ESCAPES.get(code, "\\" + code)


def _tokens(text: str) -> list:
    out: list[tuple[str, str]] = []
    pos, end = 0, len(text)
    while True:
        match = _TOKEN.match(text, pos)
        if match is None:
            if text[pos:].strip():
                raise _Rejected
            return out
        kind = str(match.lastgroup)  # every alternative is a named group
        out.append((kind, match.group(kind)))
        pos = match.end()
        if pos >= end:
            return out


def _literal(tokens: list, at: int, depth: int):
    """Read one value starting at ``tokens[at]``; return (value, next position)."""
    if at >= len(tokens) or depth > _MAX_DEPTH:
        raise _Rejected
    kind, token = tokens[at]
    if kind == "str":
        return _ESCAPE.sub(_unescape, token[1:-1]), at + 1
    if kind == "num":
        number = float(token) if any(c in token for c in ".eE") else int(token)
        return number, at + 1
    if kind == "word":
        if token not in _WORDS:
            raise _Rejected
        return _WORDS[token], at + 1
    if token not in _CLOSING:
        raise _Rejected
    closing, at = _CLOSING[token], at + 1
    items = []
    while at < len(tokens) and tokens[at][1] != closing:
        key, at = _literal(tokens, at, depth + 1)
        if token == "{":
            if at >= len(tokens) or tokens[at][1] != ":":
                raise _Rejected
            value, at = _literal(tokens, at + 1, depth + 1)
            key = (key, value)
        items.append(key)
        if at < len(tokens) and tokens[at][1] == ",":
            at += 1
        elif at >= len(tokens) or tokens[at][1] != closing:
            raise _Rejected
    if at >= len(tokens):
        raise _Rejected
    if token == "{":
        try:
            return dict(items), at + 1
        except TypeError:  # an unhashable key such as a list
            raise _Rejected from None
    return (tuple(items) if token == "(" else items), at + 1


def _read_literal(text: str):
    tokens = _tokens(text)
    value, at = _literal(tokens, 0, 0)
    if at != len(tokens):
        raise _Rejected
    return value


def _frozen(value):
    """Lists become tuples, so an argument value is hashable and cannot be altered; what no record
    may hold (a dict, a number beyond 64 bits) becomes Unknown."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return Unknown("dict")
    if value.__class__ is int and arg_problem(value) is not None:
        return Unknown("number out of range")
    return value


# Frames inside torch, apex/pyprof and DLProf are plumbing, not the user's call site.
_LIBRARY_FRAME = re.compile(r"[/\\](?:torch|apex|pyprof|nvidia_dlprof_pytorch_nvtx)[/\\]|nvmarker\.py:")


def _callsite(frames) -> tuple:
    """PyProf lists frames outermost first with full paths; we keep user frames, innermost first."""
    if not isinstance(frames, list) or not all(isinstance(f, str) for f in frames):
        raise _Rejected
    return tuple(os.path.basename(f) for f in reversed(frames) if not _LIBRARY_FRAME.search(f))


def _argument(entry):
    """(name, value) of one PyProf ``args`` entry."""
    if not isinstance(entry, dict):
        return "", Unknown("unreadable argument")
    name = entry.get("name")
    name = name if isinstance(name, str) else ""
    shape = entry.get("shape")
    if isinstance(shape, (list, tuple)) and all(d.__class__ is int and 0 <= d <= INT64_MAX for d in shape):
        dtype = entry.get("dtype")
        return name, TensorMeta(tuple(shape), dtype if isinstance(dtype, str) else None)
    if "value" in entry:
        return name, _frozen(entry["value"])
    return name, Unknown(str(entry.get("type", "")))


def _dict_marker(text: str) -> Marker | None:
    try:
        value = _read_literal(text)
        if not isinstance(value, dict):
            return None
        if "traceMarker" in value:
            return Marker("trace", callsite=_callsite(value["traceMarker"]))
        mod = value.get("mod")
        if not isinstance(mod, str):
            return None
        if isinstance(value.get("strRepr"), str):
            return Marker("module", sys.intern(f"{mod}({value['strRepr']})"))
        op = value.get("op")
        args = value.get("args", [])
        if not isinstance(op, str) or not isinstance(args, list):
            return None
        arguments = [_argument(entry) for entry in args]
        return Marker(
            "function",
            sys.intern(op),
            inputs=tuple(v for name, v in arguments if not name),
            kwargs=tuple((name, v) for name, v in arguments if name),
            mod=sys.intern(mod),
        )
    except (_Rejected, RecursionError):
        return None


def parse_marker(text) -> Marker | None:
    """The PyTorch/PyProf facts in one NVTX text, or None when it is none of the known forms."""
    if not isinstance(text, str) or not text:
        return None
    if text[0] == "{":
        return _dict_marker(text)
    if text.startswith(LAYER_PREFIX):
        name = text[len(LAYER_PREFIX) :]
        return Marker("layer", name) if name else None
    return _emit_nvtx(text)


# ---------------------------------------------------------------------------------------------
# NVTX ranges -> records
# ---------------------------------------------------------------------------------------------

#: How an NVTX row is to be read (the importers compute it per row).
PUSH_POP, START_END, MARK = 0, 1, 2


class _Context(NamedTuple):
    """What enclosing marker ranges give the ops inside them."""

    end: int
    layer: tuple = ()
    callsite: tuple = ()
    module: str = ""


_NO_CONTEXT = _Context(end=0)


class RangesOutOfOrder(Exception):
    """The rows given to records_from_ranges are not sorted by start, then by end descending."""


def ranges_from_query(db, query: str, order_by: str, params: tuple, threads: dict, domains: dict) -> tuple:
    """records_from_ranges over the rows of an SQL query, read in storage order when that is
    already sorted (exports store NVTX rows by start; sorting 1.6 M rows in SQLite costs ~2 s),
    else read again with ``ORDER BY order_by``."""
    try:
        return records_from_ranges(db.execute(query, params), threads, domains)
    except RangesOutOfOrder:
        return records_from_ranges(db.execute(f"{query} ORDER BY {order_by}", params), threads, domains)


def records_from_ranges(rows, threads: dict, domains: dict) -> tuple[list, list]:
    """NVTX rows -> (ops, ranges), in the rows' order.

    ``rows`` yields ``(start, end, thread_key, text, domain_key, how)`` sorted by start, then by
    end descending (an enclosing range before the ranges it holds), else RangesOutOfOrder is
    raised; ``text`` is str, UTF-8 bytes or None (a number, as an untyped column can hold, reads
    as its digits). A NULL or text ``start`` raises TypeError (read_export reports it). ``threads`` maps a thread key to ``(pid, tid)``
    and ``domains`` a domain key to its name. Only push/pop ranges carry PyTorch markers (they
    nest per thread); start/end ranges and marks stay NVTX records. Texts repeat across
    iterations: each distinct one is read once.
    """
    ops, ranges = [], []
    readings: dict = {}  # text -> (OpRecord fields or None, context Marker or None, text as str)
    open_contexts: dict = {}  # thread key -> stack of _Context of enclosing layer/trace/module ranges
    last_start, last_end = -math.inf, math.inf  # the first row is in order whatever its times
    for start, end, thread, text, domain, how in rows:
        if start < last_start or (start == last_start and end > last_end):
            raise RangesOutOfOrder
        last_start, last_end = start, end
        pid, tid = threads[thread]
        reading = readings.get(text)
        if reading is None:
            reading = readings[text] = _reading(text)
        op_fields, marker, name = reading
        if how != PUSH_POP or (op_fields is None and marker is None):
            kind = "marker" if how == MARK else "nvtx"
            ranges.append(RangeRecord(name, start, end, tid, pid, kind, domains.get(domain, "")))
            continue
        stack = open_contexts.get(thread)
        while stack and stack[-1].end < end:
            stack.pop()
        context = stack[-1] if stack else _NO_CONTEXT
        if op_fields is not None:
            name, kind, direction, seq, altseq, node, inputs, kwargs, mod, op_id = op_fields
            # The leading fields positional, the rest set by name: as fast as all positional (keywords
            # cost twice as much per op), and a field added to OpRecord cannot shift them.
            op = OpRecord(name, start, end, tid, pid, "", kind, direction, seq, altseq, node)
            op.inputs, op.kwargs, op.mod, op.external_id = inputs, kwargs, mod, op_id
            op.module, op.layer, op.callsite = context.module, context.layer, context.callsite
            ops.append(op)
            continue
        if stack is None:
            stack = open_contexts[thread] = []
        if marker.kind == "layer":
            ranges.append(RangeRecord(marker.name, start, end, tid, pid, "layer", domains.get(domain, "")))
            stack.append(_Context(end, context.layer + (marker.name,), context.callsite, context.module))
        elif marker.kind == "trace":
            stack.append(_Context(end, context.layer, marker.callsite, context.module))
        else:  # module
            stack.append(_Context(end, context.layer, context.callsite, marker.name))
    return ops, ranges


def _reading(raw) -> tuple:
    """How a text is recorded: (its OpRecord's fields, None, text) for an op, a node or a wrapped
    call; (None, marker, text) for a range giving context to the ops inside; (None, None, text) else."""
    text = decode(raw)
    text = sys.intern(text if isinstance(text, str) else "" if text is None else str(text))
    marker = parse_marker(text)
    if marker is None or marker.kind in ("layer", "trace", "module"):
        return None, marker, text
    if marker.kind == "node":
        return (
            (
                marker.name,
                "node",
                "bwd",
                NO_LINK,
                marker.altseq,
                marker.name,
                marker.inputs,
                marker.kwargs,
                marker.mod,
                marker.op_id,
            ),
            None,
            text,
        )
    # An op's direction comes from correlation: "fwd" at top level, "bwd" inside a node.
    return (
        (marker.name, marker.kind, "", marker.seq, NO_LINK, "", marker.inputs, marker.kwargs, marker.mod, marker.op_id),
        None,
        text,
    )
