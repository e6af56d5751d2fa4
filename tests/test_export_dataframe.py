"""``p.to_dataframe()``: the per-kernel table or a summary as a pandas DataFrame (pandas is optional)."""

from __future__ import annotations

import sys

import pytest

from pyprof_live.columns import COLUMN_NAMES

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
    for name, view in (("ops", p.ops()), ("modules", p.modules()), ("overview", p.overview()), ("kernels", p.kernels())):
        frame = p.to_dataframe(name)
        assert list(frame.columns) == list(view.columns), name
        assert len(frame) == len(view.rows), name
    ops = p.to_dataframe("ops")
    assert ops.set_index("op")["calls"].to_dict() == {r["op"]: r["calls"] for r in p.ops().rows}
