"""How much of an UNPROFILED training step runs outside every aten op: the floor of "other" in any op-level profile.

Issue 12 asks for ``p.overview()``'s "other" (time in no op, no GPU work, not the profiler's own) to be
<= 15 % of the step. That time is the model's Python between ops (module calls, argument parsing, the
optimizer's loop), autograd's engine between backward ops and tensor deallocation: it exists without any
profiler. This benchmark measures it without one: py-spy (a sampling profiler in its own process, which
reads the stacks of the running program through ptrace and changes none of its code) samples the plain
training loop of each of the seven real models with native frames; a sample is inside an aten op when
its stack holds the dispatcher (``at::_ops::``, ``c10::Dispatcher::``, ``at::native::``) or its native
frames below the last Python frame are kernel code (MKL, oneDNN, ``at::``: unwinding through MKL's
assembly loses the frames above it); a sample whose native frames are only unnamed addresses or the C
allocator could be either (the range printed counts them out, then in); every other sample of the loop
(Python bytecode, argument parsing, autograd's engine between nodes) is outside ops. Printed beside it,
from the same run: pyprof_live's overview "other" and profiler shares, and "other" in torch.profiler's own
trace of the same steps (benchmarks/real_models.py's ``shares``).

    .venv/bin/pip install py-spy      # the sampler (a binary wheel)
    .venv/bin/python benchmarks/outside_ops.py [--seconds 15] [--rate 250] [--models gpt2,bert]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_models import BUILDERS, NEEDS_TRANSFORMERS, TRANSFORMERS_MISSING, build, shares

#: A frame of the timed loop: samples without it (imports, model building, warm-up) are not counted.
LOOP_FRAME = "timed_loop ("
#: Frames that mean the sampled thread is inside an aten op.
DISPATCH_FRAMES = ("at::_ops::", "c10::Dispatcher::", "at::native::")
#: Native frames below the last Python frame that are kernel code (their callers may be lost in unwinding).
KERNEL_FRAMES = ("mkl_", "vms", "vmd", "vml", "dnnl", "sleef", "at::", "libgomp", "gomp_")
#: Native frames that say nothing of which side a sample is on: no symbol, or the C allocator.
UNRESOLVED_FRAMES = ("0x", "malloc", "free", "__default_morecore", "sbrk", "brk", "posix_memalign", "_int_")


def timed_loop(step, seconds: float) -> None:
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        step()


def child(name: str, seconds: float) -> None:
    """The sampled process: a plain training loop, no profiler."""
    torch.set_num_threads(1)
    step = build(name)
    for _ in range(3):
        step()  # warm-up: optimizer state, allocator, lazy init
    timed_loop(step, seconds)


def classify(raw: Path) -> Counter:
    """Samples of the timed loop by where they were: "in op" or "outside" (py-spy's raw format: one
    ``frame;frame;... count`` line per distinct stack, outermost first)."""
    counts: Counter = Counter()
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, number = line.rpartition(" ")
        if LOOP_FRAME not in stack:
            continue
        frames = stack.split(";")
        python = [i for i, frame in enumerate(frames) if ".py:" in frame]
        native_tail = frames[python[-1] + 1 :] if python else frames
        if any(d in f for f in frames for d in DISPATCH_FRAMES) or any(
            f.startswith(KERNEL_FRAMES) for f in native_tail
        ):
            counts["in op"] += int(number)
        elif native_tail and all(f.startswith(UNRESOLVED_FRAMES) or not f for f in native_tail):
            counts["unknown"] += int(number)  # an address without a symbol, or the allocator: either side
        else:
            counts["outside"] += int(number)  # Python bytecode, argument parsing, autograd's engine
    return counts


def outside_share(name: str, seconds: float, rate: int, py_spy: str) -> tuple[float, float, int]:
    """(least, most, samples): the share of the loop's samples outside ops, without and with the unknown ones."""
    with tempfile.TemporaryDirectory() as folder:
        raw = Path(folder) / "samples.txt"
        command = [py_spy, "record", "--native", "--rate", str(rate), "--format", "raw", "--output", str(raw)]
        command += ["--", sys.executable, __file__, "--child", name, "--seconds", str(seconds)]
        subprocess.run(command, check=True, capture_output=True)
        counts = classify(raw)
    total = sum(counts.values())
    return counts["outside"] / total, (counts["outside"] + counts["unknown"]) / total, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="sampled seconds of training per model")
    parser.add_argument("--rate", type=int, default=250, help="samples per second")
    parser.add_argument("--steps", type=int, default=3, help="training steps per profiled run (shares)")
    parser.add_argument("--models", default=",".join(BUILDERS), help="comma-separated, from: " + ", ".join(BUILDERS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.seconds)
        return
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(py_spy).exists():
        sys.exit("py-spy is not installed: .venv/bin/pip install py-spy")
    torch.set_num_threads(1)
    names = [n for n in args.models.split(",") if n]
    if TRANSFORMERS_MISSING:
        print(f"skipping {', '.join(NEEDS_TRANSFORMERS)}: {TRANSFORMERS_MISSING}")
        names = [n for n in names if n not in NEEDS_TRANSFORMERS]
    print(
        f"unprofiled: py-spy --native at {args.rate} Hz over {args.seconds:g} s of plain training per model; "
        f"profiled: {args.steps} steps, shortest of 3 runs; torch {torch.__version__}, 1 thread"
    )
    print(
        f"{'model':19} {'samples':>8} {'unprofiled outside ops':>22} {'pyprof other':>12} {'prof':>6} {'torch.profiler other':>20}"
    )
    for name in names:
        least, most, samples = outside_share(name, args.seconds, args.rate, py_spy)
        step = build(name)
        for _ in range(2):
            step()
        s = shares(step, args.steps)
        outside = f"{least:.1%}-{most:.1%}"
        print(f"{name:19} {samples:8} {outside:>22} {s['other']:12.1%} {s['profiler']:6.1%} {s['peer other']:20.1%}")


if __name__ == "__main__":
    main()
