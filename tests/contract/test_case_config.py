"""The case configuration value object (contract.case_config): key, label, document, signature part."""
import hashlib
import json

import pytest

from contract import vocabulary
from contract.case_config import AXIS_NAMES, CaseConfig, CaseConfigError
from contract.spec import CaseSpec
from tests.documents import make_result

BACKED = CaseConfig(compile_mode="max-autotune", shape_regime="backed", dtype="bfloat16", device="cuda")


def test_key_label_document_and_signature_part():
    assert BACKED.key == "max-autotune/backed/bfloat16/cuda"
    assert BACKED.label == "max-autotune · backed · bfloat16"
    assert BACKED.as_document() == {"compile_mode": "max-autotune", "shape_regime": "backed", "dtype": "bfloat16", "device": "cuda"}
    assert BACKED.signature_part() == ["max-autotune", "backed", "bfloat16", "cuda"]
    assert BACKED.page_parameters() == {"mode": "max-autotune", "regime": "backed", "dtype": "bfloat16"}


def test_every_configuration_of_the_vocabulary_round_trips_through_key_and_document():
    for mode in vocabulary.COMPILE_MODES:
        for regime in vocabulary.SHAPE_REGIMES:
            for dtype in vocabulary.DTYPES:
                for device in vocabulary.DEVICES:
                    config = CaseConfig(mode, regime, dtype, device)
                    assert CaseConfig.from_key(config.key) == config
                    assert CaseConfig.from_document(config.as_document()) == config


def test_a_document_config_is_read_as_the_runner_writes_it():
    sent = make_result()["config"]
    assert CaseConfig.from_document(sent).as_document() == sent
    spec = CaseSpec(workload="mlp_loop", **sent)
    assert spec.config() == sent and spec.case_config == CaseConfig.from_document(sent)
    assert spec.label == f"mlp_loop {CaseConfig.from_document(sent).key}"


def test_the_signature_part_is_what_series_signatures_always_hashed():
    """Series signatures were sha1 of [workload, mode, regime, dtype, device, class]: the value
    object gives the same four, so no stored signature changes (this literal is what the code before keys hashed)."""
    identity = ["mlp_loop", *CaseConfig("default", "static", "float32", "cpu").signature_part(), "cpu"]
    assert hashlib.sha1(json.dumps(identity).encode()).hexdigest() == "82d1838283a3ed947f4eb0e0837838f86722b7c4"


@pytest.mark.parametrize(("config", "field", "words"), [
    ({"compile_mode": "turbo", "shape_regime": "static", "dtype": "float32", "device": "cpu"}, "compile_mode", "unknown compile mode 'turbo'"),
    ({"compile_mode": "default", "shape_regime": "wobbly", "dtype": "float32", "device": "cpu"}, "shape_regime", "unknown shape regime 'wobbly'"),
    ({"compile_mode": "default", "shape_regime": "static", "dtype": "int3", "device": "cpu"}, "dtype", "unknown dtype 'int3'"),
    ({"compile_mode": "default", "shape_regime": "static", "dtype": "float32", "device": "tpu"}, "device", "unknown device 'tpu'"),
    ({"compile_mode": "default", "shape_regime": "static", "dtype": "float32"}, "device", "this field is required"),
    ({"compile_mode": "default", "shape_regime": "static", "dtype": "float32", "device": "cpu", "colour": "red"}, "colour",
     "is not a configuration field"),
    ({"compile_mode": "default", "shape_regime": "static", "dtype": "float32", "device": "cpu", "dims": ["x:0"]}, "dims",
     "a static regime marks no dims"),
    ({"compile_mode": "default", "shape_regime": "backed", "dtype": "float32", "device": "cpu", "dims": "x:0"}, "dims", "expected a list"),
    ({"compile_mode": "default", "shape_regime": "backed", "dtype": "float32", "device": "cpu", "dims": ["a/b"]}, "dims", "input_name:dim"),
    ({"compile_mode": 3, "shape_regime": "static", "dtype": "float32", "device": "cpu"}, "compile_mode", "unknown compile mode 3"),
])
def test_a_bad_value_is_refused_naming_its_field(config, field, words):
    with pytest.raises(CaseConfigError) as caught:
        CaseConfig.from_document(config)
    assert caught.value.field == field and words in caught.value.message
    assert str(caught.value).startswith(f"{field}: ")


@pytest.mark.parametrize("key", ["default/static/float32", "default/static/float32/cpu/colour=red",
                                 "default/static/float32/cpu/dims=", "default/backed/float32/cpu/dims=x:0/dims=y:1", "", 7])
def test_a_malformed_key_is_refused_naming_the_key(key):
    with pytest.raises(CaseConfigError) as caught:
        CaseConfig.from_key(key)
    assert caught.value.field == "key"


def test_a_key_names_an_unknown_value_by_its_field():
    with pytest.raises(CaseConfigError) as caught:
        CaseConfig.from_key("default/static/float9/cpu")
    assert caught.value.field == "dtype"


def test_dims_say_which_declared_dims_a_regime_marks_and_default_to_all():
    every = CaseConfig("default", "unbacked", "float32", "cuda")
    batch = every.replace(dims=["input_ids:0"])
    assert every.dims is None and "dims" not in every.as_document()
    assert batch.key == "default/unbacked/float32/cuda/dims=input_ids:0"
    assert batch.label == "default · unbacked (input_ids:0) · float32"
    assert batch.as_document()["dims"] == ["input_ids:0"]
    assert batch.signature_part() == ["default", "unbacked", "float32", "cuda", "dims=input_ids:0"]
    assert batch.page_parameters() == {**every.page_parameters(), "dims": "input_ids:0"}
    assert CaseConfig.from_key(batch.key) == batch == CaseConfig.from_document(batch.as_document())
    assert batch != every and batch.key != every.key


def test_values_are_read_from_the_vocabulary_when_a_configuration_is_made(monkeypatch):
    """A value added to the vocabulary (the schema's enum) is a configuration at once: nothing
    here lists the modes or dtypes."""
    with pytest.raises(CaseConfigError):
        CaseConfig("export", "static", "float8_e4m3fn", "cuda")
    monkeypatch.setattr(vocabulary, "COMPILE_MODES", (*vocabulary.COMPILE_MODES, "export"))
    monkeypatch.setattr(vocabulary, "DTYPES", (*vocabulary.DTYPES, "float8_e4m3fn"))
    config = CaseConfig("export", "static", "float8_e4m3fn", "cuda")
    assert CaseConfig.from_key(config.key) == config and config.label == "export · static · float8_e4m3fn"


def test_pattern_leaves_the_axes_not_given_open():
    assert CaseConfig.pattern(compile_mode="default", dtype="float32") == "default/*/float32/*"
    assert CaseConfig.pattern() == "/".join("*" for _ in AXIS_NAMES)
    with pytest.raises(CaseConfigError) as caught:
        CaseConfig.pattern(colour="red")
    assert caught.value.field == "colour"
    with pytest.raises(CaseConfigError) as caught:
        CaseConfig.pattern(dtype="float9")
    assert caught.value.field == "dtype"


def test_picked_from_a_case_spec_message():
    spec = CaseSpec(workload="mlp_loop", compile_mode="default", shape_regime="backed", dtype="float32", device="cpu")
    message = json.loads(spec.to_json())
    assert CaseConfig.picked_from(message) == spec.case_config
