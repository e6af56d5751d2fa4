"""The long fuzz run (issue 13): every recording in ../shared/data, every field, every wrong value.

tests/test_fuzz_inputs.py runs a CI-sized slice; this runs all of it:
- Kineto: a slice of every trace (two ranks of a multi-rank job; its first ``--events`` read events' time window, links inside),
  every field of every read category, of the header and of deviceProperties given each of the 19
  wrong values of tests/fuzz_cases.JSON_VALUES, in the first event holding it and in all of them;
  each category's first event moved earlier or given a negative duration; the events reversed;
- nsys / nvprof: every column of every table the importers read set to each of the 10 SQL values
  (NULL, text, control characters, a blob, a real, 64-bit extremes), first row and all rows; each
  table's times swapped, rows reversed, a column renamed, the table dropped;
- saved profiles of two of those, every field of every table and every meta entry;
- ``--hypothesis`` generated traces; byte damage (``--bytes`` truncations and bit flips per file).
Each case runs in this process with a per-case deadline (``--timeout``, SIGALRM) through load,
every view, both exports, save -> load and diff. There is no peer to compare with: the figures are
cases tried, clean errors (one line naming the file), loaded (and every output worked), and the
three that must stay 0: tracebacks, hangs, saved files that do not load.

    python benchmarks/fuzz_inputs.py [--only kineto,sqlite,saved,hypothesis,bytes] [--events 120]
                                     [--hypothesis 800] [--bytes 40] [--timeout 20] [--seed 13]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import tempfile
import time
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_REPO))

from tests.fuzz_cases import (  # noqa: E402 - the repository goes on sys.path first
    Case,
    generated_traces,
    kineto_cases,
    run_case,
    saved_cases,
    saved_document,
    sqlite_cases,
    trace_slice,
)

_DATA = Path(os.environ.get("PYPROF_LIVE_TEST_DATA", _REPO.parent / "shared" / "data"))
KINDS = ("kineto", "sqlite", "saved", "hypothesis", "bytes")
_SAVED_SEEDS = (
    "kineto/hta_nccl_data_a100_ws2_rank0.json.gz",
    "nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite",
)


def _traces() -> list[Path]:
    """Every trace, but of a job's ranks (kineto_ranks/<job>/: one program, the same schema) only two."""
    traces = [
        p for folder in ("kineto", "kineto_compiled", "kineto_graphs") for p in sorted((_DATA / folder).glob("*.json*"))
    ]
    for job in sorted(p for p in (_DATA / "kineto_ranks").iterdir() if p.is_dir()):
        traces += sorted(job.glob("*.json*"))[:2]
    return traces


def _exports() -> list[Path]:
    return sorted(p for p in (_DATA / "nsys").iterdir() if p.suffix in (".sqlite", ".sql"))


def _label(path: Path) -> str:
    return str(path.relative_to(_DATA))


def kineto(args, work: Path):
    for path in _traces():
        yield from kineto_cases(trace_slice(path, args.events), _label(path))


def sqlite(args, work: Path):
    for path in _exports():
        yield from sqlite_cases(path, _label(path))


def saved(args, work: Path):
    from pyprof_live.importers import load

    for seed in _SAVED_SEEDS:
        path = _DATA / seed
        source = work / "seed.json"
        if path.suffix == ".gz":
            import json

            source.write_text(json.dumps(trace_slice(path, args.events)))
            profile = load(source)
        else:
            profile = load(path)
        profile.save(work / "seed.pplive")
        yield from saved_cases(saved_document(work / "seed.pplive"), seed)


def hypothesis(args, work: Path):
    from hypothesis import HealthCheck, given, seed, settings

    traces = []

    @seed(args.seed)
    @settings(max_examples=args.hypothesis, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(generated_traces())
    def collect(trace):
        traces.append(trace)

    collect()
    import json

    for n, trace in enumerate(traces):
        text = json.dumps(trace).encode("utf-8", "surrogatepass")

        def write(folder, text=text):
            path = folder / "generated.json"
            path.write_bytes(text)
            return path

        yield Case(f"generated #{n}", write)


def byte_damage(args, work: Path):
    """Truncations and bit flips of the smaller recordings (the README promise the issue found kept)."""
    rng = random.Random(args.seed)
    sources = [p for p in _traces() + _exports() if p.stat().st_size < 3_000_000]
    for path in sources:
        data = path.read_bytes()
        for n in range(args.bytes):
            damaged = bytearray(data)
            if n % 2:
                damaged = damaged[: rng.randrange(len(damaged))]
                what = f"cut at {len(damaged)}"
            else:
                for _ in range(8):
                    at = rng.randrange(len(damaged))
                    damaged[at] ^= 1 << rng.randrange(8)
                what = "8 bits flipped"

            def write(folder, damaged=bytes(damaged), name=path.name):
                out = folder / name
                out.write_bytes(damaged)
                return out

            yield Case(f"{_label(path)} {what} #{n}", write)


SOURCES = {"kineto": kineto, "sqlite": sqlite, "saved": saved, "hypothesis": hypothesis, "bytes": byte_damage}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(KINDS), help="comma-separated: " + ", ".join(KINDS))
    parser.add_argument("--events", type=int, default=120, help="read events per trace slice")
    parser.add_argument("--hypothesis", type=int, default=800, help="generated traces")
    parser.add_argument("--bytes", type=int, default=40, help="damaged copies per recording")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case before it counts as a hang")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    if not _DATA.is_dir():
        print(f"{_DATA}: not found (set PYPROF_LIVE_TEST_DATA)", file=sys.stderr)
        return 2
    kinds = [k.strip() for k in args.only.split(",") if k.strip()]
    totals: collections.Counter = collections.Counter()
    failures = []
    started = time.perf_counter()
    print(f"recordings: {_DATA}; per-case deadline {args.timeout:.0f} s")
    print(
        f"{'source':<11} {'cases':>7} {'clean':>7} {'loaded':>7} {'traceback':>9} {'hang':>5} {'unloadable':>10} {'s':>7}"
    )
    with tempfile.TemporaryDirectory(prefix="pyprof_live_fuzz_") as tmp:
        work = Path(tmp)
        for kind in kinds:
            counts: collections.Counter = collections.Counter()
            begun = time.perf_counter()
            for case in SOURCES[kind](args, work):
                outcome = run_case(case, work / "case", args.timeout)
                counts[outcome.kind] += 1
                if outcome.kind not in ("clean", "loaded"):
                    failures.append(f"{outcome.kind}: {case.name}: {outcome.detail}")
            totals += counts
            _row(kind, counts, time.perf_counter() - begun)
    _row("all", totals, time.perf_counter() - started)
    for line in failures[:50]:
        print(line)
    return 1 if failures else 0


def _row(kind: str, counts, seconds: float) -> None:
    cases = sum(counts.values())
    print(
        f"{kind:<11} {cases:>7} {counts['clean']:>7} {counts['loaded']:>7} {counts['traceback']:>9} "
        f"{counts['hang']:>5} {counts['unloadable']:>10} {seconds:>7.0f}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
