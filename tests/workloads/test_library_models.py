"""#34: a broken transformers import silently swapped our own model in under the same workload (and
series). Now the library model or nothing: the case fails with an eager_error naming why, and a
passing result records the library implementation that ran."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from runner.engine.executor import REPO_ROOT
from workloads.registry import get_workload
from workloads.suite._common import LibraryModelUnavailable, library_model

LIBRARY_WORKLOADS = {"bert_encoder": "transformers.BertModel", "llama_decode": "transformers.LlamaForCausalLM"}


@pytest.mark.parametrize("name", sorted(LIBRARY_WORKLOADS))
def test_the_library_model_is_what_is_built_and_recorded(name):
    instance = get_workload(name).build(size="tiny", device="cpu", dtype=torch.float32)
    assert instance.implementation == LIBRARY_WORKLOADS[name]
    assert type(instance.modules[0]).__module__.startswith("transformers.models.")


@pytest.mark.parametrize("name", sorted(LIBRARY_WORKLOADS))
def test_a_broken_transformers_import_fails_the_build_naming_it(name, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers -> ImportError
    with pytest.raises(LibraryModelUnavailable) as failure:
        get_workload(name).build(size="tiny", device="cpu", dtype=torch.float32)
    message = str(failure.value)
    assert message.startswith(f"{LIBRARY_WORKLOADS[name]} needs transformers, which does not import here (ModuleNotFoundError: import of transformers halted")
    assert "install requirements/runner.txt" in message and "no other model is measured" in message


def test_a_library_whose_api_moved_fails_naming_its_version():
    def moved(library):
        raise TypeError("unexpected keyword argument 'ddp_cache_data'")

    with pytest.raises(LibraryModelUnavailable) as failure:
        library_model("torch", "torch.X", moved, device="cpu", seed=0)
    assert str(failure.value).startswith(f"torch.X could not be built with torch {torch.__version__} (TypeError: "
                                         "unexpected keyword argument 'ddp_cache_data')")
    assert library_model("torch", "torch.Y", lambda library: library.__name__, device="cpu", seed=0) == ("torch.Y", "torch")


@pytest.mark.slow
def test_the_runner_reports_an_eager_error_not_a_stand_in(tmp_path):
    """Through ``python -m runner run`` and its case subprocess, with a transformers that raises on import."""
    broken = tmp_path / "site" / "transformers"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ImportError("planted: a broken transformers install")\n')
    out = tmp_path / "run.json"
    command = [sys.executable, "-m", "runner", "run", "--workloads", "bert_encoder", "--regimes", "static",
               "--backend", "eager", "--device", "cpu", "--no-warm", "--timeout", "120", "--out", str(out)]
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                               env={**os.environ, "PYTHONPATH": str(tmp_path / "site")})
    assert completed.returncode == 0, completed.stderr[-3000:]
    [result] = json.loads(out.read_text())["results"]
    assert result["status"] == "eager_error"
    assert result["error"]["type"] == "workloads.suite._common.LibraryModelUnavailable"
    assert result["error"]["message"].startswith("transformers.BertModel needs transformers, which does not import "
                                                 "here (ImportError: planted: a broken transformers install)")
    assert "implementation" not in result["environment"]  # nothing ran: no implementation to record
