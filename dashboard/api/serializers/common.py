"""What every resource's serializers share: strict fields that refuse what cannot be stored, the error
body, a build variant's overrides, the names a query may give."""
from __future__ import annotations

from rest_framework import serializers

from contract.case_config import AXIS_NAMES
from contract.variants import InvalidOverride, Overrides
from contract.suggest import did_you_mean, unknown_message
from contract.vocabulary import MACHINE_CLASS_PATTERN
from dashboard.results.selectors.common import METRICS
from contract.values import text_problem, value_problems


SHA_PATTERN = r"^([0-9a-f]{7,40}|unknown)$"
BUILD_REF_HELP = "a build: the first 12 hex digits of its git sha (any unique prefix of 7+), then +local_label if it has one"


METRIC_CHOICES = [m.name for m in METRICS]


def _string_only(data):
    """DRF's CharField turns a number into its text (``git_sha: 1234567`` became "1234567"): a
    JSON value that is not a string is refused instead, naming its type; so is a string the
    database cannot store (``contract.values``: a NUL, an unpaired surrogate)."""
    if not isinstance(data, str):
        raise serializers.ValidationError(f"expected a string, got {type(data).__name__}")
    if problem := text_problem(data):
        raise serializers.ValidationError(problem)
    return data


def _storable(value, field: str):
    """A JSON field's value checked by ``contract.values`` (strings, numbers, nesting): 400 naming
    the first bad entry, e.g. ``env.TORCH_X`` or ``environment.a.b``."""
    problems = value_problems(value, [field])
    if problems:
        raise serializers.ValidationError({f.removeprefix(field).lstrip(".") or "non_field_errors": [m] for f, m in problems[:10]})
    return value


class StrictCharField(serializers.CharField):
    def to_internal_value(self, data):
        return super().to_internal_value(_string_only(data))


class StrictRegexField(serializers.RegexField):
    def to_internal_value(self, data):
        return super().to_internal_value(_string_only(data))


class WhoField(StrictCharField):
    """Who did a write (``requested_by``, ``status_changed_by``). A dashboard account's user name
    (a staff member) is shown only to a reader who holds a token or is signed in; anyone else
    reads ``staff``. CI systems (``api:<name>``) and labels (``schedule``) are shown to all."""

    def to_representation(self, value):
        value = super().to_representation(value)
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if not value or (user is not None and user.is_authenticated):
            return value
        cache = self.context.setdefault("_accounts", {})
        if value not in cache:
            from dashboard.api.selectors import account_names  # noqa: PLC0415

            cache[value] = bool(account_names(names=[value]))
        return "staff" if cache[value] else value


def machine_class_field(**kwargs):
    kwargs.setdefault("help_text", "e.g. cpu, gpu-h100")
    return StrictRegexField(MACHINE_CLASS_PATTERN, max_length=64, **kwargs)


def build_ref_field(**kwargs):
    kwargs["help_text"] = f"{kwargs['help_text']}; {BUILD_REF_HELP}" if "help_text" in kwargs else BUILD_REF_HELP
    return StrictCharField(max_length=160, **kwargs)


class Strict(serializers.Serializer):
    """Refuses fields it does not know (a typo in a filter must not silently widen the answer)."""

    ignored = ("page", "page_size", "format")

    def to_internal_value(self, data):
        known = set(self.fields) | set(self.ignored)
        unknown = sorted(k for k in getattr(data, "keys", lambda: [])() if k not in known)
        if unknown:
            raise serializers.ValidationError({k: [unknown_parameter(k, self.fields)] for k in unknown})
        if hasattr(data, "getlist"):  # a query string: one value per parameter
            twice = [k for k in data.keys() if len(data.getlist(k)) > 1]
            if twice:
                raise serializers.ValidationError({k: ["given more than once"] for k in twice})
        # a value that is not one of a choice's: named with the one probably meant (contract.suggest)
        wrong = {name: [unknown_message(name, str(data[name]), map(str, field.choices))]
                 for name, field in self.fields.items() if isinstance(field, serializers.ChoiceField)
                 and name in data and isinstance(data[name], str) and data[name] not in map(str, field.choices)}
        if wrong:
            raise serializers.ValidationError(wrong)
        return super().to_internal_value(data)


def unknown_parameter(name: str, known) -> str:
    guess = did_you_mean(name, known)
    return f"unknown parameter{f'; did you mean {guess!r}?' if guess else ''} expected one of {', '.join(sorted(known))}"


# --- errors (documented on every operation) --------------------------------------------------------
class ErrorItemSerializer(serializers.Serializer):
    field = StrictCharField(allow_null=True, help_text="body path (results[3].status), parameter, header, 'body', or null")
    message = StrictCharField()


class ErrorSerializer(serializers.Serializer):
    status = serializers.IntegerField()
    detail = StrictCharField(help_text="the first error's message")
    errors = ErrorItemSerializer(many=True)


# --- build variants (issue #16) --------------------------------------------------------------------
DATA_ONLY_HELP = ("; only settings that are data: a path, program, compiler, library or remote cache is refused "
                  "(400 naming the key; docs/variants-and-settings.md)")
CONFIG_HELP = ('a build variant\'s compiler settings, {"inductor.KEY": value} (sections inductor, dynamo, functorch): '
               "true/false, numbers, null, or a known enumeration's value" + DATA_ONLY_HELP)
ENV_HELP = ('a build variant\'s environment, {"TORCHINDUCTOR_X": "1"} (TORCHINDUCTOR_*, TORCH_*, TRITON_*): numbers, '
            "0/1, true/false, or a known enumeration's value" + DATA_ONLY_HELP)


class OverridesInput(serializers.Serializer):
    """``config`` and ``env`` of a body, checked by ``contract.variants``; ``validated_data``
    gets ``overrides`` (an ``Overrides``) in their place. A bad entry is named: ``config.inductor.KEY``."""

    config = serializers.JSONField(required=False, default=dict, help_text=CONFIG_HELP)
    env = serializers.JSONField(required=False, default=dict, help_text=ENV_HELP)

    def validate_config(self, value):
        return _storable(value, "config")

    def validate_env(self, value):
        return _storable(value, "env")

    def validate(self, attrs):
        attrs = super().validate(attrs)
        try:
            attrs["overrides"] = Overrides.build(attrs.pop("config", None), attrs.pop("env", None))
        except InvalidOverride as exc:
            raise serializers.ValidationError({exc.field: [exc.message]}) from None
        return attrs


# --- results ---------------------------------------------------------------------------------------
ConfigSerializer = type(
    "ConfigSerializer", (serializers.Serializer,),
    {axis: StrictCharField(source=f"case_config.{axis}") for axis in AXIS_NAMES}
    | {"__doc__": "A case's configuration: the fields of its contract.case_config.CaseConfig (docs/case-config.md)."},
)
