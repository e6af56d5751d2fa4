"""Nsight Systems import speed: load_nsys + correlate on the emit_nvtx export scaled 10x .. 20000x.

Goal (issue 3): at 20000x (920k kernels, 1.24M launching API calls, 1.64M NVTX ranges, 860 MB)
import + correlate in at most 20 s and 1.5 GB peak RSS on a 2-core machine, growing linearly.
Goal (issue 14, ``--report``): the same plus the full CSV report (``p.export_csv``: every column of
``p.table``, every row, written to a file) within the same 20 s and 1.5 GB.
For scale: PyProf's parse + prof took 136 s and 1.1-1.7 GB at 10000x.

With ``--report`` each size also runs, in its own fresh process, the peer: the per-kernel CSV that
``nsys stats --report cuda_gpu_trace`` makes from the same export, as it makes it, one SQL query
(kernels and memcpy/memset joined to their launching call and their names) written by Python's csv
module; no op attribution, formulas or rooflines. And the floor: the rows load_nsys reads, fetched
into Python and dropped. Ratios to the peer are printed (machines are noisy; ratios less so).

The exports are made with ../shared/tools/scale_nsys.py (the real export repeated N times back to
back; ``--scaler`` names another copy) in a temporary folder. Each size is measured in a fresh Python process, so no size inherits
another's heap; peak RSS includes the interpreter and the imported package (torch), which the
``base`` column shows on its own. CPU seconds are printed beside wall seconds: other work on the
machine inflates the wall clock, not the CPU time.

    python benchmarks/import_speed.py [--sizes 10,100,1000,20000] [--keep DIR] [--scaler PATH] [--report]
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
_DATA = Path(os.environ.get("PYPROF_LIVE_TEST_DATA", _REPO.parent / "shared" / "data"))
_SOURCE = _DATA / "nsys" / "nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite"
#: ../shared/tools beside the repository, or beside the folder of worktrees (a worktree in wt/<name>).
_SCALER = next(
    (
        p
        for p in (
            _REPO.parent / "shared" / "tools" / "scale_nsys.py",
            _REPO.parents[1] / "shared" / "tools" / "scale_nsys.py",
        )
        if p.is_file()
    ),
    _REPO.parent / "shared" / "tools" / "scale_nsys.py",
)
#: Kernels in _SOURCE (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL): a scaled export holds N times as many.
_SOURCE_KERNELS = 46
GOAL_SECONDS, GOAL_MB, GOAL_SIZE = 20.0, 1500, 20000


def _measure(path: str, report: bool) -> dict:
    """Runs in the child process: one timed import + correlation of ``path`` (+ the full CSV report,
    written beside the export and removed)."""
    sys.path.insert(0, str(_REPO))
    from pyprof_live.importers.nsys import load_nsys
    from pyprof_live.report.columns import COLUMN_NAMES

    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    wall, cpu = time.perf_counter(), time.process_time()
    profile = load_nsys(path)
    import_wall, import_cpu = time.perf_counter() - wall, time.process_time() - cpu
    # profile.link(), as export_csv and every view call it: the report reuses these links (a bare
    # correlate(profile) is not remembered by the profile, so the report would correlate a second time).
    linked = profile.link()
    correlated_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    correlated_cpu = time.process_time() - cpu
    report_rows = report_bytes = 0
    if report:
        out = Path(path).with_suffix(".csv")
        report_rows = profile.export_csv(out, columns=COLUMN_NAMES)
        report_bytes = out.stat().st_size
        out.unlink()
    records = profile.records
    return {
        "correlated_peak_mb": correlated_peak,
        "correlate_cpu_s": correlated_cpu - import_cpu,
        "report_cpu_s": time.process_time() - cpu - correlated_cpu,
        "report_rows": report_rows,
        "report_bytes": report_bytes,
        "import_s": import_wall,
        "import_cpu_s": import_cpu,
        "total_s": time.perf_counter() - wall,
        "total_cpu_s": time.process_time() - cpu,
        "base_mb": base_mb,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "kernels": len(records.kernels),
        "kernels_with_op": linked.kernels_with_op,
        "apis": len(records.apis),
        "ops": len(records.ops),
    }


#: nsys stats' cuda_gpu_trace, in essence: each kernel and memcpy/memset with its launching call's
#: start and its name, in launch order (the peer of ``--report``).
_PEER_QUERY = """
SELECT a.start AS api_start, w.start, w.end - w.start AS duration, w.correlationId, w.deviceId, w.streamId,
       w.gridX, w.gridY, w.gridZ, w.blockX, w.blockY, w.blockZ, w.registersPerThread,
       w.staticSharedMemory, w.dynamicSharedMemory, w.bytes, w.name
