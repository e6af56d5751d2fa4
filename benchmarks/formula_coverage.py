"""How much of a real training step, and of real GPU kernel time, the formula library covers.

Part 1 (CPU, live capture): forward + backward + AdamW step of a ResNet-style CNN, a GPT-style
block with SDPA, a 2-layer LSTM and an EmbeddingBag model (tests/formula_models.py), recorded with
``pyprof_live.profile(gpu="off")``. Per model: distinct aten ops seen, how many have a formula,
the share of op calls covered, and the share whose formula produced a number (flops and bytes).

Part 2 (GPU op set): every Kineto trace in ../shared/data/kineto (or $PYPROF_LIVE_TEST_DATA),
loaded with load_kineto and correlated: the share of kernel time whose op (the innermost op that
launched it) has a formula, and whose formula produced flops from the recorded inputs. Kernel time
with no op at all (a launch the trace does not tie to an op) is reported beside it, not hidden.

Targets (issue 5): >= 95% of distinct ops, >= 99% of calls, >= 95% of GPU kernel time.

    python benchmarks/formula_coverage.py
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_REPO))

import pyprof_live  # noqa: E402
from pyprof_live.errors import ProfileFormatError  # noqa: E402
from pyprof_live.formulas import evaluate, has_formula  # noqa: E402
from pyprof_live.importers.kineto import load_kineto  # noqa: E402
from pyprof_live.records import NO_LINK  # noqa: E402
from tests.formula_models import TRAINING_STEPS  # noqa: E402

_DATA = Path(os.environ.get("PYPROF_LIVE_TEST_DATA", _REPO.parent / "shared" / "data"))
GOAL_DISTINCT, GOAL_CALLS, GOAL_KERNEL_TIME = 0.95, 0.99, 0.95


def _pct(part, whole) -> str:
    return f"{100 * part / whole:6.2f}%" if whole else "    -  "


def model_coverage() -> bool:
    print("Part 1: CPU training steps under live capture (forward + backward + AdamW)")
    print(
        f"{'model':<14} {'ops':>5} {'w/ formula':>10} {'distinct':>8} {'calls':>6} {'calls cov':>9} "
        f"{'computed':>9}  ops without a formula"
    )
    ok = True
    for name, make_step in TRAINING_STEPS.items():
        step = make_step()
        step()  # first step creates the optimizer state; measure a steady-state step
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pyprof_live.profile(gpu="off") as profile:
                step()
        ops = [op for op in profile.records.ops if op.kind == "op"]
        names = {op.name for op in ops}
        covered = {n for n in names if has_formula(n)}
        calls_covered = sum(has_formula(op.name) for op in ops)
        computed = sum(None not in evaluate(op)[:2] for op in ops)
        print(
            f"{name:<14} {len(names):>5} {len(covered):>10} {_pct(len(covered), len(names)):>8} {len(ops):>6} "
            f"{_pct(calls_covered, len(ops)):>9} {_pct(computed, len(ops)):>9}  {sorted(names - covered) or ''}"
        )
        ok &= len(covered) >= GOAL_DISTINCT * len(names) and calls_covered >= GOAL_CALLS * len(ops)
    return ok


def _is_communication(kernel_name: str) -> bool:
    return kernel_name.startswith(("ncclKernel", "ncclDevKernel", "void ncclKernel"))


def kineto_coverage() -> bool:
    folder = _DATA / "kineto"
    if not folder.is_dir():
        print(f"\nPart 2 skipped: no Kineto traces at {folder}")
        return True
    print(f"\nPart 2: GPU kernel time by the formula status of the op that launched it ({folder})")
    print(f"{'trace':<58} {'kernels':>7} {'no op':>7} {'formula':>8} {'computed':>8} {'comm':>6}  top uncovered ops")
    totals = Counter()
    for path in sorted(folder.iterdir()):
        started = time.perf_counter()
        try:
            profile = load_kineto(path)
        except ProfileFormatError as error:  # a README or any other file that is not a trace
            print(f"{path.name[:58]:<58} skipped: {error.problem}")
            continue
        profile.correlation  # links every kernel to the op that launched it
        records = profile.records
        time_by = Counter()
        uncovered = Counter()
        for kernel in records.kernels:
            duration = kernel.end - kernel.start
            time_by["all"] += duration
            if kernel.op == NO_LINK:
                time_by["no op"] += duration
                continue
            op = records.ops[kernel.op]
            time_by["with op"] += duration
            if _is_communication(kernel.name):
                time_by["comm"] += duration
            if has_formula(op.name):
                time_by["formula"] += duration
                if evaluate(op).flops is not None:
                    time_by["computed"] += duration
            else:
                uncovered[op.name] += duration
        totals.update(time_by)
        top = ", ".join(f"{name} {_pct(t, time_by['with op']).strip()}" for name, t in uncovered.most_common(3))
        print(
            f"{path.name[:58]:<58} {len(records.kernels):>7} {_pct(time_by['no op'], time_by['all']):>7} "
            f"{_pct(time_by['formula'], time_by['with op']):>8} {_pct(time_by['computed'], time_by['with op']):>8} "
            f"{_pct(time_by['comm'], time_by['with op']):>6}  {top}  ({time.perf_counter() - started:.1f}s)"
        )
    with_op = totals["with op"]
    share = totals["formula"] / with_op if with_op else 1.0
    print(
        f"{'all traces':<58} {'':>7} {_pct(totals['no op'], totals['all']):>7} {_pct(totals['formula'], with_op):>8} "
        f"{_pct(totals['computed'], with_op):>8} {_pct(totals['comm'], with_op):>6}"
    )
    print(
        "(shares of kernel time launched by an op; 'no op': share of all kernel time with no op to attribute it to;"
        " 'comm': NCCL kernels)"
    )
    return share >= GOAL_KERNEL_TIME


def main() -> int:
    ok = model_coverage()
    ok &= kineto_coverage()
    print(
        f"\ntargets (>= {GOAL_DISTINCT:.0%} distinct ops, >= {GOAL_CALLS:.0%} calls, "
        f">= {GOAL_KERNEL_TIME:.0%} kernel time): {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
