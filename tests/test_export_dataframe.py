"""``p.to_dataframe()``: the per-kernel table or a summary as a pandas DataFrame (pandas is optional)."""

from __future__ import annotations

import sys

import pytest

import pyprof_live
from pyprof_live.analysis.timeline import CATEGORIES
from pyprof_live.profile import VIEW_NAMES
from pyprof_live.report.columns import COLUMN_NAMES

from .export_fixtures import hand_profile, live_profile


def test_without_pandas_the_error_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` raise ImportError
    with pytest.raises(ImportError, match="to_dataframe\\(\\) needs pandas.*pip install pandas"):
        hand_profile().to_dataframe()


def test_unknown_view_is_a_value_error():
    with pytest.raises(ValueError, match="unknown view 'steps'; valid: table, ops"):
        hand_profile().to_dataframe("steps")


def test_kernel_table_frame_keeps_numbers_numeric():
    pytest.importorskip("pandas")
    frame = hand_profile().to_dataframe()
    assert list(frame.columns) == list(COLUMN_NAMES)
    # Rows in launch order: gemm (addmm's 1st), the memcpy (addmm's 2nd), mm's kernel.
    assert frame["kernel"].tolist() == ["gemm_kernel", "[memcpy HtoD]", "mm_kernel"]
    assert frame["sil"].tolist() == [1000, 100, 800]  # 3500-2500, 3300-3200, 11800-11000
    assert str(frame["sil"].dtype) == "Int64"
    # addmm 8x16 @ 16x4 = 2*8*16*4 = 1024 flops on its first row only; mm has no inputs: 'na' -> missing.
    assert frame["flops"].iloc[0] == 1024 and frame["flops"].isna().tolist() == [False, True, True]
    assert str(frame["flops"].dtype) == "Int64"
    assert frame["sil"].sum() == 1900


def test_summary_frames_match_their_views():
    pytest.importorskip("pandas")
    p = live_profile(steps=2)
    for name, view in (
        ("ops", p.ops()),
        ("modules", p.modules()),
        ("overview", p.overview()),
        ("kernels", p.kernels()),
    ):
        frame = p.to_dataframe(name)
        assert list(frame.columns) == list(view.columns), name
        assert len(frame) == len(view.rows), name
    ops = p.to_dataframe("ops")
    assert ops.set_index("op")["calls"].to_dict() == {r["op"]: r["calls"] for r in p.ops().rows}


# Every column each view can show, with the dtype the README promises whatever the profile holds: counts,
# times, flops and bytes are Int64, percentages Float64, text string (missing values are <NA> in all).
_TEXT, _INT, _REAL = "string", "Int64", "Float64"
_ROOFLINE = {"ideal": _INT, "sol%": _REAL, "bound": _TEXT}
_OP_NUMBERS = {
    "calls": _INT,
    "host": _INT,
    "host_self": _INT,
    "dev": _INT,
    "dev_self": _INT,
    "flops": _INT,
    "bytes": _INT,
    **_ROOFLINE,
}
EXPECTED_DTYPES = {
    "table": {
        "idx": _INT,
        "seq": _INT,
        "altseq": _TEXT,
        "tid": _INT,
        "layer": _TEXT,
        "trace": _TEXT,
        "dir": _TEXT,
        "sub": _INT,
        "mod": _TEXT,
        "op": _TEXT,
        "kernel": _TEXT,
        "params": _TEXT,
        "sil": _INT,
        "tc": _INT,
        "device": _INT,
        "stream": _INT,
        "grid": _TEXT,
        "block": _TEXT,
        "flops": _INT,
        "bytes": _INT,
        "module": _TEXT,
        "host": _INT,
        "ops": _TEXT,
        "fused": _TEXT,
        "graph": _TEXT,
        **_ROOFLINE,
    },
    "ops": {"op": _TEXT, "graph": _TEXT, **_OP_NUMBERS},
    "ops+shape": {"op": _TEXT, "params": _TEXT, "graph": _TEXT, **_OP_NUMBERS},
    "ops+params": {"op": _TEXT, "params": _TEXT, **_OP_NUMBERS},
    "kernels": {
        "kernel": _TEXT,
        "graph": _TEXT,
        "calls": _INT,
        "host": _INT,
        "sil": _INT,
        "mean": _INT,
        "min": _INT,
        "max": _INT,
        "tc": _INT,
        **_ROOFLINE,
    },
    "modules": {
        "module": _TEXT,
        "ops": _INT,
        "host": _INT,
        "host_self": _INT,
        "fwd": _INT,
        "bwd": _INT,
        "dev": _INT,
        "dev_self": _INT,
        "dev_fwd": _INT,
        "dev_bwd": _INT,
        **_ROOFLINE,
    },
    "overview": {
        "step": _TEXT,
        "dur": _INT,
        "compile": _INT,
        **{c: _INT for c in CATEGORIES},
        "gpu_busy": _INT,
        "gpu_idle": _INT,
        "busy%": _REAL,
    },
    "compiles": {
        "event": _TEXT,
        "id": _TEXT,
        "function": _TEXT,
        "where": _TEXT,
        "time": _INT,
        "dynamo": _INT,
        "aot": _INT,
        "inductor": _INT,
        "graphs": _INT,
        "kernels": _INT,
        "cache": _TEXT,
        "reason": _TEXT,
    },
    "recommendations": {
        "rule": _TEXT,
        "at_stake": _INT,
        "share%": _REAL,
        "kernel%": _REAL,
        "advice": _TEXT,
        "where": _TEXT,
    },
    "memory": {"device": _TEXT, "op": _TEXT, "live_bytes": _INT, "blocks": _INT, "allocated": _INT},
}


def _assert_frames_follow_the_contract(p):
    """Every view's frame: exact dtypes, and each cell the view's value ('na' and '-' as <NA>)."""
    import pandas as pd

    assert set(EXPECTED_DTYPES) == set(VIEW_NAMES)
    for name in VIEW_NAMES:
        view, frame = p.view(name), p.to_dataframe(name)
        assert list(frame.columns) == list(view.columns), name
        assert {c: str(t) for c, t in frame.dtypes.items()} == {c: EXPECTED_DTYPES[name][c] for c in view.columns}, name
        for column in view.columns:
            expected = [None if r.get(column) in (None, "na") else r.get(column) for r in view.rows]
            assert [None if v is pd.NA else v for v in frame[column]] == expected, (name, column)


def test_cpu_live_frames_have_the_contract_dtypes_though_device_columns_are_empty():
    pytest.importorskip("pandas")
    p = live_profile(steps=2)
    p.set_peak("A100 SXM 80GB")  # figures, but no kernels: the roofline columns stay empty
    table = p.to_dataframe()
    assert table["sil"].isna().all() and table["tc"].isna().all() and table["ideal"].isna().all()
    assert p.to_dataframe("kernels").empty and p.to_dataframe("recommendations").empty
    _assert_frames_follow_the_contract(p)


def test_kineto_frames_have_the_contract_dtypes_and_keep_na_missing(shared_data):
    pytest.importorskip("pandas")
    p = pyprof_live.load(shared_data / "kineto" / "tracelens_qwen1.5-0.5b_h100_infer.json.gz")
    table = p.to_dataframe()
    rows = p.view("table").rows
    assert table["ideal"].notna().sum() == sum(r.get("ideal") is not None for r in rows) > 0
    assert (
        table["bytes"].isna().sum()
        == sum(r.get("bytes") in (None, "na") for r in rows)
        > sum(r.get("bytes") is None for r in rows)
    )  # 49 rows hold 'na' (no formula), not just '-'
    _assert_frames_follow_the_contract(p)
