"""Rendering the per-kernel table: our aligned ``"columns"`` against tabulate's formats, in one run.

The profile is the overhead benchmark's: GPT-style training steps captured live (stack_depth=0),
about 3820 rows for 20 steps. The view is built once; each format then renders the same rows.
Figures are the best of ``--rounds`` renders (this machine is noisy); ratios are against "columns".

    .venv/bin/python benchmarks/table_render.py [--iters 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pyprof_live
from pyprof_live.render.text import render_view
from tests.formula_models import gpt_step

FORMATS = ("columns", "space", "csv", "simple", "github", "grid", "plain")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    step = gpt_step()
    step()  # warm-up outside the profile
    with pyprof_live.profile(stack_depth=0) as p:
        for _ in range(args.iters):
            step()
    view = p.kernel_view(sort="sil")
    render_view(view, fmt="github")  # imports tabulate outside the timing
    best = {}
    for _ in range(args.rounds):
        for fmt in FORMATS:
            start = time.perf_counter()
            render_view(view, fmt=fmt)
            best[fmt] = min(best.get(fmt, float("inf")), time.perf_counter() - start)
    print(f"{len(view.rows)} rows x {len(view.columns)} columns ({', '.join(view.columns)}), best of {args.rounds}")
    print(f"{'format':<10} {'ms':>8} {'x columns':>10}")
    for fmt in FORMATS:
        print(f"{fmt:<10} {best[fmt] * 1e3:8.1f} {best[fmt] / best['columns']:10.1f}")


if __name__ == "__main__":
    main()
