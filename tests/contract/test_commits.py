"""contract.commits: which files an overlay may carry, which need a source build, their areas."""
from contract.commits import (
    commit_areas,
    commit_kind,
    commit_record,
    commit_record_problem,
    main_commit_of,
    needs_source_build,
    overlay_file,
    overlay_label,
)

SHA = "a" * 40


def test_python_under_torch_is_overlaid_and_cpp_or_build_files_are_not():
    assert overlay_file("torch/_inductor/config.py") and overlay_file("torch/fx/graph.py")
    for path in ("torch/csrc/dynamo/guards.cpp", "torch/csrc/api/x.py", "setup.py", "torch/../setup.py", "tools/x.py", "torch/_C/__init__.pyi"):
        assert not overlay_file(path), path
    for path in ("torch/csrc/dynamo/guards.cpp", "aten/src/ATen/native/native_functions.yaml", "c10/core/Device.h",
                 "CMakeLists.txt", "setup.py", "torch/_inductor/codegen/cpp_prefix.h", "cmake/Dependencies.cmake"):
        assert needs_source_build(path), path
    assert not needs_source_build("test/inductor/test_torchinductor.py") and not needs_source_build("docs/source/x.md")


def test_a_commit_is_cpp_python_or_none_and_its_areas_are_named_in_order():
    assert commit_kind(["torch/_dynamo/eval_frame.py", "test/dynamo/test_x.py"]) == "python"
    assert commit_kind(["torch/_dynamo/eval_frame.py", "torch/csrc/dynamo/eval_frame.c"]) == "cpp"
    assert commit_kind(["test/dynamo/test_x.py", ".github/workflows/x.yml"]) == "none"
    assert commit_areas(["torch/nn/modules/linear.py", "torch/_inductor/ir.py", "torch/_dynamo/x.py", "torch/export/y.py"]) == [
        "_dynamo", "_inductor", "export", "other"]


def test_a_nightly_subject_names_its_main_commit():
    assert main_commit_of(f"2026-11-27 nightly release ({SHA})") == SHA
    assert main_commit_of("[inductor] fuse more") is None


def test_records_from_a_worker_are_checked_field_by_field():
    record = commit_record(sha=SHA, subject="s", author="a", time="2026-11-27T00:00:00+00:00", paths=["torch/fx/a.py"])
    assert record["kind"] == "python" and record["areas"] == ["fx"] and commit_record_problem(record) is None
    assert commit_record_problem({**record, "sha": "xyz"}).startswith("sha")
    assert commit_record_problem({**record, "kind": "rust"}).startswith("kind")
    assert commit_record_problem({**record, "areas": ["nn"]}).startswith("areas")
    assert commit_record_problem({**record, "time": "yesterday"}).startswith("time")
    assert overlay_label(SHA, "cu130") == "py-on-aaaaaaaaaaaa-cu130"
