"""A CPU profile of eager code builds its op records on first read (as torch.profiler builds its events
when first asked), the same records stop() would have built."""

import itertools
import threading

import torch
import torch.nn as nn

import pyprof_live
from pyprof_live.capture import session as session_module

SECOND = 10**9


def _counting_builds(monkeypatch) -> list:
    calls: list = []
    build = session_module.build_op_records

    def spy(*args, **kwargs):
        calls.append(1)
        return build(*args, **kwargs)

    monkeypatch.setattr(session_module, "build_op_records", spy)
    return calls


def test_records_are_built_on_first_read_and_only_once(monkeypatch):
    builds = _counting_builds(monkeypatch)
    x = torch.ones(2)
    with pyprof_live.profile() as p:
        x.add(1).mul(2)
    assert builds == []  # stop() kept the raw tuples
    assert [op.name for op in p.records.ops] == ["aten::add", "aten::mul"]
    p.table()
    assert len(p.records.ops) == 2
    assert len(builds) == 1


def test_segments_not_read_in_between_are_built_in_order_before_the_next_start(monkeypatch):
    builds = _counting_builds(monkeypatch)
    x = torch.ones(2)
    p = pyprof_live.profile()
    p.start()
    x.add(1)
    p.stop()
    p.start()  # the first segment is built here: the record cap and autograd's numbering count it
    assert len(builds) == 1
    x.mul(2)
    p.stop()
    assert [op.name for op in p.records.ops] == ["aten::add", "aten::mul"]
    assert len(builds) == 2


def test_the_last_op_takes_the_hooks_after_it_whichever_thread_reads_first(monkeypatch):
    """An Identity after the last op: its module hooks' enter and exit, 1 s each on a clock that moves
    1 s per reading, are that op's profiler time (2 s), also when another thread builds the records."""
    monkeypatch.setattr("pyprof_live.capture.modules._now", itertools.count(0, SECOND).__next__)
    x = torch.ones(2)
    with pyprof_live.profile() as p:
        x.add(1)
        nn.Identity()(x)
    read: list = []
    reader = threading.Thread(target=lambda: read.append(p.records.ops))
    reader.start()
    reader.join()
    (add,) = read[0]
    assert add.name == "aten::add" and add.overhead // SECOND == 2
