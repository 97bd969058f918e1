"""Two stored builds that are one build: the same torch commit with the same compiler overrides
(issue #27 item 1). The quick start stores the local measurement ``<sha>+cpu`` beside the imported
sample ``<sha>+cpu.imported``: two refs, one piece of code. Nothing compares such a pair as before and
after (no finding, no coloured change, no verdict): the previous-build comparisons skip it, a finding
between them is never recorded, and a comparison asked for by name answers ``SAME_BUILD``
(docs/machine-classes-and-verdicts.md)."""
from __future__ import annotations

SAME_BUILD = "same build: nothing to compare"


def same_build(a, b) -> bool:
    """Whether builds ``a`` and ``b`` (Build rows, or anything with ``git_sha`` and ``overrides``)
    hold the same code: one row, or one known sha with equal overrides."""
    if a is None or b is None:
        return False
    if getattr(a, "pk", None) is not None and a.pk == getattr(b, "pk", None):
        return True
    return a.git_sha == b.git_sha and a.git_sha != "unknown" and (a.overrides or {}) == (b.overrides or {})


def same_build_message(a, b, *, ref) -> str:
    """``SAME_BUILD`` naming both refs (``ref``: a build -> its ref)."""
    names = ref(a) if getattr(a, "pk", None) == getattr(b, "pk", None) else f"{ref(a)} and {ref(b)}"
    return f"{SAME_BUILD} ({names}: the same commit{' and overrides' if a.overrides else ''})"


def same_build_ids(a_id: int | None, b_id: int | None) -> bool:
    """``same_build`` of two stored builds named by id (one query; False when either is None)."""
    from dashboard.results.models import Build  # noqa: PLC0415 (models import nothing of this module)

    if a_id is None or b_id is None:
        return False
    if a_id == b_id:
        return True
    builds = list(Build.objects.filter(pk__in=[a_id, b_id]).only("git_sha", "overrides"))
    return len(builds) == 2 and same_build(*builds)
