"""/alerts/: subscriptions and recent deliveries; signed-in users add subscriptions and send test alerts."""
from __future__ import annotations

import functools

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from dashboard.alerts.forms import SendTestForm, SubscriptionForm
from dashboard.alerts.models import Delivery, Subscription
from dashboard.alerts.selectors import delivery_list_recent, delivery_outcome, subscription_list, target_masked
from dashboard.alerts.services import subscription_create, subscription_test_send

# Signed in is not enough (issue #46 item 4): adding a subscription needs its model's add
# permission; a test alert goes to a subscription its sender created, or needs the change permission.
ADD_PERMISSION = "alerts.add_subscription"
TEST_PERMISSION = "alerts.change_subscription"


@require_http_methods(["GET", "HEAD", "POST"])
def alerts_page(request):
    if request.method == "POST":
        return _create(request)
    return _page(request, SubscriptionForm())


def _page(request, form: SubscriptionForm):
    signed_in = request.user.is_authenticated
    subscriptions = [(s, target_masked(s, show_addresses=signed_in), _may_test(request.user, s)) for s in subscription_list()]
    return render(request, "alerts/page.html", {
        "subscriptions": subscriptions, "deliveries": delivery_list_recent(limit=50), "form": form,
        "can_add": request.user.has_perm(ADD_PERMISSION), "add_permission": ADD_PERMISSION,
    })


def _may_test(user, subscription: Subscription) -> bool:
    if not user.is_authenticated:
        return False
    return user.has_perm(TEST_PERMISSION) or (bool(subscription.created_by) and subscription.created_by == user.get_username())


def _forbidden(request, message: str):
    return _bad_form(request, {"permission": [message]}, status=403)


def _signed_in(view):
    """POSTs change things: anonymous users are sent to sign in first."""

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper


@_signed_in
def _create(request):
    if not request.user.has_perm(ADD_PERMISSION):
        return _forbidden(request, f"adding a subscription needs the permission {ADD_PERMISSION} (an admin grants it)")
    form = SubscriptionForm(request.POST)
    if not form.is_valid():
        return _bad_form(request, form.errors)
    try:
        subscription = subscription_create(**form.cleaned_data, created_by=request.user.get_username())
    except ValidationError as exc:
        return _bad_form(request, exc.message_dict)
    messages.success(request, f"subscription {subscription.name!r} added")
    return redirect("alerts:page")


@require_POST
@_signed_in
def subscription_test(request):
    form = SendTestForm(request.POST)
    if not form.is_valid():
        return _bad_form(request, form.errors)
    subscription = Subscription.objects.filter(pk=form.cleaned_data["subscription"]).first()
    if subscription is None:
        return _bad_form(request, {"subscription": [f"no subscription {form.cleaned_data['subscription']}"]}, status=404)
    if not _may_test(request.user, subscription):
        return _forbidden(request, f"a test alert goes to a subscription you created, or needs the permission {TEST_PERMISSION}")
    try:
        delivery = subscription_test_send(subscription_id=subscription.id)
    except Subscription.DoesNotExist:
        return _bad_form(request, {"subscription": [f"no subscription {form.cleaned_data['subscription']}"]}, status=404)
    level = messages.SUCCESS if delivery.status == Delivery.Status.SENT else messages.ERROR
    messages.add_message(request, level, delivery_outcome(delivery, echo_body=False))
    return redirect("alerts:page")


def _bad_form(request, errors: dict, *, status: int = 400):
    return render(request, "alerts/form_error.html", {"errors": {field: "; ".join(errs) for field, errs in errors.items()}},
                  status=status)
