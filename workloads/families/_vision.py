"""An image classifier from a library (timm, torchvision) as a family workload: images [B, 3, H, W]
-> logits; the training step adds labels [B] and a cross-entropy loss. Dynamic: the batch."""
from __future__ import annotations

import abc

import torch
import torch.nn.functional as F

from workloads.base import DynamicDim
from workloads.families._api import FamilyWorkload
from workloads.families._steps import TINY_BATCH, instance, second_size, seeded_model
from workloads.suite._common import input_generator, randint, randn


class VisionWorkload(FamilyWorkload):
    def __init__(self, *, name: str, train: bool, axes: tuple[str, ...], model: str, batch: int, image: int = 224,
                 train_batch: int | None = None, step: str = ""):
        train = train or step == "train_step"
        inputs = ("images", "labels") if train else ("images",)
        super().__init__(name=name, train=train, axes=axes, dims={DynamicDim(n, 0): "batch" for n in inputs}, step=step)
        # a training step's own full batch where the family gives one (torchvision:resnet50@train: 256)
        self.model_name, self.batch, self.image = model, (train_batch if train and train_batch else batch), image
        self.description = (f"{self.library} {model} with random weights, {self.step_text}; "
                            f"full: batch {self.batch} at {image}x{image} (the model's own input size); tiny: batch {TINY_BATCH}.")

    library = ""

    @abc.abstractmethod
    def create(self) -> torch.nn.Module:
        """The library's model, random weights, never a download."""

    def input_size(self, model: torch.nn.Module) -> int:
        return self.image

    def build(self, *, size, device, dtype, seed=0):
        model = seeded_model(self.create, device=device, dtype=dtype, seed=seed, train=self.train)
        batch = TINY_BATCH if size == "tiny" else self.batch
        image = self.input_size(model)
        classes = getattr(model, "num_classes", 1000)

        def make_inputs(variant: int):
            b = second_size(batch) if variant == 1 and self.varies("batch") else batch
            gen = input_generator(device, seed, variant)
            images = randn((b, 3, image, image), gen, device, dtype)
            return (images, randint(classes, (b,), gen, device)) if self.train else (images,)

        def loss(output, kwargs):
            logits = output.logits if hasattr(output, "logits") else output  # inception's aux outputs
            return F.cross_entropy(logits.float(), kwargs["labels"])

        call = _positional(model)
        return instance(call, make_inputs, ("images", "labels") if self.train else ("images",),
                        loss=loss if self.train else None, whole_step=self.whole_step, device=device,
                        implementation=f"{type(model).__module__}.{type(model).__qualname__}")


class _positional(torch.nn.Module):
    """``model(images=...)``: the classifiers take their input positionally; labels are for the loss."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, images, labels=None):
        return self.model(images)
