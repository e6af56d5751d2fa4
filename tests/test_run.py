"""Runs: run directories, the columnar store and the cross-rank views (hand-built 4-rank job)."""

from __future__ import annotations

import dataclasses
import gzip
import json

import pytest
import torch

import pyprof_live
from pyprof_live.errors import ProfileFormatError
from pyprof_live.store.columnar import SCHEMA_VERSION, write_profile
from pyprof_live.store.layout import parse_worker_file, rank_in_name, worker_file_name

from .run_fixtures import OFFSETS_US, write_rank, write_run

US = 1000  # ns per µs


@pytest.fixture
def run(tmp_path):
    write_run(tmp_path)
    return pyprof_live.load_run(tmp_path)


def test_folder_of_rank_traces_opens_as_a_run(run, tmp_path):
    assert [(w.name, w.rank, w.kind, w.world_size) for w in run.entries] == [
        (f"rank-{r}", r, "kineto", 4) for r in range(4)
    ]
    assert run.problems == []
    profile = run.workers["rank-2"]
    assert len(profile.records.kernels) == 3 and len(profile.records.memops) == 1
    # load() of a directory is load_run
    assert isinstance(pyprof_live.load(tmp_path), pyprof_live.Run)


def test_rank_breakdown_exact(run):
    rows = {row["rank"]: row for row in run.ranks()}
    for rank, arrival in zip(range(4), (110, 130, 310, 160)):
        row = rows[rank]
        assert row["step"] == 1
        assert row["wall"] == 1000 * US  # the step [0, 1000]; the last device work ends at 420
        assert row["compute"] == (arrival - 10 + 50) * US  # gemm [10, a] + add [a+20, a+70]
        assert row["comm"] == (400 - arrival) * US  # the collective [a, 400]
        assert row["overlap"] == 50 * US  # add runs under the collective
        assert row["memory"] == 20 * US  # memcpy [400, 420]
        assert row["idle"] == (1000 - 410) * US  # device busy [10, 420]
    # overlap% = 50 / (400 - a): 50/290, 50/270, 50/90, 50/240
    assert [rows[r]["overlap%"] for r in range(4)] == [17.2, 18.5, 55.6, 20.8]


def test_collective_skew_exact(run):
    (row,) = run.skew().rows
    # arrivals 110, 130, 310, 160 once the clock offsets (0, 100, 200, 300 µs) are taken out
    assert row["collective"] == "AllReduce" and row["ranks"] == 4
    assert (row["first"], row["last"]) == (0, 2)
    assert row["skew"] == (310 - 110) * US
    assert row["end_skew"] == 0
    assert row["wait"] == ((310 - 110) + (310 - 130) + 0 + (310 - 160)) * US  # 530 µs


def test_stragglers_exact(run):
    rows = run.stragglers().rows
    assert rows[0]["rank"] == 2 and rows[0]["last"] == 1
    assert rows[0]["at_stake"] == 530 * US  # what the others waited for rank 2 (skew test)
    assert [r["at_stake"] for r in rows[1:]] == [0, 0, 0]
    waits = {r["rank"]: r["wait"] for r in rows}
    assert waits == {0: 200 * US, 1: 180 * US, 2: 0, 3: 150 * US}


def test_merged_kernel_summary(run):
    rows = {row["kernel"]: row for row in run.kernels()}
    gemm = rows["gemm_kernel"]
    assert gemm["calls"] == 4 and gemm["ranks"] == 4
    assert gemm["total"] == (100 + 120 + 300 + 150) * US
    assert (gemm["min"], gemm["min_rank"]) == (100 * US, 0)
    assert (gemm["max"], gemm["max_rank"]) == (300 * US, 2)
    assert gemm["median"] == 135 * US  # (120 + 150) / 2
    assert run.ops().rows[0]["op"] == "aten::mm"


