"""The REST API's serializers, one module per resource (``common``: the strict fields, errors and
variant overrides every resource shares). Every serializer is importable from here."""
from dashboard.api.serializers.common import (  # noqa: F401 (the package's face)
    BUILD_REF_HELP, CONFIG_HELP, ConfigSerializer, DATA_ONLY_HELP, ENV_HELP, ErrorItemSerializer,
    ErrorSerializer, METRIC_CHOICES, OverridesInput, SHA_PATTERN, Strict, StrictCharField, StrictRegexField,
    WhoField, build_ref_field, machine_class_field, unknown_parameter,
)
from dashboard.api.serializers.builds import (  # noqa: F401 (the package's face)
    BuildDetailSerializer, BuildRefSerializer, BuildRegisterSerializer, BuildSerializer, MachineSerializer,
)
from dashboard.api.serializers.runs import (  # noqa: F401 (the package's face)
    ProgressSerializer, RunRequestSerializer, RunSerializer, SubmitOutcomeSerializer, SubmitQuerySerializer,
)
from dashboard.api.serializers.series import (  # noqa: F401 (the package's face)
    MetricInfoSerializer, NoiseSerializer, PointSerializer, SeriesPointsPageSerializer,
    SeriesPointsQuerySerializer, SeriesSerializer,
)
from dashboard.api.serializers.compare import (  # noqa: F401 (the package's face)
    ChangeSerializer, ComparePageSerializer, CompareQuerySerializer, CompareRowSerializer, OneSidedSerializer,
)
from dashboard.api.serializers.regressions import (  # noqa: F401 (the package's face)
    BISECTION_KINDS, BisectRequestSerializer, BisectionSerializer, BulkTriageSerializer, FindingNumbersFields,
    HostSlowedSerializer, REGRESSION_FINDINGS, REGRESSION_KINDS, REGRESSION_KIND_FILTERS, REGRESSION_STATUSES,
    REGRESSION_STATUS_FILTERS, RegressionSerializer, TriageOutcomeSerializer, TriageSerializer,
    VerdictNoteSerializer, VerdictQuerySerializer, VerdictRegressionSerializer, VerdictSerializer,
)
