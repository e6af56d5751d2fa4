"""Overhead of pyprof_live on a torch.compile'd training step against torch.profiler, in one run.

The step: a GPT-style model compiled with torch.compile (Inductor, C++ kernels on the CPU), its
forward + backward, and a compiled AdamW step. It is compiled once, under a pyprof_live profile
(so Inductor keeps what each kernel fused), before anything is timed; every configuration then
runs the same compiled code:
  plain                 no profiler
  torch.profiler        record_shapes=True (CPU activity: it sees the kernels' record_function ranges)
  pyprof_live           profile() defaults: op hook, kernel calls, call sites
  pyprof_live + table   the same, then p.table()
Rounds alternate the configurations; each one's best and median time are printed (this machine is
noisy). Goal (issue #11): pyprof_live <= 1.3x plain, and its added time <= 0.5x torch.profiler's. When
torch.profiler's added time is within the spread of the plain runs, that ratio is marked "(noise)":
it says nothing then.

    .venv/bin/python benchmarks/compiled_overhead.py [--iters 10] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pyprof_live
from tests.compiled_models import GPT, GPT_CONFIG, gpt_batch


def compiled_gpt_step(batch: int):
    torch.manual_seed(0)
    model = GPT(**GPT_CONFIG)
    compiled = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    optimizer_step = torch.compile(optimizer.step)
    tokens, targets = gpt_batch(batch)

    def step():
        compiled(tokens, targets).backward()
        optimizer_step()
        optimizer.zero_grad(set_to_none=True)

    return step


def run_plain(step, iters):
    for _ in range(iters):
        step()


def run_torch_profiler(step, iters):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True):
        for _ in range(iters):
            step()


def run_pyprof_live(step, iters, table=False):
    with pyprof_live.profile() as p:
        for _ in range(iters):
            step()
            p.step()
    if table:
        p.table()
    return p


CONFIGS = {
    "plain": run_plain,
    "torch.profiler shapes": run_torch_profiler,
    "pyprof_live": run_pyprof_live,
    "pyprof_live + table": lambda s, n: run_pyprof_live(s, n, table=True),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # torch's own notes while compiling the optimizer step
    step = compiled_gpt_step(args.batch)
    compiling = time.perf_counter()
    warm = run_pyprof_live(step, 2)  # compiles every graph under the profile, then warms them
    compiling = time.perf_counter() - compiling
    p = run_pyprof_live(step, args.iters)
    kernels = sum(1 for op in p.records.ops if op.kind == "compiled")
    times: dict = {name: [] for name in CONFIGS}
    for _ in range(args.rounds):
        for name, run in CONFIGS.items():
            start = time.perf_counter()
            run(step, args.iters)
            times[name].append(time.perf_counter() - start)
    print(
        f"compiled GPT-style step (fwd+bwd+AdamW, batch {args.batch}) x {args.iters}: {kernels} Inductor kernel calls, "
        f"{len(p.records.ops)} records; torch {torch.__version__}, 1 thread; compiled in {compiling:.1f} s "
        f"({len(warm.records.compiles)} compile events); {args.rounds} rounds"
    )
    spread = max(times["plain"]) - min(times["plain"])
    print(f"spread of the plain runs (max - min): {spread:.3f} s")
    for statistic, pick in (("best", min), ("median", statistics.median)):
        value = {name: pick(t) for name, t in times.items()}
        plain = value["plain"]
        reference = value["torch.profiler shapes"] - plain
        print(
            f"{statistic:8} {'configuration':24} {'total s':>8} {'x plain':>8} {'added s':>8} {'vs torch.profiler':>18}"
        )
        for name in CONFIGS:
            added = value[name] - plain
            versus = ""
            if name not in ("plain", "torch.profiler shapes"):
                versus = f"{added / reference:.2f}x" + ("" if reference > spread else " (noise)")
            print(f"{'':8} {name:24} {value[name]:8.3f} {value[name] / plain:8.2f} {added:8.3f} {versus:>18}")


if __name__ == "__main__":
    main()
