"""What every page's reads share: the metrics and their direction, build identifiers, time ranges."""
from __future__ import annotations

import datetime as dt

from contract.case_config import AXIS_NAMES, OPTIONAL
from contract.metrics import SHOWN, Metric
from dashboard.results.models import Build, Config


class NotFound(LookupError):
    """A name or identifier that matches nothing stored."""


class Ambiguous(LookupError):
    """An identifier that matches more than one stored row."""


# The metrics the pages show per case, in order (contract.metrics: each one's label, unit and
# direction; counts are not noisy: they change or they don't).
METRICS: tuple[Metric, ...] = SHOWN
METRICS_BY_NAME = {m.name: m for m in METRICS}

# Time ranges of the trend charts (the "range" URL parameter), in days back from the newest build
# shown; None is the whole history.
RANGES: dict[str, int | None] = {"30d": 30, "90d": 90, "180d": 180, "1y": 365, "all": None}
DEFAULT_RANGE = "90d"


def build_ref(build: Build) -> str:
    """The identifier of a build in URLs: the first 12 hex digits of its git sha, then
    ``+<local_label>`` when it has one (e.g. ``70d99e998b49+cu130``). Readable and stable: it is
    what ``(git_sha, local_label)``, the build's unique key, says."""
    return ref_for(git_sha=build.git_sha, local_label=build.local_label)


def ref_for(*, git_sha: str, local_label: str) -> str:
    sha = git_sha if git_sha == "unknown" else git_sha[:12]
    return f"{sha}+{local_label}" if local_label else sha


def range_since(*, newest: dt.datetime | None, range_key: str) -> dt.datetime | None:
    days = RANGES[range_key]
    if days is None or newest is None:
        return None
    return newest - dt.timedelta(days=days)


def config_label(config: Config) -> str:
    return config.case_config.label


def config_fields(*axes: str, prefix: str = "config__") -> list[str]:
    """The ORM paths of configuration fields, to order by or read: ``config__tags__compile_mode``."""
    return list(config_lookups(prefix, **dict.fromkeys(axes)))


def config_lookups(prefix: str = "config__", **fields) -> dict:
    """ORM lookups of configurations by their fields, which storage keeps as tags (docs/case-config.md):
    ``config_lookups(compile_mode="default", dtype__in=[...])`` is
    ``{"config__tags__compile_mode": "default", "config__tags__dtype__in": [...]}``. Key
    lookups, not JSON containment: SQLite answers them too. ``dims=None`` selects the
    configurations that name no dims (every declared dim), ``dims=("batch",)`` those of exactly these."""
    for name in fields:
        if name.split("__")[0] not in AXIS_NAMES + OPTIONAL:
            raise ValueError(f"{name}: not a configuration field")
    lookups = {f"{prefix}tags__{name}": value for name, value in fields.items() if name != "dims"}
    if "dims" in fields:
        dims = fields["dims"]
        lookups.update({f"{prefix}tags__dims__isnull": True} if dims is None else {f"{prefix}tags__dims": list(dims)})
    return lookups
