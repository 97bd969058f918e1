"""``transformer_train_step``: a whole training step of a small GPT, compiled as one function.

Why it is in the suite: compiling the training step rather than the model (forward, loss, backward,
gradient clipping and the AdamW update together) is how users get the optimizer's many small
per-parameter kernels fused too. It exercises AOTAutograd's backward, the compiled (foreach)
optimizer, and, with stock torch.compile, the graph breaks users meet in such a step (at
``optimizer.zero_grad``, ``loss.backward()`` and around ``optimizer.step``).

``fn(tokens [B, T], targets [B, T]) -> (loss, gradient norm before clipping)``. The optimizer lives
in the built instance, so each instance's first call starts from the same weights.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from workloads.base import DynamicDim, Instance, Workload
from workloads.registry import register
from workloads.suite._common import input_generator, pick, randint, tolerances, variant_value
from workloads.suite.layers import PreNormBlock


@dataclass(frozen=True)
class _Cfg:
    vocab: int
    dim: int
    layers: int
    heads: int
    max_positions: int
    batch: int
    seq: tuple[int, int]  # variant 0 (timed), variant 1


_SIZES = {
    "tiny": _Cfg(vocab=128, dim=32, layers=2, heads=2, max_positions=64, batch=2, seq=(16, 24)),
    # GPT-2 small (12 x 768, 12 heads, vocab 50257), batch 8 x 512 tokens.
    "full": _Cfg(vocab=50_257, dim=768, layers=12, heads=12, max_positions=1024, batch=8, seq=(512, 384)),
}


class GPT(nn.Module):
    """GPT-2-style causal LM: token + learned positions, pre-LN causal blocks, tied LM head."""

    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.tokens = nn.Embedding(cfg.vocab, cfg.dim)
        self.positions = nn.Embedding(cfg.max_positions, cfg.dim)
        self.blocks = nn.ModuleList(PreNormBlock(cfg.dim, cfg.heads, causal=True) for _ in range(cfg.layers))
        self.ln = nn.LayerNorm(cfg.dim)
        nn.init.normal_(self.tokens.weight, std=0.02)
        nn.init.normal_(self.positions.weight, std=0.02)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        x = self.tokens(tokens) + self.positions.weight[:t]
        for block in self.blocks:
            x = block(x)
        return self.ln(x) @ self.tokens.weight.t()  # tied output embedding


@register
class TransformerTrainStep(Workload):
    name = "transformer_train_step"
    category = "whole-train-step"
    phase = "train"
    description = (
        "A whole training step of a GPT-2-style causal LM inside the compiled function: forward, "
        "cross-entropy, backward, gradient clipping (max norm 1) and an AdamW update. Returns the "
        "loss and the gradient norm. Tiny: 2 layers, hidden 32, 2 x 16 tokens. Full: GPT-2 small "
        "(12 x 768, vocab 50257), batch 8 x 512 tokens. Dynamic: the sequence length."
    )
    dynamic_dims = (DynamicDim("tokens", 1, "sequence"), DynamicDim("targets", 1, "sequence"))
    dtypes = ("float32", "bfloat16", "amp")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        torch.manual_seed(seed)
        with torch.device(device):
            model = GPT(cfg).to(device=device, dtype=dtype).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, foreach=False)

        def train_step(tokens: torch.Tensor, targets: torch.Tensor):
            optimizer.zero_grad(set_to_none=True)
            logits = model(tokens)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(0, 1))
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            return loss.detach(), grad_norm.detach()

        def make_inputs(variant: int):
            seq = variant_value(cfg.seq, variant, "sequence length")
            gen = input_generator(device, seed, variant)
            stream = randint(cfg.vocab, (cfg.batch, seq + 1), gen, device)
            return stream[:, :-1].contiguous(), stream[:, 1:].contiguous()

        rtol, atol = tolerances(dtype, fp32=2e-3, bf16=5e-2)
        return Instance(
            fn=train_step,
            make_inputs=make_inputs,
            input_names=("tokens", "targets"),
            rtol=rtol,
            atol=atol,
            modules=(model,),
            implementation="workloads.suite.train_step.GPT",
        )
