"""#34: ``METRIC_DIRECTIONS`` named ``compression_ratio``, which no result stores: every name it gives
a direction is a metric a result stores, so a reader of the map never looks up a metric that is not."""
from __future__ import annotations

from detection import HIGHER_IS_BETTER, METRIC_DIRECTIONS
from dashboard.results.models import Result


def test_every_metric_with_a_direction_is_a_stored_metric():
    stored = {field.name for field in Result._meta.get_fields()}
    assert sorted(set(METRIC_DIRECTIONS) - stored) == []
    assert METRIC_DIRECTIONS["memory_compression"] == HIGHER_IS_BETTER  # eager peak / compiled peak
