"""What is wrong with a Kineto trace that :mod:`.kineto` could not read, said in the trace's own terms.

The importer reads events without checking them (a trace holds millions), so a field of the wrong
JSON type shows up as a Python error somewhere inside it, or only once every event is in (an array
used as an id). These checks run after such a failure to find the event and the field to blame:
for each category the importer reads, the fields it uses that must have some JSON type.
"""

from __future__ import annotations

import json
import math

from ..record_checks import arg_problem


def _finite(value) -> bool:
    return (value.__class__ is int) or (value.__class__ is float and math.isfinite(value))


def _scalar(value) -> bool:
    """Usable as a dict key, as ids and categories are: no array or object."""
    return not isinstance(value, (list, dict))


def _array_of(item_check):
    def check(value):
        return isinstance(value, list) and all(map(item_check, value))

    return check


# (check, the JSON type it expects): a check may accept more than it names, where the importer does.
ANY = (lambda value: True, "anything")
NUMBER = (_finite, "a finite number")
NUMBER_OR_NULL = (lambda value: value is None or _finite(value), "a finite number")
STRING = (lambda value: isinstance(value, str), "a string")
ID = (_scalar, "a number")
INTEGER = (lambda value: value.__class__ is int, "an integer")
HOST_ID = (lambda value: value.__class__ in (int, str), "an integer or a string")
OBJECT = (lambda value: isinstance(value, dict), "an object")
OBJECT_OR_NOTHING = (lambda value: not value or isinstance(value, dict), "an object")  # read as `or {}`
STRINGS = (_array_of(lambda item: isinstance(item, str)), "an array of strings")
NUMBERS = (_array_of(_finite), "an array of numbers")
SHAPES = (_array_of(lambda item: isinstance(item, list)), "an array of shapes")
STRIDES = (_array_of(lambda item: item is None or isinstance(item, list)), "an array of strides")

_TIMES = (("ts", NUMBER, True), ("dur", NUMBER, False))
_HOST = (("pid", HOST_ID, True), ("tid", HOST_ID, True))
_API_ARGS = (("correlation", INTEGER), ("External id", INTEGER), ("external id", INTEGER))


def _category(name=ANY, host=True, args=OBJECT, args_required=True, arg_fields=()) -> tuple:
    """(fields of the event: (key, check, required), fields of its args: (key, check)); ``name=None``:
    the name is not read."""
    names = () if name is None else (("name", name, True),)
    fields = (*names, *_TIMES, *(_HOST if host else ()), ("args", args, args_required))
    return fields, arg_fields


_CPU_OP = _category(
    STRING,
    args=OBJECT_OR_NOTHING,
    args_required=False,
    arg_fields=(
        ("Fwd thread id", NUMBER),
        ("Input Dims", SHAPES),
        ("Input type", STRINGS),
        ("Input Strides", STRIDES),
        ("Concrete Inputs", STRINGS),
        ("Call stack", STRING),
        ("External id", INTEGER),
    ),
)
_RUNTIME = _category(STRING, arg_fields=_API_ARGS)
_KERNEL = _category(host=False, arg_fields=(("correlation", INTEGER), ("grid", NUMBERS), ("block", NUMBERS)))
_MEMCPY = _category(STRING, host=False, arg_fields=(("correlation", INTEGER),))
_MEMORY = ((("args", OBJECT_OR_NOTHING, False),), (("Total Allocated", NUMBER_OR_NULL), ("Device Type", ID)))

#: What :class:`pyprof_live.importers.kineto._Builder` reads, by category (both dialects).
FIELDS = {
    "cpu_op": _CPU_OP,
    "Operator": _CPU_OP,
    "user_annotation": _category(args=ANY, args_required=False),
    "cuda_runtime": _RUNTIME,
    "Runtime": _RUNTIME,
    "cuda_driver": _category(arg_fields=_API_ARGS),
    "kernel": _KERNEL,
    "Kernel": _KERNEL,
    "gpu_memcpy": _MEMCPY,
    "Memcpy": _MEMCPY,
    "gpu_memset": _category(None, host=False, arg_fields=(("correlation", INTEGER),)),
    "python_function": _category(STRING, arg_fields=(("Python id", ID), ("Python parent id", ID))),
}