FROM (SELECT k.start, k.end, k.correlationId, k.globalPid, k.deviceId, k.streamId, k.gridX, k.gridY, k.gridZ,
             k.blockX, k.blockY, k.blockZ, k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory,
             NULL AS bytes, s.value AS name
      FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName
      UNION ALL
      SELECT start, end, correlationId, globalPid, deviceId, streamId, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
             NULL, NULL, bytes, '[memcpy]' FROM CUPTI_ACTIVITY_KIND_MEMCPY
      UNION ALL
      SELECT start, end, correlationId, globalPid, deviceId, streamId, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
             NULL, NULL, bytes, '[memset]' FROM CUPTI_ACTIVITY_KIND_MEMSET) AS w
LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS a
       ON a.correlationId = w.correlationId AND (a.globalTid >> 24) = (w.globalPid >> 24)
ORDER BY COALESCE(a.start, w.start), w.start
"""

#: The rows load_nsys reads, as it reads them (its queries, simplified to this export's columns).
_FLOOR_QUERIES = (
    "SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL",
    "SELECT start, end, bytes, copyKind, deviceId, streamId, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY "
    "UNION ALL SELECT start, end, bytes, 0, deviceId, streamId, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET",
    "SELECT start, end, correlationId, globalTid, nameId, eventClass FROM CUPTI_ACTIVITY_KIND_RUNTIME "
    "WHERE eventClass IN (0, 1) AND (correlationId, (globalTid >> 24) & 16777215) IN "
    "(SELECT correlationId, (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL "
    "SELECT correlationId, (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL "
    "SELECT correlationId, (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_MEMSET)",
    "SELECT start, end, globalTid, text, domainId, eventType FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60)",
)


def _measure_peer(path: str) -> dict:
    """Runs in the child process: the peer's CSV (written beside the export and removed), then the floor."""
    import csv
    import sqlite3

    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu = time.process_time()
    db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
    out = Path(path).with_suffix(".peer.csv")
    with out.open("w", newline="") as f:
        writer = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        cursor = db.execute(_PEER_QUERY)
        writer.writerow([d[0] for d in cursor.description])
        writer.writerows(cursor)
    peer_cpu, peer_mb = time.process_time() - cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = out.stat().st_size
    out.unlink()
    db.text_factory = bytes
    cpu = time.process_time()
    for query in _FLOOR_QUERIES:
        for _ in db.execute(query):
            pass
    return {
        "peer_cpu_s": peer_cpu,
        "peer_mb": peer_mb,
        "peer_bytes": size,
        "floor_cpu_s": time.process_time() - cpu,
        "base_mb": base_mb,
    }


def _scaled(copies: int, folder: Path, scaler: Path) -> Path:
    """The export scaled ``copies`` times, made once: scale_nsys.py writes into its output as it goes, so
    it writes a temporary name that is renamed when complete; an interrupted run leaves no export that
    a later ``--keep`` run would time as N copies."""
    out = folder / f"emitnvtx_x{copies}.sqlite"
    if not out.exists():
        partial = out.with_suffix(".partial")
        subprocess.run(
            [sys.executable, str(scaler), str(_SOURCE), str(partial), "--copies", str(copies), "--force"],
            check=True,
            capture_output=True,
        )
        partial.replace(out)
    return out


