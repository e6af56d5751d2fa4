"""Human units for numbers a person reads: 1.21 s, 263 ms, 4.2 GB, 12.3 TFLOP/s.

The one place these rules live: the text tables, the CLI, the HTML pages (and, fed ``UNIT_RULES`` as
JSON, the dashboard's browser code) format through it. Records and machine outputs (CSV, the
space-separated PyProf format, ``to_dataframe()``) keep raw integers: ns, bytes, flops.

Rule: the largest unit of the ladder the value reaches, three significant digits (a value that
rounds up to 1000 of a unit moves to the next one). Bytes are decimal (1 GB = 10**9 B), as GPU
bandwidth and memory sizes are quoted.
"""

from __future__ import annotations

from typing import Any

#: kind -> ladder of (scale, suffix), largest first, and significant digits. Pure data.
UNIT_RULES: dict[str, dict[str, Any]] = {
    "time": {"ladder": [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]], "digits": 3},
    "bytes": {"ladder": [[1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"], [1, "B"]], "digits": 3},
    "flops": {
        "ladder": [[1e15, "PFLOP"], [1e12, "TFLOP"], [1e9, "GFLOP"], [1e6, "MFLOP"], [1e3, "kFLOP"], [1, "FLOP"]],
        "digits": 3,
    },
    "flop_rate": {
        "ladder": [[1e15, "PFLOP/s"], [1e12, "TFLOP/s"], [1e9, "GFLOP/s"], [1e6, "MFLOP/s"], [1, "FLOP/s"]],
        "digits": 3,
    },
    "bandwidth": {"ladder": [[1e12, "TB/s"], [1e9, "GB/s"], [1e6, "MB/s"], [1e3, "kB/s"], [1, "B/s"]], "digits": 3},
}

#: Numeric columns (by name, in every view) and the kind of their values. Columns not listed
#: (counts, ids, percentages) are shown as they are.
COLUMN_UNITS = {
    **dict.fromkeys(
        (
            "sil",
            "host",
            "host_self",
            "dev",
            "dev_self",
            "fwd",
            "bwd",
            "dev_fwd",
            "dev_bwd",
            "mean",
            "min",
            "max",
            "ideal",
            "dur",
            "kernel",
            "memcpy",
            "memset",
            "runtime",
            "dataloader",
            "cpu_exec",
            "profiler",
            "other",
            "gpu_busy",
            "gpu_idle",
            "at_stake",
            "host_self_a",
            "host_self_b",
            "d_host_self",
            "dev_self_a",
            "dev_self_b",
            "d_dev_self",
            "compile",  # the overview's compile time cut out of dur; p.compiles()'s time and phases
            "time",
            "dynamo",
            "aot",
            "inductor",
        ),
        "time",
    ),
    "bytes": "bytes",
    "flops": "flops",
    "flops_a": "flops",
    "flops_b": "flops",
    "d_flops": "flops",
}


def _steps(kind: str) -> tuple:
    """(scale, " suffix", next larger scale, " its suffix") per rung, largest first, for human()."""
    ladder: list[list[Any]] = UNIT_RULES[kind]["ladder"]
    return tuple(
        (scale, " " + suffix, *((ladder[i - 1][0], " " + ladder[i - 1][1]) if i else (scale, " " + suffix)))
        for i, (scale, suffix) in enumerate(ladder)
    )


_STEPS = {kind: _steps(kind) for kind in UNIT_RULES}
_FORMATS = {kind: f".{rule['digits']}g" for kind, rule in UNIT_RULES.items()}
_memo: dict[str, dict[Any, str]] = {kind: {} for kind in UNIT_RULES}  # values repeat from step to step (flops, bytes)


def human(value, kind: str) -> str:
    """``value`` (ns, bytes, flops, flop/s or bytes/s as ``kind`` says) with its unit: ``"263 ms"``."""
    memo = _memo[kind]
    text = memo.get(value)
    if text is None:
        if len(memo) > 100_000:
            memo.clear()
        text = memo[value] = _with_unit(value, kind)
    return text


def _with_unit(value, kind: str) -> str:
    form = _FORMATS[kind]
    magnitude = -value if value < 0 else value
    for scale, suffix, larger, larger_suffix in _STEPS[kind]:
        if magnitude >= scale or scale == 1:  # the last rung (scale 1) takes what is left
            number = format(value / scale, form)
            if "e" in number:  # 999.7 ms rounds to 1000 (.3g writes 1e+03): say 1 s
                number, suffix = format(value / larger, form), larger_suffix
            return number + suffix
    raise AssertionError(f"every ladder of UNIT_RULES ends at scale 1 ({kind})")


def duration(ns) -> str:
    return human(ns, "time")


def size(n_bytes) -> str:
    return human(n_bytes, "bytes")


def flop_count(flops) -> str:
    return human(flops, "flops")


def rate(flops_per_second) -> str:
    return human(flops_per_second, "flop_rate")


def bandwidth(bytes_per_second) -> str:
    return human(bytes_per_second, "bandwidth")


def column_unit(name: str) -> str | None:
    """The kind of a numeric column's values (``"time"``, ``"bytes"``, ``"flops"``), None for plain numbers."""
    return COLUMN_UNITS.get(name)


def human_cell(value, kind: str | None):
    """A cell of a numeric column for people: numbers in their unit; '-', 'na' and plain numbers unchanged."""
    if kind is None or type(value) not in (int, float) or value != value:
        return value
    return human(value, kind)
