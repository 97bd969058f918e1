"""/regressions/ as a morning board: one group per build x machine class, newest build first;
the unbacked/backed gap as a ratio; the CLI names a gap finding once."""
from __future__ import annotations

import re

import pytest

from dashboard.regressions.board import board_groups, board_order
from dashboard.regressions.models import Regression
from dashboard.regressions.selectors import regression_as_dict
from runner.ci import format_verdict
from tests.dashboard.page_history import ref_for_day
from tests.regressions.board_history import board_history

pytestmark = pytest.mark.django_db


def test_one_group_per_build_and_machine_class_newest_build_first():
    board_history()
    groups = board_groups(board_order(Regression.objects.all()))
    assert [(g.build.git_sha[:12], g.machine_class) for g in groups] == [
        (ref_for_day(3), "cpu"), (ref_for_day(3), "gpu-h100"), (ref_for_day(2), "cpu"), (ref_for_day(1), "cpu"),
    ]
    assert [len(g.rows) for g in groups] == [2, 1, 1, 1]
    assert groups[0].last_good.git_sha[:12] == ref_for_day(2)
    assert groups[-1].rows[0].baseline_state and not groups[0].rows[0].baseline_state


def test_rows_carry_before_after_change_noise_confidence_and_repro():
    board_history()
    groups = board_groups(board_order(Regression.objects.all()))
    speed, status = groups[0].rows
    n = speed.numbers
    assert (n.before, n.after, n.noise, n.confidence, n.direction) == (1.25, 1.0, 0.03, 0.97, "worse")
    assert n.change == pytest.approx(-0.2) and not n.certain
    assert speed.repro.startswith("python -m runner run")
    # a deterministic finding: a fact, confidence 1 (shown "certain") on every surface
    assert (status.numbers.before, status.numbers.after, status.numbers.certain) == ("pass", "compile_error", True)
    assert (status.numbers.confidence, status.numbers.confidence_text) == (1.0, "certain")


def test_the_gap_is_shown_as_unbacked_over_backed_never_gap_minus_one(client):
    board_history()
    gap = Regression.objects.get(metric="dynamic_gap", first_bad_build__git_sha__startswith=ref_for_day(2))
    assert regression_as_dict(gap)["before"] == pytest.approx(1.4493)
    assert regression_as_dict(gap)["after"] == pytest.approx(0.8082)
    html = client.get("/regressions/?status=all&kind=all").content.decode()
    assert "1.449× → 0.8082×" in html and "-0.1918" not in html
    assert "-44.2 % worse" in html  # the change of the ratio shown (0.8082 / 1.449 - 1), never the stored gap


def test_the_page_lists_groups_newest_build_first_with_copyable_repros(client):
    board_history()
    html = client.get("/regressions/?status=all&kind=all").content.decode()
    order = re.findall(r'<section class="alert-summary" data-build="([^"]+)" data-machine="([^"]+)"', html)
    assert order == [(ref_for_day(3), "cpu"), (ref_for_day(3), "gpu-h100"), (ref_for_day(2), "cpu"), (ref_for_day(1), "cpu")]
    assert html.count('class="copy" data-copy="#repro-') == 5


def test_the_cli_names_a_gap_finding_once_and_shows_the_ratio():
    board_history()
    gap = Regression.objects.get(metric="dynamic_gap", first_bad_build__git_sha__startswith=ref_for_day(2))
    text = format_verdict({"verdict": "regressed", "reason": "regressions_found", "build": "b", "baseline": "a",
                           "machine_class": "cpu", "regressions": [regression_as_dict(gap)]})
    assert "dynamic_gap dynamic_gap" not in text
    assert "dynamic_gap 1.449× → 0.8082× (-44.2 % worse), certain" in text  # as the page shows it
