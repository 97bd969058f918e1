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
