"""Every case message a worker receives is checked again before anything of it runs (issue #33).

The dashboard admits only settings that are data (``contract.settings_policy``), but a worker
trusts no message: one published on the broker directly, or made by an older dashboard, may carry
``TRITON_PTXAS_PATH=/tmp/evil.sh``. Its overrides (the spec's, which the case applies, and the
build's, by which the worker finds the interpreter) must be data or admitted by this machine's
``PTBENCH_ALLOW_SETTINGS``; else the case is failed with the reason and nothing is run or set.
"""
from __future__ import annotations

from contract.settings_policy import DATA_ONLY, Allowance, SettingsRefused
from contract.variants import InvalidOverride, Overrides


def message_settings_problems(*, spec: object, build: object, allow: Allowance = DATA_ONLY) -> list[dict]:
    """[{field, message}] for the first refused setting of the spec's and of the build's overrides."""
    spec = spec if isinstance(spec, dict) else {}
    stored = build.get("overrides") if isinstance(build, dict) else None
    stored = stored if isinstance(stored, dict) else {}
    problems = []
    for where, config, env in (("spec", spec.get("config_overrides"), spec.get("env_overrides")),
                               ("build.overrides", stored.get("config"), stored.get("env"))):
        try:
            Overrides.build(config, env, allow=allow)
        except InvalidOverride as exc:
            problems.append({"field": f"{where}.{exc.field}", "message": exc.message})
    return problems


def message_screen(*, spec: object, build: object, allow: Allowance = DATA_ONLY) -> None:
    """Raise ``SettingsRefused`` when a case message carries a setting this machine does not admit."""
    if problems := message_settings_problems(spec=spec, build=build, allow=allow):
        raise SettingsRefused(problems)
