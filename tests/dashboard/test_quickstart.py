"""The quick start (#17 item 8): quiet output, the local measurement as its own build and run,
imported sample data labelled with its machine and day wherever its build is shown."""
from __future__ import annotations

import json

import pytest
from django.urls import reverse

from dashboard.dispatch.selectors import run_request_summary
from dashboard.results.models import Build, Run
from dashboard.results.services import run_ingest
from tests.dashboard.test_commands import manage
from tests.documents import make_document


@pytest.mark.services  # the child process must see the test database: PostgreSQL
@pytest.mark.django_db(transaction=True)
def test_quiet_import_prints_one_summary_line_and_no_task_lines(tmp_path, subprocess_env):
    files = []
    for n in range(2):
        files.append(tmp_path / f"sample{n}.json")
        files[-1].write_text(json.dumps(make_document(git_sha=f"{n}" * 40)))
    done = manage("ingest", "--imported", "-v", "0", *map(str, files), env={**subprocess_env, "DJANGO_LOG_LEVEL": "WARNING"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["imported sample data: 2 documents, 12 results new"]
    assert "Task " not in done.stderr and "re-measurement" not in done.stderr and "No hostname" not in done.stderr
    assert set(Run.objects.values_list("imported", flat=True)) == {True}


@pytest.mark.django_db
def test_local_measurement_is_its_own_build_beside_the_imported_sample(client):
    sample = make_document()
    sample["machine"]["hostname"] = "ci-box-7"
    imported = run_ingest(document=sample, imported=True)
    local = run_ingest(document=make_document())

    imported_run, local_run = Run.objects.get(pk=imported.run_id), Run.objects.get(pk=local.run_id)
    assert imported_run.build_id != local_run.build_id and Build.objects.count() == 2
    assert imported_run.imported and not local_run.imported
    assert imported_run.build.local_label == "imported"
    assert imported_run.results.count() == local_run.results.count() == 6
    assert imported_run.build.label == "torch 2.13.0+cpu · imported (ci-box-7, 2026-11-22)"

    page = client.get(reverse("web:run", args=[imported_run.id])).content.decode()
    assert "imported (ci-box-7, 2026-11-22)" in page
    assert "imported (" not in client.get(reverse("web:run", args=[local_run.id])).content.decode()


@pytest.mark.django_db
def test_an_unnamed_host_is_shown_by_its_machine_class():
    sample = make_document()
    sample["machine"]["hostname"] = "(unassigned)"
    run = Run.objects.get(pk=run_ingest(document=sample, imported=True).run_id)
    assert run.build.label == "torch 2.13.0+cpu · imported (cpu, 2026-11-22)"


@pytest.mark.django_db
def test_a_build_imported_from_two_hosts_names_both_and_its_days(client):
    # The quick start's torch 2.11 build comes from the CPU release runs and from the H100 runs:
    # its label must not say "imported (cpu, ...)" above the H100 figures.
    cpu = make_document()
    gpu = make_document()
    gpu["machine"].update(hostname="h100-vm", machine_class="gpu-h100")
    gpu["run"]["started_at"] = "2026-11-24T03:00:00+00:00"
    run_ingest(document=cpu, imported=True)
    run = Run.objects.get(pk=run_ingest(document=gpu, imported=True).run_id)
    assert Build.objects.count() == 1
    hosts = sorted([cpu["machine"]["hostname"], "h100-vm"])
    assert run.build.label == f"torch 2.13.0+cpu · imported ({', '.join(hosts)}, 2026-11-22 to 2026-11-24)"
    # every page names it by the hosts of the class it shows (#42 item 8): the recent runs, the build pickers
    assert run.build.label not in client.get("/").content.decode()
    picker = client.get("/compare/", {"machine": "gpu-h100"}).content.decode()
    assert "imported (h100-vm, 2026-11-24)" in picker and run.build.label not in picker
    # Each class's block, and its "last night" row, name the hosts and days of that class only.
    for machine_class, label in (("gpu-h100", "torch 2.13.0+cpu · imported (h100-vm, 2026-11-24)"),
                                 ("cpu", f"torch 2.13.0+cpu · imported ({cpu['machine']['hostname']}, 2026-11-22)")):
        page = client.get("/", {"machine": machine_class})
        block = next(b for b in page.context["blocks"] if b.machine_class == machine_class)
        night = next(n for n in page.context["nights"] if n.machine_class == machine_class)
        assert block.build_label == night.label == label and f"({label} · build dated" in page.content.decode()


@pytest.mark.django_db
def test_request_run_says_measured_once_the_cases_ran_in_process():
    outcome = run_ingest(document=make_document())
    run = Run.objects.select_related("machine", "build").get(pk=outcome.run_id)
    Run.objects.filter(pk=run.pk).update(cases_expected=6)
    run.cases_expected = 6
    said = run_request_summary(run=run, build=run.build)
    assert "queued" not in said and said.startswith("6/6 cases of") and "measured on cpu (completed): pass 6" in said

    Run.objects.filter(pk=run.pk).update(status=Run.Status.PENDING)
    assert run_request_summary(run=run, build=run.build).endswith("queued on cpu")
