"""The C passes of the record checks (pyprof_live/_int_fields.c) answer as the Python passes do.

record_checks._ints_fit decides whether all integer fields of a record list are exact ints within
2**62; when not, the per-field Python checks name the first bad record. Both passes must give the same
yes/no on every value a damaged file can produce (bool, float, str, None, huge ints, int subclasses) and
raise the same error for an unreadable field, so ``first_problem`` reports the same Problem either way.
drop_reversed's test (any record whose end is before its start) likewise, in C and in Python; and the
importers' sort by start, skipped when the C pass finds the records in order already, must leave the
same list (or raise the same error) as the sort alone.
Each case runs both passes on the same records and compares answers or errors.
"""

import enum

import pytest

from pyprof_live import record_checks
from pyprof_live.importers._sqlite import sort_by_start
from pyprof_live.record_checks import TIME_LIMIT, first_problem
from pyprof_live.records import ApiRecord, KernelRecord, Records

needs_native = pytest.mark.skipif(record_checks.native is None, reason="the C integer pass is not built")

INT_FIELDS = [name for name, kind in record_checks._KINDS["kernels"].items() if kind == "int"]


class Count(int):
    pass


class Colour(enum.IntEnum):
    RED = 1


# Each value and whether it fits (exact int, |v| <= 2**62).
VALUES = [
    (0, True),
    (-1, True),
    (TIME_LIMIT, True),
    (-TIME_LIMIT, True),
    (TIME_LIMIT + 1, False),
    (-TIME_LIMIT - 1, False),
    (1 << 63, False),  # beyond long long: the C overflow path
    (-(1 << 64), False),
    (10**30, False),
    (True, False),
    (False, False),
    (1.0, False),
    ("1", False),
    (None, False),
    (Count(3), False),
    (Colour.RED, False),
]


def kernels(count: int = 5) -> list:
    return [KernelRecord(name="k", start=10 * i, end=10 * i + 5, stream=7, correlation=i) for i in range(count)]


def outcome(items, fields):
    """_ints_fit's answer (``fields`` None: _any_reversed's), or the type and text of the error it raised:
    the error itself is what both passes must agree on."""
    try:
        return record_checks._ints_fit(items, fields) if fields is not None else record_checks._any_reversed(items)
    except Exception as error:
        return type(error), str(error)


def both(items, fields, monkeypatch):
    """(outcome with the C pass, outcome with the Python pass) on the same records."""
    native = outcome(items, fields)
    with monkeypatch.context() as patch:
        patch.setattr(record_checks, "native", None)
        patch.setattr(record_checks, "native_any_reversed", None)
        python = outcome(items, fields)
    return native, python


@needs_native
@pytest.mark.parametrize("value, fit", VALUES, ids=repr)
@pytest.mark.parametrize("field", ["start", "registers", "op"])  # first, middle, last integer field
def test_each_hostile_value_gives_the_same_answer_and_problem(field, value, fit, monkeypatch):
    items = kernels()
    setattr(items[3], field, value)
    assert both(items, INT_FIELDS, monkeypatch) == (fit, fit)
    records = Records(kernels=items)
    native = first_problem(records)
    with monkeypatch.context() as patch:
        patch.setattr(record_checks, "native", None)
        python = first_problem(records)
    assert native == python
    # A bad value is named at its record, kernels[3]; start is a time (2**62), the others 64-bit ints,
    # so 2**62 + 1 in "registers" is no Problem at all.
    if not fit and (field == "start" or type(value) is not int or abs(value) >= 1 << 63):
        assert (native.records, native.position, native.field) == ("kernels", 3, field)


@needs_native
def test_clean_records_fit_in_both(monkeypatch):
    assert both(kernels(1000), INT_FIELDS, monkeypatch) == (True, True)
    assert both([], INT_FIELDS, monkeypatch) == (True, True)


@needs_native
def test_a_missing_slot_raises_the_same_attribute_error_in_both(monkeypatch):
    items = kernels()
    del items[2].stream
    native, python = both(items, INT_FIELDS, monkeypatch)
    assert native == python == (AttributeError, "'KernelRecord' object has no attribute 'stream'")


