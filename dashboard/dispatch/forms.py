"""The admin's run-request form (the same checks as the API and ``manage.py request_run``)."""
from django import forms

from contract.vocabulary import COMPILE_MODES, DTYPES, SHAPE_REGIMES, SIZES


class RunRequestForm(forms.Form):
    machine_class = forms.SlugField(max_length=64, help_text="e.g. gpu-h100 or cpu: the queue its workers read")
    suite = forms.ChoiceField(choices=[(s, s) for s in SIZES], initial="full")
    workloads = forms.CharField(required=False, help_text="comma-separated; empty: the whole suite")
    modes = forms.MultipleChoiceField(choices=[(m, m) for m in COMPILE_MODES], required=False,
                                      widget=forms.CheckboxSelectMultiple, help_text="none: all four on a GPU, default on cpu")
    regimes = forms.MultipleChoiceField(choices=[(r, r) for r in SHAPE_REGIMES], required=False,
                                        widget=forms.CheckboxSelectMultiple, help_text="none: all three")
    dtypes = forms.MultipleChoiceField(choices=[(d, d) for d in DTYPES], required=False, widget=forms.CheckboxSelectMultiple)
    timeout_s = forms.FloatField(required=False, min_value=1, max_value=86400, label="timeout per case phase (s)")

    def matrix(self) -> dict:
        data = self.cleaned_data
        return {
            "workloads": [w.strip() for w in data["workloads"].split(",") if w.strip()] or None,
            "modes": data["modes"] or None,
            "regimes": data["regimes"] or None,
            "dtypes": data["dtypes"] or None,
            "timeout_s": data["timeout_s"],
        }
