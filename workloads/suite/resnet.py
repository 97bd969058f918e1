"""``resnet_train``: one SGD training step of a ResNet (conv-bn-relu vision training).

Why it is in the suite: conv-bn-relu training is where torch.compile's fusions pay off most reliably
(ResNet-50 training is the classic benchmark); a regression here is a regression for every vision
user. The step (forward, cross-entropy, backward, SGD with momentum) runs inside ``fn``, so the
compiled instance compiles the optimizer too. In stock torch.compile the step is split by graph
breaks that users hit in exactly this code: ``optimizer.zero_grad`` (not traced by Dynamo),
``loss.backward()``, and the deliberate breaks around ``optimizer.step``.

Full size uses ``torchvision.models.resnet50(weights=None)`` when torchvision imports; otherwise
(and always at tiny size) our own ResNet below, which follows torchvision's layout.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from workloads.base import DynamicDim, Instance, Workload
from workloads.registry import register
from workloads.suite._common import (
    input_generator,
    optional_module,
    pick,
    randint,
    randn,
    tolerances,
    try_build,
    variant_value,
)


class BasicBlock(nn.Module):
    """Two 3x3 conv-bn layers with an identity (or 1x1 projection) shortcut."""

    expansion = 1

    def __init__(self, in_ch: int, width: int, stride: int):
        super().__init__()
        out_ch = width * self.expansion
        self.conv1 = nn.Conv2d(in_ch, width, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, out_ch, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.shortcut = _shortcut(in_ch, out_ch, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3, 1x1 expand (x4), as in ResNet-50."""

    expansion = 4

    def __init__(self, in_ch: int, width: int, stride: int):
        super().__init__()
        out_ch = width * self.expansion
        self.conv1 = nn.Conv2d(in_ch, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_ch, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_ch)
        self.shortcut = _shortcut(in_ch, out_ch, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + self.shortcut(x))


def _shortcut(in_ch: int, out_ch: int, stride: int) -> nn.Module:
    if stride == 1 and in_ch == out_ch:
        return nn.Identity()
    return nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride, bias=False), nn.BatchNorm2d(out_ch))


class ResNet(nn.Module):
    """ResNet with a configurable stem, block type, stage depths and widths."""

    def __init__(self, block: type, depths, widths, num_classes: int, imagenet_stem: bool):
        super().__init__()
        stem_ch = widths[0]
        if imagenet_stem:  # 7x7/2 conv + 3x3/2 max-pool, for 224x224 inputs
            self.stem = nn.Sequential(
                nn.Conv2d(3, stem_ch, 7, 2, 3, bias=False), nn.BatchNorm2d(stem_ch), nn.ReLU(),
                nn.MaxPool2d(3, 2, 1),
            )
        else:  # CIFAR-style 3x3 stem for small images
            self.stem = nn.Sequential(nn.Conv2d(3, stem_ch, 3, 1, 1, bias=False), nn.BatchNorm2d(stem_ch), nn.ReLU())
        stages, in_ch = [], stem_ch
        for i, (depth, width) in enumerate(zip(depths, widths)):
            for j in range(depth):
                stride = 2 if (i > 0 and j == 0) else 1
                stages.append(block(in_ch, width, stride))
                in_ch = width * block.expansion
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(in_ch, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


@dataclass(frozen=True)
class _Cfg:
    batch: tuple[int, int]  # variant 0 (timed), variant 1
    image: int
    classes: int
    block: type
    depths: tuple[int, ...]
    widths: tuple[int, ...]
    imagenet_stem: bool
    torchvision_arch: str | None  # used at this size when torchvision imports


_SIZES = {
    "tiny": _Cfg((4, 6), 32, 10, BasicBlock, (1, 1), (16, 32), False, None),
    # ResNet-50 layout, batch 64 at 224x224 (the HUD's classic training benchmark shape).
    "full": _Cfg((64, 48), 224, 1000, Bottleneck, (3, 4, 6, 3), (64, 128, 256, 512), True, "resnet50"),
}


def _model_builders(cfg: _Cfg) -> list:
    """(label, constructor) pairs, preferred first: torchvision's ResNet where wanted and importable."""
    builders = []
    tv_models = optional_module("torchvision.models") if cfg.torchvision_arch else None
    if tv_models is not None:
        arch = cfg.torchvision_arch
        builders.append(
            (f"torchvision.models.{arch}", lambda: getattr(tv_models, arch)(weights=None, num_classes=cfg.classes))
        )
    label = f"workloads.suite.resnet.ResNet({cfg.block.__name__}, depths={list(cfg.depths)})"
    builders.append((label, lambda: ResNet(cfg.block, cfg.depths, cfg.widths, cfg.classes, cfg.imagenet_stem)))
    return builders


@register
class ResNetTrain(Workload):
    name = "resnet_train"
    category = "vision-train"
    phase = "train"
    description = (
        "One ResNet training step (conv-bn-relu forward, cross-entropy, backward, SGD with momentum) "
        "inside the compiled function. Tiny: a 2-stage ResNet on 32x32 images; full: ResNet-50 "
        "(torchvision when installed) on 224x224 images, batch 64. Returns the loss and the "
        "classifier weights after the step. Dynamic: the batch."
    )
    dynamic_dims = (DynamicDim("images", 0, "batch"), DynamicDim("labels", 0, "batch"))
    dtypes = ("float32", "bfloat16", "amp")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        with torch.device(device):
            implementation, model = try_build(_model_builders(cfg), seed)
        model = model.to(device=device, dtype=dtype).train()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)

        def train_step(images: torch.Tensor, labels: torch.Tensor):
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            return loss.detach(), model.fc.weight.detach().clone()

        def make_inputs(variant: int):
            batch = variant_value(cfg.batch, variant, "batch")
            gen = input_generator(device, seed, variant)
            images = randn((batch, 3, cfg.image, cfg.image), gen, device, dtype)
            labels = randint(cfg.classes, (batch,), gen, device)
            return images, labels

        rtol, atol = tolerances(dtype, fp32=2e-3, bf16=5e-2)
        return Instance(
            fn=train_step,
            make_inputs=make_inputs,
            input_names=("images", "labels"),
            rtol=rtol,
            atol=atol,
            modules=(model,),
            implementation=implementation,
        )
