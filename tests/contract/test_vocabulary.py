"""The vocabulary is the schema's: what it accepts, the run document's validation accepts."""
import argparse

import pytest

from contract.arguments import machine_class, name_list
from contract.document import validate_document
from contract.vocabulary import COMPILE_MODES, DTYPES, SHAPE_REGIMES, is_machine_class
from tests.documents import make_document, make_result

NAMES = ["cpu", "gpu-h100", "a_b-1", "a" * 64, "a" * 65, "GPU", "-gpu", "", "gpu h100", "gpu.h100"]


@pytest.mark.parametrize("name", NAMES)
def test_machine_class_pattern_is_the_documents(name):
    document = make_document()
    document["machine"]["machine_class"] = name
    refused = any(e.field == "machine.machine_class" for e in validate_document(document))
    assert is_machine_class(name) is not refused


@pytest.mark.parametrize("name", NAMES)
def test_machine_class_argument(name):
    if is_machine_class(name):
        assert machine_class(name) == name
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="lower-case letters"):
            machine_class(name)


def test_every_config_word_is_accepted_and_no_other():
    for mode in COMPILE_MODES:
        assert validate_document(make_document(results=[make_result(mode=mode)])) == []
    result = make_result()
    for field, words in (("compile_mode", COMPILE_MODES), ("shape_regime", SHAPE_REGIMES), ("dtype", DTYPES)):
        bad = dict(result, config={**result["config"], field: words[0] + "x"})
        errors = validate_document(make_document(results=[bad]))
        assert [e.field for e in errors] == [f"results[0].config.{field}"]


def test_name_list():
    assert name_list(" a, b,,a ,") == ["a", "b"]
