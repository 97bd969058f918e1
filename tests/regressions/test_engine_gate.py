"""The engine's alerts held until their newest build runs again (dashboard.regressions.engine_gate):
a re-run off the same way confirms, one back at the level drops it, no re-run waits for the next
build. Pure: no database."""
import math

from dashboard.regressions.engine_gate import CONFIRMED, PENDING, REJECTED, gate_state

HIGHER, LOWER = "higher_is_better", "lower_is_better"


def _state(runs, *, z=-6.0, direction=HIGHER, raised_at=2):
    after = 2.0 * math.exp(0.05 if direction == LOWER else -0.05)  # a 5-sd shift
    return gate_state(runs, raised_at=raised_at, before=2.0, after=after, noise=0.01, z=z, direction=direction)


def test_a_re_run_off_the_alerts_way_confirms_and_one_back_at_the_level_rejects():
    drop = 2.0 * math.exp(-0.05)
    assert _state([[2.0], [drop], [drop, 2.0 * math.exp(-0.03)]]) == (CONFIRMED, "remeasurement")
    assert _state([[2.0], [drop], [drop, 2.0 * math.exp(-0.005)]]) == (REJECTED, "remeasurement")  # half a noise sd off
    assert _state([[2.0], [drop], [drop, 2.0 * math.exp(-0.015)]]) == (REJECTED, "remeasurement")  # nearer the old level
    assert _state([[2.0], [drop], [drop, 2.0 * math.exp(+0.03)]]) == (REJECTED, "remeasurement")  # off the other way


def test_with_one_run_the_next_build_decides_and_before_it_the_alert_waits():
    drop = 2.0 * math.exp(-0.05)
    assert _state([[2.0], [drop], [drop]]) == (PENDING, None)
    assert _state([[2.0], [drop], [drop], [], [drop]]) == (CONFIRMED, "next_build")  # a build without a value is skipped
    assert _state([[2.0], [drop], [drop], [2.0]]) == (REJECTED, "next_build")


def test_the_direction_counts_and_an_alert_without_a_noise_stands():
    rise = 2.0 * math.exp(0.05)  # a latency that grew: worse, z negative
    assert _state([[2.0], [rise], [rise, rise]], direction=LOWER) == (CONFIRMED, "remeasurement")
    assert _state([[2.0], [rise], [rise, 2.0]], direction=LOWER) == (REJECTED, "remeasurement")
    assert gate_state([[2.0], [1.0]], raised_at=1, before=2.0, after=1.0, noise=0.0, z=-9.0, direction=HIGHER) == (CONFIRMED, None)
