"""The alerts form lists the metrics a subscription may name, from the registry; the model's
help_text names none, so a new tracked metric makes no alerts migration (issue #45)."""
from dashboard.alerts.forms import SubscriptionForm
from dashboard.alerts.models import ALERT_METRICS, Subscription


def test_the_form_lists_the_metrics_and_the_model_names_none():
    shown = SubscriptionForm.base_fields["metrics"].help_text
    assert shown == f"only these metrics (empty: all): {', '.join(ALERT_METRICS)}"
    assert not any(name in Subscription._meta.get_field("metrics").help_text for name in ALERT_METRICS)
