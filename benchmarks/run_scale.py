"""Cross-rank summary at scale: pyprof_live's Run (Parquet + DuckDB) against HTA's TraceAnalysis.

The run is made with ../shared/tools/scale_kineto.py from the HTA NCCL trace, e.g. 128 ranks x 25
copies (~1 M events per rank) with a planted straggler:

    python ../shared/tools/scale_kineto.py ../shared/data/kineto/hta_nccl_data_a100_ws2_rank0.json.gz \\
        RUNDIR --ranks 128 --copies 25 --straggler 77:1.3
    python benchmarks/run_scale.py RUNDIR --straggler 77 [--sizes 8,32,128] [--hta-sizes 1,2,4]

Three measurements, each in a fresh process (peak RSS of that process; the conversion's worker
processes are counted as ``processes x`` the largest one):
1. the one-off conversion of every rank to the Parquet store (import + correlate + write);
2. per size N (the first N ranks), the cross-rank summary: step breakdown per rank, stragglers and
   collective skew, from the store; the straggler found is printed beside the planted one;
3. HTA (``TraceAnalysis`` + ``get_comm_comp_overlap`` + ``get_temporal_breakdown``) on the same first
   N ranks, while it fits: a size whose projected peak (twice the last one's) passes ``--hta-limit-gb``
   is not run, and the table says so.
4. with ``--store-ranks M`` (M > the ranks converted): the summary over M ranks whose Parquet files are
   copies of the converted ones with new rank numbers (the planted straggler's file is not copied, so
   it stays the only one). Conversion is per rank and independent (step 1 gives its cost per rank);
   this measures the cross-rank query at M ranks without converting M traces.
HTA and big conversions need much memory: run this under ``flock /work/signals/bigmem.lock``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _children_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _convert(rundir: str, processes: int) -> dict:
    sys.path.insert(0, str(_REPO))
    import pyprof_live

    cache = Path(rundir) / ".pyprof_live"
    before = len(list(cache.glob("*.parquet"))) if cache.is_dir() else 0
    start = time.perf_counter()
    run = pyprof_live.load_run(rundir)
    store = run.store(processes=processes)
    return {
        "converted": len(list(cache.glob("*.parquet"))) - before,
        "seconds": time.perf_counter() - start,
        "peak_mb": _peak_mb(),
        "child_peak_mb": _children_peak_mb(),
        "workers": len(store.files),
        "problems": run.problems,
    }


def _summary(rundir: str) -> dict:
    sys.path.insert(0, str(_REPO))
    import pyprof_live

    start = time.perf_counter()
    run = pyprof_live.load_run(rundir)
    ranks = run.ranks()
    stragglers = run.stragglers()
    skew = run.skew()
    top = stragglers.rows[0]
    return {
        "seconds": time.perf_counter() - start,
        "peak_mb": _peak_mb(),
        "rows": [len(ranks), len(stragglers), len(skew)],
        "slowest": [top["rank"], top["step"], top["at_stake"]],
        "last_most_often": max({r["last"] for r in skew}, key=lambda rank: sum(1 for r in skew if r["last"] == rank)),
    }


def _replicate_store(rundir: Path, ranks: int, straggler: int | None, out: Path) -> Path:
    """A run directory of ``ranks`` Parquet workers copied from ``rundir``'s converted ones."""
    import pyarrow.parquet as pq

    sys.path.insert(0, str(_REPO))
    import pyprof_live

    run = pyprof_live.load_run(rundir)
    sources = {worker.rank: path for worker, path in run.store().files}
    spare = [rank for rank in sorted(sources) if rank != straggler]
    out.mkdir()
    for rank in range(ranks):
        source = sources[rank] if rank in sources else sources[spare[rank % len(spare)]]
        table = pq.read_table(source)
        document = json.loads(table.schema.metadata[b"pyprof_live"])
        info = document["meta"]["D"].setdefault("distributed", {"D": {}})["D"]
        info.update(rank=rank, world_size=ranks)
        table = table.replace_schema_metadata({b"pyprof_live": json.dumps(document)})
        pq.write_table(table, out / f"rank-{rank}.0.parquet", compression="zstd")
    return out


def _hta(rundir: str) -> dict:
    from hta.trace_analysis import TraceAnalysis

    start = time.perf_counter()
    analysis = TraceAnalysis(trace_dir=rundir)
    analysis.get_comm_comp_overlap(visualize=False)
    analysis.get_temporal_breakdown(visualize=False)
    return {"seconds": time.perf_counter() - start, "peak_mb": _peak_mb(), "child_peak_mb": _children_peak_mb()}


