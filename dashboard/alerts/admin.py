from django.contrib import admin, messages
from django.db.models import Count

from dashboard.alerts.forms import SubscriptionForm
from dashboard.alerts.models import Delivery, DeliveryAttempt, Subscription
from dashboard.alerts.selectors import delivery_outcome
from dashboard.alerts.services import delivery_resend, subscription_test_send


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    form = SubscriptionForm
    list_display = ["name", "channel", "target", "severity", "min_magnitude", "enabled", "created_at"]
    list_filter = ["channel", "severity", "enabled"]
    search_fields = ["name", "target"]
    actions = ["send_test_alert"]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user.get_username()
        super().save_model(request, obj, form, change)

    @admin.action(description="Send a test alert through the selected subscriptions")
    def send_test_alert(self, request, queryset):
        for subscription in queryset:
            delivery = subscription_test_send(subscription_id=subscription.pk)
            level = messages.SUCCESS if delivery.status == Delivery.Status.SENT else messages.ERROR
            self.message_user(request, delivery_outcome(delivery), level)


class AttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    extra = 0
    can_delete = False
    fields = readonly_fields = ["number", "started_at", "duration_ms", "outcome", "http_status", "smtp_code", "retryable", "error"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "created_at", "subscription", "kind", "run", "status", "attempt_count", "sent_at", "last_error"]
    list_filter = ["status", "kind", "subscription__channel", "subscription"]
    search_fields = ["subscription__name", "last_error"]
    readonly_fields = ["subscription", "run", "kind", "regressions", "status", "last_error", "created_at", "sent_at"]
    list_select_related = ["subscription", "run__build", "run__machine"]
    inlines = [AttemptInline]
    actions = ["resend_failed"]

    def has_add_permission(self, request):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(attempt_total=Count("attempts"))

    @admin.display(description="attempts", ordering="attempt_total")
    def attempt_count(self, obj):
        return obj.attempt_total

    @admin.action(description="Re-send the selected failed deliveries")
    def resend_failed(self, request, queryset):
        queued = delivery_resend(delivery_ids=list(queryset.values_list("id", flat=True)))
        skipped = queryset.count() - len(queued)
        self.message_user(request, f"{len(queued)} failed deliver{'ies' if len(queued) != 1 else 'y'} queued again"
                                   + (f"; {skipped} not failed, left alone" if skipped else ""))
