"""Small models for the torch.compile tests: an MLP block, a causal attention block, a GPT-style model.

Sizes are chosen so that the kernels, not Python, take most of a step on a CPU (the acceptance
asks for >= 95% of a compiled step's host time in rows), and small enough to compile quickly.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from pyprof_live import torch_compat

#: Tests of compiled code running compiled under profile(): torch 2.6-2.9 run it eagerly there.
needs_compiled_runs = pytest.mark.skipif(
    not torch_compat.compiled_code_runs_compiled_under_the_op_hook(),
    reason=f"torch {torch.__version__} runs torch.compile'd code eagerly under profile() (its Dynamo's tensor guards "
    "see the op hook's dispatch keys: torch_compat.compiled_code_runs_compiled_under_the_op_hook)",
)


class MLPBlock(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


class AttentionBlock(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        batch, length, d = x.shape
        q, k, v = self.qkv(self.ln(x)).split(d, dim=2)
        q, k, v = (t.view(batch, length, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(y.transpose(1, 2).reshape(batch, length, d))


class GPT(nn.Module):
    def __init__(self, vocab: int, d: int, heads: int, layers: int, length: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(length, d)
        self.blocks = nn.Sequential(*[nn.Sequential(AttentionBlock(d, heads), MLPBlock(d)) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx, targets):
        positions = torch.arange(idx.shape[1], device=idx.device)
        x = self.blocks(self.tokens(idx) + self.positions(positions))
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


#: The GPT-style model of the compiled tests and of benchmarks/compiled_overhead.py.
GPT_CONFIG = {"vocab": 1024, "d": 256, "heads": 4, "layers": 2, "length": 128}


def gpt_batch(batch: int = 8) -> tuple:
    """Token ids and next-token targets for GPT_CONFIG."""
    shape = (batch, GPT_CONFIG["length"])
    return torch.randint(0, GPT_CONFIG["vocab"], shape), torch.randint(0, GPT_CONFIG["vocab"], shape)
