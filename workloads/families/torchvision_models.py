"""``torchvision:<model>``: torchvision's classification models from ``get_model(name, weights=None)``.

torchvision has no harness list; this is a spread of its classification architectures (residual,
mobile, efficient, dense, inception, transformer), batch 64 at each model's input size. ResNet-50's
training step runs at batch 256 (224x224), the size of the background reading's ResNet-50 training
claim (~30 % faster compiled): large enough that the compiled step is bound by the GPU, not the host.
"""
from __future__ import annotations

from workloads.families._api import Family, FamilyModel, import_problem
from workloads.families._vision import VisionWorkload
from workloads.registry import register_family

_MODELS = (
    "resnet18", "resnet50", "resnet152", "resnext50_32x4d", "wide_resnet50_2", "mobilenet_v2",
    "mobilenet_v3_large", "efficientnet_b0", "efficientnet_v2_s", "convnext_tiny", "regnet_y_1_6gf",
    "densenet121", "squeezenet1_1", "shufflenet_v2_x1_0", "mnasnet1_0", "vgg16", "alexnet", "googlenet",
    "inception_v3", "vit_b_16", "swin_t", "maxvit_t",
)
_IMAGE = {"inception_v3": 299}
BATCH = 64
TRAIN_BATCH = {"resnet50": 256}  # a training step's full batch where it is not BATCH


class TorchvisionWorkload(VisionWorkload):
    library = "torchvision"

    def create(self):
        import torchvision  # noqa: PLC0415 (listing a family imports no model library)

        return torchvision.models.get_model(self.model_name, weights=None)


class TorchvisionFamily(Family):
    prefix = "torchvision"
    description = "torchvision classification models, random weights (weights=None), batch 64 (resnet50's training step: 256)"

    def models(self):
        return [FamilyModel(name, factory=TorchvisionWorkload, args={"model": name, "batch": BATCH, "image": _IMAGE.get(name, 224),
                                                                  "train_batch": TRAIN_BATCH.get(name)})
                for name in _MODELS]

    def missing(self, model):
        torchvision, problem = import_problem("torchvision")
        if torchvision is None:
            return problem
        if model.name not in torchvision.models.list_models(module=torchvision.models):
            return f"torchvision {torchvision.__version__} has no classification model {model.name}"
        return ""


register_family(TorchvisionFamily())
