"""The trace view's data: every op, range, kernel and memcpy/memset of a profile as columns of numbers.

A million slices as JSON objects would weigh ~150 MB and take seconds to parse; as typed columns
(start, duration, lane, name id, kind, record index) plus a string table they weigh ~25 bytes each
before gzip, and the page reads them straight into typed arrays. Details shown on a click (shapes,
module, call site, flops, kernel grid) are columns too, so the one-file export needs no server.

Layout of the bytes: each column in :data:`SLICE_COLUMNS` (then the per-kind detail columns) in
order, little-endian, each starting at a multiple of 8; the header (JSON) lists names, types,
lengths and offsets. Lanes: each track (a host thread, a GPU stream) gets one lane per nesting
depth; slices that do not nest with the others of their thread (overlapping imported ranges) go to
an extra track of that thread rather than being hidden.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from array import array
from collections import defaultdict

from ..analysis.kernel_names import short_name
from ..formulas import evaluate
from ..records import DIRECTIONS, NO_LINK
from . import cells

KINDS = ("op", "range", "kernel", "memop")
_OP, _RANGE, _KERNEL, _MEMOP = range(4)
_DIRS = ("", *DIRECTIONS)


class _Strings:
    """String table: each distinct string once, referred to by its position."""

    def __init__(self):
        self.ids = {"": 0}

    def __call__(self, text) -> int:
        text = "" if text is None else str(text)
        found = self.ids.get(text)
        if found is None:
            found = self.ids[text] = len(self.ids)
        return found

    def table(self) -> list:
        return list(self.ids)


def trace_payload(profile) -> tuple[dict, bytes]:
    """(header, body): the header says what the columns of ``body`` are and names the tracks."""
    profile.correlation  # noqa: B018 - kernel -> op and bwd -> fwd links are read below
    records = profile.records
    strings = _Strings()
    origin = _origin(records)
    slices_by_track = defaultdict(list)  # (group, pid, id) -> [(start, end, kind, ref)]
    for i, r in enumerate(records.ranges):
        slices_by_track[(0, r.pid, r.tid)].append((r.start, r.end, _RANGE, i))
    for i, op in enumerate(records.ops):
        slices_by_track[(0, op.pid, op.tid)].append((op.start, op.end, _OP, i))
    for i, k in enumerate(records.kernels):
        slices_by_track[(1, k.device, k.stream)].append((k.start, k.end, _KERNEL, i))
    for i, m in enumerate(records.memops):
        slices_by_track[(1, m.device, m.stream)].append((m.start, m.end, _MEMOP, i))

    device_names = {d.id: d.name for d in records.devices}
    tracks: list[dict] = []
    placed: list[tuple] = []  # (lane, start, end, kind, ref)
    lane = 0
    for key in sorted(slices_by_track):
        group, pid, tid = key
        for part, lanes in enumerate(_nest(slices_by_track[key])):
            if group == 0:
                name = f"thread {tid}" + (f" (overlapping {part})" if part else "")
                process = f"process {pid}"
            else:
                name = f"stream {tid}" + (f" (overlapping {part})" if part else "")
                process = f"GPU {pid}" + (f" {device_names[pid]}" if pid in device_names else "")
            tracks.append(
                {
                    "name": name,
                    "process": process,
                    "kind": "thread" if group == 0 else "stream",
                    "lane": lane,
                    "lanes": len(lanes),
                }
            )
            for depth, items in enumerate(lanes):
                placed.extend((lane + depth, *s) for s in items)
            lane += len(lanes)

    columns: dict[str, array] = {
        "start": array("d"),
        "dur": array("d"),
        "lane": array("I"),
        "name": array("I"),
        "kind": array("B"),
        "ref": array("I"),
    }
    ops, kernels, memops = records.ops, records.kernels, records.memops
    names = (
        [strings(op.name) for op in ops],
        [strings(r.name) for r in records.ranges],
        [strings(short_name(k.name)) for k in kernels],
        [strings(f"memcpy {m.copy_kind}" if m.kind == "memcpy" else "memset") for m in memops],
    )
    for lane_, start, end, kind, ref in placed:
        columns["start"].append(start - origin)
        columns["dur"].append(end - start)
        columns["lane"].append(lane_)
        columns["name"].append(names[kind][ref])
        columns["kind"].append(kind)
        columns["ref"].append(ref)
    columns.update(_op_details(ops, strings))
    columns.update(_kernel_details(kernels, strings))
    columns.update(_memop_details(memops, strings))
    columns["range_kind"] = array("I", (strings(r.kind) for r in records.ranges))

    body = bytearray()
    layout = []
    for name, column in columns.items():
        body.extend(b"\0" * (-len(body) % 8))
        if sys.byteorder != "little":
            column = array(column.typecode, column)
            column.byteswap()
        layout.append({"name": name, "type": column.typecode, "length": len(column), "offset": len(body)})
        body.extend(column.tobytes())
    header = {
        "origin": origin,
        "span": _span(records) - origin if placed else 0,
        "tracks": tracks,
        "lanes": lane,
        "slices": len(placed),
        "kinds": list(KINDS),
        "dirs": list(_DIRS),
        "columns": layout,
        "strings": strings.table(),
    }
    return header, bytes(body)


def _origin(records) -> int:
    starts = [
        min(x.start for x in items) for items in (records.ops, records.ranges, records.kernels, records.memops) if items
    ]
    return min(starts) if starts else 0


def _span(records) -> int:
    return max(
        max(x.end for x in items) for items in (records.ops, records.ranges, records.kernels, records.memops) if items
    )


def _nest(slices) -> list:
    """Split one track's slices into parts that each nest properly; per part, the slices of each depth.

    Parents sort before their children (start, then longest, then ranges before the ops they hold),
    so a slice's depth is the number of open slices that contain it. Within one depth of one part,
    slices never overlap: the page finds what is visible by binary search on start.
    """
    ordered = sorted(slices, key=lambda s: (s[0], -s[1], s[2] != _RANGE))
    parts: list[tuple[list, list]] = []  # per part: (stack of open ends, lanes)
    for s in ordered:
        start, end = s[0], s[1]
        for stack, lanes in parts:  # noqa: B007 - the part found is used after the loop
            while stack and stack[-1] <= start:
                stack.pop()
            if not stack or end <= stack[-1]:
                break
        else:
            stack, lanes = [], []
            parts.append((stack, lanes))
        depth = len(stack)
        if depth == len(lanes):
            lanes.append([])
        lanes[depth].append(s)
        stack.append(end)
    return [lanes for _, lanes in parts]


def _number(value) -> float:
    return math.nan if value is None else float(value)


def _op_details(ops, strings) -> dict[str, array]:
    details: dict[str, array] = {
        "op_params": array("I"),
        "op_module": array("I"),
        "op_callsite": array("I"),
        "op_layer": array("I"),
        "op_dir": array("B"),
        "op_flops": array("d"),
        "op_bytes": array("d"),
        "op_fwd": array("i"),
        "op_parent": array("i"),
        "op_seq": array("i"),
    }
    directions = {d: i for i, d in enumerate(_DIRS)}
    for op in ops:
        cost = evaluate(op)
        details["op_params"].append(strings(cells.params_text(op)))
        details["op_module"].append(strings(op.module))
        details["op_callsite"].append(strings(" <- ".join(op.callsite)))
        details["op_layer"].append(strings(":".join(op.layer)))
        details["op_dir"].append(directions.get(op.dir, 0))
        details["op_flops"].append(_number(cost.flops))
        details["op_bytes"].append(_number(cost.bytes))
        details["op_fwd"].append(op.fwd)
        details["op_parent"].append(op.parent)
        seq = op.altseq if op.dir == "bwd" and op.altseq != NO_LINK else op.seq
        details["op_seq"].append(seq if _I32_MIN <= seq <= _I32_MAX else NO_LINK)  # a file's 2**62: no link
    return details


_I32_MIN, _I32_MAX, _U32_MAX = -(2**31), 2**31 - 1, 2**32 - 1


def _u32(value: int) -> int:
    """A count as the page's u32 column holds it: negatives (unknown) 0, a file's absurd value capped."""
    return min(max(value, 0), _U32_MAX)


def _kernel_details(kernels, strings) -> dict[str, array]:
    details: dict[str, array] = {
        "kernel_full": array("I"),
        "kernel_grid": array("I"),
        "kernel_block": array("I"),
        "kernel_op": array("i"),
        "kernel_registers": array("I"),
        "kernel_shared": array("I"),
    }
    for k in kernels:
        details["kernel_full"].append(strings(k.name))
        details["kernel_grid"].append(strings(cells.xyz_text(k.grid)))
        details["kernel_block"].append(strings(cells.xyz_text(k.block)))
        details["kernel_op"].append(k.op)
        details["kernel_registers"].append(_u32(k.registers))
        details["kernel_shared"].append(_u32(k.shared_static + k.shared_dynamic))
    return details


def _memop_details(memops, strings) -> dict[str, array]:
    return {
        "memop_bytes": array("d", (float(m.bytes) for m in memops)),
        "memop_op": array("i", (m.op for m in memops)),
    }


def trace_bytes(profile) -> bytes:
    """The trace view's data as the page reads it: a little-endian u32 header length, the header
    (JSON), zero bytes up to a multiple of 8, then the columns."""
    header, body = trace_payload(profile)
    # A lone surrogate in a name (JSON allows "\ud800") has no UTF-8: it goes as a JSON escape.
    encoded = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode(errors="backslashreplace")
    prefix = struct.pack("<I", len(encoded)) + encoded
    return prefix + b"\0" * (-len(prefix) % 8) + body
