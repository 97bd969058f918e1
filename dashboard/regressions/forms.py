"""The triage form of the regressions page (one or many regressions at once)."""
from django import forms

from dashboard.regressions.models import Regression


class TriageForm(forms.Form):
    ids = forms.TypedMultipleChoiceField(coerce=int, error_messages={"required": "select at least one regression"})
    status = forms.ChoiceField(choices=Regression.Status.choices)
    note = forms.CharField(required=False, max_length=2000)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Any id is offered; the service answers unknown ones with the field at fault.
        self.fields["ids"].valid_value = lambda value: str(value).isdigit()


class BisectForm(forms.Form):
    """The regression page's "Bisect" button (docs/bisect.md): the fields and bounds of the API's
    bisect request; an empty limit is the server's default."""

    kind = forms.ChoiceField(choices=[("builds", "builds"), ("overrides", "overrides"), ("commits", "commits")], required=False)
    attempts = forms.IntegerField(min_value=1, max_value=20, required=False)
    max_attempts = forms.IntegerField(min_value=1, max_value=50, required=False)
    max_steps = forms.IntegerField(min_value=1, max_value=40, required=False)
    max_runs = forms.IntegerField(min_value=2, max_value=500, required=False)

    def clean_kind(self) -> str:
        return self.cleaned_data["kind"] or "builds"
