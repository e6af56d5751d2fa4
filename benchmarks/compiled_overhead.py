"""Overhead of pyprof_live on a torch.compile'd training step against torch.profiler, in one run.

The step: a GPT-style model compiled with torch.compile (Inductor, C++ kernels on the CPU), its
forward + backward, and a compiled AdamW step. It is compiled once, under a pyprof_live profile
(so Inductor keeps what each kernel fused), before anything is timed; every configuration then
runs the same compiled code:
  plain                 no profiler
  torch.profiler        record_shapes=True (CPU activity: it sees the kernels' record_function ranges)
  pyprof_live           profile() defaults: op hook, kernel calls, call sites
  pyprof_live + table   the same, then p.table()

Measured so that a difference smaller than the machine's noise can still be resolved:
- each configuration runs once per round, in an order shuffled every round (a slow spell of the
  machine lands on all of them alike, not always on the same one);
- the clock is the process's CPU time (time.process_time: torch runs on 1 thread, so this is the
  step's own work; time the process waits for a core on a loaded machine does not count), wall
  time is printed beside it;
- a configuration's added time is taken against the plain run of the SAME round (paired), then the
  median and quartiles over rounds are printed, per step and per Inductor kernel call;
- the ratio to torch.profiler is the ratio of the median added times; its resolution is stated:
  when the quartile ranges of the two added times overlap, the ratio is marked "(unresolved)".
- the default batch is 1: what a profiler adds is per op and per kernel call, the same at any batch,
  while the step's own time and its noise grow with the batch; at batch 8 the plain runs' quartile
  range (~14 ms/step) hid both added times (~3-7 ms/step).
Goal (issue #11): pyprof_live <= 1.3x plain, and its added time <= 0.5x torch.profiler's.

    .venv/bin/python benchmarks/compiled_overhead.py [--iters 10] [--rounds 11] [--batch 1]
"""

from __future__ import annotations

import argparse
import random
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
REFERENCE = "torch.profiler shapes"


def quartiles(values) -> tuple[float, float, float]:
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=10, help="steps per configuration and round")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="seed of the rounds' shuffled order")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # torch's own notes while compiling the optimizer step
    step = compiled_gpt_step(args.batch)
    compiling = time.perf_counter()
    warm = run_pyprof_live(step, 2)  # compiles every graph under the profile, then warms them
    compiling = time.perf_counter() - compiling
    p = run_pyprof_live(step, args.iters)
    kernels = sum(1 for op in p.records.ops if op.kind == "compiled")
    cpu: dict = {name: [] for name in CONFIGS}
    wall: dict = {name: [] for name in CONFIGS}
    order = list(CONFIGS)
    shuffle = random.Random(args.seed).shuffle
    for _ in range(args.rounds):
        shuffle(order)
        for name in order:
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            CONFIGS[name](step, args.iters)
            cpu[name].append(time.process_time() - start_cpu)
            wall[name].append(time.perf_counter() - start_wall)
    print(
        f"compiled GPT-style step (fwd+bwd+AdamW, batch {args.batch}) x {args.iters} steps: {kernels} Inductor kernel "
        f"calls, {len(p.records.ops)} records; torch {torch.__version__}, 1 thread; compiled in {compiling:.1f} s "
        f"({len(warm.records.compiles)} compile events); {args.rounds} rounds, order shuffled each round"
    )
    for clock, times in (("process CPU time", cpu), ("wall time", wall)):
        _report(clock, times, args.iters, kernels)


def _report(clock: str, times: dict, iters: int, kernels: int) -> None:
    plain = times["plain"]
    q1, median, q3 = quartiles(plain)
    print(
        f"\n{clock}: plain step median {median / iters * 1e3:.2f} ms (quartiles {q1 / iters * 1e3:.2f}-{q3 / iters * 1e3:.2f})"
    )
    print(
        f"{'configuration':24} {'x plain':>8} {'added ms/step':>14} {'quartiles':>15} {'us/kernel call':>15}"
        f" {'vs torch.profiler':>18}"
    )
    added = {name: [t - p for t, p in zip(times[name], plain)] for name in times if name != "plain"}
    reference = quartiles(added[REFERENCE])
    for name, values in added.items():
        low, mid, high = quartiles(values)
        ratio = statistics.median(times[name]) / statistics.median(plain)
        versus = ""
        if name != REFERENCE and reference[1] <= 0:
            versus = "n/a (torch.profiler added nothing measurable)"
        elif name != REFERENCE:
            resolved = high < reference[0] or low > reference[2]  # quartile ranges apart
            versus = f"{mid / reference[1]:.2f}x" + ("" if resolved else " (unresolved)")
        print(
            f"{name:24} {ratio:8.3f} {mid / iters * 1e3:14.2f} {low / iters * 1e3:7.2f}-{high / iters * 1e3:<7.2f}"
            f" {mid / kernels * 1e6:15.1f} {versus:>18}"
        )


if __name__ == "__main__":
    main()
