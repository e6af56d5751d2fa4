"""What every record field must hold for the stages after an importer: one rule set, checked at each edge.

Importers (Kineto, nsys, nvprof) and saved profiles produce records from files that may say
anything. Correlation, formulas, views, exports and ``save()`` rely on each field having its
annotated type and a value they can compute with, so every source's records are checked against
the rules here before a Profile is made of them. Two outcomes, decided per field (README, "Bad input"):

- a value of the wrong type, or a number out of range (an int beyond 64 bits, a time beyond
  2**62 ns, a negative shape dimension), is a :class:`Problem`: the importer refuses the file and
  names the event (or table row) and the field. Such a file is not what it claims to be, and any
  record made of it would be a guess.
- a record whose end is before its start (a negative duration) is well-typed but cannot be placed
  on a timeline: :func:`drop_reversed` leaves it out and the importer counts it in ``meta["warnings"]``.

The checks run column by column with C-level builtins (``set(map(type, ...))``, ``min``/``max``) and
walk argument values only once per distinct value, so a million records cost well under a second;
the slow search for the exact bad record runs only when a column fails.
"""

from __future__ import annotations

import dataclasses
import os
from itertools import chain
from operator import attrgetter, lt
from typing import NamedTuple

from .records import RECORD_TYPES, TensorMeta, Unknown

#: Integers a 64-bit column (SQLite, Arrow, pandas Int64) can hold.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
#: Times are integer ns; |t| <= 2**62 keeps every duration and difference of two times in 64 bits
#: (2**62 ns is 146 years: Kineto's µs since 1970 are about 1.7e18 ns).
TIME_LIMIT = 1 << 62
#: Deepest nesting of argument values kept (tuples of tuples); deeper means a damaged file.
MAX_ARG_DEPTH = 32
#: Most dimensions a tensor shape may have (torch allows 64 at most, by far the most in practice is ~8).
MAX_DIMS = 64

_TIME_FIELDS = frozenset({"start", "end"})
_STRING_TUPLE_FIELDS = frozenset({"layer", "callsite"})
_INT_TUPLE_FIELDS = frozenset({"grid", "block", "compute_capability"})
_ARG_TUPLE_FIELDS = frozenset({"inputs", "outputs"})
_JSON_SCALARS = (str, int, float, bool, type(None))
#: Python reads back integers of at most 4300 digits from JSON text (sys.get_int_max_str_digits).
_JSON_INT_LIMIT = 10**4000


class Problem(NamedTuple):
    """One field of one record that a later stage could not use."""

    records: str  # the record list: "ops", "kernels", ...
    position: int  # in that list
    field: str
    value: object
    expected: str  # what the field must hold: "an integer", "a time of at most 2**62 ns", ...

    def __str__(self) -> str:
        return f"{self.records}[{self.position}]: {self.field} is {describe(self.value)}, expected {self.expected}"


def describe(value) -> str:
    """A value as an error message shows it: numbers themselves, other things by their type."""
    if value is None:
        return "None"
    if value is True or value is False:
        return f"a boolean ({value})"
    if value.__class__ in (int, float):
        text = repr(value)
        return text if len(text) <= 24 else f"a {len(text)}-digit number"
    if isinstance(value, str):
        return f"a string {value[:40]!r}" if len(value) <= 40 else f"a string of {len(value)} characters"
    return f"a {type(value).__name__}"


def _field_kinds(cls) -> dict:
    """Field name -> annotated type name ("int", "str", "bool", "tuple", "dict") of a record class."""
    return {f.name: f.type for f in dataclasses.fields(cls)}


_KINDS = {name: _field_kinds(cls) for name, cls in RECORD_TYPES.items()}


def first_problem(records, fields: dict | None = None) -> Problem | None:
    """The first field of ``records`` (a :class:`~pyprof_live.records.Records`, or anything with its
    list attributes) that breaks a rule, or None. ``fields``: {record list: names of the fields to
    check, None for all} (default: every list, every field)."""
    for name, names in (fields or dict.fromkeys(RECORD_TYPES)).items():
        items = getattr(records, name)
        if not items:
            continue
        kinds = _KINDS[name]
        names = kinds if names is None else names
        ints_fit = _ints_fit(items, [field for field in names if kinds[field] == "int"])
        for field in names:
            if ints_fit and kinds[field] == "int":
                continue  # no check of _ints_problem can fail on it
            problem = _column_problem(name, items, field, kinds[field])
            if problem is not None:
                return problem
    return None


#: Records per pass of :func:`_ints_fit` (a list of their values lives while it runs).
_CHUNK = 1 << 16


