"""Nightly intake on a worker (issue #41, docs/builds.md), without services: the settings (the
variable named in each error), which version a local or HTTP index gives, and environments made
with real uv from /opt/wheels' real torch wheel: atomic (a failed install or probe leaves nothing),
the same version twice one environment, pruned to keep N but never a protected build. The probe
here reads the installed torch's metadata (no torch import: tests/dispatch/test_intake_workers.py
probes through the runner's environment command once)."""
from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from packaging.version import Version

from runner.intake.config import IntakeConfig, IntakeConfigError, uv_path
from runner.intake.environments import IntakeFailed, made, prune, take_in
from runner.intake.index import ResolveError, resolve, version_named
from runner.intake.take import intake_run

WHEELS = "/opt/wheels"
REAL = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
needs_wheels = pytest.mark.skipif(not os.path.isfile(f"{WHEELS}/{REAL}") or not uv_path(), reason="needs /opt/wheels and uv")


def fake_index(directory: Path, *names: str) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        (directory / name).write_bytes(b"not a wheel")
    return str(directory)


def metadata_probe(python: str) -> dict:
    """The installed torch's version as the environment's own interpreter reads it (no torch import)."""
    done = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('torch'))"], capture_output=True,
                          text=True, check=True, timeout=60)
    return {"build": {"torch_version": done.stdout.strip(), "git_sha": "cf30153c4c131c8164ee7798e5022d810682e2cb",
                      "local_label": "cpu", "environment": {}}}


@pytest.fixture(scope="module")
def uv_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("uv-cache")


def test_settings_name_the_variable_and_a_file_beside_the_worker_is_read(tmp_path):
    assert IntakeConfig.from_env({}) is None  # no index: no intake on this worker
    for env, named in (({"PTBENCH_INTAKE_INDEX": "relative/dir"}, "PTBENCH_INTAKE_INDEX"),
                       ({"PTBENCH_INTAKE_INDEX": WHEELS, "PTBENCH_INTAKE_TAKE": "tomorrow"}, "PTBENCH_INTAKE_TAKE"),
                       ({"PTBENCH_INTAKE_INDEX": WHEELS, "PTBENCH_INTAKE_KEEP": "0"}, "PTBENCH_INTAKE_KEEP"),
                       ({"PTBENCH_INTAKE_INDEX": WHEELS, "PTBENCH_INTAKE_DIR": "here"}, "PTBENCH_INTAKE_DIR"),
                       ({"PTBENCH_INTAKE_INDEX": WHEELS, "PTBENCH_INTAKE_COMPANIONS": "timm,rm -rf /"}, "PTBENCH_INTAKE_COMPANIONS"),
                       ({"PTBENCH_INTAKE_INDEX": WHEELS, "PTBENCH_INTAKE_VARIANT": "CU 130"}, "PTBENCH_INTAKE_VARIANT")):
        with pytest.raises(IntakeConfigError, match=named):
            IntakeConfig.from_env(env)
    file = tmp_path / "intake.toml"
    file.write_text(f'index = "{WHEELS}"\ntake = "2.13.0"\ncompanions = ["torchvision", "timm"]\nkeep = 3\ndir = "{tmp_path}"\n')
    config = IntakeConfig.from_env({"PTBENCH_INTAKE_FILE": str(file), "PTBENCH_INTAKE_KEEP": "2"})
    assert (config.index, config.take, config.companions, config.keep, config.dir) == (WHEELS, "2.13.0", ("torchvision", "timm"), 2, tmp_path)
    file.write_text('index = "/x"\nmirror = "/y"\n')
    with pytest.raises(IntakeConfigError, match="unknown key.*mirror"):
        IntakeConfig.from_env({"PTBENCH_INTAKE_FILE": str(file)})
    secret = IntakeConfig.parse({"index": "https://user:token@example.invalid/whl/nightly/cpu"})
    assert secret.describe()["index"] == "https://example.invalid/whl/nightly/cpu"  # never told to the dashboard


def test_the_version_taken_from_a_directory_or_a_simple_index(tmp_path):
    names = ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
             "torch-2.14.0.dev20261126+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
             "torch-2.14.0.dev20261127+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
             "torch-2.14.0.dev20261127+cu130-cp311-cp311-manylinux_2_28_x86_64.whl",
             "torch-2.14.0.dev20261128+cpu-cp39-cp39-manylinux_2_28_x86_64.whl",  # another Python: never taken
             "torch-2.14.0.dev20261128+cpu-cp311-none-macosx_11_0_arm64.whl",  # another platform
             "torchvision-0.29.0.dev20261128+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"]
    index = fake_index(tmp_path / "wheels", *names)

    def taken(**values) -> str:
        return str(resolve(IntakeConfig.parse({"index": index, **values})))

    assert taken() == "2.14.0.dev20261127+cu130"  # the newest pre-release, any variant
    assert taken(variant="cpu") == "2.14.0.dev20261127+cpu"
    assert taken(take="release") == "2.13.0+cpu"
    assert taken(take="2.14.0.dev20261126", variant="cpu") == "2.14.0.dev20261126+cpu"
    with pytest.raises(ResolveError, match=r"no torch \+rocm7 to take \(pre\).*have: none"):
        taken(variant="rocm7")
    config = IntakeConfig.parse({"index": index})
    with pytest.raises(ResolveError, match="not in this worker's index"):
        version_named(config, "2.14.0.dev20261128+cpu")  # a message may only name what the index holds
    with pytest.raises(ResolveError, match="not a version"):
        version_named(config, "1; rm -rf /")

    # The same from a PEP 503 page over HTTP (on loopback), as download.pytorch.org serves its nightlies.
    (tmp_path / "simple" / "torch").mkdir(parents=True)
    (tmp_path / "simple" / "torch" / "index.html").write_text(
        "<html><body>" + "".join(f'<a href="/whl/{n.replace("+", "%2B")}#sha256=00">{n}</a><br>' for n in names) + "</body></html>")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "simple")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert str(resolve(IntakeConfig.parse({"index": url, "variant": "cpu"}))) == "2.14.0.dev20261127+cpu"
        with pytest.raises(ResolveError, match="cannot be read"):
            resolve(IntakeConfig.parse({"index": url + "/nowhere"}))
    finally:
        server.shutdown()


