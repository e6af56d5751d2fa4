"""A CNN and a GPT-style training step under profile(), through every output: the table, the views, saved and
reloaded, the Chrome trace and the HTML report.

CI runs it on the oldest supported torch, on 2.13.0+cpu and on the newest release (.ci/run): the figures
below are the same on each (they are computed by hand from the models' shapes).
"""

import gzip
import json

import pytest

import pyprof_live
from pyprof_live.formulas import evaluate
from pyprof_live.profile import VIEW_NAMES
from tests.formula_models import cnn_step, gpt_step

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module", params=["cnn", "gpt"])
def profiled(request):
    """(model name, profile of its second training step: the first one made the lazy state)."""
    step = {"cnn": cnn_step, "gpt": gpt_step}[request.param]()
    step()
    with pyprof_live.profile() as p:
        step()
    return request.param, p


def _flops(p, name, direction):
    ops = [op for op in p.records.ops if op.name == name and op.dir == direction]
    return len(ops), sum(evaluate(op).flops for op in ops)


def test_the_ops_and_their_flops(profiled):
    model, p = profiled
    if model == "cnn":
        # ResNetish on 2x3x16x16, flops = 2 * output elements * (in channels * kernel area):
        # stem 3->8 3x3 on 16x16: 2 * 4096 * 27 = 221,184; block 1 (8->8 on 8x8): 2 * (2 * 1024 * 72) = 294,912;
        # block 2 (8->16, stride 2, 4x4): conv1 2 * 512 * 72 = 73,728, conv2 2 * 512 * 144 = 147,456, 1x1 shortcut
        # 2 * 512 * 8 = 8,192: six convolutions, 745,472 flops. Head: 2 * 2 * 16 * 10 = 640.
        assert _flops(p, "aten::convolution", "fwd") == (6, 745_472)
        assert _flops(p, "aten::addmm", "fwd") == (1, 640)
        assert _flops(p, "aten::convolution_backward", "bwd")[0] == 6
        assert [op.dir for op in p.records.ops if op.name == "aten::_fused_adamw_"] == ["opt"]
    else:
        # GPTBlock on 2x16 tokens (32 rows), dim 32: qkv 2*32*32*96 = 196,608, proj 65,536, fc and fc_out 262,144
        # each: four addmm, 786,432; the bias-free LM head is one mm, 2*32*32*50 = 102,400. Causal SDPA, 4 heads of
        # 8 on 16 tokens: each batched matmul 2 * (2*4) * 16 * 8 * 16 = 32,768; 2 forward, 5 backward.
        assert _flops(p, "aten::addmm", "fwd") == (4, 786_432)
        assert _flops(p, "aten::mm", "fwd") == (1, 102_400)
        assert _flops(p, "aten::_scaled_dot_product_flash_attention_for_cpu", "fwd") == (1, 65_536)
        assert _flops(p, "aten::_scaled_dot_product_flash_attention_for_cpu_backward", "bwd") == (1, 163_840)
        assert {op.dir for op in p.records.ops if op.name.startswith("aten::_foreach_")} == {"opt"}
    p.correlation  # links backward ops to their forward op
    tied = {p.records.ops[op.fwd].name for op in p.records.ops if op.node == "AddmmBackward0" and op.fwd >= 0}
    assert tied == {"aten::addmm"}


def test_table_and_every_view(profiled):
    model, p = profiled
    head = "ResNetish.head" if model == "cnn" else "GPTBlock.lm_head"
    table = p.table(columns="idx,dir,module,op,flops", width=200).splitlines()
    assert table[0].split() == ["Idx", "Direction", "ModulePath", "Op", "FLOPs"]
    op = "aten::addmm" if model == "cnn" else "aten::mm"
    # The head's flops (640 and 102,400, see test_the_ops_and_their_flops) in the table's units, 3 significant digits.
    flops = ["640", "FLOP"] if model == "cnn" else ["102", "kFLOP"]
    assert any(line.split()[1:] == ["fwd", head, op, *flops] for line in table[1:])
    for name in VIEW_NAMES:
        assert str(p.view(name)).strip(), name
    modules = {row["module"] for row in p.modules().rows}
    assert head in modules


def test_saved_and_reloaded_it_reports_the_same(profiled, tmp_path):
    _, p = profiled
    path = tmp_path / "step.pplive"
    p.save(path)
    again = pyprof_live.load(path)
    for name in VIEW_NAMES:
        assert str(again.view(name)) == str(p.view(name)), name


def test_chrome_trace_and_html_report(profiled, tmp_path):
    model, p = profiled
    trace = tmp_path / "step.json.gz"
    written = p.export_chrome_trace(trace)
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    assert written == len(events)
    op_events = [e for e in events if e.get("ph") == "X" and e.get("name") == "aten::convolution"]
    assert len(op_events) == (6 if model == "cnn" else 0)
    html = tmp_path / "step.html"
    p.save_html(html)
    text = html.read_text()
    assert text.startswith("<!DOCTYPE html>") and ("ResNetish" if model == "cnn" else "GPTBlock") in text
