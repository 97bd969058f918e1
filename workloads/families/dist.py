"""``dist:<model>``: small models built in code for distributed training steps (docs/distributed.md).

``dist:gpt@train+ddp`` runs the core suite's GPT (``transformer_train_step``'s model: tiny 2 x 32,
full GPT-2 small) as a training step under DDP; ``dist:mlp@train+fsdp+compile_first`` a residual
MLP under FSDP, compiled then wrapped. Without ``ddp`` / ``fsdp`` the same models run in one
process (``dist:gpt@train``: the single-process step the distributed ones are read beside). Every
family's model takes the same options (``hf:BertForMaskedLM@train+fsdp``); this family's models are
the ones small enough for CI on the CPU.

Each model keeps its layers in ``blocks`` (an ``nn.ModuleList``): the units FSDP shards and
activation checkpointing wraps.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from workloads.base import DynamicDim
from workloads.families._api import Family, FamilyModel, FamilyWorkload
from workloads.families._steps import instance, second_size, seeded_model
from workloads.registry import register_family
from workloads.suite._common import input_generator, randint, randn
from workloads.suite.train_step import _SIZES as GPT_SIZES, GPT


@dataclass(frozen=True)
class _Mlp:
    width: int
    blocks: int
    batch: int


_MLP_SIZES = {"tiny": _Mlp(width=32, blocks=2, batch=8), "full": _Mlp(width=4096, blocks=8, batch=256)}


class ResidualMLP(nn.Module):
    def __init__(self, cfg: _Mlp):
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(cfg.width), nn.Linear(cfg.width, 4 * cfg.width), nn.GELU(), nn.Linear(4 * cfg.width, cfg.width))
            for _ in range(cfg.blocks))
        self.head = nn.Linear(cfg.width, cfg.width)

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


class GPTLM(GPT):
    """The core GPT, called with its targets too (``model(**inputs)``); the loss reads them."""

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        return super().forward(tokens)


class DistWorkload(FamilyWorkload):
    def __init__(self, *, name: str, train: bool, axes: tuple[str, ...], model: str, step: str = ""):
        if step:
            raise ValueError(f"{step}: dist's models take train (their step under DDP or FSDP), not {step}")
        self.model_name = model
        dims = {DynamicDim(n, 0): "batch" for n in ("x", "y")} if model == "mlp" else {DynamicDim(n, 1): "sequence" for n in ("tokens", "targets")}
        super().__init__(name=name, train=train, axes=axes, dims=dims)
        self.dtypes = ("float32", "bfloat16")
        self.description = (f"{model} built in code for distributed training steps ({'training step' if train else 'inference'}); "
                            + ("tiny: 2 blocks of width 32, batch 8; full: 8 blocks of width 4096, batch 256."
                               if model == "mlp" else "tiny: 2 layers, hidden 32, 2 x 16 tokens; full: GPT-2 small, 8 x 512 tokens."))

    def build(self, *, size, device, dtype, seed=0):
        if self.model_name == "mlp":
            return self._mlp(size, device, dtype, seed)
        return self._gpt(size, device, dtype, seed)

    def _mlp(self, size, device, dtype, seed):
        cfg = _MLP_SIZES[size]
        model = seeded_model(lambda: ResidualMLP(cfg), device=device, dtype=dtype, seed=seed, train=self.train)

        def make_inputs(variant: int):
            batch = second_size(cfg.batch) if variant == 1 and self.varies("batch") else cfg.batch
            gen = input_generator(device, seed, variant)
            return randn((batch, cfg.width), gen, device, dtype), randn((batch, cfg.width), gen, device, dtype)

        def loss(output, kwargs):
            return F.mse_loss(output.float(), kwargs["y"].float())

        return instance(model, make_inputs, ("x", "y"), loss=loss if self.train else None,
                        implementation="workloads.families.dist.ResidualMLP")

    def _gpt(self, size, device, dtype, seed):
        cfg = GPT_SIZES[size]
        model = seeded_model(lambda: GPTLM(cfg), device=device, dtype=dtype, seed=seed, train=self.train)

        def make_inputs(variant: int):
            seq = second_size(cfg.seq[0]) if variant == 1 and self.varies("sequence") else cfg.seq[0]
            gen = input_generator(device, seed, variant)
            stream = randint(cfg.vocab, (cfg.batch, seq + 1), gen, device)
            return stream[:, :-1].contiguous(), stream[:, 1:].contiguous()

        def loss(output, kwargs):
            return F.cross_entropy(output.flatten(0, 1).float(), kwargs["targets"].flatten(0, 1))

        return instance(model, make_inputs, ("tokens", "targets"), loss=loss if self.train else None,
                        implementation="workloads.families.dist.GPTLM")


class DistFamily(Family):
    prefix = "dist"
    description = "small models built in code for distributed training steps (DDP, FSDP), docs/distributed.md"

    def models(self):
        return [FamilyModel(name, factory=DistWorkload, args={"model": name}) for name in ("gpt", "mlp")]

    def missing(self, model):
        return ""


register_family(DistFamily())
