"""Deterministic findings: failing cases, graph breaks, recompiles, the dynamic-shape gap."""
from __future__ import annotations

import pytest

from detection import compare_cases, dynamic_gap

ITEM = ("Unsupported Tensor.item() call with capture_scalar_outputs=False\n  Explanation: Dynamo does not support "
        "tracing `Tensor.item()`.\n\n For more details about this graph break, please visit: https://x")
NONZERO = "Dynamic shape operator\n  Explanation: Operator `aten.nonzero.default`'s output shape depends on data."


def case(status="pass", breaks=(), recompiles=(), count=None, error=None):
    out = {"status": status, "graph_breaks": [dict(b) for b in breaks], "recompiles": [dict(r) for r in recompiles],
           "error": error}
    if count is not None:
        out["recompile_count"] = count
    return out


def test_nothing_changed_is_no_finding():
    a = case(breaks=[{"reason": ITEM, "location": "m.py:10", "count": 1}], recompiles=[{"reason": "size mismatch u0", "count": 1}])
    b = case(breaks=[{"reason": ITEM.replace("https://x", "https://y"), "location": "m.py:10", "count": 1}],
             recompiles=[{"reason": "size mismatch u1", "count": 1}])
    assert compare_cases(a, b) == []


def test_the_same_break_from_another_venv_or_with_reworded_hints_is_not_new():
    """Seen across PyTorch releases: each build's venv path is in the debug context, and the hint
    text is rewritten between releases; neither makes the break new. Another break type is."""
    skipped = ("Attempted to inline function marked as skipped\n  Explanation: Dynamo developers have marked it.\n"
               "  Hint: {hint}\n\n  Developer debug context: qualname: Optimizer.zero_grad, filename: "
               "`/work/builds/torch-{v}/lib/python3.11/site-packages/torch/_compile.py` (/home/{v}/ptbench/workloads/suite/x.py:3)")
    old = case(breaks=[{"reason": skipped.format(v="2.12.1", hint="Avoid calling the function."), "location": None, "count": 1}])
    new = case(breaks=[{"reason": skipped.format(v="2.13.0", hint="Remove the call, or wrap it."), "location": None, "count": 1}])
    assert compare_cases(old, new) == []
    other = case(breaks=[{"reason": skipped.replace("Attempted to inline", "Attempted to call").format(v="2.13.0", hint="x"),
                          "location": None, "count": 1}])
    assert [f.kind for f in compare_cases(old, other)] == ["new_graph_break"]
    # torch's own source lines move between releases; a location one build could not tell is no news.
    moved = case(breaks=[{"reason": NONZERO, "location": "torch/optim/optimizer.py:79 in _use_grad", "count": 1}])
    assert compare_cases(case(breaks=[{"reason": NONZERO, "location": "torch/optim/optimizer.py:80 in _use_grad", "count": 1}]), moved) == []
    assert compare_cases(case(breaks=[{"reason": NONZERO, "location": None, "count": 1}]), moved) == []
    assert [f.kind for f in compare_cases(case(breaks=[{"reason": NONZERO, "location": "moe.py:40", "count": 1}]),
                                          case(breaks=[{"reason": NONZERO, "location": "moe.py:90", "count": 1}]))] == ["new_graph_break"]


def test_started_failing_reports_the_error_text():
    err = {"type": "torch._inductor.exc.InductorError", "message": "AssertionError: failed\nmore lines"}
    (f,) = compare_cases(case(), case("compile_error", error=err))
    assert f.kind == "started_failing" and f.regression
    assert f.message == "started failing: pass -> compile_error: torch._inductor.exc.InductorError: AssertionError: failed"
    assert f.reasons == ("torch._inductor.exc.InductorError: AssertionError: failed\nmore lines",)
    assert compare_cases(None, case("oom"))[0].kind == "started_failing"
    assert compare_cases(case("oom"), case("timeout"))[0].kind == "status_changed"
    fixed = compare_cases(case("oom"), case())
    assert [(f.kind, f.regression) for f in fixed] == [("fixed", False)]


