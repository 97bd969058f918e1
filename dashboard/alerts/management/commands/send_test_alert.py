"""``manage.py send_test_alert SUBSCRIPTION_ID``: a test message through one subscription, now."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.alerts.models import Delivery, Subscription
from dashboard.alerts.selectors import delivery_outcome
from dashboard.alerts.services import subscription_test_send


class Command(BaseCommand):
    help = "Send a test alert through a subscription (email or Slack); exits 1 when it could not be delivered."

    def add_arguments(self, parser):
        parser.add_argument("subscription_id", type=int)

    def handle(self, *args, subscription_id, **options):
        try:
            delivery = subscription_test_send(subscription_id=subscription_id)
        except Subscription.DoesNotExist:
            raise CommandError(f"no subscription {subscription_id}") from None
        if delivery.status != Delivery.Status.SENT:
            raise CommandError(delivery_outcome(delivery))
        self.stdout.write(delivery_outcome(delivery))
