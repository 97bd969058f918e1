"""The subscription form, shared by the admin and the /alerts/ page: list filters are typed as
comma-separated text and stored as JSON lists; the model's validators name the field at fault."""
from __future__ import annotations

import re

from django import forms

from dashboard.alerts.models import ALERT_METRICS, Subscription


class ListField(forms.CharField):
    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def prepare_value(self, value):
        return ", ".join(value) if isinstance(value, list) else value

    def to_python(self, value) -> list[str]:
        text = super().to_python(value)
        if "\x00" in text:  # CharField's own NUL check sees the list, not its items (a PostgreSQL 500, issue #46)
            raise forms.ValidationError("a NUL character (U+0000) cannot be stored", code="null_characters_not_allowed")
        return [item.strip() for item in re.split(r"[,\n]", text) if item.strip()]


class SubscriptionForm(forms.ModelForm):
    machine_classes = ListField(help_text="comma-separated, e.g. cpu, gpu-h100 (empty: all)")
    workloads = ListField(help_text="comma-separated workload names (empty: all)")
    sizes = ListField(help_text="comma-separated: tiny, full (empty: all)")
    # The names from the metric registry, listed here rather than in the model's help_text: a new
    # tracked metric then needs no alerts migration.
    metrics = ListField(help_text=f"only these metrics (empty: all): {', '.join(ALERT_METRICS)}")

    class Meta:
        model = Subscription
        fields = ["name", "channel", "target", "machine_classes", "workloads", "sizes", "metrics", "min_magnitude",
                  "severity", "enabled"]


class SendTestForm(forms.Form):
    subscription = forms.IntegerField(min_value=1, error_messages={"required": "which subscription to test"})
