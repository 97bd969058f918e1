"""The API's list filters (django-filter): each query parameter is validated by its form field and a
bad one is answered 400 naming it (``dashboard.api.exceptions``); drf-spectacular documents them
from these classes. A list view names its ``filterset_class`` (``views.common.ApiListView``)."""
from __future__ import annotations

import datetime as dt

import django_filters as filters
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.forms.utils import ErrorDict, ErrorList
from drf_spectacular.utils import extend_schema_field

from contract.case_config import AXIS_NAMES, allowed
from contract.vocabulary import MACHINE_CLASS_PATTERN, SIZES
from dashboard.api.exceptions import FieldError
from contract.suggest import unknown_message
from dashboard.api.serializers import BUILD_REF_HELP, unknown_parameter, REGRESSION_FINDINGS, REGRESSION_KIND_FILTERS, REGRESSION_STATUS_FILTERS
from dashboard.results.models import Build, Result, Run, Series
from dashboard.results.selectors.build_refs import build_resolve
from dashboard.results.selectors.common import Ambiguous, NotFound, config_fields
from dashboard.results.selectors.names import machine_class_names, workload_names

def resolve_build(field: str, ref: str | None) -> Build | None:
    """The build a reference names; 404 (unknown) or 400 (malformed, ambiguous) naming ``field``."""
    if ref is None:
        return None
    try:
        return build_resolve(ref=ref)
    except ValueError as exc:
        raise FieldError(field, str(exc)) from None
    except NotFound as exc:
        raise FieldError(field, str(exc), 404) from None
    except Ambiguous as exc:
        raise FieldError(field, str(exc)) from None


def _choices(values) -> list[tuple[str, str]]:
    return [(v, v) for v in values]


class TextFilter(filters.CharFilter):
    """A string parameter, optionally matching ``pattern``, whose schema states its limits (the
    django-filter extension of drf-spectacular documents a CharFilter as any string)."""

    def __init__(self, *args, pattern: str | None = None, blank: bool = False, **kwargs):
        if pattern:
            kwargs["validators"] = [RegexValidator(pattern)]
        super().__init__(*args, **kwargs)
        schema = {"type": "string", **({} if blank else {"minLength": 1})}
        if "max_length" in kwargs:
            schema["maxLength"] = kwargs["max_length"]
        if pattern:
            schema["pattern"] = pattern
        extend_schema_field(schema)(self)


def machine_class_filter(field_name: str, help_text: str = "e.g. cpu, gpu-h100") -> filters.CharFilter:
    return TextFilter(field_name=field_name, max_length=64, pattern=MACHINE_CLASS_PATTERN, help_text=help_text)


def build_filter(field_name: str, help_text: str = BUILD_REF_HELP) -> filters.CharFilter:
    """A build reference, resolved (404 naming ``build`` when no build has it)."""
    def by_build(queryset, name, value):
        return queryset.filter(**{field_name: resolve_build(name, value)})

    return TextFilter(method=by_build, max_length=160, help_text=help_text)


class BlankMatchesFilter(TextFilter):
    """An exact match where the empty value counts too (``local_label=``: builds without one)."""

    def filter(self, qs, value):
        return qs.filter(**{self.field_name: value}) if self.field_name in self.parent.data else qs


class UtcDateTimeFilter(filters.IsoDateTimeFilter):
    """An ISO 8601 time, compared in UTC (PostgreSQL refuses offsets past 15:59, Python allows 23:59)."""

    def filter(self, qs, value):
        return super().filter(qs, utc_clamped(value) if value is not None else None)


def utc_clamped(value: dt.datetime) -> dt.datetime:
    """``value`` in UTC; a time before year 1 or after 9999 there (0001-01-01T00:00+14:00) is the
    first or last time Python holds, so ``since``/``until`` clamp instead of overflowing."""
    try:
        return value.astimezone(dt.timezone.utc)
    except OverflowError:
        edge = dt.datetime.min if value.year == dt.MINYEAR else dt.datetime.max
        return edge.replace(tzinfo=dt.timezone.utc)


KNOWN_NAMES = {"machine_class": machine_class_names, "workload": workload_names}
KNOWN_WHAT = {"machine_class": "machine class", "workload": "workload"}


