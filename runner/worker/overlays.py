"""Overlay builds on a worker (issue #41, docs/builds.md): a case for a build this worker has no
interpreter for, whose message names it an overlay (a base build it has, and a commit), runs on
that base's environment with the Python files under ``torch/`` of the commit
(``runner.commits.overlay``), made once and probed once per process. The message carries two shas
and a label; the files come from this worker's own mirror."""
from __future__ import annotations

from contract.commits import SHA, SOURCE_LABEL, overlay_label
from runner.commits.mirror import Mirror, MirrorError
from runner.commits.overlay import cache_dir_from_env, overlay_make
from runner.commits.source_build import SourceBuilder, SourceBuildError
from runner.engine.executor import probe_environment
from runner.worker.builds import BuildUnavailable, LocalBuild, LocalBuilds

_made: dict[tuple, LocalBuild] = {}


def overlay_spec(build: dict) -> dict | None:
    """The overlay a case message's build names (``{"base": {"git_sha", "local_label"}, "commit"}``), or None."""
    spec = (build.get("environment") or {}).get("overlay") if isinstance(build.get("environment"), dict) else None
    spec = spec or build.get("overlay")
    return spec if isinstance(spec, dict) and isinstance(spec.get("base"), dict) else None


def find_or_overlay(local: LocalBuilds, build: dict) -> LocalBuild:
    """The interpreter of ``build``: one this worker has, else the overlay the message names."""
    try:
        return local.find(git_sha=build["git_sha"], local_label=build.get("local_label", ""), overrides=build.get("overrides"))
    except BuildUnavailable:
        if isinstance(build.get("source_build"), dict):
            return source_build_of(build)
        if isinstance(build.get("intake"), dict):  # another worker of the class took it in: take it in here too
            return taken_in_here(local, build)
        spec = overlay_spec(build)
        if spec is None:
            raise
    base_sha, base_label, commit = spec["base"].get("git_sha", ""), spec["base"].get("local_label", "") or "", spec.get("commit", "")
    if not (SHA.fullmatch(str(base_sha)) and SHA.fullmatch(str(commit)) and commit == build["git_sha"]
            and build.get("local_label") == overlay_label(base_sha, base_label)):
        raise BuildUnavailable(f"build {build['git_sha'][:12]}: a malformed overlay (two 40-hex shas, the commit the build's)")
    mirror = Mirror.from_env()
    if mirror is None:
        raise BuildUnavailable(f"build {commit[:12]} is an overlay and this worker has no PTBENCH_TORCH_MIRROR")
    base = local.find(git_sha=base_sha, local_label=base_label)
    key = (base.python, base_sha, commit)
    if key not in _made:
        try:
            overlay = overlay_make(base_python=base.python, base_commit=mirror.main_commit(base_sha), commit=commit,
                                   mirror=mirror, cache_dir=cache_dir_from_env())
            facts = mirror.commit_facts(commit)
        except MirrorError as exc:
            raise BuildUnavailable(f"overlay of {commit[:12]} on {base_sha[:12]}: {exc}") from None
        environment = probe_environment(overlay.python, timeout_s=300)
        environment.pop("config_catalog", None)
        environment.pop("override_problems", None)
        environment["build"] = {**environment["build"], "git_sha": commit, "local_label": build["local_label"],
                                "commit_time": facts["time"],
                                "environment": {**(environment["build"].get("environment") or {}),
                                                "overlay": {**overlay.as_document(), "base": spec["base"], "subject": facts["subject"]}}}
        _made[key] = LocalBuild(python=overlay.python, environment=environment)
    return _made[key]


def source_build_of(build: dict) -> LocalBuild:
    """A build at a commit touching C++ (issue #41): made by this worker's own PTBENCH_SOURCE_BUILD
    command (``runner.commits.source_build``); the message names only the commit."""
    commit = str(build["source_build"].get("commit", ""))
    if not (SHA.fullmatch(commit) and commit == build["git_sha"] and build.get("local_label") == SOURCE_LABEL):
        raise BuildUnavailable(f"build {build['git_sha'][:12]}: a malformed source build (its commit the build's, label {SOURCE_LABEL})")
    key = ("source", commit)
    if key not in _made:
        try:
            builder = SourceBuilder.from_env()
            if builder is None:
                raise SourceBuildError("this worker has no PTBENCH_SOURCE_BUILD command")
            python = builder.make(commit)
        except SourceBuildError as exc:
            raise BuildUnavailable(f"source build of {commit[:12]}: {exc}") from None
        mirror = Mirror.from_env()
        try:
            facts = mirror.commit_facts(commit) if mirror is not None else {}
        except MirrorError:
            facts = {}
        environment = probe_environment(python, timeout_s=300)
        environment.pop("config_catalog", None)
        environment.pop("override_problems", None)
        # stored as the dashboard named it (a source build's own "2.14.0a0+git..." is kept beside)
        built_version = environment["build"].get("torch_version", "")
        environment["build"] = {**environment["build"], "git_sha": commit, "local_label": SOURCE_LABEL,
                                "torch_version": build.get("torch_version") or built_version,
                                **({"commit_time": facts["time"]} if facts.get("time") else {}),
                                "environment": {**(environment["build"].get("environment") or {}),
                                                "source_build": {"commit": commit, "subject": facts.get("subject", ""),
                                                                 "torch_version": built_version}}}
        _made[key] = LocalBuild(python=python, environment=environment)
    return _made[key]


def taken_in_here(local: LocalBuilds, build: dict) -> LocalBuild:
    """A build another worker of the class took in (the message names its version): taken in from
    this worker's own index (``runner.intake``; a version it does not hold is refused there)."""
    from runner.intake.config import IntakeConfig, IntakeConfigError  # noqa: PLC0415
    from runner.intake.take import intake_run  # noqa: PLC0415

    version = str(build["intake"].get("version", ""))
    try:
        config = IntakeConfig.from_env()
    except IntakeConfigError as exc:
        raise BuildUnavailable(f"build {build['git_sha'][:12]} (torch {version[:40]}): {exc}") from None
    if config is None:
        raise BuildUnavailable(f"build {build['git_sha'][:12]} was taken in (torch {version[:40]}) and this worker has no PTBENCH_INTAKE_INDEX")
    answer = intake_run(config, version=version)
    if not answer["ok"]:
        raise BuildUnavailable(f"taking in torch {version[:40]} here: {answer['error']}")
    found = LocalBuild(python=answer["python"], environment=answer["environment"], catalog=answer.get("config_catalog") or {})
    if found.key != (build["git_sha"], build.get("local_label") or ""):
        raise BuildUnavailable(f"torch {version[:40]} from this worker's index is build {found.key[0][:12]}+{found.key[1]}, "
                               f"not {build['git_sha'][:12]}+{build.get('local_label') or ''}")
    local.builds.append(found)  # this worker runs it from now on
    return found
