"""Makes, for real, a Kineto trace of a torch.compile'd training step on CPU with the TORCH_TRACE log of
the same run beside it: ``python -m tests.compiled_recording OUT_DIR [STEPS] [backward-with-forward]``.

Inductor's C++ backend with ``cpp.enable_kernel_profile`` (each C++ kernel call is a ``graph_0_cpp_fused_*``
range in torch.profiler's trace) and provenance tracking on (the log holds each kernel's post-grad nodes
and stacks); caches off, so the graphs are compiled in this run and their provenance written. Run in its
own process: TORCH_TRACE is read when torch is imported. Written at test time, never committed.

``backward-with-forward``: AOTAutograd lowers the backward graph while compiling the forward
(``torch._functorch.config.force_non_lazy_backward_lowering``, in torch 2.13 and 2.15) instead of at the
first backward call: the backward's kernel -> node map is then logged too (lazily, 2.13 logs it empty).
"""

import os
import sys


def main(out: str, steps: int, backward_with_forward: bool = False) -> None:
    os.environ["TORCH_TRACE"] = os.path.join(out, "torch_trace")
    import torch
    import torch._inductor.config as inductor_config
    from torch.profiler import ProfilerActivity, profile

    inductor_config.cpp.enable_kernel_profile = True
    inductor_config.trace.provenance_tracking_level = 1
    inductor_config.force_disable_caches = True
    if backward_with_forward:
        import torch._functorch.config as functorch_config

        functorch_config.force_non_lazy_backward_lowering = True
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = torch.nn.LayerNorm(64)
            self.fc1 = torch.nn.Linear(64, 256)
            self.act = torch.nn.GELU()
            self.fc2 = torch.nn.Linear(256, 64)

        def forward(self, x):
            return x + self.fc2(self.act(self.fc1(self.ln(x))))

    model = torch.compile(torch.nn.Sequential(Block(), Block()))
    x = torch.randn(32, 64, requires_grad=True)
    for _ in range(2):  # compile forward, then backward; warm up
        model(x).sum().backward()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True) as prof:
        for _ in range(steps):
            model(x).sum().backward()
    prof.export_chrome_trace(os.path.join(out, "trace.json"))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2, "backward-with-forward" in sys.argv[3:])