class StrictFilterSet(filters.FilterSet):
    """Refuses a parameter it does not know (a typo in a filter must not silently widen the answer),
    one given twice, and an empty one (except ``blank_allowed``), each naming the parameter."""

    ignored = ("page", "page_size", "format")
    blank_allowed: tuple[str, ...] = ()
    renamed: dict[str, str] = {}  # an old parameter name -> its new one, named in the old one's error

    def strict_errors(self) -> ErrorDict:
        data = self.data
        unknown = sorted(k for k in data if k not in self.filters and k not in self.ignored)
        twice = [k for k in data if hasattr(data, "getlist") and len(data.getlist(k)) > 1]
        blank = [k for k in data if k in self.filters and k not in self.blank_allowed and not str(data[k]).strip()]
        if unknown:
            found = {k: f"renamed: use {self.renamed[k]}" if k in self.renamed else
                     unknown_parameter(k, self.filters) for k in unknown}
        else:
            found = {k: "given more than once" for k in twice} or {k: "This field may not be blank." for k in blank}
        found = found or self.unknown_values()
        # django-filter formats each message with %: a '%' the client sent (quoted in it) is escaped
        # ("?workload=%25ff" was a 500, issue #46's probe)
        return ErrorDict({k: ErrorList([ValidationError(message.replace("%", "%%"))]) for k, message in found.items()})

    def unknown_values(self) -> dict[str, str]:
        """A choice, machine class or workload this server does not know: named, with the value
        probably meant (``contract.suggest``); a known one with nothing stored is an empty answer."""
        found = {}
        for name, value in self.data.items():
            known = self.known_values(name)
            if known is not None and value not in known:
                found[name] = unknown_message(KNOWN_WHAT.get(name, name), value, known)
        return found

    def known_values(self, name: str):
        given = self.filters.get(name)
        if isinstance(given, filters.ChoiceFilter):
            return [str(value) for value, _ in given.extra["choices"]]
        if name in KNOWN_NAMES:
            return KNOWN_NAMES[name]()
        return None

    def is_valid(self) -> bool:
        return not self.strict_errors() and super().is_valid()

    @property
    def errors(self):
        return self.strict_errors() or self.form.errors


class BuildFilter(StrictFilterSet):
    machine_class = machine_class_filter("summaries__machine_class", help_text="measured or requested there, e.g. cpu, gpu-h100")
    torch_version = TextFilter(max_length=64)
    git_sha = TextFilter(lookup_expr="startswith", pattern=r"^[0-9a-f]{1,40}$", help_text="a prefix of the git sha")
    local_label = BlankMatchesFilter(max_length=100, blank=True, help_text="empty: builds without a local label")
    since = UtcDateTimeFilter(field_name="ordered_at", lookup_expr="gte", help_text="ordered_at at or after")
    until = UtcDateTimeFilter(field_name="ordered_at", lookup_expr="lte", help_text="ordered_at at or before")
    blank_allowed = ("local_label",)

    class Meta:
        model = Build
        fields: list[str] = []


class RunFilter(StrictFilterSet):
    build = build_filter("build")
    machine_class = machine_class_filter("machine__machine_class")
    status = filters.ChoiceFilter(choices=Run.Status.choices)
    size = filters.ChoiceFilter(choices=[(s, s) for s in SIZES], help_text="tiny or full")
    renamed = {"suite": "size (tiny or full; the size was called suite before #34)"}

    class Meta:
        model = Run
        fields: list[str] = []


# The workload and config of a case (results and series): a parameter per configuration field.
CaseFilter = type(
    "CaseFilter", (StrictFilterSet,),
    {"workload": TextFilter(field_name="workload__name", max_length=200), "__module__": __name__,
     "__doc__": "The workload and config of a case (results and series)."}
    | {axis: filters.ChoiceFilter(field_name=config_fields(axis)[0], choices=_choices(allowed(axis))) for axis in AXIS_NAMES},
)


class ResultFilter(CaseFilter):
    build = build_filter("build")
    run = filters.UUIDFilter(field_name="run_id")
    machine_class = machine_class_filter("series__machine_class")
    status = filters.ChoiceFilter(choices=Result.Status.choices)
    series = TextFilter(field_name="series__signature", pattern=r"^[0-9a-f]{40}$", help_text="a series signature")

    class Meta:
        model = Result
        fields: list[str] = []


class SeriesFilter(CaseFilter):
    machine_class = machine_class_filter("machine_class")

    class Meta:
        model = Series
        fields: list[str] = []


class RegressionFilter(StrictFilterSet):
    """Validated here, applied by the regressions app's ``regression_list`` (the one place that
    knows what ``status=open`` means; its pages and digests call it too)."""

    status = filters.ChoiceFilter(choices=_choices(REGRESSION_STATUS_FILTERS),
                                  help_text="open = untriaged, acknowledged or investigating; all = any status")
    build = TextFilter(max_length=160, help_text=f"the first bad build; {BUILD_REF_HELP}")
    workload = TextFilter(max_length=200)
    machine_class = machine_class_filter("machine_class")
    kind = filters.ChoiceFilter(choices=_choices(REGRESSION_KIND_FILTERS), help_text="all = regressions and improvements")
    metric = TextFilter(max_length=64)
    finding = filters.ChoiceFilter(choices=_choices(REGRESSION_FINDINGS))

    def filter_queryset(self, queryset):
        given = {name: value for name, value in self.form.cleaned_data.items() if value not in (None, "")
                 and not (name in ("status", "kind") and value == "all")}
        if "build" in given:
            given["build"] = resolve_build("build", given["build"])
        from dashboard.regressions.selectors import regression_list  # noqa: PLC0415 (the app may be left out: views.regressions)

        return regression_list(**given)

    def known_values(self, name: str):
        if name == "metric":
            from dashboard.regressions.selectors import finding_metric_names  # noqa: PLC0415 (as above)

            return finding_metric_names()
        return super().known_values(name)
