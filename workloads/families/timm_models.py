"""``timm:<model>``: timm's models from ``timm.create_model(name, pretrained=False)`` (random weights).

The list is PyTorch's harness list (benchmarks/dynamo/timm_models_list.txt: names and batch sizes)
plus resnet50; a name with a pretrained tag (``convnextv2_nano.fcmae_ft_in22k_in1k``) takes that
tag's configuration (input size), still without weights.
"""
from __future__ import annotations

from workloads.families._api import Family, FamilyModel, import_problem
from workloads.families._vision import VisionWorkload
from workloads.registry import register_family

_MODELS = (
    ("adv_inception_v3", 128), ("beit_base_patch16_224", 128), ("convnextv2_nano.fcmae_ft_in22k_in1k", 128),
    ("deit_base_distilled_patch16_224", 128), ("deit_tiny_patch16_224.fb_in1k", 128), ("dm_nfnet_f0", 128),
    ("ghostnet_100", 512), ("inception_v3", 128), ("mobilenetv2_100", 128), ("mobilenetv3_large_100", 512),
    ("mobilevit_s", 128), ("nfnet_l0", 128), ("repvgg_a2", 128), ("swin_base_patch4_window7_224", 128),
    ("tf_efficientnet_b0", 128), ("visformer_small", 128), ("vit_base_patch14_dinov2.lvd142m", 128),
    ("vit_base_patch16_siglip_256", 128), ("resnet50", 128),
)


class TimmWorkload(VisionWorkload):
    library = "timm"

    def create(self):
        import timm  # noqa: PLC0415 (listing a family imports no model library)

        return timm.create_model(self.model_name, pretrained=False)

    def input_size(self, model) -> int:
        return int(model.pretrained_cfg.get("input_size", (3, self.image, self.image))[-1])


class TimmFamily(Family):
    prefix = "timm"
    description = "timm image models, random weights (pretrained=False); PyTorch's harness list and batch sizes"

    def models(self):
        return [FamilyModel(name, factory=TimmWorkload, args={"model": name, "batch": batch}) for name, batch in _MODELS]

    def missing(self, model):
        timm, problem = import_problem("timm")
        if timm is None:
            return problem
        if not timm.is_model(model.name.partition(".")[0]):
            return f"timm {timm.__version__} has no model {model.name.partition('.')[0]}"
        return ""


register_family(TimmFamily())
