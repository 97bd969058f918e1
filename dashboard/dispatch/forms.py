"""The admin's run-request form (the same checks as the API and ``manage.py request_run``)."""
from django import forms

from contract.queues import machine_class_problem
from contract.variants import InvalidOverride, Overrides
from contract.vocabulary import COMPILE_MODES, DTYPES, SHAPE_REGIMES, SIZES
from dashboard.dispatch.models import BuildEnvironment


class RunRequestForm(forms.Form):
    machine_class = forms.SlugField(max_length=64, help_text="e.g. gpu-h100 or cpu: the queue its workers read")
    size = forms.ChoiceField(choices=[(s, s) for s in SIZES], initial="full", help_text="workload size: full (GPU) or tiny (CPU)")
    workloads = forms.CharField(required=False, help_text="comma-separated names (hf:BertForMaskedLM) or suites (core, hf, timm, torchvision, dist, all); empty: the core suite")
    modes = forms.MultipleChoiceField(choices=[(m, m) for m in COMPILE_MODES], required=False,
                                      widget=forms.CheckboxSelectMultiple, help_text="none: all four on a GPU, default on cpu")
    regimes = forms.MultipleChoiceField(choices=[(r, r) for r in SHAPE_REGIMES], required=False,
                                        widget=forms.CheckboxSelectMultiple, help_text="none: all three")
    dtypes = forms.MultipleChoiceField(choices=[(d, d) for d in DTYPES], required=False, widget=forms.CheckboxSelectMultiple)
    dims = forms.CharField(required=False, max_length=200,
                           help_text="which dynamic dims backed/unbacked mark: roles (batch, sequence) or input_name:dim, "
                           "comma-separated; empty: every declared dim (docs/case-config.md)")
    timeout_s = forms.FloatField(required=False, min_value=1, max_value=86400, label="timeout per case phase (s)")

    def matrix(self) -> dict:
        data = self.cleaned_data
        return {
            "workloads": [w.strip() for w in data["workloads"].split(",") if w.strip()] or None,
            "modes": data["modes"] or None,
            "regimes": data["regimes"] or None,
            "dtypes": data["dtypes"] or None,
            "timeout_s": data["timeout_s"],
            "dims": data["dims"] or None,
        }


class VariantForm(forms.Form):
    """A variant of a base build (issue #16): the same ``SECTION.KEY=VALUE`` / ``NAME=VALUE`` lines as
    ``--config`` / ``--env``; each config key is checked against the base build's torch."""

    config = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4, "cols": 60}),
                             help_text="one SECTION.KEY=VALUE a line, e.g. inductor.max_autotune=true (sections: inductor, "
                             "dynamo, functorch): true/false, numbers, null or a known enumeration's value")
    env = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
                          help_text="one NAME=VALUE a line (TORCHINDUCTOR_*, TORCHDYNAMO_*, TORCH_*, TRITON_*): numbers, "
                          "0/1, true/false or a known enumeration's value. Only settings that are data: a path, "
                          "program, compiler, library or remote cache is refused (docs/variants-and-settings.md)")

    def clean(self):
        data = super().clean()
        lines = {name: [line for line in (data.get(name) or "").splitlines() if line.strip()] for name in ("config", "env")}
        try:
            data["overrides"] = Overrides.from_cli(lines["config"], lines["env"])
        except InvalidOverride as exc:  # named: "config.inductor.x: ..." under the field it came from
            self.add_error("env" if exc.field.startswith(("env", "--env")) else "config", str(exc))
            return data
        if not data["overrides"]:
            self.add_error("config", "give at least one override: a variant without any is its base build")
        return data


class ProbeForm(forms.ModelForm):
    """*Build environments* -> Add: an interpreter on the workers of a class, probed by one of them."""

    class Meta:
        model = BuildEnvironment
        fields = ["machine_class", "python"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["machine_class"].required = True
        self.fields["machine_class"].help_text = "a worker of this class probes the interpreter on its machine and reports it"

    def clean_machine_class(self) -> str:
        value = self.cleaned_data["machine_class"]
        if problem := machine_class_problem(value):
            raise forms.ValidationError(problem)
        return value
