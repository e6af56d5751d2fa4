"""Correlation: the one place where records are linked, for live and imported profiles alike.

Links are computed once, set-based (ids joined through lists sorted by id, one stack sweep per
thread, never a scan per kernel; no structure holds an entry per record beyond a reference, as a
10 M-event import's peak was those), and written into the records' link fields:

1. kernel / memop -> launching API call, by ``(pid, correlation)``; a kernel replayed from a CUDA
   graph whose capture is known (``capture_correlation``) -> the op of the launch call that issued
   it at capture, not the op (if any) around the graph launch;
2. API call -> op: by ``(pid, external_id)`` when the source pushed ids around ops (CUPTI,
   Kineto), else the innermost op on the launching ``(pid, tid)`` whose interval contains the
   call's start (nsys/nvprof NVTX ranges, Kineto traces whose ids are unusable);
3. op -> parent op: innermost enclosing op on the same thread (an op fused into a torch.compile'd
   kernel call has that call as parent and is never a parent itself);
4. facts a nested op lacks are inherited from its parent (dir, altseq, module, layer, callsite, mod);
5. backward op -> forward op: the latest forward op of the same process and autograd counter
   (``seq_thread``) with ``seq == altseq`` that started before it (PyProf's rule, keyed by sequence
   number, not by position); ops of compiled graphs keep the module and call site Inductor's
   metadata gave them.

What could not be linked is counted in the returned :class:`Correlation`, never dropped.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass
from itertools import islice, pairwise
from operator import attrgetter, le

from .gcpause import paused_gc
from .records import FUSED, NO_LINK

_INHERITED_FROM_PARENT = ("module", "layer", "callsite", "mod")
_launch, _op = attrgetter("launch"), attrgetter("op")
_start, _end = attrgetter("start"), attrgetter("end")


@dataclass(frozen=True)
class Correlation:
    """Counts of what correlation linked and what it could not."""

    kernels: int
    kernels_with_launch: int
    kernels_with_op: int
    memops_with_op: int
    bwd_ops: int
    bwd_ops_with_fwd: int
    kernels_replayed: int = 0  # kernels replayed from a CUDA graph whose capture is known
    kernels_replayed_with_capture_op: int = 0  # of those, tied to the op that issued them at capture

    @property
    def kernels_unattributed(self) -> int:
        return self.kernels - self.kernels_with_op


@paused_gc()
def correlate(profile) -> Correlation:
    """Fill every link field of ``profile``'s records and return what was linked."""
    records = profile.records
    ops = records.ops
    order = _start_order(ops)  # sorted once: three passes below need it (~1 s per million ops)
    _link_parents(ops, order)
    _inherit_from_parents(ops, order)
    _link_backward_to_forward(ops)
    _link_apis_to_ops(records.apis, ops, order)
    _link_device_work(records.kernels + records.memops, records.apis)
    kernels = records.kernels
    launches = len(kernels) - list(map(_launch, kernels)).count(NO_LINK)
    replayed, tied = _link_replays_to_capture_ops(records.kernels, records.apis)
    bwd = [op for op in ops if op.dir == "bwd" and op.kind != "node" and not _accumulates_grad(op)]
    return Correlation(
        kernels=len(records.kernels),
        kernels_with_launch=launches,
        kernels_with_op=len(kernels) - list(map(_op, kernels)).count(NO_LINK),
        memops_with_op=len(records.memops) - list(map(_op, records.memops)).count(NO_LINK),
        bwd_ops=len(bwd),
        bwd_ops_with_fwd=sum(1 for op in bwd if op.fwd != NO_LINK),
        kernels_replayed=replayed,
        kernels_replayed_with_capture_op=tied,
    )


def _accumulates_grad(op) -> bool:
    """AccumulateGrad belongs to a parameter, not to a forward op."""
    return bool(op.param) or "AccumulateGrad" in op.node or "AccumulateGrad" in op.name


def by_start_longest_first(items: list, start, end) -> list:
    """Sort ``items`` in place as the key ``(start(item), -end(item))`` would, ties kept in their order,
    by two stable sorts on the items' own ints: a key tuple per item (~100 B) was the peak of
    importing and correlating a big trace."""
    items.sort(key=end, reverse=True)  # reverse=True keeps items of equal end in their order
    items.sort(key=start)
    return items


def _start_order(ops) -> range | list:
    """Op indices by start, then longest first (parents before children), then index. Importers
    give their ops in that order already: then a range, not a list of an int object per op."""
    if all(a.start < b.start or (a.start == b.start and a.end >= b.end) for a, b in pairwise(ops)):
        return range(len(ops))
    starts = [op.start for op in ops]
    ends = [op.end for op in ops]
    return by_start_longest_first(list(range(len(ops))), starts.__getitem__, ends.__getitem__)