def json_type(value) -> str:
    """``value``'s type as JSON names it ("an array"), or the non-finite number JSON text wrote."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "a boolean"
    if value.__class__ is float and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def event_label(event, index: int) -> str:
    """How messages name ``traceEvents[index]``: with its category, when it has one."""
    category = event.get("cat") if isinstance(event, dict) else None
    return f"{category} event traceEvents[{index}]" if isinstance(category, str) else f"traceEvents[{index}]"


def event_problem(event, index: int) -> str | None:
    """What is wrong with ``traceEvents[index]``, or None when every field the importer reads is right."""
    where = event_label(event, index)
    if not isinstance(event, dict):
        return f"{where} is {json_type(event)}, not an event object"
    category = event.get("cat")
    if not _scalar(category):
        return f"{where}: 'cat' is {json_type(category)}, expected a string"
    fields = FIELDS.get(category) if isinstance(category, str) else None
    if fields is None and event.get("name") == "[memory]":  # cpu_instant_event, or the 2021 dialect's
        fields = _MEMORY
    if fields is None:
        return None
    event_fields, arg_fields = fields
    for key, (check, expected), required in event_fields:
        if key not in event:
            if required:
                return f"{where} has no {key!r}"
        elif not check(event[key]):
            return f"{where}: {key!r} is {shown(event[key])}, expected {expected}"
    args = event.get("args") or {}
    for key, (check, expected) in arg_fields:
        if key in args and not check(args[key]):
            value = args[key]
            found = shown(value)
            if isinstance(value, list) and expected.startswith("an array of"):
                found = f"an array holding {json_type(next(item for item in value if not check([item])))}"
            return f"{where}: args {key!r} is {found}, expected {expected}"
    return None


def first_event_problem(events) -> str | None:
    """The problem of the first event that has one (for failures found once every event is in)."""
    for index, event in enumerate(events):
        problem = event_problem(event, index)
        if problem:
            return problem
    return None


def header_problem(header: dict) -> str | None:
    """What is wrong with the trace's top-level entries that the importer reads, if anything."""
    properties = header.get("deviceProperties")
    if properties and not isinstance(properties, (list, dict, str)):  # iterated, non-objects skipped
        return f"the trace header's 'deviceProperties' is {json_type(properties)}, expected an array"
    return None


# ------------------------------------------------------------------------------------------------
# Records that break a rule of pyprof_live.record_checks, traced back to the event that gave them

#: ``record_param_comms`` args -> ``OpRecord.kwargs`` names (the importer reads these).
COLLECTIVE_ARGS = {
    "Collective name": "collective",
    "dtype": "dtype",
    "In msg nelems": "in_msg_nelems",
    "Out msg nelems": "out_msg_nelems",
    "In split size": "in_split_size",
    "Out split size": "out_split_size",
    "Group size": "group_size",
    "Process Group Name": "pg_name",
    "Process Group Description": "pg_desc",
    "Process Group Ranks": "group_ranks",
    "Global rank start": "global_rank_start",
    "Global rank stride": "global_rank_stride",
}

