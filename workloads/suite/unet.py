"""``unet_diffusion``: a diffusion U-Net denoising step with data-dependent control flow.

Why it is in the suite: diffusion users report little or negative speedup when the model branches on
tensor values; each ``if tensor:`` is a graph break (and a device sync) in torch.compile. This U-Net
has the two branches such models typically have:

* timestep-dependent: self-attention in the middle block only runs at high noise levels
  (``if timesteps.max() >= attn_from_t``), a common sampling-speed trick;
* value-dependent: "dynamic thresholding" of the prediction (``if eps.abs().amax() > clip``).

For a given input the same branches are taken, so the graph-break count is deterministic (two per
call). ``fn(latents [B, C, H, W], timesteps [B] int64) -> predicted noise [B, C, H, W]``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from workloads.base import DynamicDim, Instance, Workload
from workloads.registry import register
from workloads.suite._common import freeze, input_generator, pick, randn, tolerances, variant_value
from workloads.suite.layers import timestep_embedding


@dataclass(frozen=True)
class _Cfg:
    channels: int  # latent channels
    base: int
    mults: tuple[int, ...]
    blocks_per_level: int
    groups: int
    heads: int
    image: int
    batch: tuple[int, int]  # variant 0 (timed), variant 1
    timestep: int  # the sampling step every batch element is at (above attn_from_t: attention runs)
    attn_from_t: int = 500
    clip: float = 4.0


_SIZES = {
    "tiny": _Cfg(channels=4, base=16, mults=(1, 2), blocks_per_level=1, groups=8, heads=2, image=16, batch=(2, 3), timestep=700),
    # Stable-Diffusion-like latents (4 x 64 x 64), 3 levels of 128/256/512 channels, batch 16.
    "full": _Cfg(channels=4, base=128, mults=(1, 2, 4), blocks_per_level=2, groups=32, heads=8, image=64, batch=(16, 12), timestep=700),
}


class ResBlock(nn.Module):
    """GroupNorm-SiLU-conv twice, with the timestep embedding added in between."""

    def __init__(self, in_ch: int, out_ch: int, emb_dim: int, groups: int):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_ch)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.emb = nn.Linear(emb_dim, out_ch)
        self.norm2 = nn.GroupNorm(groups, out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.skip = nn.Conv2d(in_ch, out_ch, 1) if in_ch != out_ch else nn.Identity()

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(F.silu(emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class AttnBlock(nn.Module):
    """Self-attention over the H*W positions of a feature map."""

    def __init__(self, ch: int, groups: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(groups, ch)
        self.qkv = nn.Conv2d(ch, 3 * ch, 1)
        self.proj = nn.Conv2d(ch, ch, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        qkv = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w)
        q, k, v = qkv.transpose(-1, -2).unbind(1)  # each [B, heads, HW, head_dim]
        y = F.scaled_dot_product_attention(q, k, v)
        return x + self.proj(y.transpose(-1, -2).reshape(b, c, h, w))


class UNet(nn.Module):
    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.cfg = cfg
        emb_dim = 4 * cfg.base
        self.time_mlp = nn.Sequential(nn.Linear(cfg.base, emb_dim), nn.SiLU(), nn.Linear(emb_dim, emb_dim))
        self.conv_in = nn.Conv2d(cfg.channels, cfg.base, 3, padding=1)
        widths = [cfg.base * m for m in cfg.mults]

        self.down = nn.ModuleList()
        self.downsample = nn.ModuleList()
        skip_chs, ch = [cfg.base], cfg.base
        for level, width in enumerate(widths):
            for _ in range(cfg.blocks_per_level):
                self.down.append(ResBlock(ch, width, emb_dim, cfg.groups))
                ch = width
                skip_chs.append(ch)
            if level < len(widths) - 1:
                self.downsample.append(nn.Conv2d(ch, ch, 3, stride=2, padding=1))
                skip_chs.append(ch)

        self.mid1 = ResBlock(ch, ch, emb_dim, cfg.groups)
        self.mid_attn = AttnBlock(ch, cfg.groups, cfg.heads)
        self.mid2 = ResBlock(ch, ch, emb_dim, cfg.groups)

        self.up = nn.ModuleList()
        self.upsample = nn.ModuleList()
        for level, width in reversed(list(enumerate(widths))):
            for _ in range(cfg.blocks_per_level + 1):
                self.up.append(ResBlock(ch + skip_chs.pop(), width, emb_dim, cfg.groups))
                ch = width
            if level > 0:
                self.upsample.append(nn.Conv2d(ch, ch, 3, padding=1))

        self.norm_out = nn.GroupNorm(cfg.groups, ch)
        self.conv_out = nn.Conv2d(ch, cfg.channels, 3, padding=1)

    def forward(self, latents: torch.Tensor, timesteps: torch.Tensor) -> torch.Tensor:
        cfg = self.cfg
        emb = self.time_mlp(timestep_embedding(timesteps, cfg.base).to(latents.dtype))

        h = self.conv_in(latents)
        skips = [h]
        down, downsample = iter(self.down), iter(self.downsample)
        for level in range(len(cfg.mults)):
            for _ in range(cfg.blocks_per_level):
                h = next(down)(h, emb)
                skips.append(h)
            if level < len(cfg.mults) - 1:
                h = next(downsample)(h)
                skips.append(h)

        h = self.mid1(h, emb)
        if timesteps.max() >= cfg.attn_from_t:  # data-dependent branch 1 (graph break)
            h = self.mid_attn(h)
        h = self.mid2(h, emb)

        up, upsample = iter(self.up), iter(self.upsample)
        for level in reversed(range(len(cfg.mults))):
            for _ in range(cfg.blocks_per_level + 1):
                h = next(up)(torch.cat((h, skips.pop()), dim=1), emb)
            if level > 0:
                h = next(upsample)(F.interpolate(h, scale_factor=2.0, mode="nearest"))

        eps = self.conv_out(F.silu(self.norm_out(h)))
        if eps.abs().amax() > cfg.clip:  # data-dependent branch 2 (graph break): dynamic thresholding
            eps = eps * (cfg.clip / eps.abs().amax())
        return eps


@register
class UNetDiffusion(Workload):
    name = "unet_diffusion"
    category = "diffusion-control-flow"
    phase = "infer"
    description = (
        "Denoising step of a diffusion U-Net (ResBlocks with timestep embedding, GroupNorm, a "
        "self-attention middle block) with two data-dependent branches: attention only at high "
        "noise levels (timesteps.max() >= 500) and dynamic thresholding of the prediction "
        "(eps.abs().amax() > 4). Each is a graph break. Tiny: base 16, 2 levels, 2 x 4 x 16 x 16. "
        "Full: base 128, 3 levels (128/256/512), batch 16 x 4 x 64 x 64. Dynamic: the batch."
    )
    dynamic_dims = (DynamicDim("latents", 0, "batch"), DynamicDim("timesteps", 0, "batch"))
    dtypes = ("float32", "bfloat16", "float16")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        torch.manual_seed(seed)
        with torch.device(device):
            model = freeze(UNet(cfg).to(device=device, dtype=dtype))

        def make_inputs(variant: int):
            batch = variant_value(cfg.batch, variant, "batch")
            gen = input_generator(device, seed, variant)
            latents = randn((batch, cfg.channels, cfg.image, cfg.image), gen, device, dtype)
            # A sampling loop: every element of the batch is at the same step.
            timesteps = torch.full((batch,), cfg.timestep, dtype=torch.int64, device=device)
            return latents, timesteps

        # cuDNN convolutions run in TF32 by default on Ampere+ GPUs: float32 errors reach ~1e-3.
        rtol, atol = tolerances(dtype, fp32=5e-3, bf16=6e-2)
        return Instance(
            fn=model,
            make_inputs=make_inputs,
            input_names=("latents", "timesteps"),
            rtol=rtol,
            atol=atol,
            modules=(model,),
            implementation="workloads.suite.unet.UNet",
        )