def _link_parents(ops, order) -> None:
    """One stack sweep per thread, all threads in one pass over ``order``: the innermost open op
    that contains an op is its parent."""
    stacks: dict = {}  # (pid, tid) -> indices of the thread's open ops
    for i in order:
        op = ops[i]
        open_ops = stacks.get((op.pid, op.tid))
        if open_ops is None:
            open_ops = stacks[(op.pid, op.tid)] = []
        while open_ops and ops[open_ops[-1]].end < op.end:
            open_ops.pop()
        # Ops that merely touch (end == start) are siblings, not parent and child.
        while open_ops and ops[open_ops[-1]].end <= op.start and ops[open_ops[-1]].start < op.start:
            open_ops.pop()
        op.parent = open_ops[-1] if open_ops else NO_LINK
        if op.kind != FUSED:  # an op fused into a kernel call has no time: nothing runs inside it
            open_ops.append(i)


def _inherit_from_parents(ops, order) -> None:
    """Parents are visited first (start order), so facts flow down a whole chain in one pass."""
    for i in order:
        op = ops[i]
        parent = ops[op.parent] if op.parent != NO_LINK else None
        if parent is None:
            if not op.dir:
                op.dir = "fwd"
            continue
        if not op.dir:
            op.dir = parent.dir
        if op.altseq == NO_LINK and parent.dir == "bwd":
            op.altseq = parent.altseq
            op.node = op.node or parent.node
        for name in _INHERITED_FROM_PARENT:
            if not getattr(op, name):
                setattr(op, name, getattr(parent, name))


def _link_backward_to_forward(ops) -> None:
    """bwd op -> latest earlier fwd op with seq == altseq; it takes that op's module, layer, call site."""
    forward_by_seq: defaultdict[tuple, list[int]] = defaultdict(list)  # (pid, counter thread, seq) -> indices
    for i, op in enumerate(ops):
        if op.seq != NO_LINK and op.dir in ("fwd", "recompute", "other"):
            forward_by_seq[(op.pid, op.seq_thread, op.seq)].append(i)

    def start_of(i: int) -> int:
        return ops[i].start

    for indices in forward_by_seq.values():
        indices.sort(key=start_of)  # by start, then index (stable): no (start, index) tuple per op
    for op in ops:
        op.fwd = NO_LINK  # correlation may run again (a live profile stopped twice): no stale links
        if op.dir != "bwd" or op.altseq == NO_LINK:
            continue
        candidates = forward_by_seq.get((op.pid, op.seq_thread, op.altseq))
        if not candidates:
            continue
        pos = bisect_right(candidates, op.start, key=start_of) - 1
        if pos < 0:
            continue
        op.fwd = candidates[pos]
        if op.graph:  # compiled code: Inductor's own metadata gave the module and call site of each op
            continue
        fwd = ops[op.fwd]
        # Backward work is reported where its forward op was written, not where backward() was called.
        for name in _INHERITED_FROM_PARENT:
            value = getattr(fwd, name)
            if value:
                setattr(op, name, value)


def _link_apis_to_ops(apis, ops, order) -> None:
    """By pushed external id where the source has one, else by containment on the launching thread."""
    if not apis:  # a CPU-only profile: nothing to link
        return
    for api in apis:
        api.op = NO_LINK
    # The calls that carry an id, sorted by it per process; each op looks its id up there. A dict of
    # every op's id (~100 B per op with its index) was the peak of importing a 10 M-event trace.
    calls = _sorted_by_pid((api for api in apis if api.external_id != NO_LINK), attrgetter("external_id"))
    if calls:
        for i, op in enumerate(ops):  # in index order: where ops repeat an id, the last one's index wins
            if op.external_id != NO_LINK and op.pid in calls:
                for api in _carrying(calls[op.pid], op.external_id):
                    api.op = i
                    api.external_id = op.external_id  # an equal int: one object for both (28 B a call)
    del calls  # before the threads' index arrays are made
    unlinked = defaultdict(list)  # (pid, tid) -> api indices
    for a, api in enumerate(apis):
        if api.op == NO_LINK:
            unlinked[(api.pid, api.tid)].append(a)
    if unlinked:
        threads = _by_thread(ops, order, unlinked.keys())
        for key, api_indices in unlinked.items():
            if key in threads:
                _contain(apis, api_indices, ops, threads[key])


def _sorted_by_pid(items, key) -> dict:
    """``{pid: (keys, items)}``: ``items`` of each process sorted by ``key``, and those keys, for
    :func:`_carrying` (a list of references per record, no new objects)."""
    by_pid = defaultdict(list)
    for item in items:
        by_pid[item.pid].append(item)
    found = {}
    for pid, group in by_pid.items():
        group.sort(key=key)  # stable: items with one key stay in index order
        found[pid] = (list(map(key, group)), group)
    return found