def test_merged_chrome_trace_one_process_per_rank(run, tmp_path):
    out = tmp_path / "merged.json"
    run.export_chrome_trace(out)
    events = json.loads(out.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert sorted(names) == [0, 1, 2, 3] and names[2] == "rank 2"
    ends = {e["pid"]: e["ts"] + e["dur"] for e in events if e.get("name", "").startswith("ncclKernel")}
    assert len(set(ends.values())) == 1  # the collective ends together once clocks are aligned
    starts = {e["pid"]: e["ts"] for e in events if e.get("name", "").startswith("ncclKernel")}
    assert starts[2] - starts[0] == pytest.approx(200)  # µs: arrivals 310 and 110


def test_bad_rank_files_are_named_and_the_others_load(tmp_path):
    write_run(tmp_path, ranks=(0, 2))  # rank 1 and 3: no file ...
    good = (tmp_path / "rank-0.json.gz").read_bytes()
    (tmp_path / "rank-3.json.gz").write_bytes(good[: len(good) // 2])  # ... rank 3 truncated
    (tmp_path / "rank-1.json").write_text('{"hello": "not a trace"}')  # ... rank 1 foreign
    (tmp_path / "notes.txt").write_text("not a worker file: ignored")
    run = pyprof_live.load_run(tmp_path)
    rows = run.ranks().rows
    assert sorted(r["rank"] for r in rows) == [0, 2]
    problems = "\n".join(run.problems)
    assert "rank-3.json.gz" in problems and "rank-1.json" in problems
    assert "notes.txt" not in problems
    notes = "\n".join(run.ranks().notes)
    assert "rank-3.json.gz" in notes


def test_missing_rank_is_named(tmp_path):
    write_run(tmp_path, ranks=(0, 1, 3))
    run = pyprof_live.load_run(tmp_path)
    assert any("rank(s) 2 of world size 4" in p for p in run.problems)


def test_mixed_world_sizes_are_refused(tmp_path):
    write_rank(tmp_path, 0, world=4)
    write_rank(tmp_path, 1, world=8)
    with pytest.raises(ProfileFormatError, match="mixed world sizes: world size 4: rank-0.json.gz; world size 8"):
        pyprof_live.load_run(tmp_path)


def test_empty_or_missing_directory(tmp_path):
    with pytest.raises(ProfileFormatError, match="no worker profiles"):
        pyprof_live.load_run(tmp_path)
    with pytest.raises(ProfileFormatError, match="not a directory"):
        pyprof_live.load_run(tmp_path / "nope")


def _same_records(a, b) -> None:
    a.correlation, b.correlation
    for name in ("ops", "apis", "kernels", "memops", "ranges", "devices"):
        left, right = getattr(a.records, name), getattr(b.records, name)
        assert list(map(dataclasses.astuple, left)) == list(map(dataclasses.astuple, right)), name


def test_run_saves_and_loads_without_loss(run, tmp_path):
    out = tmp_path / "saved-run"
    run.save(out)
    again = pyprof_live.load_run(out)
    assert [(w.name, w.rank, w.kind) for w in again.entries] == [(f"rank-{r}", r, "columnar") for r in range(4)]
    for label in run.workers:
        _same_records(run.workers[label], again.workers[label])
        meta = dict(again.workers[label].meta)
        assert meta.pop("saved_source") == "kineto"
        assert {k: v for k, v in meta.items() if k != "path"} == {
            k: v for k, v in run.workers[label].meta.items() if k != "path"
        }
    assert again.ranks().rows == run.ranks().rows
    assert again.stragglers().rows == run.stragglers().rows


def test_columnar_file_of_a_newer_schema_is_refused(tmp_path):
    import pyarrow.parquet as pq

    profile = pyprof_live.load(write_rank(tmp_path, 0))
    path = tmp_path / "w.parquet"
    write_profile(profile, path)
    table = pq.read_table(path)
    document = json.loads(table.schema.metadata[b"pyprof_live"])
    document["version"] = SCHEMA_VERSION + 1
    pq.write_table(table.replace_schema_metadata({b"pyprof_live": json.dumps(document)}), path)
    with pytest.raises(pyprof_live.ProfileVersionError, match="newer pyprof_live"):
        pyprof_live.load(path)
    pq.write_table(table.replace_schema_metadata({}), path)
    with pytest.raises(ProfileFormatError, match="not one pyprof_live wrote"):
        pyprof_live.load(path)


def test_file_names():
    assert worker_file_name("rank-3", (2, 4), now_ms=17) == "rank-3.steps-2-4.17.parquet"
    parsed = parse_worker_file("/x/host.example.com_12.steps-2-4.1700000000000.parquet")
    assert (parsed.worker, parsed.steps) == ("host.example.com_12", (2, 4))
    assert parse_worker_file("/x/worker3_step_12.1694128201545.pt.trace.json.gz").worker == "worker3_step_12"
    assert parse_worker_file("/x/rank-7.json.gz").worker == "rank-7"
    assert parse_worker_file("/x/notes.txt") is None
    assert [rank_in_name(n) for n in ("rank-7", "worker3_step_12", "host_1234", "rank12")] == [7, 3, None, 12]


def _train(p, steps: int) -> None:
    model = torch.nn.Linear(8, 4)
    for _ in range(steps):
        model(torch.randn(2, 8)).sum().backward()
        p.step()


def test_profile_logdir_saves_the_worker(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    with pyprof_live.profile(logdir=tmp_path / "runs" / "exp1") as p:
        _train(p, 2)
    (path,) = p.saved_files
    assert path.name.startswith("rank-3.") and path.suffix == ".parquet"
    run = pyprof_live.load_run(tmp_path / "runs" / "exp1")
    (worker,) = run.entries
    assert (worker.name, worker.rank, worker.world_size, worker.kind) == ("rank-3", 3, 4, "columnar")
    _same_records(p, run.workers["rank-3"])
    assert any("rank(s) 0, 1, 2 of world size 4" in problem for problem in run.problems)


def test_profile_logdir_with_steps_saves_each_window(tmp_path, monkeypatch):
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    with pyprof_live.profile(steps={1, 2, 4}, logdir=tmp_path) as p:
        _train(p, 6)
    names = sorted(path.name.split(".steps-")[1].split(".")[0] for path in p.saved_files)
    assert names == ["1-2", "4-4"]
    run = pyprof_live.load_run(tmp_path)
    assert [w.steps for w in run.entries] == [(1, 2), (4, 4)]
    assert run.entries[0].name.rsplit("_", 1)[1].isdigit()  # host_pid
    window = run.workers[run.entries[1].label]
    assert {r.name for r in window.records.ranges if r.kind == "step"} == {"step 4"}
    # each window holds the ops of its steps only: 1 + 2 steps' ops, then 1 step's
    per_step = len(window.records.ops)
    assert len(run.workers[run.entries[0].label].records.ops) == 2 * per_step
    assert [row["step"] for row in run.ranks()] == [1, 2, 4]


def test_profile_logdir_that_cannot_be_made(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(pyprof_live.CaptureError, match="cannot create the run directory"):
        pyprof_live.profile(logdir=blocker / "run")


def test_columnar_store_keeps_gzip_sources_untouched(run, tmp_path):
    run.ranks()
    cached = sorted(p.name for p in (tmp_path / ".pyprof_live").glob("*.parquet"))
    assert len(cached) == 4 and cached[0].startswith("rank-0.json.gz.")
    with gzip.open(tmp_path / "rank-0.json.gz", "rt") as f:
        assert json.load(f)["distributedInfo"]["rank"] == 0
    assert OFFSETS_US[3] == 300


def test_a_read_only_run_directory_is_cached_elsewhere(tmp_path, monkeypatch):
    # Read-only by its mode: even root (CI) must not write a cache beside shared recordings.
    folder = tmp_path / "run"
    folder.mkdir()
    write_run(folder, ranks=(0, 1))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder.chmod(0o555)
    try:
        assert [row["rank"] for row in pyprof_live.load_run(folder).ranks()] == [0, 1]
    finally:
        folder.chmod(0o755)
    assert not (folder / ".pyprof_live").exists()
    assert len(list((tmp_path / "cache" / "pyprof_live" / "runs").glob("*/*.parquet"))) == 2


def test_cli_on_a_run_directory(tmp_path, capsys):
    from pyprof_live.cli import main

    write_run(tmp_path, ranks=(0, 1, 2))
    assert main([str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "time per rank and step" not in out  # titles are not printed; the columns are
    assert "overlap%" in out and "at_stake" in out
    assert "left out" in err and "rank(s) 3 of world size 4" in err
    assert main([str(tmp_path), "--view", "skew", "--csv"]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[1].split(",")[2] == '"AllReduce"'
    html = tmp_path / "run.html"
    assert main([str(tmp_path), "--html", str(html)]) == 0
    page = html.read_text()
    assert 'data-chart="ranks"' in page and 'data-table="stragglers"' in page
    with pytest.raises(SystemExit) as exit:
        main([str(tmp_path), "--view", "modules"])
    assert exit.value.code == 2
    with pytest.raises(SystemExit):
        main([str(tmp_path / "rank-0.json.gz"), "--view", "ranks"])
    assert "a view across ranks: give a run directory" in capsys.readouterr().err


@pytest.mark.e2e
def test_conversion_in_worker_processes(tmp_path):
    """Large runs convert in worker processes (a fresh one per file): same store, same figures; a
    file that fails there is named and left out like in-process."""
    write_run(tmp_path, ranks=(0, 1, 2))
    # rank 3: its header and first event read (so it is listed as rank 3), then the file stops
    (tmp_path / "rank-3.json").write_text(
        '{"distributedInfo": {"rank": 3, "world_size": 4}, "traceEvents": ['
        '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, {"ph": '
    )
    run = pyprof_live.load_run(tmp_path)
    assert [w.rank for w in run.entries] == [0, 1, 2, 3]
    store = run.store(processes=2)
    assert [worker.rank for worker, _ in store.files] == [0, 1, 2]
    assert any("rank-3.json" in p and "truncated" in p for p in run.problems)
    assert run.stragglers().rows[0]["at_stake"] == (200 + 180) * US  # rank 2 arrives at 310: 110, 130
