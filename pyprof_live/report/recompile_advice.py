"""What to do about a recompile, read from the reason Dynamo gives for it: the guard that failed.

Dynamo names what a guard checked in its own source syntax, which changed between releases: ``L['x']`` (2.6) or
``x`` (2.13+) for an argument, ``L['kwargs']['input_ids']`` or ``kwargs['input_ids']`` for a keyword argument (how
Hugging Face models are called), ``args[0]`` behind a ``*args`` wrapper. A guard on a Python value is its
expression (``self.flag is None``; ``___check_obj_id(L['self'].flag, 1406...)`` in 2.6), followed from 2.13 on by
the line that read it (``# if self.flag is None:  # models/bert/modeling_bert.py:1119 in forward``). Only a
tensor's sizes can be marked dynamic, so the advice depends on which guard failed.
"""

from __future__ import annotations

import re

_TENSOR = re.compile(
    r"tensor '(?P<name>.+?)' (?P<what>[\w ]+?) mismatch(?: at index (?P<dim>\d+))?"
    r"(?:\. expected (?P<expected>[^,]+), actual (?P<actual>\S+))?"
)
_GLOBAL_STATE = re.compile(r"GLOBAL_STATE changed: (?P<what>.*)")
#: A Python value's guard with the line that read it (2.13+): "<expression>  # <source>  # <file>:<line> in <fn>", or
#: "<expression>  # <file>:<line> in <fn>" where Dynamo has no source line to show.
_READ_AT = re.compile(r"^(?P<expr>.+?)\s+#(?:.*#)?\s*(?P<file>[^\s#]+):(?P<line>\d+) in \S+")
#: A guard on a size Dynamo traced symbolically: "2 <= x.size()[0]" (dynamic, not 0 or 1), "x.size()[0] == 1".
_SIZE_EXPR = re.compile(r"(?P<name>[\w\[\]'.]+?)\.(?P<what>size|stride)\(\)\[(?P<dim>\d+)\]")
_LENGTH = re.compile(r"^len\((?P<name>[^)]+)\) == \d+$")
_INT_VALUE = re.compile(r"^(?P<name>\S+) == -?\d+$")
_OBJECT_ID = re.compile(r"^___check_obj_id\((?P<name>[^,]+),")
_SIZE = (
    "dim {dim} of {name}{where} changed: torch._dynamo.mark_dynamic({name}, {dim}) before the first call "
    "(or torch.compile(dynamic=True)) compiles one graph for all sizes"
)
_STRIDES = (
    "the strides of {name} changed (a transposed or sliced view, or another memory format): pass it in one layout "
    "every call (.contiguous())"
)
_LOCAL = re.compile(r"L\['([^']+)'\]")
_KEYWORD = re.compile(r"kwargs\['([^']+)'\]")


def _source_name(source: str) -> str:
    """What the user calls the value Dynamo's guard names: ``L['x']`` -> ``x``, ``L['self'].flag`` ->
    ``self.flag``, a keyword argument ``kwargs['input_ids']`` -> ``input_ids``."""
    name = _LOCAL.sub(r"\1", source)
    keyword = _KEYWORD.fullmatch(name)
    return keyword.group(1) if keyword else name


def recompile_fix(reason: str) -> str:
    """The advice for a recompile whose (first) failed guard Dynamo gave as ``reason`` ("0/0: tensor 'x' size
    mismatch at index 0. expected 8, actual 16")."""
    guard = reason.split(": ", 1)[1] if re.match(r"\d+/\d+: ", reason) else reason
    tensor = _TENSOR.search(guard)
    if tensor:
        return _tensor_fix(_source_name(tensor.group("name")), tensor)
    state = _GLOBAL_STATE.match(guard)
    if state:
        return (
            f"torch's global state changed between calls ({state.group('what').strip()}): each state compiles a graph "
            "of its own, once (a model trained and evaluated under torch.no_grad() compiles twice); keep it the same "
            "around the compiled call if it recurs"
        )
    read_at = _READ_AT.match(guard)
    expression = (read_at.group("expr") if read_at else guard).strip()
    where = f" (read at {read_at.group('file').rsplit('/', 1)[-1]}:{read_at.group('line')})" if read_at else ""
    size = _SIZE_EXPR.search(expression)
    if size:
        name, dim = _source_name(size.group("name")), size.group("dim")
        if size.group("what") == "stride":
            return _STRIDES.format(name=f"{name}{where}")
        if re.match(r"\d+ <= ", expression):
            return (
                f"dim {dim} of {name}{where} became 0 or 1, sizes a dynamic dim's graph leaves out (Dynamo specializes "
                f"them): torch._dynamo.mark_unbacked({name}, {dim}) compiles one graph for them too"
            )
        return _SIZE.format(name=name, where=where, dim=dim)
    length = _LENGTH.match(expression)
    if length:
        return (
            f"the length of {_source_name(length.group('name'))}{where} changed: each length compiles a graph of its "
            "own; keep it the same from call to call"
        )
    value = _INT_VALUE.match(expression)
    if value:
        return (
            f"the int {_source_name(value.group('name'))}{where} changed: Dynamo compiles an int's value into the graph; "
            "torch.compile(dynamic=True), or passing it as a tensor, compiles one graph for all values"
        )
    obj = _OBJECT_ID.match(expression)
    what = f"the object {_source_name(obj.group('name').strip())}" if obj else f"`{_source_name(expression)}`"
    return (
        f"a Python value the compiled code reads changed between calls: {what}{where}; each value compiles a graph "
        "of its own: set it before the first call and keep it (only tensor sizes can be marked dynamic)"
    )


def _tensor_fix(name: str, guard: re.Match) -> str:
    what, dim = guard.group("what"), guard.group("dim")
    if what == "size" and dim is not None:
        return _SIZE.format(name=name, where="", dim=dim)
    if what == "stride":
        return _STRIDES.format(name=name)
    if what == "rank":
        return f"{name} changed its number of dimensions: no graph covers two ranks; give it one rank at every call"
    if what == "dtype":
        change = f" ({guard.group('expected')} to {guard.group('actual')})" if guard.group("actual") else ""
        return f"{name} changed dtype{change}: each dtype compiles a graph of its own; cast it to one before the call"
    return f"the {what} of {name} changed: each one compiles a graph of its own; keep it the same from call to call"
