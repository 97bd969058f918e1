"""/alerts/, its "send test alert" button and subscription form, the admin actions and
``manage.py send_test_alert``, against real servers on loopback."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command

from dashboard.alerts.models import Delivery, Subscription
from dashboard.alerts.services import delivery_send
from tests.alerts.history import detect_and_plan, slowdown_and_breakage

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, django_user_model):
    user = django_user_model.objects.create_superuser("oncall", "oncall@bench.test", "pw")
    client.force_login(user)
    return client


def test_the_page_lists_subscriptions_and_hides_webhook_urls(client, slack_server):
    server = slack_server()
    Subscription.objects.create(name="team slack", channel="slack", target=server.url, machine_classes=["cpu"], min_magnitude=0.05)
    Subscription.objects.create(name="team mail", channel="email", target="a@bench.test, b@bench.test", severity="breakage")
    page = client.get("/alerts/").content.decode()
    assert "team slack" in page and "127.0.0.1 webhook" in page and server.url not in page
    assert "2 addresses" in page and "a@bench.test" not in page  # addresses only for signed-in users
    assert "machine cpu; at least +5.0%" in page and "breakage (new failure, graph break, recompile)" in page
    assert "send test alert</button>" not in page and "Sign in</a> to add subscriptions and send test alerts" in page


def test_signed_in_is_not_enough_to_subscribe_or_send_test_alerts(client, django_user_model, slack_server):
    """Issue #46 item 4: adding a subscription needs alerts.add_subscription; a test alert goes to a
    subscription its sender created, or needs alerts.change_subscription. 403 naming the permission."""
    server = slack_server()
    theirs = Subscription.objects.create(name="their slack", channel="slack", target=server.url, created_by="someone")
    user = django_user_model.objects.create_user("bob", password="pw", is_staff=True)
    client.force_login(user)
    page = client.get("/alerts/").content.decode()
    assert "needs the permission alerts.add_subscription" in page and 'id="subscription-form"' not in page
    assert "send test alert</button>" not in page
    response = client.post("/alerts/", {"name": "mine", "channel": "slack", "target": server.url})
    assert response.status_code == 403 and 'data-field="permission"' in response.content.decode()
    response = client.post("/alerts/test/", {"subscription": theirs.id})
    assert response.status_code == 403 and 'data-field="permission"' in response.content.decode()
    assert Subscription.objects.count() == 1 and not Delivery.objects.exists() and server.delivered == []

    user.user_permissions.add(Permission.objects.get(codename="add_subscription"))
    client.force_login(django_user_model.objects.get(pk=user.pk))
    added = client.post("/alerts/", {"name": "mine", "channel": "slack", "target": "https://hooks.slack.com/services/T0/B0/abc",
                                     "min_magnitude": "0.05", "severity": "slowdown", "enabled": "on"})
    assert added.status_code == 302 and Subscription.objects.get(name="mine").created_by == "bob"
    mine = Subscription.objects.create(name="mine on loopback", channel="slack", target=server.url, created_by="bob")
    assert client.post("/alerts/test/", {"subscription": mine.id}).status_code == 302 and len(server.delivered) == 1
    assert client.post("/alerts/test/", {"subscription": theirs.id}).status_code == 403


@pytest.mark.parametrize("field", ["workloads", "machine_classes", "sizes", "metrics"])
def test_a_nul_in_a_list_field_is_400_naming_it(staff, field):
    """Issue #46 item 9: a NUL in the form's workloads reached PostgreSQL's JSON column as a 500."""
    response = staff.post("/alerts/", {"name": "x", "channel": "email", "target": "a@bench.test", "severity": "slowdown",
                                       "enabled": "on", field: "mlp_loop\x00, resnet"})
    assert response.status_code == 400 and f'data-field="{field}"' in response.content.decode()
    assert not Subscription.objects.exists()


@pytest.mark.parametrize("field, value", [
    ("sizes", "1e308"), ("sizes", "huge"), ("machine_classes", "NaN"), ("machine_classes", "nan"), ("machine_classes", "inf"),
    ("workloads", "1e308"), ("min_magnitude", "NaN"), ("min_magnitude", "inf"), ("min_magnitude", "1e308"),
    ("workloads", ",".join(f"w{i}" for i in range(201))),
])
def test_a_filter_out_of_range_is_400_naming_it(staff, field, value):
    """Issue #46 item 11: subscription filters stored sizes=1e308 and machine_classes=NaN (filters that
    match nothing, silently), and a workloads list of any length."""
    response = staff.post("/alerts/", {"name": "x", "channel": "email", "target": "a@bench.test", "severity": "slowdown",
                                       "enabled": "on", field: value})
    assert response.status_code == 400 and f'data-field="{field}"' in response.content.decode()
    assert not Subscription.objects.exists()


