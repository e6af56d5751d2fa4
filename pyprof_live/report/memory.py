"""``p.memory()``: what was live on each device at its memory peak, by the op (or module) that
allocated it. See analysis/memory.py for the rules."""

from __future__ import annotations

from collections import defaultdict

from ..analysis.memory import OpFinder, allocations, device_memory
from .columns import SUMMARY
from .view import View

_BEFORE = "(allocated before the profile)"


def memory_summary(profile, by: str = "op") -> View:
    """Rows per device and op (or module): bytes live at that device's peak, how many blocks, and what
    the op allocated over the whole profile; largest live bytes first."""
    if by not in ("op", "module"):
        raise ValueError(f'by must be "op" or "module", not {by!r}')
    allocs, ops = allocations(profile), profile.records.ops
    devices = device_memory(profile)
    finder = OpFinder(profile)
    groups: dict = {}
    allocated_total: defaultdict[tuple, int] = defaultdict(int)
    owner_of = {}
    for i, a in enumerate(allocs):
        if a.bytes > 0:
            op = finder.op_of(a)
            owner = "(no op)" if op < 0 else (ops[op].name if by == "op" else ops[op].module or "(no module)")
            owner_of[i] = owner
            allocated_total[(a.device, owner)] += a.bytes
    for memory in devices:
        for i in memory.live_at_peak:
            key = (memory.device, owner_of[i])
            g = groups.setdefault(key, {"device": memory.device, by: owner_of[i], "live_bytes": 0, "blocks": 0})
            g["live_bytes"] += allocs[i].bytes
            g["blocks"] += 1
        unseen = memory.peak - sum(allocs[i].bytes for i in memory.live_at_peak)
        if memory.totals_known and memory.addresses_known and unseen > 0:  # e.g. weights loaded before
            groups[(memory.device, _BEFORE)] = {
                "device": memory.device,
                by: _BEFORE,
                "live_bytes": unseen,
                "blocks": None,
            }
    for (device, owner), total in allocated_total.items():
        g = groups.setdefault((device, owner), {"device": device, by: owner, "live_bytes": 0, "blocks": 0})
        g["allocated"] = total
    rows = sorted(
        groups.values(), key=lambda g: (g["device"] != "cpu", g["device"], -g["live_bytes"], -g.get("allocated", 0))
    )
    notes = [_peak_note(m) for m in devices] or ["no allocations recorded (Kineto: profile_memory=True)"]
    return View(
        f"memory by {by}",
        ("device", by, "live_bytes", "blocks", "allocated"),
        rows,
        notes,
        SUMMARY,
    )


def _peak_note(memory) -> str:
    if memory.peak_index < 0:
        return (
            f"{memory.device}: bytes each op's outputs allocated (live capture sees no frees on the CPU, "
            "so no peak and nothing live at it)"
        )
    note = f"{memory.device}: peak {memory.peak} bytes allocated at {memory.peak_time} ns"
    if not memory.totals_known:
        note += " (summed from the events: memory allocated before the profile started is not counted)"
    if not memory.addresses_known:
        note += "; the source gives no block addresses, so what was live at the peak cannot be told"
    return note
