"""Kineto import speed: load_kineto + correlate against a bare ``json.load`` of the same trace.

Goal (issue 3): tracelens_owlv2_h100_infer.json.gz (55 MB of JSON, 132k events) loaded and
correlated in at most 2x the time of ``json.load``. Each measurement runs in a fresh Python process
(so neither side inherits the other's heap), the two alternate, and the best of ``--repeat`` runs
of each is compared. Also prints each side's peak RSS.

    python benchmarks/import_speed_kineto.py [TRACE] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]
_DEFAULT_TRACE = (
    Path(os.environ.get("PYPROF_LIVE_TEST_DATA", _REPO.parent / "shared" / "data"))
    / "kineto"
    / "tracelens_owlv2_h100_infer.json.gz"
)
GOAL_RATIO = 2.0


def _measure(side: str, path: str) -> dict:
    """Runs in the child process: one timed read of ``path``."""
    if side == "json.load":
        import gzip

        opener = gzip.open if Path(path).read_bytes()[:2] == b"\x1f\x8b" else open
        start = time.perf_counter()
        with opener(path, "rt", encoding="utf-8") as f:
            trace = json.load(f)
        seconds = time.perf_counter() - start
        counts = {"events": len(trace["traceEvents"]) if isinstance(trace, dict) else len(trace)}
    else:
        sys.path.insert(0, str(_REPO))
        from pyprof_live.correlate import correlate
        from pyprof_live.importers.kineto import load_kineto

        start = time.perf_counter()
        profile = load_kineto(path)
        linked = correlate(profile)
        seconds = time.perf_counter() - start
        records = profile.records
        counts = {
            "ops": len(records.ops),
            "apis": len(records.apis),
            "kernels": len(records.kernels),
            "kernels_with_op": linked.kernels_with_op,
        }
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mb": peak_mb, "counts": counts}


def _run_child(side: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", side, str(path)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", default=str(_DEFAULT_TRACE))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.child, args.trace)))
        return 0
    path = Path(args.trace)
    if not path.is_file():
        print(f"{path}: not found (set PYPROF_LIVE_TEST_DATA or pass a trace path)", file=sys.stderr)
        return 2
    runs: dict = {"json.load": [], "load_kineto+correlate": []}
    for _ in range(args.repeat):
        for side in runs:
            runs[side].append(_run_child(side, path))
    print(f"trace: {path} ({path.stat().st_size / 1e6:.1f} MB on disk), best of {args.repeat} fresh processes each")
    best = {}
    for side, results in runs.items():
        best[side] = min(r["seconds"] for r in results)
        times = ", ".join(f"{r['seconds']:.3f}" for r in results)
        print(
            f"  {side:24s} {best[side]:7.3f} s  (runs: {times})  peak RSS {max(r['peak_mb'] for r in results):.0f} MB"
            f"  {results[0]['counts']}"
        )
    ratio = best["load_kineto+correlate"] / best["json.load"]
    verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
    print(f"  ratio load_kineto+correlate / json.load = {ratio:.2f}  (goal <= {GOAL_RATIO}: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
