"""The figures the pages state beside their charts: the gap's geomean with its extremes (/dynamic/)
and the run-to-run spread of a build measured several times (workload page)."""
from __future__ import annotations

import datetime as dt

import pytest

from dashboard.results.selectors.dynamic import Pair, Side, gap_summary, pair_failure
from dashboard.results.selectors.workloads import Point, run_spread


def side(speedup, status="pass"):
    return Side(status=status, speedup=speedup, compile_time_cold_s=1.0, graph_break_count=0, recompile_count=0)


def test_a_geomean_near_one_never_hides_its_extremes():
    # 0.123 and 8.010 average (geometrically) to 0.993: "no gap" unless the extremes are said.
    pairs = [Pair("slow", side(1.0), side(0.123)), Pair("fast", side(1.0), side(8.010)),
             Pair("broken", side(1.0), side(None, "compile_error")), Pair("alone", side(1.0), None)]
    summary = gap_summary(pairs)
    assert summary.geomean == pytest.approx(0.9926, abs=1e-4) and summary.count == 2
    assert (summary.worst.workload, summary.best.workload) == ("slow", "fast")
    assert summary.failed == [("broken", "unbacked compile_error")]


def test_failure_names_the_side_and_reads_stored_lists():
    assert pair_failure(side(1.0, "timeout"), side(1.0)) == "backed timeout"
    assert pair_failure(["pass", 1.0, 1, 0, 0], ["compile_error", None, None, None, None]) == "unbacked compile_error"
    assert pair_failure(["pass", 1.0, 1, 0, 0], None) is None


def point(build_id, speedups, statuses=None):
    runs = [{"speedup": s, "status": (statuses or {}).get(i, "pass")} for i, s in enumerate(speedups)]
    return Point(result_id=build_id, run_id="r", build_id=build_id, ref=str(build_id), at=dt.datetime(2026, 1, build_id),
                 status="pass", values={"speedup": speedups[-1]}, speedup_noise=None, eager_latency_ms=None, bands={}, runs=runs)


def test_run_spread_pools_the_builds_measured_more_than_once():
    # Build 1: 1.0 and 1.2 (mean 1.1, relative deviations +-0.0909); build 2: once; build 3: 2.0 twice
    # and a failed run left out. Each build's own level is taken out before pooling.
    spread = run_spread(points=[point(1, [1.0, 1.2]), point(2, [5.0]), point(3, [2.0, 2.0, 9.0], {2: "compile_error"})],
                        metric="speedup")
    assert (spread.runs, spread.builds) == (4, 2)
    assert spread.sd == pytest.approx(((2 * (0.1 / 1.1) ** 2) / 2) ** 0.5)
    assert run_spread(points=[point(1, [1.0])], metric="speedup").sd is None
