"""``pyprof-live`` start-up: today's CLI against the same CLI with torch imported first, in one run.

Until the lazy ``import pyprof_live`` (PEP 562), every command paid torch's import (and nvtx's
numpy): "torch first" reproduces that by importing torch and nvtx before running the same
``pyprof_live.cli.main``. Each command runs in a fresh interpreter, as a user's shell would run it;
the figure is the best wall time of ``--rounds`` runs (this machine is noisy), the ratio is
torch-first / now. Files come from ../shared/data (or $PYPROF_LIVE_TEST_DATA); absent ones are skipped.

    .venv/bin/python benchmarks/cli_startup.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("PYPROF_LIVE_TEST_DATA") or ROOT.parent / "shared" / "data")

#: (label, arguments); file arguments are relative to DATA.
COMMANDS = (
    ("--help", ["--help"]),
    ("nsys export, 46 kernels", ["nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite"]),
    ("Kineto trace, AlexNet", ["kineto/hta_alexnet_a100_benchmark_trace.json.gz"]),
    ("nvprof export", ["nsys/nvprof_pytorch_pyprof_lm_v100_17ed9e2.sql"]),
    # Ops with scalar arguments: the params column names them from torch's op schemas.
    ("Kineto trace, Qwen (scalar args)", ["kineto/tracelens_qwen1.5-0.5b_h100_infer.json.gz"]),
)

_RUN = "import sys; from pyprof_live.cli import main; sys.exit(main(sys.argv[1:]))"
_TORCH_FIRST = "import torch, nvtx; " + _RUN


def _time(code: str, args: list) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    commands = []
    for label, argv in COMMANDS:
        argv = [str(DATA / a) if not a.startswith("-") else a for a in argv]
        if all(a.startswith("-") or Path(a).exists() for a in argv):
            commands.append((label, argv))
        else:
            print(f"skipped {label}: {argv[0]} not found")
    best: dict = {}
    for _ in range(args.rounds):
        for label, argv in commands:
            for config, code in (("now", _RUN), ("torch first", _TORCH_FIRST)):
                key = (label, config)
                best[key] = min(best.get(key, float("inf")), _time(code, argv))
    print(f"best of {args.rounds} runs, wall seconds, fresh interpreter each ({sys.executable})")
    print(f"{'command':<34} {'now':>7} {'torch first':>12} {'ratio':>7}")
    for label, _ in commands:
        now, before = best[(label, "now")], best[(label, "torch first")]
        print(f"{label:<34} {now:7.2f} {before:12.2f} {before / now:6.1f}x")


if __name__ == "__main__":
    main()
