"""Series and their points: a series, the query of its points, a point with its band and the page of them."""
from __future__ import annotations

from rest_framework import serializers

from dashboard.results.selectors.common import RANGES
from dashboard.api.serializers.common import BUILD_REF_HELP, ConfigSerializer, METRIC_CHOICES, Strict, StrictCharField


# --- series ----------------------------------------------------------------------------------------
class SeriesSerializer(serializers.Serializer):
    signature = StrictCharField(help_text="the series' stable identity (workload x config x machine class)")
    workload = StrictCharField(source="workload.name")
    config = ConfigSerializer()
    machine_class = StrictCharField()


class SeriesPointsQuerySerializer(Strict):
    metric = serializers.ChoiceField(choices=METRIC_CHOICES, default="speedup")
    range = serializers.ChoiceField(choices=list(RANGES), default="all", help_text="time back from the series' newest build")


class MetricInfoSerializer(serializers.Serializer):
    name = StrictCharField()
    label = StrictCharField()
    unit = StrictCharField()
    higher_is_better = serializers.BooleanField()


class PointSerializer(serializers.Serializer):
    build = StrictCharField(help_text=BUILD_REF_HELP)
    at = serializers.DateTimeField(help_text="the build's ordered_at")
    run = serializers.UUIDField()
    result = serializers.IntegerField()
    status = StrictCharField()
    value = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True, help_text="noise band: where another run of this build falls 95% of "
                                 "the time (run-to-run noise model), or the run's own band if wider")
    high = serializers.FloatField(allow_null=True)


class NoiseSerializer(serializers.Serializer):
    sd = serializers.FloatField(help_text="relative run-to-run sd (sd of the log)")
    source = serializers.ChoiceField(choices=["series", "class", "default"],
                                     help_text="the series' own replicates, the machine class's prior, or the default")
    dof = serializers.IntegerField(help_text="the series' own degrees of freedom")


class SeriesPointsPageSerializer(serializers.Serializer):
    series = SeriesSerializer()
    metric = MetricInfoSerializer()
    noise = NoiseSerializer(allow_null=True, help_text="the run-to-run noise the +- and detection use")
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = PointSerializer(many=True, help_text="one point per build, oldest first")
