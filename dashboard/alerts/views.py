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


@require_http_methods(["GET", "HEAD", "POST"])
def alerts_page(request):
    if request.method == "POST":
        return _create(request)
    return _page(request, SubscriptionForm())


def _page(request, form: SubscriptionForm):
    signed_in = request.user.is_authenticated
    subscriptions = [(s, target_masked(s, show_addresses=signed_in)) for s in subscription_list()]
    return render(request, "alerts/page.html", {
        "subscriptions": subscriptions, "deliveries": delivery_list_recent(limit=50), "form": form,
    })


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
    try:
        delivery = subscription_test_send(subscription_id=form.cleaned_data["subscription"])
    except Subscription.DoesNotExist:
        return _bad_form(request, {"subscription": [f"no subscription {form.cleaned_data['subscription']}"]}, status=404)
    level = messages.SUCCESS if delivery.status == Delivery.Status.SENT else messages.ERROR
    messages.add_message(request, level, delivery_outcome(delivery, echo_body=False))
    return redirect("alerts:page")


def _bad_form(request, errors: dict, *, status: int = 400):
    return render(request, "alerts/form_error.html", {"errors": {field: "; ".join(errs) for field, errs in errors.items()}},
                  status=status)
