"""Human units for the pages: 1.21 s, 263 ms, 4.2 GB, 12.3 TFLOP/s.

Stand-in until the text report's own unit module lands (issue #12 writes it); the rules are data
(:data:`UNIT_RULES`) so the page's script formats trace times with the very same ladders.
"""

from __future__ import annotations

#: Per quantity: the unit ladder, largest first, as (scale, suffix), and the significant digits shown.
UNIT_RULES: dict[str, dict] = {
    "time": {"ladder": [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]], "digits": 3},
    "bytes": {"ladder": [[1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"], [1, "B"]], "digits": 3},
    "flops": {
        "ladder": [[1e15, "PFLOP"], [1e12, "TFLOP"], [1e9, "GFLOP"], [1e6, "MFLOP"], [1e3, "kFLOP"], [1, "FLOP"]],
        "digits": 3,
    },
    "rate": {
        "ladder": [[1e15, "PFLOP/s"], [1e12, "TFLOP/s"], [1e9, "GFLOP/s"], [1e6, "MFLOP/s"], [1, "FLOP/s"]],
        "digits": 3,
    },
}


def human(value, quantity: str) -> str:
    """``value`` in the largest unit of ``quantity``'s ladder that keeps a leading digit."""
    rule = UNIT_RULES[quantity]
    magnitude = abs(value)
    for scale, suffix in rule["ladder"]:
        if magnitude >= scale or scale == rule["ladder"][-1][0]:
            scaled = value / scale
            if scale == rule["ladder"][-1][0] and float(value).is_integer():
                return f"{int(value):,} {suffix}"
            return f"{_significant(scaled, rule['digits'])} {suffix}"
    raise AssertionError("unreachable: the last rung takes every value")


def _significant(x: float, digits: int) -> str:
    """``x`` with ``digits`` significant digits, never in exponent form (999.5 -> "1000")."""
    if x == 0:
        return "0"
    integer_digits = len(str(int(abs(x)))) if abs(x) >= 1 else 1
    decimals = max(digits - integer_digits, 0)
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
