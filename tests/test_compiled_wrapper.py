"""Reading Inductor's generated wrapper and node metadata (capture/inductor.py), on real text."""

import os

import torch

from pyprof_live.capture import inductor

# Excerpt of a real wrapper module (torch 2.13, provenance tracking level 1), kernel bodies cut.
WRAPPER = """# AOT ID: ['0_forward']
from ctypes import c_void_p, c_long, c_int
cpp_fused_native_layer_norm_0 = async_compile.cpp_pybinding(['float*', 'const float*', 'const float*', 'float*'], r'''
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       const float* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr0)
{
}
''')


cpp_fused_gelu_1 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
extern "C"  void  kernel(const float* in_ptr0,
                       float* out_ptr0)
{
}
''')


async_compile.wait(globals())
del async_compile

class Runner:
    def call(self, args):
        primals_1, primals_2 = args
        args.clear()
        buf1 = empty_strided_cpu((32, 1), (1, 32), torch.float32)
        # [Provenance debug handles] cpp_fused_native_layer_norm_0:1
        cpp_fused_native_layer_norm_0(buf1, primals_1, primals_2, buf4)
        # [Provenance debug handles] extern_kernels.addmm:2
        extern_kernels.addmm(primals_5, buf4, reinterpret_tensor(primals_4, (64, 256), (1, 64), 0), alpha=1, beta=1, out=buf5)
        # [Provenance debug handles] cpp_fused_gelu_1:3
        cpp_fused_gelu_1(buf5, buf6)
        # Topologically Sorted Source Nodes: [y], Original ATen: [aten._scaled_dot_product_flash_attention_for_cpu]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:4
        buf9 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(buf6, buf6, buf6, 0.0, True)
        # [Provenance debug handles] cpp_fused_gelu_1:5
        cpp_fused_gelu_1(buf13, buf14)
        return (buf14, )
"""


def test_each_call_site_is_found_with_its_handle_on_its_own_line():
    lines = WRAPPER.splitlines()
    sites = list(inductor.call_lines(WRAPPER))
    assert [(kernel, handle) for _, kernel, handle in sites] == [
        ("cpp_fused_native_layer_norm_0", 1),
        ("extern_kernels.addmm", 2),
        ("cpp_fused_gelu_1", 3),
        ("torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default", 4),
        ("cpp_fused_gelu_1", 5),  # the same kernel, a second call site
    ]
    for line, kernel, _ in sites:
        assert f"{kernel}(" in lines[line - 1]


def test_kernels_and_the_role_of_each_pointer_argument():
    assert inductor.kernel_names(WRAPPER) == ["cpp_fused_native_layer_norm_0", "cpp_fused_gelu_1"]
    roles = inductor._cpp_roles(WRAPPER)
    assert roles["cpp_fused_native_layer_norm_0"] == ("both", "read", "read", "write")
    assert roles["cpp_fused_gelu_1"] == ("read", "write")
    assert inductor.pointer_role("xnumel") == ""


def test_ops_left_to_aten_are_named_as_the_op_hook_records_them():
    op = "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default"
    assert inductor.fallback_op(op) == ("aten::_scaled_dot_product_flash_attention_for_cpu", "default")
    assert inductor.fallback_op("extern_kernels.addmm") is None


def test_module_sources_split_into_root_and_path():
    assert inductor.split_source("L['self'].blocks.0.act") == ("L['self']", ("blocks", "0", "act"))
    assert inductor.split_source("L['self']._modules['blocks']._modules['0']") == ("L['self']", ("blocks", "0"))
    assert inductor.split_source("L['model']._orig_mod.layers[3]") == ("L['model']", ("layers", "3"))
    assert inductor.split_source("") == ("", ())
    assert inductor.common_module(["GPT.blocks.0.ln", "GPT.blocks.1.ln"]) == "GPT.blocks"
    assert inductor.common_module(["", "A.b"]) == "A.b" and inductor.common_module([]) == ""


def test_the_common_module_is_a_whole_path_shared_by_all_whatever_their_order():
    # A string prefix is not a path: "GPT.block" and "GPT.blocks.0" share "GPT" only.
    assert inductor.common_module(["GPT.blocks.0", "GPT.block"]) == "GPT"
    # In order, "GPT.blocks.1.fc" < "GPT.blocks.10" < "GPT.blocks.2": the first and last share "GPT.blocks",
    # and so do all; the middle one alone does not decide it.
    assert inductor.common_module(["GPT.blocks.2", "GPT.blocks.1.fc", "GPT.blocks.10"]) == "GPT.blocks"
    # One path (twice): all of it; a path inside another: the outer one.
    assert inductor.common_module(["GPT.ln", "GPT.ln"]) == "GPT.ln"
    assert inductor.common_module(["GPT.blocks.0.fc1", "GPT.blocks", "GPT.blocks.0"]) == "GPT.blocks"
    assert inductor.common_module(["A.x", "B.x"]) == ""


def test_user_frames_of_a_node_stack_trace_innermost_first():
    torch_module = os.path.join(os.path.dirname(torch.__file__), "nn", "modules", "module.py")
    trace = (
        '  File "/home/u/train.py", line 52, in step\n    loss = model(x)\n'
        f'  File "{torch_module}", line 1778, in _wrapped_call_impl\n'
        '  File "/home/u/model.py", line 12, in forward\n    return x + self.fc2(x)\n'
    )
    assert inductor.user_frames(trace, 2) == ("model.py:12", "train.py:52")
    assert inductor.user_frames(trace, 1) == ("model.py:12",)
    assert inductor.most_common([("a:1",), ("b:2",), ("b:2",), ()]) == ("b:2",)
