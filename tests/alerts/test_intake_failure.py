"""A failed intake (issue #41, docs/builds.md) is stored with its log, shown on ``/`` and in the API,
and alerted once to the subscriptions of its class that want breakages: here without a broker (the
quick start's way: this process takes it in from its own PTBENCH_INTAKE_* settings, real uv on an
index whose wheel is broken), a real HTTP server on loopback standing in for Slack."""
from __future__ import annotations

import pytest

from dashboard.alerts.models import Delivery, Subscription
from dashboard.dispatch.models import Intake
from dashboard.pipeline.intake import IntakeError, intake_done, intake_request

pytestmark = pytest.mark.django_db
BROKEN = "torch-2.14.0.dev20261127+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"


@pytest.fixture
def eager(monkeypatch, settings):
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    settings.CELERY_TASK_ALWAYS_EAGER = True


def test_a_failed_intake_is_shown_with_its_log_and_alerted_once(eager, slack_server, monkeypatch, tmp_path, client,
                                                                 django_capture_on_commit_callbacks):
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / BROKEN).write_bytes(b"not a wheel")
    monkeypatch.setenv("PTBENCH_INTAKE_INDEX", str(tmp_path / "wheels"))
    monkeypatch.setenv("PTBENCH_INTAKE_DIR", str(tmp_path / "intake"))
    monkeypatch.setenv("PTBENCH_INTAKE_INHERIT", "1")
    server = slack_server()
    Subscription.objects.create(name="cpu team", channel="slack", target=server.url, machine_classes=["cpu"])
    Subscription.objects.create(name="gpu team", channel="slack", target=server.url, machine_classes=["gpu-h100"])
    Subscription.objects.create(name="speed only", channel="slack", target=server.url, severity=Subscription.Severity.SLOWDOWN)

    with django_capture_on_commit_callbacks(execute=True):
        intake = intake_request(machine_class="cpu", run_options={"size": "tiny"}, requested_by="test")
    intake.refresh_from_db()
    assert intake.state == Intake.State.FAILED and intake.version == "2.14.0.dev20261127+cpu", intake.error
    assert intake.error.startswith("uv pip exited 1: error: Failed to download `torch==2.14.0.dev20261127+cpu`") and "torch==2.14.0.dev20261127+cpu" in intake.log and intake.build is None and intake.run is None
    assert not (tmp_path / "intake" / "envs" / "torch-2.14.0.dev20261127-cpu").exists()

    [delivery] = Delivery.objects.filter(intake=intake)
    assert (delivery.kind, delivery.subscription.name, delivery.status) == ("intake", "cpu team", "sent")
    [payload] = server.delivered
    assert payload["text"].startswith("intake failed on cpu: torch 2.14.0.dev20261127+cpu: ")
    assert "torch==2.14.0.dev20261127+cpu" in payload["blocks"][0]["text"]["text"]  # the installer's last lines

    # The same answer again (a copy of the message) changes nothing and alerts no more.
    intake_done(intake_id=intake.id, hostname="h", worker="w", machine_class="cpu", answer={"ok": True, "python": "/x"})
    intake.refresh_from_db()
    assert intake.state == Intake.State.FAILED and Delivery.objects.filter(intake=intake).count() == 1

    page = client.get("/").content.decode()
    section = page[page.index('id="intake"'):page.index("</section>", page.index('id="intake"'))]
    assert "failed" in section and "torch 2.14.0.dev20261127+cpu" in section and "installer's log" in section, section
    assert "none yet" in section  # nothing taken in on cpu so far
    [mine] = client.get("/api/v1/intake/").json()["classes"]
    assert mine["machine_class"] == "cpu" and mine["taken"] is None and mine["latest_state"] == "failed"
    assert mine["failure"]["error"] == intake.error and "torch==2.14.0.dev20261127+cpu" in mine["failure"]["log"]


def test_a_malformed_answer_is_a_failure_naming_the_field_and_requests_are_checked(eager):
    intake = Intake.objects.create(machine_class="cpu", requested_by="test", requested_at="2026-11-28T01:00:00+00:00")
    stored = intake_done(intake_id=intake.id, hostname="h", worker="w", machine_class="cpu", answer={"ok": "yes"})
    assert stored.state == Intake.State.FAILED and "answer.ok" in stored.error
    second = Intake.objects.create(machine_class="cpu", requested_by="test", requested_at="2026-11-28T01:00:00+00:00")
    stored = intake_done(intake_id=second.id, hostname="h", worker="w", machine_class="cpu",
                         answer={"ok": True, "version": "2.13.0", "python": "/x", "environment": {"machine": {}}})
    assert stored.state == Intake.State.FAILED and "environment.build" in stored.error and stored.build is None
    assert intake_done(intake_id=10**9, hostname="h", worker="w", machine_class="cpu", answer={"ok": True}) is None
    for kwargs, field in (({"machine_class": "ingest"}, "machine_class"),
                          ({"machine_class": "cpu", "run_options": {"command": "rm"}}, "run_options")):
        with pytest.raises(IntakeError) as refused:
            intake_request(**kwargs)
        assert refused.value.field == field


def test_builds_an_open_finding_or_a_running_bisection_refers_to_are_never_pruned(monkeypatch):
    """What an intake message names as kept: the open regression's two builds; none once it is fixed."""
    from dashboard.pipeline.intake import protected_refs
    from dashboard.regressions.models import Regression
    from tests.bisect.planted import SHAS, no_broker, plant

    no_broker(monkeypatch)
    regression = plant(known=(0, 5))
    assert protected_refs() == sorted({SHAS[0], SHAS[5]})
    Regression.objects.filter(pk=regression.pk).update(status=Regression.Status.FIXED)
    assert protected_refs() == []


def test_the_schedule_is_a_periodic_task_whose_beat_message_asks_for_an_intake(eager, monkeypatch, django_capture_on_commit_callbacks):
    """manage.py schedule_intake makes the beat entry (edited in the admin); what beat sends asks for
    an intake carrying the nightly's options; here, without a broker, this process answers it, and
    it has no index of its own: a failure naming the setting."""
    import json

    from django.core.management import call_command
    from django_celery_beat.models import PeriodicTask

    from dashboard.pipeline.tasks import intake_request as beat_task

    monkeypatch.delenv("PTBENCH_INTAKE_INDEX", raising=False)
    monkeypatch.delenv("PTBENCH_INTAKE_FILE", raising=False)
    call_command("schedule_intake", "--machine-class", "cpu", "--hour", "1", "--size", "tiny", "--suite", "core")
    task = PeriodicTask.objects.get(name="intake on cpu")
    assert (task.task, task.crontab.hour, task.enabled) == ("pipeline.intake_request", "1", True)
    with django_capture_on_commit_callbacks(execute=True):
        intake_id = beat_task.apply(kwargs=json.loads(task.kwargs)).get()
    intake = Intake.objects.get(pk=intake_id)
    assert intake.run_options == {"size": "tiny", "suite": "core"} and intake.requested_by == "schedule"
    assert intake.state == Intake.State.FAILED and "no PTBENCH_INTAKE_INDEX" in intake.error
