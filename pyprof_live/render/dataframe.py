"""Views as pandas DataFrames, for users who analyse profiles in notebooks (pandas is optional)."""

from __future__ import annotations

from ..columns import BY_NAME


def view_dataframe(view):
    """One DataFrame row per view row, columns named as the view's (``sil``, ``host``...).

    'na' (no formula) becomes a missing value so numeric columns stay numeric; pandas' nullable
    dtypes keep integer columns integer where values are missing.
    """
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError("to_dataframe() needs pandas, which pyprof_live does not install: pip install pandas") from e
    columns = list(view.columns)
    numeric = {c for c in columns if _is_numeric(view.rows, c)}
    records = [{c: (None if c in numeric and r.get(c) == "na" else r.get(c)) for c in columns} for r in view.rows]
    frame = pd.DataFrame.from_records(records, columns=columns)
    return frame.convert_dtypes()


def _is_numeric(rows, column: str) -> bool:
    if column in BY_NAME:
        return BY_NAME[column].numeric
    values = [r.get(column) for r in rows if r.get(column) not in (None, "na")]
    return bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
