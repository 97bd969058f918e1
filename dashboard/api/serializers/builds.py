"""Builds and machines: a build as listed and in detail, a build registered (with a variant's overrides)."""
from __future__ import annotations

from rest_framework import serializers

from contract.variants import Overrides
from dashboard.results.selectors.common import build_ref
from dashboard.results.variants import base_of, catalog_of
from contract.document import LOCAL_LABEL_PATTERN, environment_errors, time_problem
from dashboard.api.serializers.common import BUILD_REF_HELP, OverridesInput, SHA_PATTERN, StrictCharField, StrictRegexField, _storable


class BuildRefSerializer(serializers.Serializer):
    ref = serializers.SerializerMethodField(help_text=BUILD_REF_HELP)
    name = serializers.SerializerMethodField()

    def get_ref(self, build) -> str:
        return build_ref(build)

    def get_name(self, build) -> str:
        return str(build)


# --- builds ----------------------------------------------------------------------------------------
class BuildSerializer(serializers.Serializer):
    """A build as lists show it (without its environment)."""

    ref = serializers.SerializerMethodField(help_text=BUILD_REF_HELP)
    git_sha = StrictCharField()
    local_label = StrictCharField()
    torch_version = StrictCharField()
    label = StrictCharField()
    name = serializers.SerializerMethodField(help_text="the name shown on pages")
    commit_time = serializers.DateTimeField(allow_null=True)
    ordered_at = serializers.DateTimeField(help_text="builds are ordered by this: the commit time, else a nightly's or known release's date, else the start of its first run")
    triton_version = StrictCharField()
    cuda_version = StrictCharField()
    python_version = StrictCharField()
    created_at = serializers.DateTimeField()
    machine_classes = serializers.SerializerMethodField(help_text="the machine classes it has runs on")
    overrides = serializers.DictField(help_text='a variant\'s {"config": {...}, "env": {...}}; empty for a plain build')
    base = serializers.SerializerMethodField(help_text="a variant's base build (same sha, the base label) when stored")

    def get_ref(self, build) -> str:
        return build_ref(build)

    def get_base(self, build) -> BuildRefSerializer(allow_null=True):
        base = base_of(build)
        return BuildRefSerializer(base).data if base else None

    def get_name(self, build) -> str:
        return str(build)

    def get_machine_classes(self, build) -> list[str]:
        return sorted(s.machine_class for s in build.summaries.all())


class BuildDetailSerializer(BuildSerializer):
    """One build, with its ``environment`` (lists leave it out: it can be large)."""

    environment = serializers.DictField()
    probed = serializers.SerializerMethodField(
        help_text="whether its torch's config keys are known (a worker or register_build probed it, or its base): "
        "a variant's config overrides are checked against them")

    def get_probed(self, build) -> bool:
        return bool(catalog_of(build))


class BuildRegisterSerializer(OverridesInput):
    """The ``build`` object of a run document; with ``config``/``env``, its variant (the local
    label derived from the given one and the overrides)."""

    torch_version = StrictCharField(max_length=64)
    git_sha = StrictRegexField(SHA_PATTERN, max_length=40, help_text="torch.version.git_version (7-40 hex digits) or 'unknown'")
    local_label = StrictRegexField(LOCAL_LABEL_PATTERN, max_length=100, required=False, allow_blank=True, default="",
                                   error_messages={"invalid": "letters, digits and . _ + - only (it is part of the build's ref and URLs)"},
                                   help_text="tells apart builds of one sha (a local patch, another toolchain)")
    label = StrictCharField(max_length=200, required=False, allow_blank=True, default="")
    commit_time = serializers.DateTimeField(required=False, allow_null=True, default=None)
    triton_version = StrictCharField(max_length=64, required=False, allow_null=True, allow_blank=True, default=None)
    cuda_version = StrictCharField(max_length=32, required=False, allow_null=True, allow_blank=True, default=None)
    python_version = StrictCharField(max_length=32, required=False, allow_null=True, allow_blank=True, default=None)
    environment = serializers.DictField(required=False, default=dict)

    def validate_environment(self, value: dict) -> dict:
        _storable(value, "environment")
        if errors := environment_errors("environment", value):
            raise serializers.ValidationError([e.message for e in errors])
        return value

    def validate_commit_time(self, value):
        if value is not None and (problem := time_problem(value)):
            raise serializers.ValidationError(problem)
        return value

    def to_document_build(self) -> tuple[dict, Overrides]:
        """The base build's document ``build`` and the variant's overrides (none for a plain build)."""
        data = dict(self.validated_data)
        data["commit_time"] = data["commit_time"].isoformat() if data["commit_time"] else None
        return data, data.pop("overrides")


# --- runs ------------------------------------------------------------------------------------------
class MachineSerializer(serializers.Serializer):
    hostname = StrictCharField()
    machine_class = StrictCharField()
    gpu_name = StrictCharField()