def _load_native() -> tuple:
    """``(ints_fit, any_reversed, starts_ascending)`` of the C passes (``_int_fields.c``), or Nones where
    they are not built (or not wanted: ``PYPROF_LIVE_NATIVE=0``)."""
    if os.environ.get("PYPROF_LIVE_NATIVE", "1") == "0":
        return None, None, None
    try:
        from ._int_fields import any_reversed, ints_fit, starts_ascending
    except ImportError:
        return None, None, None
    return ints_fit, any_reversed, starts_ascending


#: The C passes :func:`_ints_fit`, :func:`drop_reversed` and :func:`in_start_order` use; None: the Python
#: ones here (same answers, same errors).
native, native_any_reversed, native_starts_ascending = _load_native()


def _ints_fit(items: list, fields: list) -> bool:
    """Whether every value of these integer fields is an int within TIME_LIMIT, which passes every
    check :func:`_ints_problem` makes (type, time range, 64 bits): one pass over all the fields, not one
    per field (a million kernels have a dozen). False: check each field, to name the first bad value."""
    if len(fields) < 2:
        return False
    if native is not None and items.__class__ is list:
        return native(items, tuple(fields), TIME_LIMIT, _CHUNK)
    values_of = attrgetter(*fields)
    for at in range(0, len(items), _CHUNK):
        values = list(chain.from_iterable(map(values_of, items[at : at + _CHUNK])))
        if set(map(type, values)) - {int} or min(values) < -TIME_LIMIT or max(values) > TIME_LIMIT:
            return False
    return True


def _column_problem(name: str, items: list, field: str, kind: str) -> Problem | None:
    column = list(map(attrgetter(field), items))
    if kind == "int":
        limit = TIME_LIMIT if field in _TIME_FIELDS else None
        return _ints_problem(name, column, field, limit)
    if kind == "str":
        return _first(name, column, field, "a string", lambda v: v.__class__ is not str, {str})
    if kind == "dict":
        problem = _first(name, column, field, "an object", lambda v: v.__class__ is not dict, {dict})
        if problem is None:
            for index, value in enumerate(column):
                if not _json_value(value, 0):
                    return Problem(name, index, field, value, "an object of JSON values")
        return problem
    if kind == "bool":
        return _first(name, column, field, "a boolean", lambda v: v.__class__ is not bool, {bool})
    if kind != "tuple":
        return None  # a field type added later, without a rule here yet
    problem = _first(name, column, field, "a tuple", lambda v: v.__class__ is not tuple, {tuple})
    if problem is not None:
        return problem
    if field in _STRING_TUPLE_FIELDS:
        if set(map(type, chain.from_iterable(column))) - {str}:
            return _find(name, column, field, "a tuple of strings", lambda v: set(map(type, v)) - {str})
    elif field in _INT_TUPLE_FIELDS:
        return _int_tuples_problem(name, column, field)
    elif field in _ARG_TUPLE_FIELDS:
        return _distinct_problem(name, column, field, _args_problem)
    elif field == "kwargs":
        return _distinct_problem(name, column, field, _kwargs_problem)
    return None


def _first(name, column, field, expected, is_bad, allowed: set) -> Problem | None:
    """Problem for the first value ``is_bad`` finds, when the column's types are not all ``allowed``."""
    if set(map(type, column)) <= allowed:
        return None
    return _find(name, column, field, expected, is_bad)


def _find(name, column, field, expected, is_bad) -> Problem:
    index = next(i for i, value in enumerate(column) if is_bad(value))
    return Problem(name, index, field, column[index], expected)


def _ints_problem(name: str, column: list, field: str, limit: int | None) -> Problem | None:
    if set(map(type, column)) - {int}:
        return _find(name, column, field, "an integer", lambda v: v.__class__ is not int)
    low, high = (-limit, limit) if limit is not None else (INT64_MIN, INT64_MAX)
    if min(column) < low or max(column) > high:
        expected = "a time of at most 2**62 ns" if limit is not None else "an integer of at most 64 bits"
        return _find(name, column, field, expected, lambda v: not low <= v <= high)
    return None


def _int_tuples_problem(name: str, column: list, field: str) -> Problem | None:
    # Each tuple object once (by identity: (1, 1) == (1.0, 1) == (True, 1)): importers share the few
    # launch shapes kernels repeat.
    distinct = dict(zip(map(id, column), column)).values()
    values = list(chain.from_iterable(distinct))
    expected = "a tuple of integers of at most 64 bits"
    if set(map(type, values)) - {int} or (values and (min(values) < INT64_MIN or max(values) > INT64_MAX)):
        return _find(name, column, field, expected, lambda v: not all(_is_int64(x) for x in v))
    if field == "compute_capability" and (set(map(len, column)) - {0, 2}):
        return _find(name, column, field, "(major, minor) or ()", lambda v: len(v) not in (0, 2))
    return None