#: Where an event holds each record field read from it: (in its args?, key), the first present wins.
_FIELD_SOURCES = {
    "name": ((False, "name"),),
    "start": ((False, "ts"),),
    "end": ((False, "dur"), (False, "ts")),
    "pid": ((False, "pid"),),
    "tid": ((False, "tid"),),
    "seq": ((True, "Sequence number"),),
    "altseq": ((True, "Sequence number"),),
    "external_id": ((True, "External id"), (True, "external id")),
    "correlation": ((True, "correlation"),),
    "device": ((True, "device"), (True, "inDevice")),
    "stream": ((True, "stream"),),
    "context": ((True, "context"),),
    "grid": ((True, "grid"),),
    "block": ((True, "block"),),
    "registers": ((True, "registers per thread"),),
    "shared_static": ((True, "shared memory"),),
    "bytes": ((True, "bytes"),),
    "graph_id": ((True, "graph id"),),
    "graph_node_id": ((True, "graph node id"),),
}
_DEVICE_SOURCES = {
    "id": ("id",),
    "name": ("name",),
    "compute_capability": ("computeMajor", "computeMinor"),
    "sm_count": ("numSms",),
    "memory_bytes": ("totalGlobalMem",),
}


def shown(value) -> str:
    """A JSON value as a message shows it: a number as written, anything else by its JSON type."""
    if value.__class__ in (int, float) and math.isfinite(value):
        text = repr(value)
        return text if len(text) <= 24 else f"a {len(text)}-digit number"
    return json_type(value)


def _shown_shape(value) -> str:
    text = json.dumps(value) if isinstance(value, list) else ""
    return text if 0 < len(text) <= 40 else shown(value)


def event_field_problem(event: dict, index: int, problem) -> str:
    """``problem`` (a record_checks.Problem of the records that ``traceEvents[index]`` alone gives) in
    the trace's terms: the event, its key and the value it holds there."""
    where = event_label(event, index)
    args = event.get("args") or {}
    if problem.field in ("inputs", "kwargs"):
        return _argument_problem(where, args, problem)
    for in_args, key in _FIELD_SOURCES.get(problem.field, ()):
        holder = args if in_args else event
        if key in holder:
            label = f"args {key!r}" if in_args else repr(key)
            expected = problem.expected
            if key in ("pid", "tid") and expected == "an integer":
                expected = "an integer or a string"  # the 2021 dialect writes "stream 7"
            return f"{where}: {label} is {shown(holder[key])}, expected {expected}"
    return f"{where}: {problem.field} is {shown(problem.value)}, expected {problem.expected}"


def _argument_problem(where: str, args: dict, problem) -> str:
    if problem.field == "kwargs":
        keys = {name: key for key, name in COLLECTIVE_ARGS.items()}
        for name, value in problem.value:
            expected = arg_problem(value)
            if expected is not None and keys.get(name) in args:
                return f"{where}: args {keys[name]!r} is {shown(args[keys[name]])}, expected {expected}"
        return f"{where}: a collective's args hold a value of an unexpected type"
    dims, concrete = (
        value if isinstance(value, list) else [] for value in map(args.get, ("Input Dims", "Concrete Inputs"))
    )
    for i, value in enumerate(problem.value):
        expected = arg_problem(value)
        if expected is None:
            continue
        if i < len(concrete) and concrete[i] and not (i < len(dims) and dims[i]):
            return f"{where}: args 'Concrete Inputs'[{i}] is {shown(concrete[i])}, expected {expected}"
        if i < len(dims):
            return f"{where}: args 'Input Dims'[{i}] is {_shown_shape(dims[i])}, expected {expected}"
    return f"{where}: the op's arguments hold a value of an unexpected type"


def device_field_problem(properties, problem) -> str | None:
    """``problem`` of a DeviceInfo in the trace header's terms: deviceProperties[i] and its key."""
    entries = [(i, prop) for i, prop in enumerate(properties or ()) if isinstance(prop, dict)]
    if problem.position >= len(entries):
        return None
    i, prop = entries[problem.position]
    keys = [key for key in _DEVICE_SOURCES.get(problem.field, ()) if key in prop]
    keys.sort(key=lambda key: prop[key].__class__ is int)  # the one that is not an integer first
    for key in keys:
        return f"the trace header's deviceProperties[{i}]: {key!r} is {shown(prop[key])}, expected {problem.expected}"
    return f"the trace header's deviceProperties[{i}]: {problem.field} is {shown(problem.value)}, expected {problem.expected}"
