"""A compiled case slower than eager, and its likeliest cause from its kernel profile
(``contract.eager_gap``): what the workload page says beside a speedup under 1 (#42 item 9)."""
from __future__ import annotations

from contract.eager_gap import slower_than_eager
from dashboard.results.models import Result


def slower_than_eager_cause(result: Result | None) -> dict | None:
    """The cause (``contract.eager_gap.slower_than_eager``) of a passing result whose speedup is under
    1, read from its kernel profile; None for a faster one, a failed one or one without a profile."""
    if result is None or result.status != "pass" or result.speedup is None or result.speedup >= 1:
        return None
    return slower_than_eager(result.kernel_profile, dtype=result.config.case_config.dtype)


def with_slower_than_eager_causes(results: list[Result]) -> list[Result]:
    """``results``, each with ``slower_cause``: its cause, or None."""
    for result in results:
        result.slower_cause = slower_than_eager_cause(result)
    return results
