"""Bisection over a variant's overrides (docs/bisect.md): the chain of variants searched, and the
search for a partner of the override found. The first bad variant of the chain base, +o1, +o1+o2, ...
names override o_k, added to the ones before it. Whether o_k makes it bad alone or only with one of
o_1..o_{k-1}: a second bisection over base, base+o_k, base+o_k+o1, ..., base+o_k+o1+...+o_{k-1}, its
ends (base, and the same overrides as the first bad variant) seeded with the values the first one
measured. Its first bad build base+o_k means o_k alone; base+o_k+...+o_j means the pair (o_k, o_j).
"""
from __future__ import annotations

from contract.variants import Overrides
from dashboard.regressions.models import Bisection
from dashboard.results.models import Build
from dashboard.results.variants import overrides_stored
from dashboard.results.services import variant_get_or_create


def override_chain(*, base: Build, variant: Build) -> tuple[list[Build], list[list]]:
    """The variants from ``base`` to ``variant``, one more of ``variant``'s overrides each (config keys,
    then environment names, in name order): [base, base+o1, base+o1+o2, ..., variant]."""
    overrides = overrides_stored(variant)
    items = [["config", k, v] for k, v in overrides.config.items()] + [["env", k, v] for k, v in overrides.env.items()]
    return _chain(base=base, first=[], items=items), items


def _chain(*, base: Build, first: list[list], items: list[list]) -> list[Build]:
    """[base+first, base+first+items[0], ...]: base itself where ``first`` is empty."""
    return [variant_get_or_create(base=base, overrides=_overrides_of(first + items[:n])) for n in range(len(items) + 1)]


def _overrides_of(items: list[list]) -> Overrides:
    return Overrides.recorded({"config": {k: v for kind, k, v in items if kind == "config"},
                               "env": {k: v for kind, k, v in items if kind == "env"}})


def _named(item: list) -> str:
    section, key, value = item
    return f"{section}.{key}={value}"


def partner_search_new(*, parent: Bisection, values: dict[int, list[float]]) -> Bisection | None:
    """After an overrides bisection found o_k with overrides before it: the bisection of its partner
    (the caller requests its first runs), its ends seeded from ``values`` (the parent's, per index).
    None when o_k is the first override (the chain showed it bad alone)."""
    found = parent.high - 1
    if parent.kind != Bisection.Kind.OVERRIDES or found < 1:
        return None
    base = Build.objects.get(pk=parent.builds[0])
    items = [parent.overrides[found], *parent.overrides[:found]]
    chain = [base, *_chain(base=base, first=items[:1], items=items[1:])]
    parent.result = {**parent.result, "partner_search": "running",
                     "message": parent.result.get("message", "") + f"; does {_named(items[0])} need one of the "
                     "overrides before it? measuring it alone"}
    seed = {"0": values[0], str(len(chain) - 1): values[parent.high]}
    return Bisection.objects.create(
        parent=parent, series=parent.series, metric=parent.metric, kind=Bisection.Kind.OVERRIDES, size=parent.size,
        backend=parent.backend, builds=[b.id for b in chain], overrides=items, low=0, high=len(chain) - 1,
        attempts=parent.attempts, max_attempts=parent.max_attempts, max_steps=parent.max_steps,
        max_runs=parent.max_runs, requested_by=parent.requested_by,
        result={"builds": len(chain), "seed": seed, "reproduced": True},
    )


def partner_search_ended(*, child: Bisection) -> None:
    """A partner search ended: its parent's result says whether the override acts alone or with which."""
    parent = Bisection.objects.select_for_update().get(pk=child.parent_id)
    first = _named(child.overrides[0])
    steps, runs = len(parent.steps) + len(child.steps), parent.result.get("runs", 0) + child.result.get("runs", 0)
    if child.status == Bisection.Status.DONE and child.high == 1:
        parent.result = {**parent.result, "alone": True,
                         "message": f"override {first} makes it bad on its own: {steps} steps, {runs} runs"}
    elif child.status == Bisection.Status.DONE:
        partner = _named(child.overrides[child.high - 1])
        parent.result = {**parent.result, "pair": [first, partner], "alone": False,
                         "message": f"overrides {first} and {partner} make it bad together (neither does without the "
                                    f"other): {steps} steps, {runs} runs"}
    else:
        parent.result = {**parent.result, "message": f"override {first} makes it bad with the ones before it; "
                         f"the search for which one is {child.status}: {child.result.get('message', '')}"}
    parent.result["partner_search"] = child.status
    parent.save(update_fields=["result"])