def test_the_test_button_sends_through_the_subscription(staff, slack_server):
    server = slack_server()
    subscription = Subscription.objects.create(name="team slack", channel="slack", target=server.url)
    response = staff.post("/alerts/test/", {"subscription": subscription.id}, follow=True)
    assert response.redirect_chain == [("/alerts/", 302)]
    page = response.content.decode()
    assert "test alert sent to team slack (slack) in" in page
    [payload] = server.delivered
    assert payload["text"] == "ptbench test alert for team slack" and "https://bench.test/alerts/" in payload["blocks"][0]["text"]["text"]
    delivery = Delivery.objects.get()
    assert (delivery.kind, delivery.status, delivery.run, delivery.attempts.get().outcome) == ("test", "sent", None, "sent")
    assert 'class="delivery sent"' in page


def test_a_failing_test_alert_is_reported_on_the_page(staff, slack_server):
    server = slack_server(["500"])
    subscription = Subscription.objects.create(name="team slack", channel="slack", target=server.url)
    response = staff.post("/alerts/test/", {"subscription": subscription.id}, follow=True)
    # The status, never the body the webhook answered (a subscription must not make the button a fetcher).
    assert [str(m) for m in response.context["messages"]] == ["test alert to team slack (slack) failed (HTTP error): HTTP 500"]
    assert Delivery.objects.get().attempts.count() == 1  # a test is tried once


def test_the_button_needs_a_known_subscription(staff, slack_server):
    server = slack_server()
    for data, status in (({"subscription": "abc"}, 400), ({}, 400), ({"subscription": 999}, 404)):
        response = staff.post("/alerts/test/", data)
        assert response.status_code == status
        assert 'data-field="subscription"' in response.content.decode()
    assert staff.get("/alerts/test/").status_code == 405
    assert not Delivery.objects.exists() and not server.received


def test_anonymous_posts_send_and_add_nothing(client, slack_server):
    server = slack_server()
    subscription = Subscription.objects.create(name="team slack", channel="slack", target=server.url)
    response = client.post("/alerts/test/", {"subscription": subscription.id})
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    response = client.post("/alerts/", {"name": "x", "channel": "slack", "target": "https://hooks.slack.com/x"})
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    assert not Delivery.objects.exists() and not server.received and Subscription.objects.count() == 1


def test_the_form_adds_a_subscription(staff):
    response = staff.post("/alerts/", {
        "name": "gpu speed", "channel": "slack", "target": "https://hooks.slack.com/services/T0/B0/abc",
        "machine_classes": "gpu-h100, gpu-a100", "metrics": "speedup,compiled_latency_ms", "min_magnitude": "0.05",
        "severity": "slowdown", "enabled": "on",
    })
    assert response.status_code == 302
    subscription = Subscription.objects.get()
    assert subscription.machine_classes == ["gpu-h100", "gpu-a100"] and subscription.metrics == ["speedup", "compiled_latency_ms"]
    assert (subscription.workloads, subscription.sizes, subscription.min_magnitude, subscription.created_by) == ([], [], 0.05, "oncall")


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"target": "not a url"}, "target", "a Slack incoming-webhook URL"),
    ({"target": "file:///etc/passwd"}, "target", "a Slack incoming-webhook URL"),
    ({"channel": "email", "target": "oncall@, b@bench.test"}, "target", "'oncall@' is not an email address"),
    ({"channel": "pager"}, "channel", "not one of the available choices"),
    ({"metrics": "speedup, speed"}, "metrics", "'speed' is not one of speedup"),
    ({"machine_classes": "gpu h100"}, "machine_classes", "'gpu h100' is not a machine class"),
    ({"min_magnitude": "-1"}, "min_magnitude", "greater than or equal to 0"),
    ({"severity": "all"}, "severity", "not one of the available choices"),
    ({"name": ""}, "name", "required"),
])
def test_bad_form_input_names_the_field_and_writes_nothing(staff, changes, field, message):
    data = {"name": "x", "channel": "slack", "target": "https://hooks.slack.com/services/T0/B0/abc", "severity": "both", **changes}
    response = staff.post("/alerts/", data)
    assert response.status_code == 400
    page = response.content.decode().replace("&#x27;", "'")
    assert f'data-field="{field}"' in page and message in page
    assert not Subscription.objects.exists()


