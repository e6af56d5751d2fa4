"""Views as pandas DataFrames, for users who analyse profiles in notebooks (pandas is optional).

A column's dtype comes from what the column holds, never from one profile's values: the empty
``sil`` column of a CPU profile is ``Int64`` like a GPU profile's, so code written against one
profile works on the next. Numbers are pandas' nullable ``Int64`` (ns, counts, flops, bytes) or
``Float64`` (percentages), text is ``string``; '-' (None) and 'na' (no formula) are ``<NA>``.
"""

from __future__ import annotations


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


#: Column kinds (report/columns.py) whose dtype is not Int64: every other kind is a whole number.
_DTYPES = {"text": "string", "percent": "Float64"}


def _dtypes(view) -> dict:
    """Column name -> pandas dtype name, from the kind of each column the view declares."""
    return {c: _DTYPES.get(view.column(c).kind, "Int64") for c in view.columns}