def test_new_graph_break_reason_is_reported_with_its_text_and_location():
    old = case(breaks=[{"reason": NONZERO, "location": "moe.py:40", "count": 1}])
    new = case(breaks=[{"reason": NONZERO, "location": "moe.py:40", "count": 1},
                       {"reason": ITEM, "location": "pos.py:12", "count": 2}])
    (f,) = compare_cases(old, new)
    assert f.kind == "new_graph_break"
    assert f.reasons == (ITEM,)
    assert "pos.py:12" in f.message and "Unsupported Tensor.item()" in f.message
    # the totals too: the board reads 1 -> 3 as counts read everywhere (fewer is better)
    assert f.details == {"locations": ["pos.py:12"], "counts": [2], "before": 1, "after": 3}


def test_more_graph_breaks_with_the_same_reasons():
    old = case(breaks=[{"reason": NONZERO, "location": "moe.py:40", "count": 1}])
    new = case(breaks=[{"reason": NONZERO, "location": "moe.py:40", "count": 3}])
    (f,) = compare_cases(old, new)
    assert f.kind == "more_graph_breaks" and f.details == {"before": 1, "after": 3} and f.reasons == (NONZERO,)


def test_recompiles():
    old = case(recompiles=[{"reason": "tensor 'x' size mismatch at index 0. expected 64, actual 48", "count": 1}])
    new_reason = "___check_obj_id(L['self'].mode, 140234)"
    new = case(recompiles=old["recompiles"] + [{"reason": new_reason, "count": 2}])
    (f,) = compare_cases(old, new)
    assert f.kind == "new_recompile_reason" and f.reasons == (new_reason,)
    assert f.details == {"before": 1, "after": 3} and "1 -> 3" in f.message
    more = case(recompiles=[{"reason": old["recompiles"][0]["reason"], "count": 4}])
    (g,) = compare_cases(old, more)
    assert g.kind == "more_recompiles" and g.details == {"before": 1, "after": 4}
    # a count given explicitly (metrics.recompile_count) wins over the list
    assert compare_cases(case(count=2), case(count=5))[0].details == {"before": 2, "after": 5}
    assert compare_cases(case(count=5), case(count=2)) == []


def test_dynamic_gap_opening_past_the_threshold():
    backed = [1.20, 1.21, 1.20, 1.21]
    unbacked = [1.19, 1.20, 1.19, 1.05]
    (f,) = dynamic_gap(backed, unbacked, threshold=0.05)
    assert f.kind == "dynamic_gap" and f.details["gap"] < -0.1 and f.details["previous_gap"] > -0.05
    assert f.message == "unbacked/backed speedup 0.992 -> 0.868, below 0.95"
    assert dynamic_gap(backed[:3], unbacked[:3]) == []  # within the threshold
    assert dynamic_gap(backed, [1.0, 1.0, 1.0, 1.0]) == []  # already open: reported when it opened
    assert dynamic_gap([1.2, None], [1.0, 1.0]) == []  # newest build lacks a value
    assert len(dynamic_gap([1.2], [1.0])) == 1  # first build with both, already past it
    assert f.to_dict()["reasons"] == []


def test_the_gap_is_worded_as_the_ratio_unbacked_over_backed():
    """Issue #17 item 3: the ratio unbacked/backed, never "gap minus one" or a percent "vs backed"."""
    (f,) = dynamic_gap([1.0, 1.0], [1.449, 0.808])
    assert f.message == "unbacked/backed speedup 1.449 -> 0.808, below 0.95"
    assert "%" not in f.message and "vs backed" not in f.message
    assert f.details["gap"] == pytest.approx(-0.192) and f.details["previous_gap"] == pytest.approx(0.449)
    (first,) = dynamic_gap([1.25], [1.0])
    assert first.message == "unbacked/backed speedup 0.800 (first build with both), below 0.95"


def test_an_already_failing_case_failing_for_the_machine_is_no_regression():
    """Issue #42: crash -> oom on a GPU shared by nine streams (an unchanged build): the failure
    changed, the build did not regress; from a pass an oom is still started_failing."""
    assert [(f.kind, f.regression) for f in compare_cases(case("crash"), case("oom"))] == [("status_changed", False)]
    assert [(f.kind, f.regression) for f in compare_cases(case("oom"), case("crash"))] == [("status_changed", True)]
    assert [(f.kind, f.regression) for f in compare_cases(case("pass"), case("oom"))] == [("started_failing", True)]
