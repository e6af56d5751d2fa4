"""Cross-rank views against their peers: HTA on the real 8-rank DLRM job, and Dask on the same store."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import pyprof_live
from pyprof_live.analysis.kernel_names import short_name

from .conftest import shared_data_dir
from .run_fixtures import write_run

DLRM = Path(shared_data_dir() or "../shared/data") / "kineto_ranks" / "param_dlrm_8rank"


@pytest.fixture(scope="module")
def dlrm(tmp_path_factory):
    if not DLRM.is_dir():
        pytest.skip(f"{DLRM} not found (set PYPROF_LIVE_TEST_DATA)")
    copy = tmp_path_factory.mktemp("dlrm")  # the store caches beside the traces: not in shared data
    for trace in DLRM.glob("*.json.gz"):  # the traces only: not a store cache a run left beside them
        shutil.copy(trace, copy / trace.name)
    return pyprof_live.load_run(copy)


def test_dlrm_layout(dlrm):
    assert [(w.rank, w.world_size) for w in dlrm.entries] == [(r, 8) for r in range(8)]
    assert dlrm.entries[0].name == "worker0_step_12"


@pytest.mark.e2e
def test_dlrm_overlap_agrees_with_hta(dlrm):
    pytest.importorskip("hta.trace_analysis", reason="holistictraceanalysis (HTA) not installed")
    from hta.analyzers.communication_analysis import CommunicationAnalysis
    from hta.common.trace import Trace

    # What TraceAnalysis(trace_dir=...) does, without its process pool: forking this process (torch's
    # threads running) crashed a worker now and then, and the pool then waited for it for ever.
    trace = Trace(trace_dir=str(DLRM))
    trace.load_traces(use_multiprocessing=False)
    theirs = CommunicationAnalysis.get_comm_comp_overlap(trace, visualize=False)
    theirs = dict(zip(theirs["rank"], theirs["comp_comm_overlap_pctg"]))
    ours = {row["rank"]: row["overlap%"] for row in dlrm.ranks()}
    assert sorted(ours) == sorted(theirs) == list(range(8))
    for rank in ours:  # HTA: 4.50 2.47 7.88 3.31 0.56 0.64 7.56 9.51
        assert abs(ours[rank] - theirs[rank]) <= 1.0, (rank, ours[rank], theirs[rank])


def test_dlrm_slowest_rank_of_the_step(dlrm):
    top = dlrm.stragglers().rows[0]
    # Rank 7 reaches 5 of the step's 8 collectives last (skew view: collectives 1-5), and the others
    # wait 26.4 ms for it at the first one alone.
    assert (top["rank"], top["step"], top["last"]) == (7, 10, 5)
    skew = dlrm.skew().rows
    assert [row["last"] for row in skew] == [7, 7, 7, 7, 7, 5, 5, 4]


@pytest.mark.e2e
def test_dask_and_duckdb_agree(tmp_path):
    """The Parquet store is the interface for clusters: the per-kernel cross-rank summary computed by
    dask.dataframe on a LocalCluster equals DuckDB's."""
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("dask.distributed")
    write_run(tmp_path)
    run = pyprof_live.load_run(tmp_path)
    ours = {(row["kernel"], row["calls"], row["total"], row["min"], row["max"], row["median"]) for row in run.kernels()}
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster):
            frames = [
                dd.read_parquet(str(path), columns=["record", "name", "start", "end"]).assign(rank=worker.rank)
                for worker, path in run.store().files
            ]
            frame = dd.concat(frames)
            kernels = frame[frame["record"] == "kernels"]
            kernels = kernels.assign(dur=kernels["end"] - kernels["start"])
            per_rank = kernels.groupby(["name", "rank"])["dur"].agg(["count", "sum"]).compute().reset_index()
    theirs = set()
    for name, group in per_rank.groupby("name"):
        totals = group["sum"]
        theirs.add(
            (
                short_name(name),
                int(group["count"].sum()),
                int(totals.sum()),
                int(totals.min()),
                int(totals.max()),
                round(totals.median()),
            )
        )
    assert theirs == ours
    assert len(ours) == 3  # gemm, the nccl allreduce, add; the memcpy is no kernel
