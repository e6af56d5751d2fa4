"""Published models compiled, forward and backward under profile(): every Inductor kernel call is a row with the
ops it fused, their flops, module paths and a user line. Each model here once had kernels that lacked one of those
(GPT-2's dropout kernels had no flops, every Llama kernel no module path, ResNet-18's input copy no fused op)."""

import warnings

import pytest
import torch

import pyprof_live
from pyprof_live.analysis.compiled import OpCosts
from pyprof_live.records import COMPILED
from tests import real_models
from tests.compiled_models import needs_compiled_runs

pytestmark = [pytest.mark.e2e, needs_compiled_runs]


def _kernel_calls(name: str) -> list:
    """(kernel, dir, flops, fused ops as (name, origin, module, call site)) of each kernel call of two compiled steps."""
    if name in real_models.NEEDS_TRANSFORMERS and real_models.TRANSFORMERS_MISSING:
        pytest.skip(real_models.TRANSFORMERS_MISSING)
    torch._dynamo.reset()
    step = real_models.build(name)
    if name == "gpt2":
        step.model.loss_type = "ForCausalLM"  # the loss it picks anyway, without a graph break (compiled_overhead.py)
    compiled = torch.compile(step.model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notes while compiling
        with pyprof_live.profile() as p:
            for _ in range(2):
                step.loss_fn(compiled(*step.args, **step.kwargs)).backward()
                p.step()
    ops = p.records.ops
    p.correlation  # ties each fused op to its kernel call
    costs = OpCosts(ops)
    return [
        (
            op.name,
            op.dir,
            costs(i).flops,
            [(ops[j].name, ops[j].origin, ops[j].module, ops[j].callsite) for j in costs.fused[i]],
        )
        for i, op in enumerate(ops)
        if op.kind == COMPILED
    ]


@pytest.mark.parametrize(
    ("name", "root"), [("gpt2", "GPT2LMHeadModel"), ("llama", "LlamaForCausalLM"), ("resnet18", "ResNet")]
)
def test_every_kernel_call_has_fused_ops_flops_modules_and_lines(name, root):
    calls = _kernel_calls(name)
    assert {direction for _, direction, _, _ in calls} == {"fwd", "bwd"}
    for kernel, _, flops, fused in calls:
        assert fused, kernel
        assert flops is not None, (kernel, fused)
        assert all(module == root or module.startswith(root + ".") for _, _, module, _ in fused), (kernel, fused)
        assert any(callsite for _, _, _, callsite in fused), kernel
    modules = {module for _, _, _, fused in calls for _, _, module, _ in fused}
    deepest = {
        "gpt2": "GPT2LMHeadModel.transformer.h.1.mlp.c_fc",
        "llama": "LlamaForCausalLM.model.layers.1.mlp.act_fn",
        "resnet18": "ResNet.layer4.1.bn2",
    }
    assert deepest[name] in modules
    if name == "gpt2":  # dropout 0.1 in training: Inductor's random-number prims, with flops
        assert any(origin == "aten::native_dropout" for _, _, _, fused in calls for _, origin, _, _ in fused)
    if name == "resnet18":  # the convolutions' graph inputs (the image, the weights) copied into channels-last
        copies = [fused for _, _, _, fused in calls if {n for n, _, _, _ in fused} == {"aten::copy"}]
        at = {module for fused in copies for _, _, module, _ in fused}
        assert "ResNet.conv1" in at and all(module.endswith(("conv1", "conv2", "downsample.0")) for module in at), at


def test_frozen_inference_counts_every_kernel_and_every_onednn_and_mkl_call():
    """torch._inductor.config.freezing, PyTorch's advice for CPU inference: ResNet-18's convolutions run as oneDNN
    calls with the batch norm folded in and the relu (and residual add) fused, its linear as MKL's, and kernels put
    the inputs in channels-last for them. The calls had no formula (no flops for any convolution) and the first
    copy kernel no fused op."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = real_models.build("resnet18").model.eval()
    compiled = torch.compile(model)
    image = torch.randn(real_models.IMAGE)
    with warnings.catch_warnings(), torch._inductor.config.patch(freezing=True), torch.no_grad():
        warnings.simplefilter("ignore")
        with pyprof_live.profile() as p:
            for _ in range(2):
                compiled(image)
                p.step()
    ops = p.records.ops
    p.correlation
    costs = OpCosts(ops)
    externs = {op.name for op in ops if op.kind == "op" and op.graph}
    assert externs == {"mkldnn::_convolution_pointwise", "mkldnn::_convolution_pointwise_", "mkl::_mkl_linear"}
    assert all(costs(i).flops for i, op in enumerate(ops) if op.kind == "op" and op.graph)
    calls = [i for i, op in enumerate(ops) if op.kind == COMPILED]
    assert calls
    for i in calls:
        fused = [ops[j] for j in costs.fused[i]]
        assert fused and costs(i).flops is not None, (ops[i].name, fused)
        assert all(f.module == "ResNet" or f.module.startswith("ResNet.") for f in fused), ops[i].name
    # the image copied into channels-last for the first convolution, at the module Inductor's fused node keeps (the
    # relu's: a pattern's replacement takes the meta of the last node it matched)
    first = [ops[j] for j in costs.fused[calls[0]]]
    assert [(f.name, f.module, f.inputs[0].shape) for f in first] == [("aten::copy", "ResNet.relu", (2, 3, 32, 32))]


def test_frozen_bfloat16_inference_of_bert_counts_every_kernel_and_onednn_linear():
    """Frozen under bfloat16 autocast, BERT's linears run as oneDNN's, and a kernel writes out its classifier's
    frozen bias in bfloat16 from that constant alone: it had no fused op and no flops."""
    if real_models.TRANSFORMERS_MISSING:
        pytest.skip(real_models.TRANSFORMERS_MISSING)
    torch._dynamo.reset()
    step = real_models.build("bert")
    compiled = torch.compile(step.model.eval())
    inputs = {key: value for key, value in step.kwargs.items() if key != "labels"}
    with warnings.catch_warnings(), torch._inductor.config.patch(freezing=True), torch.no_grad():
        warnings.simplefilter("ignore")
        with torch.autocast("cpu", dtype=torch.bfloat16), pyprof_live.profile() as p:
            compiled(**inputs)
    ops = p.records.ops
    p.correlation
    costs = OpCosts(ops)
    assert "mkldnn::_linear_pointwise" in {op.name for op in ops if op.kind == "op" and op.graph}
    assert all(costs(i).flops for i, op in enumerate(ops) if op.kind == "op" and op.graph)
    for i in [i for i, op in enumerate(ops) if op.kind == COMPILED]:
        fused = [ops[j] for j in costs.fused[i]]
        assert fused and costs(i).flops is not None, (ops[i].name, fused)
        assert all(f.module.startswith("BertForSequenceClassification") for f in fused), ops[i].name
