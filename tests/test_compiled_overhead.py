"""benchmarks/compiled_overhead.py's model choice: a published model's figure rests on it running
compiled under profile(), with only what its header line says left outside the compiled graphs."""

import collections
import sys
import warnings
from pathlib import Path

import pytest
import torch

from pyprof_live.records import COMPILED
from tests.compiled_models import needs_compiled_runs
from tests.real_models import TRANSFORMERS_MISSING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import compiled_overhead


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--model", "gpt2"], "--model gpt2 needs transformers: not installed here"),
        (["--model", "llama"], "--model llama needs transformers: not installed here"),
    ],
)
def test_a_published_model_without_transformers_is_a_one_line_error(monkeypatch, capsys, argv, says):
    monkeypatch.setattr(compiled_overhead.real_models, "TRANSFORMERS_MISSING", "not installed here")
    monkeypatch.setattr(sys, "argv", ["compiled_overhead.py", *argv])
    with pytest.raises(SystemExit) as exit:
        compiled_overhead.main()  # before anything is built or compiled
    assert exit.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(says)


def test_batch_is_the_gpt_style_models_only(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["compiled_overhead.py", "--model", "gpt2", "--batch", "4"])
    with pytest.raises(SystemExit) as exit:
        compiled_overhead.main()
    assert exit.value.code == 2
    assert "--batch is gpt-style's: gpt2 runs tests/real_models.py's batch" in capsys.readouterr().err


@pytest.mark.e2e
@needs_compiled_runs
@pytest.mark.skipif(bool(TRANSFORMERS_MISSING), reason=TRANSFORMERS_MISSING)
def test_gpt2_runs_compiled_with_no_graph_break_in_the_model():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's notes while compiling the optimizer step
            step = compiled_overhead.compiled_step("gpt2", 1)
            warm = compiled_overhead.run_pyprof_live(step, 2)  # compiles, as the benchmark's warm-up
            p = compiled_overhead.run_pyprof_live(step, 3)
    finally:
        torch.set_num_threads(threads)
    # Dynamo's one break is torch's own, in optimizer.step's wrapper: none in GPT2LMHeadModel
    assert [
        (e.callsite[0].split(":")[0], e.reason.split(":")[0]) for e in warm.records.compiles if e.kind == "graph_break"
    ] == [("torch/optim/optimizer.py", "Call to `torch._dynamo.graph_break()`")]
    assert not p.records.compiles  # compiled once, in the warm-up
    graphs = collections.Counter(op.graph.split()[-1] for op in p.records.ops if op.kind == COMPILED)
    # 3 steps: Inductor kernel calls of one forward graph, one backward graph and the optimizer step's
    assert len({op.graph for op in p.records.ops if op.kind == COMPILED}) == 3
    assert set(graphs) == {"forward", "backward", "inference"} and graphs["inference"] == 3
    eager = collections.Counter(op.name for op in p.records.ops if op.kind == "op" and not op.graph)
    # per step: one AccumulateGrad detach per parameter (28: wte, wpe, ln_f weight+bias, and 12 per
    # layer x 2 layers: ln_1, c_attn, attn c_proj, ln_2, c_fc, mlp c_proj, each weight+bias; lm_head
    # is tied to wte); zero gradients of the 5 outputs the loss does not use (logits, and each layer's
    # key and value cache: 2 x 2); the loss's seed gradient
    assert eager == {"aten::detach": 3 * 28, "aten::zeros": 3 * 5, "aten::ones_like": 3 * 1}
    says = compiled_overhead.outside_graphs(warm, p, 3)
    assert says.startswith("1 graph breaks (1x Call to `torch._dynamo.graph_break()` at torch/optim/optimizer.py:")
    assert says.endswith("; eager ops per step: 34 (28 aten::detach, 5 aten::zeros, 1 aten::ones_like)")