def _carrying(sorted_items: tuple, value) -> list | tuple:
    """The items of one :func:`_sorted_by_pid` entry whose key equals ``value``."""
    keys, items = sorted_items
    first = bisect_left(keys, value)
    if first == len(keys) or keys[first] != value:
        return ()
    return items[first : bisect_right(keys, value, first)]


def _by_thread(ops, order, keys) -> dict:
    """Op indices in ``order`` per ``(pid, tid)`` of ``keys``: packed arrays, not an int object per op."""
    wanted = set(keys)
    threads: dict = {}
    for i in order:
        op = ops[i]
        key = (op.pid, op.tid)
        if key in wanted:
            indices = threads.get(key)
            if indices is None:
                indices = threads[key] = array("q")
            indices.append(i)
    return threads


def _contain(apis, api_indices, ops, op_indices) -> None:
    """Each call of one thread belongs to the innermost op open when it started."""
    starts = list(map(_start, map(apis.__getitem__, api_indices)))
    if not all(map(le, starts, islice(starts, 1, None))):  # importers give calls sorted by start already
        api_indices.sort(key=lambda a: apis[a].start)
        starts = list(map(_start, map(apis.__getitem__, api_indices)))
    spans = zip(map(_start, map(ops.__getitem__, op_indices)), map(_end, map(ops.__getitem__, op_indices)), op_indices)
    for a, i in zip(api_indices, innermost_open(starts, spans)):
        if i is not None:
            apis[a].op = i


def innermost_open(times: list, spans) -> list:
    """For each of ``times`` (ascending), the item of the innermost of ``spans`` open at it, or None.

    ``spans`` (any iterable, read once) are ``(start, end, item)`` sorted by start (then longest
    first), nesting as a thread's calls do: one stack sweep, O(times + spans). Launch -> op here,
    op -> Python frame in Kineto.
    """
    found: list = []
    open_spans: list = []
    pending = iter(spans)
    span = next(pending, None)
    for t in times:
        while span is not None and span[0] <= t:
            while open_spans and open_spans[-1][1] < span[0]:
                open_spans.pop()
            open_spans.append(span)
            span = next(pending, None)
        while open_spans and open_spans[-1][1] < t:
            open_spans.pop()
        # The top span is open at t (the loop above left none that ended before t on top); spans below
        # it that ended before t lie under a longer one still open, and the top is the innermost.
        found.append(open_spans[-1][2] if open_spans else None)
    return found


_NONE: dict = {}  # the ids of a process no record has


def _link_device_work(items, apis) -> None:
    """kernel/memop -> API call of the same ``(pid, correlation)`` (the last such call wins), and
    that call's op."""
    for item in items:
        item.launch = item.op = NO_LINK
    # Per process: the items sorted by id, their ids, and where the last call's items ended.
    waiting = {pid: [keys, items, 0] for pid, (keys, items) in _sorted_by_pid(items, attrgetter("correlation")).items()}
    if not waiting:
        return
    for a, api in enumerate(apis):  # in index order: where calls repeat an id, the last one wins
        found = waiting.get(api.pid)
        if found is None:
            continue
        # _carrying inlined (a call and a slice per launch call of a million-kernel import)
        keys, items, k = found
        correlation = api.correlation
        # CUDA numbers a process's calls in the order they are made, so a call's items usually start
        # where the previous call's ended (k, always the first position of an id): looked up by
        # bisection only when they do not (a bisection in a million ids cost most of this loop).
        if k >= len(keys) or keys[k] != correlation:
            k = bisect_left(keys, correlation)
        while k < len(keys) and keys[k] == correlation:
            item = items[k]
            item.launch = a
            item.op = api.op
            item.correlation = correlation  # an equal int: one object for both (28 B a kernel)
            k += 1
        found[2] = k


def _by_pid(entries) -> dict:
    """``(pid, id, value)`` -> ``{pid: {id: value}}`` (the last value of a repeated key wins): a dict
    per process, not a ``(pid, id)`` tuple per record, which cost as much as the record's link."""
    found: dict = {}
    for pid, key, value in entries:
        by_id = found.get(pid)
        if by_id is None:
            by_id = found[pid] = {}
        by_id[key] = value
    return found


def _link_replays_to_capture_ops(kernels, apis) -> tuple[int, int]:
    """A replayed kernel belongs to the op that issued its launch at graph capture; returns
    (kernels with a known capture launch, those whose capture launch has an op)."""
    replayed = [k for k in kernels if k.capture_correlation != NO_LINK]
    if not replayed:
        return 0, 0
    by_correlation = _by_pid((api.pid, api.correlation, api.op) for api in apis)
    tied = 0
    for kernel in replayed:
        op = by_correlation.get(kernel.pid, _NONE).get(kernel.capture_correlation, NO_LINK)
        if op != NO_LINK:
            kernel.op = op
            tied += 1
    return len(replayed), tied