def _is_int64(value) -> bool:
    return value.__class__ is int and INT64_MIN <= value <= INT64_MAX


def _distinct_problem(name: str, column: list, field: str, check) -> Problem | None:
    """``check`` each distinct value once (training steps repeat the same arguments)."""
    try:
        distinct = set(column)
    except TypeError:  # an unhashable value (a dict from a damaged file): check every record
        distinct = None
    for value in distinct if distinct is not None else column:
        expected = check(value)
        if expected is not None:
            return _find(name, column, field, expected, lambda v, bad=value: v is bad or v == bad)
    return None


def _args_problem(args: tuple) -> str | None:
    for arg in args:
        problem = arg_problem(arg)
        if problem is not None:
            return problem
    return None


def _kwargs_problem(kwargs: tuple) -> str | None:
    for pair in kwargs:
        if pair.__class__ is not tuple or len(pair) != 2 or pair[0].__class__ is not str:
            return "(name, value) pairs"
        problem = arg_problem(pair[1])
        if problem is not None:
            return problem
    return None


def arg_problem(value, depth: int = 0) -> str | None:
    """What an argument value (records.Arg) must be, when it is not that; None when it is fine."""
    cls = value.__class__
    if cls is TensorMeta:
        return _tensor_problem(value)
    if cls is Unknown:
        return None if value.what.__class__ is str else "Unknown(text)"
    if cls is tuple:
        if depth >= MAX_ARG_DEPTH:
            return f"arguments nested at most {MAX_ARG_DEPTH} deep"
        for item in value:
            problem = arg_problem(item, depth + 1)
            if problem is not None:
                return problem
        return None
    if cls in (str, float, bool, type(None)):
        return None
    if cls is int:
        return None if INT64_MIN <= value < 1 << 64 else "argument integers of at most 64 bits"
    return "argument values: tensors, numbers, strings, None or tuples of them"


def _tensor_problem(tensor: TensorMeta) -> str | None:
    shape, dtype, stride = tensor
    if shape.__class__ is not tuple or len(shape) > MAX_DIMS or not all(_is_dim(d) for d in shape):
        return f"tensor shapes of at most {MAX_DIMS} sizes (integers from 0 to 2**63 - 1, or symbols)"
    if dtype is not None and dtype.__class__ is not str:
        return "tensor dtypes that are text or None"
    if stride is not None and (stride.__class__ is not tuple or not all(_is_int64(s) for s in stride)):
        return "tensor strides that are integers or None"
    return None


def _is_dim(value) -> bool:
    """A size: an integer, or a symbolic size as text (a jagged tensor's ragged dimension, "j1")."""
    return (value.__class__ is int and 0 <= value <= INT64_MAX) or value.__class__ is str


def _json_value(value, depth: int) -> bool:
    """Can ``save()`` write this and ``load()`` read it back (lists as tuples, keys as text)?"""
    if isinstance(value, _JSON_SCALARS):
        return value.__class__ is not int or -_JSON_INT_LIMIT < value < _JSON_INT_LIMIT
    if depth >= MAX_ARG_DEPTH:
        return False
    if isinstance(value, (tuple, list)):
        return all(_json_value(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, _JSON_SCALARS) and _json_value(v, depth + 1) for k, v in value.items())
    return False


def drop_reversed(records, lists=("ops", "apis", "kernels", "memops", "ranges", "compiles")) -> dict:
    """Remove records whose end is before their start; {record list: count removed} (empty when none).

    Run after :func:`first_problem` (times are then ints) and before correlation (no links yet)."""
    dropped = {}
    for name in lists:
        items: list = getattr(records, name, [])  # an importer's builder may not hold every list
        if _any_reversed(items):
            kept = [r for r in items if r.end >= r.start]
            dropped[name] = len(items) - len(kept)
            items[:] = kept
    return dropped


def in_start_order(items: list) -> bool:
    """Whether ``items`` are known to be sorted by start already (their starts exact 64-bit ints, none
    below the one before): sorting them by start would change nothing. False: not known (no C pass, or
    a start of another type, which the sort itself must compare or refuse)."""
    return native_starts_ascending is not None and items.__class__ is list and native_starts_ascending(items)


def _any_reversed(items) -> bool:
    """Whether some record's end is before its start."""
    if native_any_reversed is not None and items.__class__ is list:
        return native_any_reversed(items)
    return any(map(lt, map(_end, items), map(_start, items)))


_start, _end = attrgetter("start"), attrgetter("end")


def reversed_warning(dropped: dict, unit: str = "events") -> str:
    """The meta["warnings"] line for what :func:`drop_reversed` removed."""
    counts = ", ".join(f"{count} {name}" for name, count in dropped.items())
    return f"{sum(dropped.values())} {unit} end before they start (negative duration) and were left out: {counts}"
