"""The interval a case reports (contract.case_interval, issue #44 item 6): the wider of its own and
where another run of its build falls by its series' (or class's) run-to-run sd, labelled."""
from __future__ import annotations

import math

import pytest

from contract.case_interval import CLASS, RUN_TO_RUN, WITHIN_RUN, case_interval, class_sd, halfwidth_of_sd, series_sds
from contract.findings import sd_of_halfwidth


def test_the_wider_of_the_two_and_which_one_it_is():
    # timm:resnet50 on one H200: ±0.06 % within its run against a 2.32 % run-to-run sd over six runs of one build
    narrow = case_interval(0.0006, 0.0232)
    assert narrow.source == RUN_TO_RUN and narrow.halfwidth == pytest.approx(math.expm1(1.96 * 0.0232)) and narrow.own == 0.0006
    assert math.log1p(narrow.halfwidth) >= 0.0232  # never narrower than the sd it stands for
    assert case_interval(0.05, 0.01).source == WITHIN_RUN and case_interval(0.05, 0.01).halfwidth == 0.05
    assert case_interval(0.001, 0.02, from_class=True).source == CLASS
    assert case_interval(0.004, None) == case_interval(0.004, float("nan")) == case_interval(0.004, 0.0)  # no sd: its own
    assert case_interval(None, None).halfwidth is None and case_interval(None, 0.01).source == RUN_TO_RUN
    assert sd_of_halfwidth(halfwidth_of_sd(0.03)) == pytest.approx(0.03)


def test_series_sd_from_repeated_runs_of_one_build_and_the_class_upper_quartile():
    rows = [("a", 1, 2.30), ("a", 1, 2.30 * math.exp(0.02)), ("a", 2, 9.0), ("b", 1, 1.0), ("b", 2, 1.5), ("c", 1, None)]
    sds = series_sds(rows)
    assert set(sds) == {"a"} and sds["a"] == pytest.approx(0.02 / math.sqrt(2))  # builds differ by their change, not noise
    assert class_sd({}) is None and class_sd({"x": 0.01}) == 0.01
    assert class_sd({i: v for i, v in enumerate([0.01, 0.02, 0.05, 0.001, 0.3])}) == pytest.approx(0.05)  # numpy.percentile(75)
    assert class_sd({i: v for i, v in enumerate([0.01, 0.02])}) == pytest.approx(0.0175)
