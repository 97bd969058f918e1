"""/compare/ judged by the noise model (issue #17): every timed change against where two runs of
one unchanged build differ 95 % of the time on its series, the A/B page's rule
(``dashboard.regressions.noise``; the bands of a whole machine class are stored once per window of
builds, ``dashboard.regressions.services.noise_bands``); the comparison itself is
``dashboard.results.selectors.compare``."""
from __future__ import annotations

from dashboard.regressions.colour_reasons import comparison_reasons
from dashboard.regressions.services.noise_bands import noise_bands_for_compare
from dashboard.results.models import Build
from dashboard.results.selectors.compare import Comparison, builds_compare


def builds_compare_judged(*, base: Build, head: Build, machine_class: str, metric: str = "speedup",
                          threshold: float = 0.05) -> Comparison:
    """``builds_compare`` with each timed change judged against its series' noise band: from its
    newest builds up to the base, without the head build (the change judged); each coloured change
    links its finding or says why it is none (``colour_reasons``)."""
    bands = noise_bands_for_compare(machine_class=machine_class, base=base, head=head)
    comparison = builds_compare(base=base, head=head, machine_class=machine_class, noise_bands=bands, metric=metric,
                                threshold=threshold)
    comparison_reasons(comparison, bands=bands)
    return comparison
