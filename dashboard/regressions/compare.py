"""/compare/ judged by the noise model (issue #17): every timed change against where two runs of
one unchanged build differ 95 % of the time on its series, the A/B page's rule
(``dashboard.regressions.noise.series_noise_bands``); the comparison itself is
``dashboard.results.selectors.compare``."""
from __future__ import annotations

from dashboard.regressions.noise import class_noise_bands, class_priors
from dashboard.results.models import Build
from dashboard.results.selectors.common import METRICS
from dashboard.results.selectors.compare import Comparison, NoiseBands, builds_compare


def compare_noise_bands(*, base: Build, head: Build, machine_class: str) -> NoiseBands:
    """Per series, its noise bands from its newest builds up to the base, without the head build
    (the change judged)."""
    priors = class_priors(machine_class=machine_class, upto=base)
    return class_noise_bands(machine_class=machine_class, upto=base, without_build=head.id, metrics=METRICS, priors=priors)


def builds_compare_judged(*, base: Build, head: Build, machine_class: str, metric: str = "speedup",
                          threshold: float = 0.05) -> Comparison:
    """``builds_compare`` with each timed change judged against its series' noise band."""
    bands = compare_noise_bands(base=base, head=head, machine_class=machine_class)
    return builds_compare(base=base, head=head, machine_class=machine_class, noise_bands=bands, metric=metric,
                          threshold=threshold)