@needs_native
def test_a_bad_value_stops_the_pass_only_at_the_end_of_its_chunk(monkeypatch):
    # Chunks of 4: a bad value in kernels[1] and an unreadable one in kernels[3] (same chunk) -> the read
    # raises; in kernels[5] (next chunk) -> the pass already answered False.
    monkeypatch.setattr(record_checks, "_CHUNK", 4)
    same = kernels(8)
    same[1].start = True
    del same[3].stream
    later = kernels(8)
    later[1].start = True
    del later[5].stream
    assert (
        both(same, INT_FIELDS, monkeypatch)
        == ((AttributeError, "'KernelRecord' object has no attribute 'stream'"),) * 2
    )
    assert both(later, INT_FIELDS, monkeypatch) == (False, False)


class ShownKernel(KernelRecord):
    """A subclass whose field reads go through a property: the C pass must not read the slot beneath."""

    __slots__ = ()

    @property
    def stream(self):
        return "seven"


class LoudKernel(KernelRecord):
    """Every read of ``end`` goes through __getattribute__ (no generic attribute lookup at all)."""

    __slots__ = ()

    def __getattribute__(self, name):
        return -1 if name == "end" else object.__getattribute__(self, name)


class BrokenKernel(KernelRecord):
    """A field whose read raises an error of its own: both passes must let it through unchanged."""

    __slots__ = ()

    @property
    def device(self):
        raise ValueError("device unreadable")


class Foreign:
    """A class holding KernelRecord's slot descriptor for ``start`` without KernelRecord's layout: reading
    it raises TypeError in Python; the C pass must not read memory at that slot's offset."""

    __slots__ = ("end",)
    start = KernelRecord.start

    def __init__(self):
        self.end = 1


@needs_native
def test_other_classes_and_mixed_lists_are_read_through_getattr(monkeypatch):
    items = kernels(6)
    items[4].__class__ = ShownKernel  # its slot still holds the int 7; reading stream gives "seven"
    assert both(items, INT_FIELDS, monkeypatch) == (False, False)
    items[4].__class__ = LoudKernel  # end reads -1: fits
    assert both(items, INT_FIELDS, monkeypatch) == (True, True)
    items[4].__class__ = BrokenKernel
    assert both(items, INT_FIELDS, monkeypatch) == ((ValueError, "device unreadable"),) * 2
    # A list of two record classes (the C pass's cached slots change with the class) that all fit.
    mixed = [ApiRecord(name="cudaLaunchKernel", start=i, end=i + 1, correlation=i) for i in range(3)]
    mixed[1:1] = kernels(2)
    fields = ["start", "end", "correlation"]
    assert both(mixed, fields, monkeypatch) == (True, True)
    mixed[3].end = 2.0
    assert both(mixed, fields, monkeypatch) == (False, False)


@needs_native
def test_a_foreign_slot_descriptor_raises_the_same_type_error_in_both(monkeypatch):
    native, python = both([Foreign()], ["end", "start"], monkeypatch)
    assert native == python
    assert native[0] is TypeError and "'start' for 'KernelRecord' objects doesn't apply" in native[1]


@needs_native
def test_any_number_of_fields_and_non_lists(monkeypatch):
    # 70 slotted fields (more than any record has), one of them 2**62 + 1 at the last record.
    wide = type("Wide", (), {"__slots__": tuple(f"f{i}" for i in range(70))})
    items = []
    for row in range(3):
        item = wide()
        for i in range(70):
            setattr(item, f"f{i}", row * i)
        items.append(item)
    names = [f"f{i}" for i in range(70)]
    assert both(items, names, monkeypatch) == (True, True)
    items[2].f69 = TIME_LIMIT + 1
    assert both(items, names, monkeypatch) == (False, False)
    # A tuple or a list subclass takes the Python pass (the C one reads exact lists only).
    assert both(tuple(kernels()), INT_FIELDS, monkeypatch) == (True, True)
    assert both(type("Rows", (list,), {})(kernels()), INT_FIELDS, monkeypatch) == (True, True)


def test_python_pass_alone_names_the_bad_record(monkeypatch):
    # The pure-Python path (no C pass built, or PYPROF_LIVE_NATIVE=0) still finds kernels[2]'s bool.
    monkeypatch.setattr(record_checks, "native", None)
    items = kernels()
    items[2].device = True
    problem = first_problem(Records(kernels=items))
    assert str(problem) == "kernels[2]: device is a boolean (True), expected an integer"


