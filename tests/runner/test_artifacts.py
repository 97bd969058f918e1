"""#34 / #30 item 2: each case keeps its TORCH_TRACE log within a size bound, in its own directory,
and hands it on by reference (``runner.engine.artifacts``, docs/artifacts.md)."""
from __future__ import annotations

import gzip
import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from contract.artifacts import path_error
from contract.document import validate_document
from runner.engine.artifacts import ArtifactKeeper, artifact_name, bound_records, max_bytes_from_environ, parse_records
from tests.documents import make_document

REPO_ROOT = Path(__file__).resolve().parents[2]


def record(kind: str, payload_lines: int = 0, seed: int = 0) -> str:
    rng = random.Random(seed)
    header = f'V1125 13:07:20.736000 27474 torch/_dynamo/utils.py:2350] {{"{kind}": {{}}, "frame_id": 0, "has_payload": "ab"}}\n'
    # Random hex compresses poorly: the sizes below are about what they say.
    return header + "".join(f"\t{rng.getrandbits(256):064x}\n" for _ in range(payload_lines))


def trace_dir(tmp_path: Path, text: str, name: str = "dedicated_log_torch_trace_rank_0_x.log") -> Path:
    folder = tmp_path / "trace"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder


def test_records_are_split_by_header_with_their_payload_lines():
    text = record("str", 1) + record("dynamo_output_graph", 3) + "not a header\n" + record("describe_tensor")
    records = parse_records(text)
    assert [r.kind for r in records] == ["str", "dynamo_output_graph", "other", "describe_tensor"]
    assert records[1].text.count("\n") == 4 and "".join(r.text for r in records) == text


def test_a_log_within_the_bound_is_kept_whole_and_its_reference_matches_the_file(tmp_path):
    text = record("str", 1) + record("dynamo_start", 2) + record("inductor_output_code", 20)
    keeper = ArtifactKeeper(directory=tmp_path / "run", max_bytes=1_000_000, relative_to=tmp_path)
    reference = keeper.keep(trace_dir(tmp_path, text), label="hf:Bert default/static float32")
    path = tmp_path / reference["path"]
    assert reference["name"] == "hf_Bert_default_static_float32.torch_trace.log.gz" == path.name
    assert reference["path"] == f"run/{path.name}" and path_error(reference["path"]) is None
    data = path.read_bytes()
    assert reference["sha256"] == hashlib.sha256(data).hexdigest() and reference["size_bytes"] == len(data)
    assert gzip.decompress(data).decode() == text
    assert reference["dropped"] == [] and reference["truncated_records"] == 0 and reference["raw_bytes"] == len(text)


def test_over_the_bound_the_least_worth_kinds_go_first_and_are_said(tmp_path):
    essential = record("str", 1) + record("dynamo_output_graph", 40, 1) + record("dynamo_guards", 40, 2) + record("inductor_output_code", 60, 3)
    noise = "".join(record("describe_tensor", 40, 10 + i) for i in range(5)) + record("aot_joint_graph", 200, 99)
    text = essential + noise
    whole = len(gzip.compress(text.encode()))
    keeper = ArtifactKeeper(directory=tmp_path / "run", max_bytes=int(len(gzip.compress(essential.encode())) * 1.1))
    reference = keeper.keep(trace_dir(tmp_path, text), label="case")
    kept = gzip.decompress(keeper.local_path(reference).read_bytes()).decode()
    assert reference["size_bytes"] <= keeper.max_bytes < whole
    assert kept == essential  # graphs, guards and output code stay, in their order
    assert reference["dropped"] == [{"kind": "describe_tensor", "records": 5, "bytes": len(record("describe_tensor", 40)) * 5},
                                    {"kind": "aot_joint_graph", "records": 1, "bytes": len(record("aot_joint_graph", 200))}]
    assert reference["truncated_records"] == 0


def test_when_even_the_essential_records_do_not_fit_the_log_is_cut_and_says_how_much():
    records = parse_records(record("str", 1) + "".join(record("inductor_output_code", 30, i) for i in range(40)))
    data, dropped, cut = bound_records(records, 20_000)
    kept = parse_records(gzip.decompress(data).decode())
    assert len(data) <= 20_000 and dropped == [] and cut > 0
    assert kept == records[: len(records) - cut]  # a prefix: whole records only


def test_no_trace_no_artifact_and_zero_keeps_none(tmp_path):
    assert ArtifactKeeper(directory=tmp_path / "a").keep(tmp_path / "missing", label="x") is None
    folder = trace_dir(tmp_path, record("str", 1))
    assert ArtifactKeeper(directory=tmp_path / "a", max_bytes=0).keep(folder, label="x") is None
    assert not (tmp_path / "a").exists()


def test_the_bound_comes_from_the_environment_and_a_bad_one_is_named():
    assert max_bytes_from_environ({}) == 4 * 1024 * 1024
    assert max_bytes_from_environ({"PTBENCH_ARTIFACT_MAX_BYTES": "0"}) == 0
    for bad in ("4MB", "-1"):
        with pytest.raises(ValueError, match="PTBENCH_ARTIFACT_MAX_BYTES"):
            max_bytes_from_environ({"PTBENCH_ARTIFACT_MAX_BYTES": bad})