def test_a_failed_install_is_an_answer_with_its_log_and_leaves_nothing(tmp_path):
    index = fake_index(tmp_path / "wheels", "torch-2.14.0.dev20261127+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    config = IntakeConfig.parse({"index": index, "dir": str(tmp_path / "intake"), "inherit": "1", "installer": "uv" if uv_path() else "pip"})
    answer = intake_run(config)
    assert answer["ok"] is False and answer["version"] == "2.14.0.dev20261127+cpu"
    assert "exited" in answer["error"] and "torch==2.14.0.dev20261127+cpu" in answer["log"], answer
    assert [p.name for p in (tmp_path / "intake" / "envs").iterdir()] == []  # no half-made environment
    assert made(config) == []


@needs_wheels
def test_an_environment_is_made_once_atomically_and_pruned_but_never_a_protected_build(tmp_path, uv_cache):
    config = IntakeConfig.parse({"index": WHEELS, "take": "release", "dir": str(tmp_path / "intake"), "cache": str(uv_cache),
                                 "inherit": "1", "keep": "1"})
    version = resolve(config)
    assert str(version) == "2.13.0+cpu"

    def refuses(python: str) -> dict:
        raise RuntimeError("cannot describe itself")
    with pytest.raises(IntakeFailed, match="cannot describe its build: cannot describe itself") as failed:
        take_in(config, version, probe=refuses)
    assert "uv pip install" in failed.value.log
    assert list((tmp_path / "intake" / "envs").iterdir()) == []  # installed, never probed: never found

    first = take_in(config, version, probe=metadata_probe)
    assert not first.cached and Path(first.python).is_file() and first.python.startswith(str(tmp_path / "intake" / "envs" / "torch-2.13.0-cpu"))
    # its torch is the environment's own (hard links from the cache), the rest seen from the worker's
    where = subprocess.run([first.python, "-c", "import importlib.util as u; print(u.find_spec('torch').origin)"],
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(first.path), where
    assert json.loads((Path(first.path) / "intake.json").read_text())["environment"]["build"]["environment"]["python_executable"] == first.python
    again = take_in(config, version, probe=refuses)  # the same version: found, not made or probed again
    assert again.cached and again.python == first.python and [t.path for t in made(config)] == [first.path]

    other = Path(first.path).with_name("torch-2.12.0-cpu")  # an older one, as an earlier intake left it
    other.mkdir()
    (other / "intake.json").write_text(json.dumps({"version": "2.12.0+cpu", "python": str(other / "env/bin/python"),
                                                   "environment": {"build": {"git_sha": "a" * 40}}}))
    os.utime(other / "intake.json", (1, 1))
    assert prune(config, protect={"a" * 40}) == [] and other.exists()  # an open finding refers to it
    assert [t.version for t in prune(config, protect=set())] == ["2.12.0+cpu"] and not other.exists()
    assert [t.version for t in made(config)] == ["2.13.0+cpu"]
    assert version_named(config, "2.13.0+cpu") == Version("2.13.0+cpu")


@needs_wheels
def test_a_case_of_a_build_another_worker_took_in_is_taken_in_here_from_this_workers_index(tmp_path, uv_cache, monkeypatch):
    """A class of several hosts: the intake message went to one worker; a case of that build reaching
    another takes it in there, from that worker's own index (the message names only the version)."""
    from runner.intake import take
    from runner.worker import overlays
    from runner.worker.builds import BuildUnavailable, LocalBuilds

    monkeypatch.setattr(take, "_probe", metadata_probe)
    for name, value in (("INDEX", WHEELS), ("DIR", str(tmp_path / "intake")), ("CACHE", str(uv_cache)), ("INHERIT", "1")):
        monkeypatch.setenv(f"PTBENCH_INTAKE_{name}", value)
    local = LocalBuilds()
    build = {"git_sha": "cf30153c4c131c8164ee7798e5022d810682e2cb", "local_label": "cpu", "intake": {"version": "2.13.0+cpu"}}
    found = overlays.find_or_overlay(local, build)
    assert found.python.startswith(str(tmp_path / "intake" / "envs")) and local.builds == [found]
    assert overlays.find_or_overlay(local, build) is found  # known from now on
    with pytest.raises(BuildUnavailable, match="not in this worker's index"):
        overlays.find_or_overlay(local, {**build, "git_sha": "e" * 40, "intake": {"version": "2.99.0"}})
    with pytest.raises(BuildUnavailable, match="is build cf30153c4c13\\+cpu, not eeeeeeeeeeee\\+cpu"):
        overlays.find_or_overlay(local, {**build, "git_sha": "e" * 40})
