"""The result endpoints answer what results now carry (docs/explain.md, docs/artifacts.md): the kept
trace with its download address while stored, the compile by phase, the cost, and the kernel profile
(its summary in lists, read in the query; the whole profile on one result); the served OpenAPI
schema documents each."""
from __future__ import annotations

import gzip
import hashlib
import io
import json

import pytest

from dashboard.results.artifacts import artifact_store
from dashboard.results.services import run_ingest
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db
TRACE = gzip.compress(b'{"dynamo_start": {}}\n')
SHA = hashlib.sha256(TRACE).hexdigest()
COMPILE = {"cold": {"phases": {"dynamo": 0.8, "guards": 0.05, "aot_autograd": 1.0, "lowering": 1.5, "codegen": 2.0,
                               "kernel_compile": 1.0}, "total_s": 6.35, "counts": {"guards": 12, "kernels": 4}},
           "warm": {"phases": {"dynamo": 0.7}, "total_s": 1.2, "counts": {"cache_hits": 2}}}
COST = {"build": 1.0, "compile": 8.0, "compiled_timing": 0.3, "warm": 4.0}
PROFILE = {"device": "cpu", "profiled_s": 0.04,
           "compiled": [{"name": f"k{n}", "count": 1, "self_ms": 5.0 - n, "kind": "generated"} for n in range(5)],
           "eager": [{"name": "aten::mm", "count": 2, "self_ms": 3.0, "kind": "op"}],
           "kernels": [{"name": f"k{n}", "kind": "cpp", "fingerprint": f"{n:08x}", "source": "void k(){}" * 50} for n in range(4)]}


@pytest.fixture
def results(settings, tmp_path):
    settings.ARTIFACT_ROOT = tmp_path / "store"
    explained = make_result("mlp_loop", "static")
    explained.update(compile_phases=COMPILE, cost=COST, kernel_profile=PROFILE,
                     artifact={"kind": "torch_trace", "name": "mlp.torch_trace.log.gz", "sha256": SHA, "size_bytes": len(TRACE),
                               "raw_bytes": 21, "max_bytes": 1000})
    lost = make_result("mlp_loop", "backed")  # its trace was never uploaded
    lost["artifact"] = {"kind": "torch_trace", "name": "gone.gz", "sha256": "a" * 64, "size_bytes": 9, "upload_error": "HTTP 413"}
    plain = make_result("mlp_loop", "unbacked")  # a version-1 case: none of these
    document = make_document(results=[explained, lost, plain])
    document["schema_version"] = 2
    run_ingest(document=document)
    artifact_store(source=io.BytesIO(TRACE), sha256=SHA, name="mlp.torch_trace.log.gz")


def by_regime(rows) -> dict:
    return {row["config"]["shape_regime"]: row for row in rows}


def test_the_list_answers_artifact_phases_cost_and_the_profile_in_short(api, client, results):
    rows = by_regime(api.get("/api/v1/results/").json()["results"])
    explained, lost, plain = rows["static"], rows["backed"], rows["unbacked"]
    assert explained["compile_phases"] == COMPILE and explained["cost"] == COST
    assert explained["artifact"] == {"kind": "torch_trace", "name": "mlp.torch_trace.log.gz", "sha256": SHA, "size_bytes": len(TRACE),
                                     "raw_bytes": 21, "max_bytes": 1000, "stored": True,
                                     "download_url": f"http://testserver/artifacts/{SHA}/"}
    download = client.get(f"/artifacts/{SHA}/")
    assert download.status_code == 200 and b"".join(download.streaming_content) == TRACE
    assert lost["artifact"]["stored"] is False and lost["artifact"]["download_url"] is None
    assert lost["artifact"]["upload_error"] == "HTTP 413"
    assert plain["artifact"] is None and plain["compile_phases"] == {} and plain["cost"] == {}
    assert plain["kernel_profile_summary"] is None
    # in short: the top three rows of each side and the kernel count, never the kernels' sources
    assert explained["kernel_profile_summary"] == {"device": "cpu", "profiled_s": 0.04, "kernels": 4,
                                                   "compiled_top": PROFILE["compiled"][:3], "eager_top": PROFILE["eager"]}
    assert "kernel_profile" not in explained
    assert "void k()" not in json.dumps(rows)


def test_one_result_answers_the_whole_profile(api, results):
    rows = by_regime(api.get("/api/v1/results/").json()["results"])
    detail = api.get(f"/api/v1/results/{rows['static']['id']}/").json()
    assert detail["kernel_profile"] == PROFILE
    assert detail["kernel_profile_summary"] == rows["static"]["kernel_profile_summary"]
    assert detail["artifact"] == rows["static"]["artifact"]
    plain = api.get(f"/api/v1/results/{rows['unbacked']['id']}/").json()
    assert plain["kernel_profile"] == {} and plain["kernel_profile_summary"] is None


def test_the_schema_documents_them(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    parts = schema["components"]["schemas"]
    listed = parts["Result"]["properties"]
    assert {"artifact", "compile_phases", "cost", "kernel_profile_summary", "path_phases"} <= set(listed)
    assert "kernel_profile" not in listed and "kernel_profile" in parts["ResultDetail"]["properties"]
    assert listed["artifact"]["nullable"] is True
    artifact = parts[listed["artifact"]["allOf"][0]["$ref"].rsplit("/", 1)[1]]["properties"]
    assert artifact["download_url"]["format"] == "uri" and artifact["download_url"]["nullable"] is True
    summary = parts[listed["kernel_profile_summary"]["allOf"][0]["$ref"].rsplit("/", 1)[1]]["properties"]
    assert set(summary) == {"device", "profiled_s", "kernels", "compiled_top", "eager_top"}
    assert set(parts[listed["compile_phases"]["$ref"].rsplit("/", 1)[1]]["properties"]) == {"cold", "warm"}