@needs_native
@pytest.mark.parametrize(
    "end, start, reversed_",
    [
        (5, 5, False),
        (4, 5, True),
        (-(1 << 62), 1 << 62, True),
        (1 << 70, 1 << 64, False),  # beyond long long: Python's < compares them
        (-(1 << 70), 0, True),
        (True, 2, True),  # a bool and an int subclass compare as numbers, as Python's < does
        (Count(1), 0, False),
        (4.5, 5, True),
        (None, 5, (TypeError, "'<' not supported between instances of 'NoneType' and 'int'")),
        ("4", 5, (TypeError, "'<' not supported between instances of 'str' and 'int'")),
    ],
    ids=repr,
)
def test_any_reversed_compares_as_python_does(end, start, reversed_, monkeypatch):
    items = kernels()
    items[3].end, items[3].start = end, start
    assert both(items, None, monkeypatch) == (reversed_, reversed_)


@needs_native
def test_any_reversed_reads_end_then_start_and_stops_at_the_first(monkeypatch):
    items = kernels(6)
    del items[2].start
    del items[2].end
    message = "'KernelRecord' object has no attribute 'end'"  # end is read first
    assert both(items, None, monkeypatch) == ((AttributeError, message),) * 2
    items[1].end = -1  # a reversed record before the unreadable one: both stop there
    assert both(items, None, monkeypatch) == (True, True)
    items = kernels(3)
    items[1].__class__ = BrokenKernel  # reads of start and end are plain: fine
    items[2].__class__ = LoudKernel  # end reads -1: reversed
    assert both(items, None, monkeypatch) == (True, True)
    assert both([Foreign()], None, monkeypatch) == (outcome([Foreign()], ["end", "start"]),) * 2
    assert both([], None, monkeypatch) == (False, False)


def test_drop_reversed_without_the_c_pass(monkeypatch):
    # Kernels 1 and 3 end before they start (5 < 10, 25 < 30): both left out, counted.
    monkeypatch.setattr(record_checks, "native_any_reversed", None)
    items = kernels()
    items[1].end, items[3].end = 5, 25
    records = Records(kernels=items)
    assert record_checks.drop_reversed(records) == {"kernels": 2}
    assert [k.start for k in records.kernels] == [0, 20, 40]


def sorted_by_start(items, monkeypatch) -> tuple:
    """(sort_by_start's list or error with the C check, the same with the sort alone), on copies."""
    outcomes = []
    for native in (record_checks.native_starts_ascending, None):
        with monkeypatch.context() as patch:
            patch.setattr(record_checks, "native_starts_ascending", native)
            copy = list(items)
            try:
                sort_by_start(copy)
                outcomes.append([id(item) for item in copy])
            except Exception as error:
                outcomes.append((type(error), str(error)))
    return tuple(outcomes)


@needs_native
def test_records_in_start_order_are_left_as_the_sort_leaves_them(monkeypatch):
    items = kernels(6)
    items[2].start = items[3].start = 20  # a tie: kept in list order either way
    assert record_checks.in_start_order(items) is True
    assert sorted_by_start(items, monkeypatch) == ([id(k) for k in items],) * 2
    # Out of order, or a start that is not an exact 64-bit int: the C check says "not known", the sort runs.
    for at, start in ((4, 5), (1, True), (1, 10.0), (5, 1 << 64), (0, -(1 << 64))):
        changed = kernels(6)
        changed[at].start = start
        assert record_checks.in_start_order(changed) is False
        native, python = sorted_by_start(changed, monkeypatch)
        assert native == python
    changed = kernels(6)
    changed[4].start = 5  # 0 10 20 30 5 50 -> kernels 0, 4, 1, 2, 3, 5
    assert sorted_by_start(changed, monkeypatch)[0] == [id(changed[k]) for k in (0, 4, 1, 2, 3, 5)]


@needs_native
def test_a_start_the_sort_cannot_read_or_compare_fails_the_same_way(monkeypatch):
    items = kernels(4)
    items[2].start = None  # a NULL start: None < int
    assert (
        sorted_by_start(items, monkeypatch)
        == ((TypeError, "'<' not supported between instances of 'NoneType' and 'int'"),) * 2
    )
    items = kernels(4)
    del items[1].start
    assert (
        sorted_by_start(items, monkeypatch) == ((AttributeError, "'KernelRecord' object has no attribute 'start'"),) * 2
    )
    items = kernels(4)
    items[3].__class__ = LoudKernel  # reads through __getattribute__: start as stored, still in order
    assert record_checks.in_start_order(items) is True
    assert record_checks.in_start_order(tuple(kernels(3))) is False  # not a list: the sort decides


def test_native_zero_selects_the_python_pass(monkeypatch):
    monkeypatch.setenv("PYPROF_LIVE_NATIVE", "0")
    assert record_checks._load_native() == (None, None, None)