@pytest.mark.parametrize("path", ["../x.gz", "/etc/passwd", "a/../../x", "a\\b", "C:x", "a//b", ""])
def test_a_document_path_that_leaves_the_run_directory_is_refused_naming_it(path):
    result = {"workload": "mlp_loop", "config": {"compile_mode": "default", "shape_regime": "static", "dtype": "float32",
              "device": "cpu"}, "status": "pass",
              "artifact": {"kind": "torch_trace", "name": "a.gz", "sha256": "0" * 64, "size_bytes": 1, "path": path}}
    errors = validate_document(make_document(results=[result]))
    assert [e.field for e in errors] == ["results[0].artifact.path"], errors


def test_artifact_names_are_safe_file_names():
    assert artifact_name("tests.runner.sample_workloads:TinyMLP-default-static-float32-cpu") == (
        "tests.runner.sample_workloads_TinyMLP-default-static-float32-cpu.torch_trace.log.gz")
    assert artifact_name("../../etc") == "etc.torch_trace.log.gz"


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    skip = {".git", ".venv", "__pycache__", ".ruff_cache", ".pytest_cache", ".hypothesis", "data"}
    found = {}
    for path in root.rglob("*"):
        if skip.intersection(path.relative_to(root).parts) or not path.is_file():
            continue
        stat = path.stat()
        found[str(path.relative_to(root))] = (stat.st_mtime_ns, stat.st_size)
    return found


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_cli_keeps_the_trace_beside_the_document_writes_nothing_in_the_checkout_and_ingests_it(tmp_path, subprocess_env, settings):
    """The tiniest CPU case through ``python -m runner run --out``: the case runs in its own directory
    (its workload writes a file where it runs), its trace lies beside the document in a directory
    named for the run, and ``manage.py ingest`` stores that file by its sha256."""
    before = _tree(REPO_ROOT)
    out = tmp_path / "docs" / "run.json"
    out.parent.mkdir()
    done = subprocess.run([sys.executable, "-m", "runner", "run", "--workloads", "tests.runner.artifact_workloads:WritesWhereItRuns",
                           "--regimes", "static", "--backend", "eager", "--no-warm", "--out", str(out)],
                          cwd=tmp_path, env={**subprocess_env, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _tree(REPO_ROOT) == before  # nothing new or changed under the checkout (Python's own bytecode aside)
    assert not (tmp_path / "written-by-the-case.txt").exists()  # nor where the runner was started

    document = json.loads(out.read_text())
    result = document["results"][0]
    assert result["status"] == "pass"
    reference = result["artifact"]
    assert reference["path"] == f"{document['run']['id']}/{reference['name']}"
    file = out.parent / reference["path"]
    assert hashlib.sha256(file.read_bytes()).hexdigest() == reference["sha256"]
    kinds = {r.kind for r in parse_records(gzip.decompress(file.read_bytes()).decode())}
    assert {"str", "dynamo_start", "dynamo_output_graph", "compilation_metrics"} <= kinds

    settings.ARTIFACT_ROOT = tmp_path / "store"
    env = {**subprocess_env, "ARTIFACT_ROOT": str(tmp_path / "store")}
    done = subprocess.run([sys.executable, "manage.py", "ingest", str(out)], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    from dashboard.results.artifacts import artifact_path
    from dashboard.results.models import Artifact, Result

    stored = Result.objects.get(run_id=document["run"]["id"])
    assert stored.artifact == {k: v for k, v in reference.items() if k != "path"}
    assert Artifact.objects.get(pk=reference["sha256"]).size_bytes == reference["size_bytes"]
    assert artifact_path(reference["sha256"]).read_bytes() == file.read_bytes()
    from dashboard.results.export import run_document  # manage.py export_run: the reference goes with the run

    assert run_document(run=stored.run)["results"][0]["artifact"] == stored.artifact


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_ingest_refuses_a_path_out_of_the_document_directory_and_a_file_that_is_not_the_announced_one(tmp_path, subprocess_env):
    env = {**subprocess_env, "ARTIFACT_ROOT": str(tmp_path / "store")}
    (tmp_path / "secret.gz").write_bytes(gzip.compress(b"not yours"))
    folder = tmp_path / "docs"
    (folder / "run").mkdir(parents=True)
    (folder / "run" / "a.gz").write_bytes(gzip.compress(b"trace"))
    (folder / "run" / "link.gz").symlink_to(tmp_path / "secret.gz")
    sha = hashlib.sha256((folder / "run" / "a.gz").read_bytes()).hexdigest()

    def ingest(path: str, sha256: str) -> subprocess.CompletedProcess:
        result = {"workload": "mlp_loop", "config": {"compile_mode": "default", "shape_regime": "static", "dtype": "float32",
                  "device": "cpu"}, "status": "pass",
                  "artifact": {"kind": "torch_trace", "name": "a.gz", "sha256": sha256, "size_bytes": 1, "path": path}}
        (folder / "run.json").write_text(json.dumps(make_document(results=[result])))
        return subprocess.run([sys.executable, "manage.py", "ingest", str(folder / "run.json")], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=300)

    from dashboard.results.models import Artifact, Run

    for path, sha256, field in (("../secret.gz", sha, "results[0].artifact.path"),
                                ("run/link.gz", sha, "results[0].artifact.path"),  # a link out of the directory
                                ("run/a.gz", "1" * 64, "results[0].artifact.sha256")):
        done = ingest(path, sha256)
        assert done.returncode == 1 and f"{field}:" in done.stderr, (path, done.stderr)
        assert not Run.objects.exists() and not Artifact.objects.exists()
    assert not any(p.is_file() for p in (tmp_path / "store").rglob("*"))  # all or nothing: no file either
