"""Seven real models no one here wrote, each as one training step (forward, backward, AdamW).

Hugging Face GPT-2, BERT, T5 and Llama are built from configs (small but real sizes, random
weights: nothing is downloaded); resnet18 and mobilenet_v3_small are torchvision's architectures
(``tests/torchvision_models.py`` says why they are not imported from torchvision); the LSTM
language model is ``nn.Embedding`` + ``nn.LSTM`` + ``nn.Linear``. Shared by
``benchmarks/real_models.py`` and the end-to-end tests, so both run the same steps.
"""

from __future__ import annotations

import importlib.util

import torch
import torch.nn.functional as F
from torch import nn

from .torchvision_models import mobilenet_v3_small, resnet18

HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
#: Why the Hugging Face models cannot be built, for skip messages ("" when they can).
TRANSFORMERS_MISSING = "" if HAS_TRANSFORMERS else "transformers is not installed (pip install -e '.[models]')"

VOCAB = 1000
BATCH, SEQ = 2, 64
IMAGE = (2, 3, 32, 32)


class Step:
    """A model, its optimizer and its batch; ``step()`` runs one training step and returns the loss."""

    def __init__(self, name: str, model: nn.Module, loss_fn, *args, **kwargs):
        self.name = name
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.loss_fn = loss_fn
        self.args = args
        self.kwargs = kwargs

    def __call__(self):
        loss = self.loss_fn(self.model(*self.args, **self.kwargs))
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss

    def state(self) -> list:
        """Every parameter, buffer and optimizer state tensor (to compare runs bit for bit)."""
        tensors = list(self.model.state_dict().values())
        for state in self.optimizer.state.values():
            tensors.extend(v for v in state.values() if isinstance(v, torch.Tensor))
        return tensors


def _tokens(*shape) -> torch.Tensor:
    return torch.randint(0, VOCAB, shape)


def _hf_loss(output):
    return output.loss


def gpt2() -> Step:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=VOCAB, n_positions=SEQ, n_embd=128, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0
    )
    ids = _tokens(BATCH, SEQ)
    return Step("gpt2", GPT2LMHeadModel(config), _hf_loss, input_ids=ids, labels=ids)


def bert() -> Step:
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=VOCAB, hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=512
    )
    ids, labels = _tokens(BATCH, SEQ), torch.tensor([0, 1])
    model = BertForSequenceClassification(config)
    return Step("bert", model, _hf_loss, input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels)


def t5() -> Step:
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(
        vocab_size=VOCAB,
        d_model=128,
        d_kv=32,
        d_ff=512,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    ids, labels = _tokens(BATCH, SEQ), _tokens(BATCH, SEQ // 2)
    model = T5ForConditionalGeneration(config)
    return Step("t5", model, _hf_loss, input_ids=ids, labels=labels)


def llama() -> Step:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=128,
        intermediate_size=344,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=SEQ,
    )
    ids = _tokens(BATCH, SEQ)
    return Step("llama", LlamaForCausalLM(config), _hf_loss, input_ids=ids, labels=ids)


def _classify(labels):
    return lambda logits: F.cross_entropy(logits, labels)


def resnet() -> Step:
    return Step("resnet18", resnet18(num_classes=10), _classify(torch.tensor([3, 7])), torch.randn(IMAGE))


def mobilenet() -> Step:
    labels = torch.tensor([3, 7])
    return Step("mobilenet_v3_small", mobilenet_v3_small(num_classes=10), _classify(labels), torch.randn(IMAGE))


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab: int = VOCAB, dim: int = 128, hidden: int = 256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids):
        out, _ = self.lstm(self.embed(ids))
        return self.head(out)


def lstm() -> Step:
    ids = _tokens(BATCH, SEQ // 2 + 1)
    inputs, targets = ids[:, :-1], ids[:, 1:]
    return Step(
        "lstm_lm",
        LSTMLanguageModel(),
        lambda logits: F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1)),
        inputs,
    )


#: name -> builder, in the order the benchmark prints them; the first four need transformers.
BUILDERS = {
    "gpt2": gpt2,
    "bert": bert,
    "t5": t5,
    "llama": llama,
    "resnet18": resnet,
    "mobilenet_v3_small": mobilenet,
    "lstm_lm": lstm,
}
NEEDS_TRANSFORMERS = ("gpt2", "bert", "t5", "llama")


def build(name: str, seed: int = 0) -> Step:
    """The step ``name``, with weights and batch drawn from ``seed`` (same seed, same numbers)."""
    torch.manual_seed(seed)
    return BUILDERS[name]()