def _run_child(path: Path, report: bool, peer: bool = False) -> dict:
    command = [sys.executable, __file__, "--peer" if peer else "--child", str(path)] + (["--report"] if report else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,20000", help="comma-separated copy counts")
    parser.add_argument("--keep", help="make and keep the scaled exports in this folder (else a temporary one)")
    parser.add_argument("--scaler", type=Path, default=_SCALER, help=f"scale_nsys.py (default: {_SCALER})")
    parser.add_argument(
        "--report", action="store_true", help="also time the full CSV report (every column, every row) after import"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--peer", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.child, args.report)))
        return 0
    if args.peer:
        print(json.dumps(_measure_peer(args.peer)))
        return 0
    for needed, how in ((_SOURCE, "set PYPROF_LIVE_TEST_DATA to the recordings folder"), (args.scaler, "use --scaler")):
        if not needed.is_file():
            print(f"{needed}: not found ({how})", file=sys.stderr)
            return 2
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="pyprof_live_nsys_") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"{_SOURCE.name} scaled by scale_nsys.py; each size in a fresh process; times in s, memory in MB")
        print(
            f"{'copies':>7} {'kernels':>8} {'attrib.':>8} {'import':>7} {'(cpu)':>7} {'+correl.':>8} {'(cpu)':>7}"
            f" {'us/kernel':>9} {'growth':>7} {'peak':>6} {'base':>5}"
        )
        previous = None
        for copies in sizes:
            path = _scaled(copies, folder, args.scaler)
            r = _run_child(path, args.report)
            if r["kernels"] != copies * _SOURCE_KERNELS:
                print(
                    f"{copies:>7}: the scaled export holds {r['kernels']} kernels, not {copies * _SOURCE_KERNELS}: "
                    "remove it and run again",
                    file=sys.stderr,
                )
                return 1
            per_kernel = 1e6 * r["total_cpu_s"] / r["kernels"]
            # Linear growth: CPU time per kernel stays the same from one size to the next (ratio ~1).
            growth = f"{per_kernel / previous:7.2f}" if previous else f"{'-':>7}"
            previous = per_kernel
            print(
                f"{copies:>7} {r['kernels']:>8} {r['kernels_with_op']:>8} {r['import_s']:>7.2f} "
                f"{r['import_cpu_s']:>7.2f} {r['total_s']:>8.2f} {r['total_cpu_s']:>7.2f} {per_kernel:>9.2f} "
                f"{growth} {r['peak_mb']:>6.0f} {r['base_mb']:>5.0f}"
                + (
                    f"  (cpu: correlate {r['correlate_cpu_s']:.2f}, report {r['report_cpu_s']:.2f}; import+correlate "
                    f"peak {r['correlated_peak_mb']:.0f}; CSV {r['report_rows']} rows, {r['report_bytes'] / 1e6:.0f} MB)"
                    if args.report
                    else ""
                )
            )
            if args.report:
                peer = _run_child(path, False, peer=True)
                print(
                    f"{'':>7} peer (nsys stats cuda_gpu_trace-style SQL -> csv): {peer['peer_cpu_s']:.2f} s cpu, "
                    f"{peer['peer_mb']:.0f} MB peak, CSV {peer['peer_bytes'] / 1e6:.0f} MB; ours/peer: "
                    f"{r['total_cpu_s'] / peer['peer_cpu_s']:.1f}x cpu, {r['peak_mb'] / peer['peer_mb']:.1f}x peak; "
                    f"floor (rows load_nsys reads, fetched and dropped): {peer['floor_cpu_s']:.2f} s cpu"
                )
            if copies == GOAL_SIZE:
                # CPU seconds: on a shared machine the wall clock measures the other users too.
                met = r["total_cpu_s"] <= GOAL_SECONDS and r["peak_mb"] <= GOAL_MB
                print(
                    f"  goal at {GOAL_SIZE}x: <= {GOAL_SECONDS:.0f} s CPU and <= {GOAL_MB} MB: "
                    f"{r['total_cpu_s']:.1f} s CPU ({r['total_cpu_s'] / GOAL_SECONDS:.2f}x the goal), "
                    f"{r['peak_mb']:.0f} MB ({r['peak_mb'] / GOAL_MB:.2f}x): {'met' if met else 'NOT met'}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