def test_the_command_sends_a_test_email(smtp_server, capsys):
    subscription = Subscription.objects.create(name="mail", channel="email", target="oncall@bench.test", enabled=False)
    call_command("send_test_alert", str(subscription.id))
    assert "test alert sent to mail (email) in" in capsys.readouterr().out
    [message] = smtp_server.messages
    assert message["Subject"] == "[ptbench] test alert for mail" and message["To"] == "oncall@bench.test"
    assert "This is a test alert from ptbench" in message.get_body(("plain",)).get_content()
    assert 'href="https://bench.test/alerts/"' in message.get_body(("html",)).get_content()


def test_the_command_fails_loudly(smtp_server):
    smtp_server.refuse["gone@bench.test"] = "550 no such user"
    subscription = Subscription.objects.create(name="mail", channel="email", target="gone@bench.test")
    with pytest.raises(CommandError, match=r"failed \(SMTP error\): recipients refused: gone@bench.test \(550 no such user\)"):
        call_command("send_test_alert", str(subscription.id))
    with pytest.raises(CommandError, match="no subscription 999"):
        call_command("send_test_alert", "999")


def test_the_admin_sends_test_alerts_shows_attempts_and_resends_failed_deliveries(staff, slack_server, monkeypatch,
                                                                                   django_capture_on_commit_callbacks):
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    server = slack_server(["500"])
    subscription = Subscription.objects.create(name="team slack", channel="slack", target=server.url)
    [delivery_id] = detect_and_plan(slowdown_and_breakage()[-1])
    assert delivery_send(delivery_id=delivery_id).status == "failed"

    page = staff.get(f"/admin/alerts/delivery/{delivery_id}/change/").content.decode()
    assert "HTTP 500: internal_error" in page and "http_error" in page.lower().replace(" ", "_")
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post("/admin/alerts/delivery/", {"action": "resend_failed", "_selected_action": [delivery_id]}, follow=True)
    assert "1 failed delivery queued again" in response.content.decode()
    assert Delivery.objects.get(pk=delivery_id).status == "sent" and len(server.delivered) == 1

    response = staff.post("/admin/alerts/subscription/", {"action": "send_test_alert", "_selected_action": [subscription.id]}, follow=True)
    assert "Test alert sent to team slack (slack)" in response.content.decode()  # the admin capitalises messages
    assert len(server.delivered) == 2 and server.delivered[1]["text"] == "ptbench test alert for team slack"
    assert staff.get("/admin/alerts/subscription/add/").status_code == 200
    assert staff.get(f"/admin/alerts/subscription/{subscription.id}/change/").status_code == 200


@pytest.mark.parametrize("target", ["http://127.0.0.1:8080/services/x", "http://localhost/x", "http://10.0.0.5/x",
                                    "http://[::1]/x", "http://169.254.169.254/latest/meta-data/"])
def test_a_webhook_on_a_private_address_is_refused(settings, target):
    from django.core.exceptions import ValidationError

    from dashboard.alerts.transport import SendFailure, slack_post

    settings.ALERTS_ALLOW_PRIVATE_WEBHOOKS = False
    with pytest.raises(ValidationError) as refused:
        Subscription(name="probe", channel="slack", target=target).full_clean()
    assert "private address" in str(refused.value.message_dict["target"])
    with pytest.raises(SendFailure) as failure:  # checked again when sending (DNS may change)
        slack_post(url=target, payload={"text": "x"})
    assert failure.value.retryable is False and "refused" in failure.value.error


def test_the_slack_fallback_text_is_escaped():
    """Slack reads ``&``, ``<`` and ``>`` in ``text`` as markup (``<!channel>``, links)."""
    from dashboard.alerts.compose import test_message

    subscription = Subscription(name="<!channel> & <https://evil.test|x>", channel="slack", target="https://hooks.slack.com/services/T/B/X")
    assert test_message(subscription=subscription).slack["text"] == (
        "ptbench test alert for &lt;!channel&gt; &amp; &lt;https://evil.test|x&gt;")
