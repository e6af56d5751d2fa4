"""Views as pandas DataFrames, for users who analyse profiles in notebooks (pandas is optional).

A column's dtype comes from what the column holds, never from one profile's values: the empty
``sil`` column of a CPU profile is ``Int64`` like a GPU profile's, so code written against one
profile works on the next. Numbers are pandas' nullable ``Int64`` (ns, counts, flops, bytes) or
``Float64`` (percentages), text is ``string``; '-' (None) and 'na' (no formula) are ``<NA>``.
"""

from __future__ import annotations

from ..columns import BY_NAME

#: Text columns of each summary view, by the view's title; their other columns are numbers. Names
#: mean other things in other views (the overview's ``kernel`` is time, the modules' ``ops`` a
#: count), so they are looked up per view. The per-kernel table's come from its column contract.
_SUMMARY_TEXT = {
    "ops by op": {"op", "bound"}, "ops by op+shape": {"op", "params", "bound"},
    "kernels": {"kernel", "bound"}, "modules": {"module", "bound"}, "overview": {"step"},
    "recommendations": {"rule", "advice", "where"},
}
#: Numbers with a fraction: percentages, rounded to 0.1. Every other number is an integer.
_REAL = frozenset({"sol%", "busy%", "share%", "kernel%"})


def view_dataframe(view):
    """One DataFrame row per view row, columns named as the view's (``sil``, ``host``...)."""
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError("to_dataframe() needs pandas, which pyprof_live does not install: pip install pandas") from e
    dtypes = _dtypes(view)
    data = {}
    for column in view.columns:
        values = [r.get(column) for r in view.rows]
        if dtypes[column] != "string":
            values = [None if v == "na" else v for v in values]
        data[column] = pd.array(values, dtype=dtypes[column])
    return pd.DataFrame(data)


def _dtypes(view) -> dict:
    """Column name -> pandas dtype name."""
    text = _SUMMARY_TEXT.get(view.title)
    if text is None:  # the per-kernel table
        # The contract marks tc as text (it prints '-' for "cannot tell"), but it holds the integers
        # 1 and 0, as in p.kernels().
        text = {c for c in view.columns if not BY_NAME[c].numeric}
    return {c: "string" if c in text else "Float64" if c in _REAL else "Int64" for c in view.columns}
