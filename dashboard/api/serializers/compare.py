"""Two builds compared: the query, a row's change, the cases on one side only, the page."""
from __future__ import annotations

from rest_framework import serializers

from dashboard.results.selectors.compare import FILTERS, SORT_KEYS
from dashboard.api.serializers.common import ConfigSerializer, METRIC_CHOICES, Strict, StrictCharField, build_ref_field, machine_class_field


# --- compare ---------------------------------------------------------------------------------------
class CompareQuerySerializer(Strict):
    head = build_ref_field()
    base = build_ref_field(required=False, help_text="default: the build measured just before head on the machine class")
    machine_class = machine_class_field(required=False, help_text="default: head's machine class when it has one")
    metric = serializers.ChoiceField(choices=METRIC_CHOICES, default="speedup", help_text="decides regressed / improved")
    threshold = serializers.FloatField(default=5.0, min_value=0.0, max_value=1000.0, help_text="percent")
    filter = serializers.ChoiceField(choices=FILTERS, default="all")
    sort = serializers.ChoiceField(choices=("",) + SORT_KEYS, default="", required=False)
    dir = serializers.ChoiceField(choices=("asc", "desc"), default="asc")


class ChangeSerializer(serializers.Serializer):
    old = serializers.FloatField(allow_null=True)
    new = serializers.FloatField(allow_null=True)
    change = serializers.FloatField(allow_null=True, help_text="relative: new / old - 1")
    tone = StrictCharField(help_text="better, worse, same (a timed change within its noise), too_noisy (the series' run-to-run sd is past 20 %: not judged), reference_changed "
                           "(compile_cpu_ratio measured against different compile references: not compared) or empty")
    noise = serializers.FloatField(allow_null=True, help_text="relative: where two runs of one unchanged build differ 95 % of the time")


class CompareRowSerializer(serializers.Serializer):
    workload = StrictCharField()
    config = ConfigSerializer(source="cfg")
    base_status = StrictCharField()
    head_status = StrictCharField()
    base_result = serializers.IntegerField(source="base_result_id")
    head_result = serializers.IntegerField(source="head_result_id")
    flags = serializers.SerializerMethodField(help_text="regressed, improved, new_failures, new_graph_breaks")
    changes = serializers.DictField(child=ChangeSerializer(), help_text="per metric")

    def get_flags(self, row) -> list[str]:
        return sorted(row.flags)


class OneSidedSerializer(serializers.Serializer):
    workload = StrictCharField()
    config = StrictCharField()
    status = StrictCharField()
    result = serializers.IntegerField(source="result_id")


class ComparePageSerializer(serializers.Serializer):
    base = StrictCharField()
    head = StrictCharField()
    machine_class = StrictCharField()
    metric = StrictCharField()
    threshold = serializers.FloatField(help_text="percent")
    common = serializers.IntegerField(help_text="cases present in both builds")
    summary = serializers.DictField(child=ChangeSerializer(), help_text="geomean (totals for counts) over the rows kept")
    only_base = OneSidedSerializer(many=True)
    only_head = OneSidedSerializer(many=True)
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = CompareRowSerializer(many=True)