def _child(kind: str, *args, lock: str | None = None) -> dict:
    command = [sys.executable, __file__, "--child", kind, *map(str, args)]
    if lock:  # flock LOCK command: one big-memory job at a time on a shared machine
        command = ["flock", lock, *command]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        return {"error": (result.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def _subset(rundir: Path, files: list, size: int, folder: Path, with_store: bool) -> Path:
    """The first ``size`` rank files, linked; with the store's cache linked too (no second conversion)."""
    out = folder / f"{'store' if with_store else 'plain'}-{size}"
    out.mkdir()
    for path in files[:size]:
        (out / path.name).symlink_to(path)
    if with_store:
        (out / ".pyprof_live").symlink_to(rundir / ".pyprof_live")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rundir", nargs="?")
    parser.add_argument("--sizes", default="8,32,128")
    parser.add_argument("--hta-sizes", default="1,2,4,8")
    parser.add_argument("--hta-limit-gb", type=float, default=8.0)
    parser.add_argument("--hta-lock", help="hold this lock file (flock) while HTA runs")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--straggler", type=int, help="the rank scale_kineto.py --straggler slowed down")
    parser.add_argument("--store-ranks", type=int, help="also summarise this many ranks made of copies of the store")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = {"convert": lambda: _convert(rest[0], int(rest[1])), "summary": lambda: _summary(rest[0])}
        result["hta"] = lambda: _hta(rest[0])
        print(json.dumps(result[kind]()))
        return 0
    rundir = Path(args.rundir).resolve()
    files = sorted(rundir.glob("rank-*.json.gz"), key=lambda p: int(p.name.split("-")[1].split(".")[0]))
    if not files:
        print(f"{rundir}: no rank-N.json.gz files (make them with scale_kineto.py)", file=sys.stderr)
        return 2
    sizes = [int(n) for n in args.sizes.split(",") if n and int(n) <= len(files)]
    gb_on_disk = sum(p.stat().st_size for p in files) / 1e9
    print(f"run: {rundir} ({len(files)} ranks, {gb_on_disk:.2f} GB gzip'd), {os.cpu_count()} cores")

    converted = _child("convert", rundir, args.processes)
    if "error" in converted:
        print(f"conversion failed: {converted['error']}")
        return 1
    bound = converted["peak_mb"] + args.processes * converted["child_peak_mb"]
    print(
        f"one-off conversion to Parquet ({converted['converted']} of {converted['workers']} workers converted now, "
        f"the others cached; {args.processes} processes): "
        f"{converted['seconds']:.0f} s, peak RSS main {converted['peak_mb']:.0f} MB + "
        f"{args.processes} x worker {converted['child_peak_mb']:.0f} MB = {bound:.0f} MB at most"
    )
    print(
        f"{'ranks':>5} | {'pyprof_live s':>13} {'peak MB':>8} {'slowest (rank, step)':>21} | {'HTA s':>8} {'peak MB':>8} | HTA/ours time"
    )
    hta_sizes = [int(n) for n in args.hta_sizes.split(",") if n and int(n) <= len(files)]
    last_hta_peak = None
    with tempfile.TemporaryDirectory(dir=rundir.parent) as folder:
        folder = Path(folder)
        for size in sorted(set(sizes) | set(hta_sizes)):
            ours = _child("summary", _subset(rundir, files, size, folder, True)) if size in sizes else None
            theirs = None
            if size in hta_sizes:
                projected = None if last_hta_peak is None else 2 * last_hta_peak
                if projected is not None and projected > args.hta_limit_gb * 1024:
                    theirs = {"error": f"not run: projected {projected / 1024:.1f} GB > {args.hta_limit_gb} GB"}
                else:
                    theirs = _child("hta", _subset(rundir, files, size, folder, False), lock=args.hta_lock)
                    if "error" not in theirs:
                        last_hta_peak = theirs["peak_mb"] + theirs["child_peak_mb"]
            ours_text = "-".rjust(46)
            if ours and "error" in ours:
                ours_text = ours["error"][:46].rjust(46)
            elif ours:
                slowest = f"({ours['slowest'][0]}, {ours['slowest'][1]})"
                ours_text = f"{ours['seconds']:13.1f} {ours['peak_mb']:8.0f} {slowest:>21}"
            hta_text = "-".rjust(17)
            ratio = ""
            if theirs and "error" in theirs:
                hta_text = theirs["error"][:60]
            elif theirs:
                hta_text = f"{theirs['seconds']:8.1f} {theirs['peak_mb'] + theirs['child_peak_mb']:8.0f}"
                if ours and "error" not in ours:
                    ratio = f"{theirs['seconds'] / ours['seconds']:.1f}x"
            print(f"{size:5d} | {ours_text} | {hta_text} | {ratio}")
            if ours and "error" not in ours and args.straggler is not None and size > args.straggler:
                found = ours["slowest"][0]
                verdict = "found" if found == args.straggler else "NOT found"
                print(
                    f"      planted straggler rank {args.straggler}: {verdict} (slowest: rank {found}, "
                    f"last at collectives most often: rank {ours['last_most_often']})"
                )
        if args.store_ranks and args.store_ranks > len(files):
            copies = _replicate_store(rundir, args.store_ranks, args.straggler, folder / "copies")
            ours = _child("summary", copies)
            if "error" in ours:
                print(f"{args.store_ranks:5d} | {ours['error']}")
            else:
                slowest = f"({ours['slowest'][0]}, {ours['slowest'][1]})"
                print(
                    f"{args.store_ranks:5d} | {ours['seconds']:13.1f} {ours['peak_mb']:8.0f} {slowest:>21} | "
                    f"(Parquet copies of the {len(files)} converted ranks; HTA not run at this size)"
                )
                if args.straggler is not None:
                    verdict = "found" if ours["slowest"][0] == args.straggler else "NOT found"
                    print(f"      planted straggler rank {args.straggler}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
