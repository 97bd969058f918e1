"""Build variants (issue #16): a build's overrides as stored, and the variant build of a base.

A variant is its own ``Build``: the base's torch version and git sha, ``local_label`` =
``contract.variants.variant_label(base local_label, overrides)``, the overrides in ``overrides``.
"""
from __future__ import annotations

from django.db.models import Q

from contract.reasons import BISECTION
from contract.settings_policy import RECORDED, Allowance
from contract.variants import InvalidOverride, Overrides, catalog_problems, variant_label
from contract.document import DocumentError, InvalidDocument
from dashboard.results.imported import IMPORTED_SUFFIX, is_imported_label


# Rows of plain builds only: a variant's results are its own series' points on its A/B page and run
# pages, never points of its base build's trends or of the history detection reads.
PLAIN_BUILD = Q(build__overrides={})
# The runs whose results are points of a series: all but bisection runs (``Run.reason``), which
# measure old builds to place a change and never stand for a build's level.
SERIES_RUNS = ~Q(run__reason=BISECTION)


def overrides_stored(build) -> Overrides:
    """A stored build's overrides (checked when it was stored)."""
    return Overrides.recorded(build.overrides)


def overrides_of_document(data: dict, *, allow: Allowance = RECORDED) -> Overrides:
    """A document's ``build.overrides``; raises InvalidDocument naming ``build.overrides.<field>``.
    By default a record of what a worker ran (its form checked; the worker checked what it ran);
    ``allow=DATA_ONLY`` where a client defines them (the API's ``runs/submit``: issue #33)."""
    try:
        return Overrides.from_document(data, allow=allow)
    except InvalidOverride as exc:
        raise InvalidDocument([DocumentError(f"build.overrides.{exc.field}", exc.message)]) from None


def variant_document(build: dict, overrides: Overrides) -> dict:
    """A run document's ``build`` object turned into its variant's (label derived, overrides set)."""
    if not overrides:
        return build
    return {**build, "local_label": variant_label(build.get("local_label") or "", overrides),
            "overrides": overrides.as_document()}


def _measured_label(local_label: str) -> tuple[str, bool]:
    """A label less its imported mark, and whether it had one: ``manage.py ingest --imported`` marks
    a variant's label after the overrides (``cu130.max_fusion_size-1.d3c0cc.imported``, base
    ``cu130.imported``), so a variant and its base are matched on what the runner named them."""
    if not is_imported_label(local_label):
        return local_label, False
    return local_label.removesuffix(IMPORTED_SUFFIX).removesuffix("."), True


def is_variant_of(build, base) -> bool:
    """Whether ``base``'s label is the one ``build``'s label was derived from (both imported or neither;
    the same sha is the caller's to check)."""
    (label, imported), (base_label, base_imported) = _measured_label(build.local_label), _measured_label(base.local_label)
    return imported == base_imported and (not base_label or label.startswith(base_label + "."))


def base_of(build):
    """The base build of a variant (same sha, the label before the overrides) when it is stored."""
    from dashboard.results.models import Build  # noqa: PLC0415

    if not build.overrides:
        return None
    label, imported = _measured_label(build.local_label)
    candidates = sorted((b for b in Build.objects.filter(git_sha=build.git_sha, overrides={}).exclude(pk=build.pk)
                         if _measured_label(b.local_label)[1] == imported), key=lambda b: -len(b.local_label))
    derived = [b for b in candidates if variant_label(_measured_label(b.local_label)[0], overrides_stored(build)) == label]
    # The runner names variants; a label it derived otherwise still starts with its base's.
    prefixed = [b for b in candidates if is_variant_of(build, b)]
    return (derived or prefixed or [None])[0]


class CatalogUnknown(LookupError):
    """A variant's config keys cannot be checked: its base build has not been probed yet (no
    config catalog). ``field`` names the body's field (``config``)."""

    def __init__(self, build, field_name: str = "config"):
        from dashboard.results.selectors.common import build_ref  # noqa: PLC0415

        self.build, self.field = build, field_name
        self.message = (f"build {build_ref(build)} has not been probed yet: its torch's config keys are unknown here, "
                        "so these overrides cannot be checked")
        super().__init__(self.message)


def catalog_of(build) -> dict:
    """The config catalog of a build's torch: its own, else its base's (a variant's torch is its base's)."""
    if build.config_catalog:
        return build.config_catalog
    base = base_of(build)
    return base.config_catalog if base is not None else {}


def variant_overrides_check(*, base, overrides: Overrides, field_prefix: str = "") -> None:
    """Check a variant's config keys against the config catalog of ``base``'s torch, before
    anything is stored. Raises ``InvalidDocument`` naming every bad key (``config.inductor.KEY``),
    or ``CatalogUnknown`` when ``base`` was never probed. Environment overrides need no catalog
    (their names were checked by ``contract.variants``)."""
    if not overrides.config:
        return
    catalog = catalog_of(base)
    if not catalog:
        raise CatalogUnknown(base, f"{field_prefix}config")
    problems = catalog_problems(overrides.config, catalog)
    if problems:
        raise InvalidDocument([DocumentError(field_prefix + p["field"], p["message"]) for p in problems])
