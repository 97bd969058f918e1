"""The builds a worker has: each configured interpreter, probed once, keyed like the dashboard's
``Build`` (git sha, local label)."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from contract.variants import InvalidOverride, Overrides, apply_variant, variant_label
from runner.engine.executor import EnvironmentProbeFailed, probe_environment
from runner.worker.config import BuildEntry


class BuildUnavailable(LookupError):
    """This worker has no interpreter for the requested build (another worker of the class may)."""


@dataclass(frozen=True)
class LocalBuild:
    python: str
    environment: dict  # ``python -m runner environment`` of that interpreter
    catalog: dict = field(default_factory=dict, compare=False)  # its torch's config keys (``config_catalog``)

    @property
    def key(self) -> tuple[str, str]:
        build = self.environment["build"]
        return build["git_sha"], build.get("local_label") or ""


@dataclass
class LocalBuilds:
    builds: list[LocalBuild] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)  # {"python", "error"} for each that failed

    @classmethod
    def probe(cls, entries: tuple[BuildEntry, ...]) -> LocalBuilds:
        found = cls()
        for entry in entries:
            python = shutil.which(entry.python)
            if python is None:
                found.errors.append({"python": entry.python, "error": "not an executable file"})
                continue
            try:
                environment = probe_environment(python, timeout_s=300, overrides=entry.overrides or None, catalog=True)
            except EnvironmentProbeFailed as exc:
                found.errors.append({"python": entry.python, "error": str(exc)[-2000:]})
                continue
            problems = environment.pop("override_problems", [])
            if problems:  # a variant whose keys this torch lacks: reported, never run
                found.errors.append({"python": entry.python, "error": "; ".join(f"{p['field']}: {p['message']}" for p in problems)})
                continue
            if entry.local_label is not None:
                environment["build"]["local_label"] = entry.local_label
            if entry.overrides:  # a variant: its own build (label derived), the overrides in its documents
                base = environment["build"].get("local_label") or ""
                environment["build"]["local_label"] = variant_label(base, entry.overrides)
                environment["build"]["overrides"] = entry.overrides.as_document()
            catalog = environment.pop("config_catalog", None) or {}  # reported apart: never in run documents
            found.builds.append(LocalBuild(python=python, environment=environment, catalog=catalog))
        return found

    def find(self, *, git_sha: str, local_label: str, overrides: dict | None = None) -> LocalBuild:
        """The interpreter of a build; for a variant made on the dashboard (the API, the admin, a
        nightly), the interpreter of its base build (its label derives from the base's), described
        as the variant: the case applies the overrides its message carries."""
        for build in self.builds:
            if build.key == (git_sha, local_label or ""):
                return build
        if variant := self._variant_of_base(git_sha=git_sha, local_label=local_label or "", overrides=overrides):
            return variant
        have = ", ".join(f"{sha[:12]}{'+' + label if label else ''}" for sha, label in (b.key for b in self.builds)) or "none"
        raise BuildUnavailable(f"no interpreter here for build {git_sha[:12]}{'+' + local_label if local_label else ''} (have: {have})")

    def _variant_of_base(self, *, git_sha: str, local_label: str, overrides: dict | None) -> LocalBuild | None:
        try:
            # screened before (runner.worker.screening): the message's settings are admitted here
            wanted = Overrides.recorded(overrides) if overrides else Overrides()
        except InvalidOverride:
            return None
        if not wanted:
            return None
        for base in self.builds:
            sha, label = base.key
            if sha == git_sha and not base.environment["build"].get("overrides") and variant_label(label, wanted) == local_label:
                environment = {**base.environment, "build": apply_variant(base.environment["build"], wanted)}
                return LocalBuild(python=base.python, environment=environment, catalog=base.catalog)
        return None

    def report(self) -> list[dict]:
        return [{"python": b.python, "environment": b.environment, "config_catalog": b.catalog} for b in self.builds]


def intake_config():
    """The worker's own intake settings (PTBENCH_INTAKE_*, or its file), None without them."""
    from runner.intake.config import IntakeConfig  # noqa: PLC0415 (the intake package only where intake is asked for)

    return IntakeConfig.from_env()


def add_taken_in(builds: LocalBuilds, config_) -> None:
    """The environments taken in before (found on disk) join the builds this worker runs (issue #41)."""
    from runner.intake.take import taken_in_builds  # noqa: PLC0415

    known = {b.python for b in builds.builds}
    for python, environment, catalog in taken_in_builds(config_):
        if python not in known:
            builds.builds.append(LocalBuild(python=python, environment=environment, catalog=catalog))
