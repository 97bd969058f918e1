"""Suites as workload groupings (contract/suites.py): read from the name, apart from the run's size."""
from __future__ import annotations

import json

from contract.catalog import CATALOG_PATH, FAMILIES_PATH
from contract.suites import ALL, CORE, family_model, in_suite, is_distributed, suite_names, suite_of


def test_every_catalog_workload_is_core_and_every_family_name_its_prefix():
    core = [e["name"] for e in json.loads(CATALOG_PATH.read_text())]
    families = json.loads(FAMILIES_PATH.read_text())
    assert len(core) == 9 and {suite_of(n) for n in core} == {CORE}
    assert {suite_of(e["name"]) for e in families} == {"dist", "hf", "timm", "torchvision"}
    assert all(suite_of(e["name"]) == e["family"] for e in families)


def test_the_suites_in_page_order():
    assert suite_names() == ("core", "dist", "hf", "timm", "torchvision", "all")


def test_a_prefix_that_is_no_family_is_core_and_all_holds_everything():
    assert suite_of("tests.runner.sample_workloads:TinyMLP") == CORE
    assert suite_of("bert_encoder") == CORE
    assert in_suite("timm:resnet50", ALL) and in_suite("mlp_loop", ALL)
    assert in_suite("timm:resnet50", "timm") and not in_suite("timm:resnet50", "hf")


def test_a_family_name_says_its_model_class_and_options():
    model = family_model("hf:BertForMaskedLM@train+batch")
    assert (model.family, model.model, model.options, model.kind) == ("hf", "BertForMaskedLM", ("train", "batch"), "transformers class")
    dotted = family_model("timm:convnextv2_nano.fcmae_ft_in22k_in1k")
    assert (dotted.model, dotted.options, dotted.kind) == ("convnextv2_nano.fcmae_ft_in22k_in1k", (), "timm model")
    assert family_model("torchvision:resnet50").kind == "torchvision model"
    distributed = family_model("dist:gpt@train+fsdp+compile_first+checkpoint")
    assert (distributed.options, distributed.kind) == (("train", "fsdp", "compile_first", "checkpoint"), "distributed-step model")
    assert is_distributed("hf:BertForMaskedLM@train+ddp") and not is_distributed("dist:gpt@train") and not is_distributed("mlp_loop")
    assert family_model("mlp_loop") is None
