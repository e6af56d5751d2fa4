"""torch.compile'd code on a CUDA GPU: each Triton launch is a kernel-call record, and CUPTI's kernel
record of that launch links to it through the external correlation id pushed around the launch.

Skipped without CUDA (written to run where a GPU is).
"""

import pytest
import torch

import pyprof_live
from pyprof_live.analysis.kernel_names import short_name
from pyprof_live.records import COMPILED, FUSED, NO_LINK
from tests.compiled_models import MLPBlock

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.e2e,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


@pytest.fixture(scope="module")
def compiled_mlp():
    """An MLP block compiled and run (forward + backward) under profile(gpu="cupti"), 3 steps."""
    torch.manual_seed(0)
    block = MLPBlock(256).cuda()
    compiled = torch.compile(block)
    x = torch.randn(512, 256, device="cuda")
    with pyprof_live.profile(gpu="cupti") as p:
        for _ in range(3):
            compiled(x).sum().backward()
            torch.cuda.synchronize()
            p.step()
    return p


def test_every_triton_kernel_links_to_its_kernel_call_record(compiled_mlp):
    p = compiled_mlp
    p.correlation
    ops = p.records.ops
    triton = [k for k in p.records.kernels if short_name(k.name).startswith("triton_")]
    assert triton
    steady = [k for k in triton if k.op != NO_LINK]
    # Only a kernel's first call may autotune, leaving its benchmark launches unattributed: step 0.
    first_step = next(r for r in p.records.ranges if r.kind == "step")
    assert steady and all(k.start < first_step.end for k in triton if k.op == NO_LINK)
    for k in steady:
        call = ops[k.op]
        assert call.kind == COMPILED and short_name(k.name).startswith(call.name), (k.name, call.name)
        assert any(f.kind == FUSED and f.parent == k.op for f in ops)


def test_triton_rows_have_device_time_roofline_and_tc(compiled_mlp):
    p = compiled_mlp
    p.set_peak("H100 SXM")
    rows = [r for r in p.kernel_view(columns="op,kernel,fused,sil,tc,ideal,sol%").rows if r["fused"]]
    assert rows and all(r["sil"] and r["sil"] > 0 for r in rows)
    assert all(r["ideal"] is not None and r["sol%"] is not None for r in rows if r["kernel"].startswith("triton_"))
    assert all("tc" in r for r in rows)
    modules = {r["module"] for r in p.modules().rows}
    assert {"MLPBlock.ln", "MLPBlock.act"} <= modules or any(m.startswith("MLPBlock") for m in modules)


def test_extern_gemms_stay_op_rows_with_their_module(compiled_mlp):
    ops = compiled_mlp.records.ops
    gemms = [op for op in ops if op.kind == "op" and op.name in ("aten::mm", "aten::addmm") and op.graph]
    assert gemms and all(op.module.startswith("MLPBlock.fc") for op in gemms)
