"""Issue #46's probe, replayed: a real deployment on loopback tried as an attacker and an unlucky
operator would, item by item, with a table of what held and what broke.

    python -m bench.hostile_probe [--large-results 1000] [--reads 300] [--bisects 50] [--out FILE]

The deployment, started here with the benches' helpers: PostgreSQL (the newest installed, as
``bench.dashboard_load.Cluster``), Redis with its append-only file on, the dashboard's Celery worker
with compose's command, a runner worker of its own machine class (``PTBENCH_BUILDS_ROOT`` set), and
gunicorn with compose's settings (DEBUG off) behind compose's nginx when nginx is installed
(``bench.slow_clients.serve``). Every request goes over HTTP; the probe's process reads the database
to seed users and tokens and to check what the requests did (nothing it checks is written by it).

Data (synthetic, labelled so: the tests' planted histories): one open finding of each kind on the
newest build (tests/dashboard/every_finding.py), a victim team's three nightlies whose third starts
failing (its CI gate 409), the six-build bisection history of tests/bisect/planted.py, and two lean
synthetic documents of ``--large-results`` results (bench/detect_large_document.py's). Items 7 (a
Redis restart under a running case) and 13 (pages at 1M results) are not replayed here:
tests/faults/test_broker_restart_case.py and bench/dashboard_load.py do. Prints requests, 5xx
answers, verdicts another token changed, the large document's detection and each item's outcome.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime as dt
import gzip
import hashlib
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import requests

from bench.dashboard_load import Cluster, free_port, setup_django
from bench.detect_large_document import synthetic_document
from bench.dispatch_overhead import wait_until
from bench.lib.hostile import Outcome, Tally, junk_paths, junk_query, site_links, table
from bench.slow_clients import SlowClients, nginx_binary, serve, timed_requests
from bench.worker_suite import Processes

ROOT = Path(__file__).resolve().parent.parent
PROBE_CLASS = "hostile-probe"  # the runner worker's machine class: no other work reaches it
VICTIM_CLASS = "cpu-victim"
KINDS_CLASS = "cpu-kinds"
VICTIM_DAYS = (3, 4, 5)  # the victim's nightlies; the third starts failing
KINDS_DAYS = (8, 9)  # the newest builds when "/" is first read
LARGE_DAYS = (20, 21)
ORPHAN_BOUND = 64 * 1024  # ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN in this deployment: reached in a few uploads
PASSWORD = "probe-password-1"


class Site:
    """One client of the site (a token's, or a signed-in user's session), counting into ``tally``."""

    def __init__(self, base: str, tally: Tally, token: str | None = None):
        self.base, self.tally = base, tally
        self.session = requests.Session()
        if token:
            self.session.headers["Authorization"] = f"Token {token}"

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", 300)
        kwargs.setdefault("allow_redirects", False)
        response = self.session.request(method, self.base + path, **kwargs)
        self.tally.record(method, response.request.path_url, response.status_code)
        for cookie in self.session.cookies:  # DEBUG off: Secure cookies, and this is plain HTTP on loopback
            cookie.secure = False
        return response

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post_json(self, path: str, body) -> requests.Response:
        return self.request("POST", path, data=json.dumps(body), headers={"Content-Type": "application/json"})

    def form(self, path: str, data: dict, *, page: str | None = None) -> requests.Response:
        """POST a form as a browser does: the CSRF cookie from a GET of ``page`` (default ``path``) first."""
        if "csrftoken" not in self.session.cookies:
            self.get(page or path)
        token = self.session.cookies.get("csrftoken", "")
        return self.request("POST", path, data={**data, "csrfmiddlewaretoken": token}, headers={"Referer": self.base + path})

    def login(self, username: str, password: str = PASSWORD) -> requests.Response:
        return self.form("/admin/login/", {"username": username, "password": password, "next": "/admin/"})


def fields(response: requests.Response) -> list[str]:
    with contextlib.suppress(ValueError, KeyError, TypeError):
        return [e.get("field") for e in response.json().get("errors", [])]
    return []


def held_if(checks: dict[str, bool]) -> tuple[bool, str]:
    failed = [name for name, ok in checks.items() if not ok]
    return not failed, ("failed: " + "; ".join(failed)) if failed else ", ".join(checks)


# --- the deployment ---------------------------------------------------------------------------------


@contextlib.contextmanager
def deployment(work: Path):
    """PostgreSQL, Redis (AOF), the dashboard worker, a runner worker, gunicorn (behind nginx when
    installed); Django set up in this process on the same database. Yields (base URL, processes)."""
    cluster = Cluster()
    processes = Processes(work)
    static_root = work / "static"
    try:
        database_url = cluster.start()
        redis_port = free_port()
        broker = f"redis://127.0.0.1:{redis_port}/0"
        os.environ.update(CELERY_BROKER_URL=broker, CELERY_RESULT_BACKEND=f"redis://127.0.0.1:{redis_port}/1",
                          ARTIFACT_ROOT=str(work / "artifacts"), ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN=str(ORPHAN_BOUND),
                          PYTHONUNBUFFERED="1")
        setup_django(database_url, str(static_root))
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        (work / "redis").mkdir()
        processes.start("redis", ["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "",
                                  "--appendonly", "yes", "--dir", str(work / "redis")], dict(os.environ))
        wait_until(lambda: subprocess.run(["redis-cli", "-p", str(redis_port), "ping"], capture_output=True, text=True).stdout.strip() == "PONG",
                   timeout=30, what="redis-server")
        processes.start("dashboard-worker", [sys.executable, "-m", "celery", "-A", "dashboard", "worker", "-Q", "ingest,analysis,alerts",
                                             "--concurrency", "2", "-l", "info"], dict(os.environ))
        (work / "builds").mkdir()
        runner_env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("DJANGO_")}
        runner_env.update(PTBENCH_BROKER_URL=broker, PTBENCH_MACHINE_CLASS=PROBE_CLASS, CUDA_VISIBLE_DEVICES="",
                          PTBENCH_BUILDS_ROOT=str(work / "builds"))
        processes.start("runner-worker", [sys.executable, "-m", "celery", "-A", "runner.worker.app", "worker", "-Q", PROBE_CLASS,
                                          "--concurrency", "1", "--hostname", "probe@%h", "-l", "info"], runner_env)
        with serve(behind_nginx=nginx_binary() is not None) as base:
            yield base, processes
    finally:
        processes.stop()
        cluster.stop()


def log_of(work: Path, name: str) -> str:
    path = work / f"{name}.log"
    return path.read_text(errors="replace") if path.exists() else ""


# --- seeding (ORM: users, tokens, the bisection history) and the planted histories (HTTP) ------------


def token(name: str) -> str:
    from dashboard.api.services import api_token_create

    return api_token_create(name=name)[1]


def users() -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    model = get_user_model()
    model.objects.create_user("bob", password=PASSWORD, is_staff=True)  # staff, no permission
    carol = model.objects.create_user("carol", password=PASSWORD, is_staff=True)
    carol.user_permissions.add(Permission.objects.get(codename="add_subscription"))
    model.objects.create_superuser("root", password=PASSWORD)
    model.objects.create_user("dave", password=PASSWORD)


def victim_documents() -> list[dict]:
    from tests.api.history import document_for_day
    from tests.documents import make_result
    from tests.regressions.history import case

    rng = random.Random(46)
    documents = []
    for day in VICTIM_DAYS:
        steady = case(1.1 * (1 + rng.gauss(0, 0.004)), workload="resnet_train", rng=rng)
        if day == VICTIM_DAYS[-1]:
            steady = make_result("resnet_train", "static", status="compile_error", speedup=None, compiled_latency_ms=None)
            steady["error"] = {"type": "InductorError", "message": "planted failure"}
        documents.append(document_for_day(day, [case(1.25 * (1 + rng.gauss(0, 0.004)), rng=rng), steady], VICTIM_CLASS))
    return documents


def detected(run_ids: list[str], timeout: float) -> None:
    from dashboard.regressions.models import DetectionPass

    wait_until(lambda: DetectionPass.objects.filter(run_id__in=run_ids, finished_at__isnull=False).count() == len(run_ids),
               timeout=timeout, what=f"detection of {len(run_ids)} runs")


def sha_ref(day: int) -> str:
    from tests.dashboard.page_history import ref_for_day

    return ref_for_day(day)


class Probe:
    def __init__(self, base: str, work: Path, args):
        self.base, self.work, self.args = base, work, args
        self.tally = Tally()
        self.rng = random.Random(args.seed)
        self.victim = Site(base, self.tally, token("victim-ci"))
        self.attacker = Site(base, self.tally, token("other-team"))
        self.outcomes: list[Outcome] = []
        self.large: dict = {"results": args.large_results}

    def site(self, token_name: str | None = None) -> Site:
        return Site(self.base, self.tally, token(token_name) if token_name else None)

    def seed(self) -> None:
        from tests.bisect.planted import plant
        from tests.dashboard.every_finding import change_points_every_metric, every_finding_documents
        from dashboard.results.models import Build

        users()
        self.bisect_regression = plant()  # in this process, as tests/bisect does: builds between, runs of the first and last
        kinds = every_finding_documents(days=KINDS_DAYS, machine_class=KINDS_CLASS)
        self.victim_docs = victim_documents()
        for document in kinds + self.victim_docs:
            response = self.victim.post_json("/api/v1/runs/submit/", document)
            assert response.status_code == 201, (response.status_code, response.text[:500])
        detected([d["run"]["id"] for d in kinds + self.victim_docs], timeout=600)
        first, newest = (Build.objects.get(git_sha=d["build"]["git_sha"], local_label="") for d in kinds)
        change_points_every_metric(first=first, newest=newest, machine_class=KINDS_CLASS)
        self.kinds_newest_sha = newest.git_sha

    # --- what the other tokens must not change --------------------------------------------------

    def verdicts(self) -> dict[str, tuple]:
        watched = {}
        for day in VICTIM_DAYS:
            for gate in ("", "&fail_on_regression=true"):
                path = f"/api/v1/verdict/?build={sha_ref(day)}&machine_class={VICTIM_CLASS}{gate}"
                response = self.victim.get(path)
                body = response.json() if response.headers.get("Content-Type", "").startswith("application/json") else {}
                watched[path] = (response.status_code, body.get("verdict"), body.get("reason"), body.get("build"),
                                 len(body.get("regressions") or []))
        return watched

    # --- the items ------------------------------------------------------------------------------

    def item_1_label_hijack(self) -> Outcome:
        ref = sha_ref(VICTIM_DAYS[-1])
        registered = self.attacker.post_json("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": "f" * 40, "label": ref})
        document = json.loads(json.dumps(self.victim_docs[0]))
        document["run"]["id"] = str(uuid.uuid4())
        document["build"].update(git_sha="e" * 40, label=ref)
        submitted = self.attacker.post_json("/api/v1/runs/submit/", document)
        crafted = self.attacker.post_json("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": ref + "d" * 28})  # shares the ref
        gated = self.victim.get(f"/api/v1/verdict/?build={ref}&fail_on_regression=true")
        compare = self.victim.get(f"/compare/?head={ref}")
        held, detail = held_if({"label registration 400 label": registered.status_code == 400 and fields(registered) == ["label"],
                                "document label 400 build.label": submitted.status_code == 400 and "build.label" in fields(submitted),
                                f"a sha crafted to share the ref registered ({crafted.status_code})": crafted.status_code in (201, 400),
                                "gate still 409 regressed": gated.status_code == 409 and gated.json().get("verdict") == "regressed",
                                "/compare/ 200": compare.status_code == 200})
        return Outcome("1", "a label or a crafted sha cannot take over a sha's verdict (second token)", held, detail)

    def item_2_every_finding(self) -> Outcome:
        from dashboard.regressions.models import Regression

        kinds = sorted(set(Regression.objects.filter(raised_build__git_sha=self.kinds_newest_sha).values_list("finding", flat=True)))
        pages = {path: self.victim.get(path).status_code for path in ("/", "/regressions/", "/dynamic/", "/compare/",
                                                                     f"/compare/?head={self.kinds_newest_sha[:12]}")}
        held, detail = held_if({f"{len(kinds)} finding kinds on the newest build": len(kinds) >= 8,
                                **{f"{path} 200": code == 200 for path, code in pages.items()}})
        return Outcome("2", "every page with one finding of each kind on the newest build", held, detail)

    def item_3_start_large(self) -> threading.Thread:
        def post_both() -> None:
            try:
                bulk = self.site("bulk-ci")
                documents = [synthetic_document(results=self.args.large_results, day=day) for day in LARGE_DAYS]
                for document in documents:
                    response = bulk.post_json("/api/v1/runs/submit/", document)
                    if response.status_code != 201:
                        self.large["why"] = f"submit answered {response.status_code}: {response.text[:200]}"
                        return
                self.large["posted_at"] = time.monotonic()
                self.large["run_id"] = documents[-1]["run"]["id"]
            except Exception as exc:  # noqa: BLE001 (reported in the table)
                self.large["why"] = f"{type(exc).__name__}: {exc}"

        thread = threading.Thread(target=post_both, daemon=True)
        thread.start()
        return thread

    def item_3_finish_large(self, thread: threading.Thread) -> Outcome:
        from django.conf import settings

        from dashboard.pipeline.services import detection_sweep
        from dashboard.regressions.models import DetectionPass

        thread.join(timeout=self.args.large_wait)
        run_id = self.large.get("run_id")
        if run_id is None:
            self.large.setdefault("why", "its documents were not stored in time")
            return Outcome("3", "a large document is detected inside the task limits, once", False, self.large["why"])
        try:
            started = wait_until(lambda: DetectionPass.objects.filter(run_id=run_id, started_at__isnull=False)
                                 .values_list("started_at", flat=True).first(), timeout=self.args.large_wait, what="its detection to start")
            swept = detection_sweep(grace=dt.timedelta(0))  # the beat's sweep, while the pass runs: it must not resend it
            waited_s = self.bystander_stored()
            wait_until(lambda: DetectionPass.objects.filter(run_id=run_id, finished_at__isnull=False).exists(),
                       timeout=self.args.large_wait, what="its detection to finish", poll=1.0)
        except RuntimeError as exc:
            self.large["why"] = str(exc)
            return Outcome("3", "a large document is detected inside the task limits, once", False, str(exc))
        done = DetectionPass.objects.get(run_id=run_id)
        self.large["detect_s"] = time.monotonic() - self.large["posted_at"]
        tasks = [float(s) for s in re.findall(r"regressions\.detect_run\[[^\]]+\] succeeded in ([0-9.]+)s", log_of(self.work, "dashboard-worker"))]
        self.large["longest_task_s"] = max(tasks, default=0.0)
        self.large["passes"] = 1 if done.started_at == started else 2
        bound = 2 * settings.DETECTION_TASK_BUDGET_S  # a detection step in each of the worker's two slots
        self.large["bystander_s"] = waited_s
        held, detail = held_if({f"longest task under CELERY_TASK_SOFT_TIME_LIMIT {settings.CELERY_TASK_SOFT_TIME_LIMIT} s":
                                self.large["longest_task_s"] < settings.CELERY_TASK_SOFT_TIME_LIMIT,
                                f"another team's document through the ingest queue stored in {waited_s:.1f} s, during the "
                                f"detection (bound: two DETECTION_TASK_BUDGET_S steps, {bound:g} s)": waited_s <= bound,
                                "one pass (the sweep did not restart it)": done.started_at == started,
                                f"sweep: {json.dumps(swept, default=str)[:80]}": True})
        return Outcome("3", f"a {self.args.large_results}-result document is detected inside the task limits, once", held, detail)

    def bystander_stored(self) -> float:
        """Seconds until another team's one-case document, handed to the dashboard worker's ingest
        queue as a worker hands a finished case over, is stored (issue #46 item 3: 4 minutes and more)."""
        from dashboard.celery import app
        from dashboard.results.models import Run
        from tests.documents import make_document, make_result

        document = make_document(results=[make_result()], git_sha="0b57" + "d" * 36)
        document["machine"]["machine_class"] = "cpu-bystander"
        sent = time.monotonic()
        app.send_task("results.ingest_run_document", kwargs={"document": document}, queue="ingest")
        wait_until(lambda: Run.objects.filter(pk=document["run"]["id"]).exists(), timeout=self.args.large_wait, what="the bystander's run",
                   poll=0.2)
        return time.monotonic() - sent

    def item_4_permissions(self) -> Outcome:
        from dashboard.alerts.models import Subscription
        from dashboard.regressions.models import Regression

        theirs = Subscription.objects.create(name="theirs", channel="slack", target="http://127.0.0.1:9/hook", created_by="someone")
        finding = Regression.objects.filter(raised_build__git_sha__startswith=sha_ref(VICTIM_DAYS[-1])).first()
        status = finding.status
        bob = Site(self.base, self.tally)
        signed_in = bob.login("bob").status_code == 302
        triage = bob.form("/regressions/", {"ids": [finding.id], "status": "wontfix"})
        subscribe = bob.form("/alerts/", {"name": "mine", "channel": "email", "target": "a@bench.test", "severity": "slowdown", "enabled": "on"})
        test_alert = bob.form("/alerts/test/", {"subscription": theirs.id}, page="/alerts/")
        finding.refresh_from_db()
        held, detail = held_if({"signed in": signed_in, "triage 403": triage.status_code == 403, f"finding still {status}": finding.status == status,
                                "subscribe 403": subscribe.status_code == 403, "test alert 403": test_alert.status_code == 403,
                                "no subscription added": not Subscription.objects.filter(name="mine").exists()})
        return Outcome("4", "staff without permissions: triage, subscribe, send a test alert", held, detail)

    def item_5_interpreter(self) -> Outcome:
        marker = self.work / "interpreter-ran"
        evil = self.work / "evil.sh"
        evil.write_text(f"#!/bin/sh\ntouch {marker}\n")
        evil.chmod(0o755)
        root = Site(self.base, self.tally)
        signed_in = root.login("root").status_code == 302
        added = root.form("/admin/dispatch/buildenvironment/add/", {"machine_class": PROBE_CLASS, "python": str(evil)})
        try:
            wait_until(lambda: f"probe of {evil} refused" in log_of(self.work, "runner-worker") or marker.exists(), timeout=180,
                       what="the runner worker's answer", poll=1.0)
        except RuntimeError as exc:
            return Outcome("5", "the admin's interpreter path outside PTBENCH_BUILDS_ROOT", None,
                           f"no answer from the runner worker ({exc}); its log ends {log_of(self.work, 'runner-worker')[-200:]!r}")
        held, detail = held_if({"signed in": signed_in, "admin add 302": added.status_code == 302,
                                "refused on the worker": f"probe of {evil} refused" in log_of(self.work, "runner-worker"),
                                "never run": not marker.exists()})
        return Outcome("5", "the admin's interpreter path outside PTBENCH_BUILDS_ROOT", held, detail)

    def item_6_bounds_and_ownership(self) -> Outcome:
        ref = sha_ref(VICTIM_DAYS[-1])
        request = {"build": ref, "machine_class": VICTIM_CLASS, "size": "tiny", "dispatch": False}
        threads = self.victim.post_json("/api/v1/runs/", {**request, "env": {"TORCHINDUCTOR_COMPILE_THREADS": "100000"}})
        fusion = self.victim.post_json("/api/v1/runs/", {**request, "config": {"inductor.max_fusion_size": 1e18}})
        mine = self.victim.post_json("/api/v1/runs/", request)
        run_id = mine.json().get("id") if mine.status_code == 201 else None
        cancel = self.attacker.request("POST", f"/api/v1/runs/{run_id}/cancel/")
        fabricated = json.loads(json.dumps(self.victim_docs[-1]))
        fabricated["run"]["id"] = run_id
        complete = self.attacker.post_json("/api/v1/runs/submit/", fabricated)
        appended = json.loads(json.dumps(self.victim_docs[-1]))
        appended["results"].append({**appended["results"][0], "config": {**appended["results"][0]["config"], "compile_mode": "max-autotune"}})
        append = self.attacker.post_json("/api/v1/runs/submit/", appended)
        status = self.victim.get(f"/api/v1/runs/{run_id}/").json().get("status")
        own_cancel = self.victim.request("POST", f"/api/v1/runs/{run_id}/cancel/")
        held, detail = held_if({"compile threads 100000 400": threads.status_code == 400, "max_fusion_size 1e18 400": fusion.status_code == 400,
                                "own run 201": mine.status_code == 201, "another token's cancel 403": cancel.status_code == 403,
                                "another token's document for it 403": complete.status_code == 403,
                                "another token appending to a completed run 403": append.status_code == 403,
                                "still pending": status == "pending", "its own token cancels it": own_cancel.status_code == 200})
        return Outcome("6", "numeric bounds; another token cancels, completes, appends", held, detail)

    def item_8_slow_clients(self) -> Outcome:
        with SlowClients(self.base, 4, "/api/v1/"):
            times = timed_requests(self.base + "/api/v1/", 3, 5.0)
        answered = [t for t in times if t is not None]
        front = "nginx -> gunicorn" if nginx_binary() else "gunicorn alone (nginx not installed)"
        return Outcome("8", f"four slow clients against {front}", len(answered) == len(times),
                       f"{len(answered)}/{len(times)} ordinary requests answered within 5 s, slowest {max(answered, default=0) * 1000:.0f} ms")

    def item_9_five_hundreds(self) -> Outcome:
        document = json.loads(json.dumps(self.victim_docs[0]))
        document["run"]["id"] = str(uuid.uuid4())
        document["machine"].update(cpu_count=3e9, memory_bytes=1e19, gpu_count=1e10)
        machine = self.victim.post_json("/api/v1/runs/submit/", document)
        bisecter = self.site("bisect-ci")
        path = f"/api/v1/regressions/{self.bisect_regression.id}/bisect/"
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            codes = sorted(pool.map(lambda _: bisecter.post_json(path, {}).status_code, range(self.args.bisects)))
        carol = Site(self.base, self.tally)
        carol.login("carol")
        nul = carol.form("/alerts/", {"name": "x", "channel": "email", "target": "a@bench.test", "severity": "slowdown", "enabled": "on",
                                      "workloads": "mlp_loop\x00, resnet"})
        started = codes.count(201)
        held, detail = held_if({"machine in float notation 400": machine.status_code == 400,
                                f"{self.args.bisects} concurrent bisects: {started} started, no 5xx ({sorted(set(codes))})":
                                started == 1 and max(codes) < 500,
                                "NUL in a subscription's workloads 400": nul.status_code == 400})
        return Outcome("9", "float-notation integers, concurrent bisects, NUL in a form", held, detail)

    def item_10_artifacts(self) -> Outcome:
        bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9, mtime=0)
        uploads = self.site("uploader-a")
        put = lambda site, body: site.request("PUT", f"/api/v1/artifacts/{hashlib.sha256(body).hexdigest()}/?name=t.log.gz",  # noqa: E731
                                              data=body, headers={"Content-Type": "application/gzip"})
        bombed = put(uploads, bomb)
        codes = []
        for _ in range(2 * ORPHAN_BOUND // (16 * 1024)):
            codes.append(put(uploads, gzip.compress(os.urandom(16 * 1024), mtime=0)))
            if codes[-1].status_code != 201:
                break
        other = put(self.site("uploader-b"), gzip.compress(os.urandom(16 * 1024), mtime=0))
        last = codes[-1]
        held, detail = held_if({"gzip bomb 413": bombed.status_code == 413,
                                f"one token refused at its bound after {len(codes) - 1} uploads (429 naming "
                                "ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN)": last.status_code == 429
                                and "ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN" in last.text,
                                "another token still uploads 201": other.status_code == 201})
        return Outcome("10", "gzip bomb; uploads no result references, per token", held, detail)

    def item_11_filters_csp_echo(self) -> Outcome:
        carol = Site(self.base, self.tally)
        carol.login("carol")
        filters = [carol.form("/alerts/", {"name": "x", "channel": "email", "target": "a@bench.test", "severity": "slowdown",
                                           "enabled": "on", field: value}).status_code
                   for field, value in (("sizes", "1e308"), ("machine_classes", "NaN"), ("min_magnitude", "inf"))]
        home = self.victim.get("/")
        document = json.loads(json.dumps(self.victim_docs[0]))
        document["workloads"] = [dict(document["workloads"][0], name=f"w{i:07d}") for i in range(20000)]
        echo = self.victim.post_json("/api/v1/runs/submit/", document)
        held, detail = held_if({"subscription filters 1e308 / NaN / inf 400": filters == [400, 400, 400],
                                "Content-Security-Policy on /": bool(home.headers.get("Content-Security-Policy")),
                                f"a {len(json.dumps(document)) // 1024} KiB 400 answered in {len(echo.content)} bytes":
                                echo.status_code == 400 and len(echo.content) < 2000})
        return Outcome("11", "subscription filters, CSP, a 400 that quotes little", held, detail)

    def item_11_login_throttle(self) -> Outcome:
        from django.conf import settings

        def wrong(_) -> int:
            return Site(self.base, self.tally).login("dave", "wrong-password").status_code

        with concurrent.futures.ThreadPoolExecutor(15) as pool:
            codes = list(pool.map(wrong, range(15)))
        checked = sum(code != 429 for code in codes)
        limit = settings.LOGIN_THROTTLE_FAILURES
        return Outcome("11", f"15 concurrent wrong passwords: at most LOGIN_THROTTLE_FAILURES ({limit}) checked", checked <= limit,
                       f"{checked} checked, {codes.count(429)} answered 429")

    def item_12_variant(self) -> Outcome:
        from contract.variants import Overrides, variant_label

        overrides = Overrides.build({"inductor.max_fusion_size": 1}, None)
        document = json.loads(json.dumps(self.victim_docs[1]))
        document["run"]["id"] = str(uuid.uuid4())
        document["build"].update(overrides=overrides.as_document(), local_label=variant_label("", overrides))
        stored = self.victim.post_json("/api/v1/runs/submit/", document)
        detected([document["run"]["id"]], timeout=300)
        ref = f"{sha_ref(VICTIM_DAYS[1])}+{document['build']['local_label']}"
        verdict = self.victim.get(f"/api/v1/verdict/?build={ref}&machine_class={VICTIM_CLASS}")
        reason = verdict.json().get("reason") if verdict.status_code in (200, 409) else None
        held, detail = held_if({"variant stored": stored.status_code == 201,
                                f"reason {reason!r} is no detection pass's": reason not in (None, "no_regressions", "regressions_found", "suspects_found")})
        return Outcome("12", "a variant's verdict says it was judged against its base", held, detail)

    def hostile_reads(self) -> Outcome:
        from dashboard.regressions.models import Regression
        from dashboard.results.models import Result, Run

        reader = Site(self.base, self.tally)
        seeds = ["/", "/regressions/", "/regressions/?status=all&kind=all", "/compare/", "/dynamic/", "/ab/", "/docs/", "/alerts/",
                 "/workloads/mlp_loop/", "/api/v1/", "/api/v1/builds/", "/api/v1/runs/", "/api/v1/results/", "/api/v1/series/",
                 "/api/v1/regressions/", "/api/v1/verdict/", "/api/v1/compare/", "/api/v1/schema/",
                 *(f"/runs/{r}/" for r in Run.objects.values_list("id", flat=True)[:5]),
                 *(f"/regressions/{r}/" for r in Regression.objects.values_list("id", flat=True)[:5]),
                 *(f"/api/v1/results/{r}/" for r in Result.objects.values_list("id", flat=True)[:3])]
        paths = list(seeds)
        for seed in seeds[:8]:
            response = reader.get(seed)
            if response.status_code == 200 and "text/html" in response.headers.get("Content-Type", ""):
                paths += [p.split("?")[0] for p in site_links(response.text) if p.split("?")[0] not in paths][:10]
        paths = list(dict.fromkeys(paths))
        before = len(self.tally.errors)
        jobs = [(paths[i % len(paths)], junk_query(self.rng)) for i in range(self.args.reads)]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda job: reader.get(job[0], params=job[1], timeout=120), jobs))
        odd = junk_paths()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda path: reader.get(path, timeout=120), odd))
        errors = len(self.tally.errors) - before
        return Outcome("reads", f"{self.args.reads} hostile reads over {len(paths)} URLs with junk query parameters, "
                       f"{len(odd)} addresses with junk in their path", errors == 0, f"{errors} x 5xx")

    def run(self) -> None:
        self.seed()
        before = self.verdicts()
        self.outcomes.append(self.item_2_every_finding())  # before the large documents' builds are the newest
        large = self.item_3_start_large()
        for item in (self.item_1_label_hijack, self.item_4_permissions, self.item_5_interpreter, self.item_6_bounds_and_ownership,
                     self.item_8_slow_clients, self.item_9_five_hundreds, self.item_10_artifacts, self.item_11_filters_csp_echo,
                     self.item_12_variant):
            self.outcomes.append(self.attempt(item))
        self.outcomes.append(self.attempt(lambda: self.item_3_finish_large(large)))
        self.outcomes.append(self.attempt(self.hostile_reads))
        self.outcomes.append(self.attempt(self.item_11_login_throttle))  # last: it locks the probe's address out of signing in
        self.outcomes.append(Outcome("7", "a Redis restart under a running case", None, "tests/faults/test_broker_restart_case.py"))
        self.outcomes.append(Outcome("13", "pages at 1M results", None, "bench/dashboard_load.py"))
        after = self.verdicts()
        self.verdicts_watched = len(before)
        self.verdicts_changed = sum(before[k] != after[k] for k in before)
        self.outcomes.sort(key=lambda o: (int(o.item) if o.item.isdigit() else 99))

    def attempt(self, item) -> Outcome:
        name = getattr(item, "__name__", "item")
        try:
            return item()
        except Exception as exc:  # noqa: BLE001 (a replay that could not finish is reported, never hidden)
            return Outcome(name.split("_")[1] if name.startswith("item_") else "?", f"{name}: the probe could not finish it", False,
                           f"{type(exc).__name__}: {str(exc)[:200]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large-results", type=int, default=1000, help="results in each of the two large documents (at most 10,000)")
    parser.add_argument("--large-wait", type=float, default=900.0, help="seconds to wait for the large document's detection")
    parser.add_argument("--reads", type=int, default=300, help="hostile reads with junk query parameters")
    parser.add_argument("--bisects", type=int, default=50, help="concurrent bisect requests of one finding")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--out", help="also write the table here")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (worker logs)")
    args = parser.parse_args()
    os.environ.setdefault("PTBENCH_WORKLOAD_CATALOGS", str(ROOT / "tests" / "catalog.json"))
    work = Path(tempfile.mkdtemp(prefix="ptbench-hostile."))
    work.chmod(0o755)
    began = time.monotonic()
    try:
        with deployment(work) as (base, _processes):
            probe = Probe(base, work, args)
            probe.run()
            from django.db import connection

            with connection.cursor() as cursor:
                cursor.execute("SHOW server_version")
                postgres = cursor.fetchone()[0].split()[0]
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    redis = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()[2].removeprefix("v=")
    header = [f"# python -m bench.hostile_probe --large-results {args.large_results} --reads {args.reads} --bisects {args.bisects} "
              f"--seed {args.seed}",
              f"# {platform.node()} · {os.cpu_count()} cores · PostgreSQL {postgres} · Redis {redis} (appendonly) · gunicorn "
              f"(deploy/gunicorn.conf.py, DEBUG off){' behind nginx (deploy/nginx.conf)' if nginx_binary() else ''} · dashboard and "
              f"runner Celery workers · {time.monotonic() - began:.0f} s in all"]
    report = table(probe.outcomes, probe.tally, verdicts_changed=probe.verdicts_changed, verdicts_watched=probe.verdicts_watched,
                   large=probe.large, header=header)
    print(report)
    if args.out:
        Path(args.out).write_text(report + "\n")


if __name__ == "__main__":
    main()
