"""Small CPU models whose training step exercises the op families the formula library must cover.

Shared by the formula tests (FlopCounterMode cross-check) and benchmarks/formula_coverage.py, so
both measure the same step. Each ``*_step`` runs forward, backward and one AdamW step.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    """ResNet basic block: conv-bn-relu-conv-bn plus a (strided 1x1 conv) shortcut."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNetish(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, 1, 1, bias=True), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2)
        )
        self.layers = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 16, 2))
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class GPTBlock(nn.Module):
    """Token + position embedding, one pre-norm transformer block with causal SDPA, LM head."""

    def __init__(self, vocab: int = 50, dim: int = 32, heads: int = 4, seq: int = 16):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.fc_out = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(t))
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(y.transpose(1, 2).reshape(b, t, -1)))
        x = x + self.drop(self.fc_out(F.gelu(self.fc(self.ln2(x)))))
        return self.lm_head(self.ln_f(x))


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(12, 16, num_layers=2, batch_first=True)
        self.out = nn.Linear(16, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.out(y)


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(100, 16, mode="mean")
        self.out = nn.Linear(16, 1)

    def forward(self, tokens, offsets):
        return self.out(self.bag(tokens, offsets)).squeeze(1)


def _train_step(model, optimizer, loss_fn, *inputs):
    loss = loss_fn(model(*inputs))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss


def cnn_step(optimizer: bool = True):
    """ResNet-style CNN: forward, backward and (with ``optimizer``) a fused AdamW step."""
    torch.manual_seed(0)
    model, x, y = ResNetish(), torch.randn(2, 3, 16, 16), torch.tensor([1, 7])
    if not optimizer:
        return lambda: F.cross_entropy(model(x), y).backward()
    opt = torch.optim.AdamW(model.parameters(), fused=True)
    return lambda: _train_step(model, opt, lambda out: F.cross_entropy(out, y), x)


def gpt_step(optimizer: bool = True):
    """GPT-style block with causal SDPA: forward, backward and (with ``optimizer``) a foreach AdamW step."""
    torch.manual_seed(0)
    model = GPTBlock()
    idx, targets = torch.randint(0, 50, (2, 16)), torch.randint(0, 50, (2, 16))

    def loss_fn(logits):
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    if not optimizer:
        return lambda: loss_fn(model(idx)).backward()
    opt = torch.optim.AdamW(model.parameters(), foreach=True)
    return lambda: _train_step(model, opt, loss_fn, idx)


def lstm_step():
    """2-layer LSTM tagger with MSE loss and a single-tensor (for-loop) AdamW step."""
    torch.manual_seed(0)
    model, x, y = LSTMTagger(), torch.randn(3, 7, 12), torch.randn(3, 7, 5)
    opt = torch.optim.AdamW(model.parameters(), foreach=False)
    return lambda: _train_step(model, opt, lambda out: F.mse_loss(out, y), x)


def embedding_bag_step():
    """EmbeddingBag(mean) classifier with BCE-with-logits and a foreach AdamW step."""
    torch.manual_seed(0)
    model = BagClassifier()
    tokens, offsets, labels = torch.randint(0, 100, (20,)), torch.tensor([0, 5, 12]), torch.tensor([1.0, 0.0, 1.0])
    opt = torch.optim.AdamW(model.parameters(), foreach=True)
    return lambda: _train_step(model, opt, lambda out: F.binary_cross_entropy_with_logits(out, labels), tokens, offsets)


#: name -> factory returning a zero-argument training step.
TRAINING_STEPS = {"resnet_cnn": cnn_step, "gpt_block": gpt_step, "lstm": lstm_step, "embedding_bag": embedding_bag_step}
