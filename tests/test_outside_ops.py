"""benchmarks/outside_ops.py's sample classifier: the evidence for issue 12's "other" floor rests on it."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from outside_ops import classify

LOOP = "<module> (outside_ops.py:130);timed_loop (outside_ops.py:48)"


def test_samples_are_split_into_in_op_outside_and_unknown(tmp_path):
    raw = tmp_path / "samples.txt"
    raw.write_text(
        "\n".join(
            [
                f"{LOOP};forward (model.py:3);at::_ops::mm::call (libtorch_cpu.so);mkl_blas_kernel 5",  # dispatcher
                f"{LOOP};forward (model.py:3);mkl_blas_def_sgemm_kernel_0_zen 1",  # kernel code, callers lost
                f"{LOOP};forward (model.py:3) 3",  # Python bytecode
                f"{LOOP};backward (graph.py:9);torch::autograd::Engine::execute (libtorch_cpu.so) 4",  # the engine
                f"{LOOP};forward (model.py:3);0x7f0012345678 2",  # no symbol: either side
                "<module> (outside_ops.py:130);build (real_models.py:2) 7",  # not in the timed loop
            ]
        )
        + "\n"
    )
    # in op: 5 + 1 = 6; outside: 3 + 4 = 7; unknown: 2; the 7 samples of model building are not counted
    assert classify(raw) == {"in op": 6, "outside": 7, "unknown": 2}
