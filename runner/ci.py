"""``python -m runner ci``: the CI client of the dashboard's REST API. Standard library only
(urllib): CI and GPU boxes have none of the dashboard's dependencies.

    python -m runner ci submit  --url URL run.json [more.json ...]          store run documents
    python -m runner ci request --url URL --build REF --machine-class C      request a run, print its id
    python -m runner ci wait    --url URL (--run ID | --build REF)           until the run(s) finish
    python -m runner ci verdict --url URL --build REF [--baseline REF]       exit 1 regressed, 4 suspect

``--url`` defaults to $PTBENCH_URL; writes send the token in $PTBENCH_API_TOKEN (or ``--token``).
Exit status (``EXIT_CODES``, printed by ``--help``): 0 pass / done, 1 regressed (verdict; also suspect
with ``--fail-on-suspect``) or a run failed or was cancelled (wait), 2 usage (bad arguments, and what
the API refuses as a bad request naming an option: a build of several machine classes without
``--machine-class``, a sha of several builds, a baseline that is the build itself), 3 no answer (HTTP
error, unreachable, a verdict that stays pending, a variant whose base build was not measured, an
``error`` verdict: detection failed on some series), 4
suspect (verdict: moved, not yet confirmed). docs/machine-classes-and-verdicts.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Sequence

from contract.findings import FindingNumbers
from contract.arguments import suite_name
from contract.reasons import RUN_REASONS
from contract.vocabulary import SIZES

API_PREFIX = "/api/v1"
EXIT_OK, EXIT_REGRESSED, EXIT_USAGE, EXIT_NO_ANSWER, EXIT_SUSPECT = 0, 1, 2, 3, 4
EXIT_CODES = """exit status:
  0  pass (verdict), done (submit, request, wait)
  1  regressed (verdict; suspect too with --fail-on-suspect); a run failed or was cancelled (wait)
  2  usage: bad arguments, or a request the API refuses naming an option (e.g. a build measured on
     several machine classes without --machine-class: the message names them; a sha stored as several
     builds; --baseline naming the build itself: "same build: nothing to compare"; a machine class
     no host ever had: "unknown machine class ...; did you mean ...?", answered at once)
  3  no answer: HTTP error, unreachable, a verdict still pending at --timeout, a variant whose base
     build has no results on the class (not_tracked), a verdict of error (detection failed on some
     series: the message names them), a wait that timed out
  4  suspect (verdict): moved, not yet confirmed"""
FINAL_RUN_STATUSES = ("completed", "failed", "cancelled")
USER_AGENT = "ptbench-ci/1"


class ApiError(Exception):
    """The API answered an error (``status`` > 0) or could not be reached (``status`` 0)."""

    def __init__(self, status: int, message: str, body: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.body = status, message, body or {}

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.message}" if self.status else self.message


class Client:
    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0):
        base = url.rstrip("/")
        self.base = base[: -len(API_PREFIX)] if base.endswith(API_PREFIX) else base
        self.token, self.timeout = token, timeout

    def url(self, path: str, params: dict | None = None) -> str:
        query = urllib.parse.urlencode({k: v for k, v in (params or {}).items() if v is not None})
        return f"{self.base}{API_PREFIX}{path}" + (f"?{query}" if query else "")

    def call(self, method: str, path: str, *, params: dict | None = None, body: bytes | dict | None = None,
             ok: tuple[int, ...] = (), content_type: str = "application/json") -> tuple[int, dict]:
        """(status, JSON body). Statuses in ``ok`` (and 2xx) are answers; others raise ``ApiError``."""
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url(path, params), data=data, method=method)  # noqa: S310 (as below)
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", USER_AGENT)
        if data is not None:
            request.add_header("Content-Type", content_type)
        if self.token:
            request.add_header("Authorization", f"Token {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (the URL is the user's http(s) dashboard)
                return response.status, _json(response.read())
        except urllib.error.HTTPError as error:
            payload = _json(error.read())
            if error.code in ok:
                return error.code, payload
            raise ApiError(error.code, _describe(payload) or error.reason, payload) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ApiError(0, f"cannot reach {self.base}: {reason}") from None


def _json(raw: bytes) -> dict:
    try:
        value = json.loads(raw or b"{}")
    except ValueError:
        return {"detail": raw[:200].decode(errors="replace")}
    return value if isinstance(value, dict) else {"value": value}


# The command-line option that sets each API query field, named in errors so that the message says
# how to settle it (e.g. a build that ran on several machine classes: --machine-class).
OPTIONS = {"build": "--build", "machine_class": "--machine-class", "baseline": "--baseline", "size": "--size",
           "suite": "--suite"}


def _describe(payload: dict) -> str:
    """The API's error body as lines: ``field (--option): message``."""
    errors = payload.get("errors")
    if isinstance(errors, list) and errors:
        def field(name) -> str:
            return f"{name} ({OPTIONS[name]})" if name in OPTIONS else str(name)

        lines = [f"{field(e.get('field'))}: {e.get('message')}" if e.get("field") else str(e.get("message")) for e in errors[:20]]
        more = f"\n  (and {len(errors) - 20} more)" if len(errors) > 20 else ""
        return "\n  ".join(lines) + more
    return str(payload.get("detail", ""))


def _retrying(action, *, attempts: int = 4, delay: float = 2.0):
    """Retry what is safe to repeat (reads, idempotent submits) when the server is unreachable or 5xx."""
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except ApiError as error:
            if attempt == attempts or not (error.status == 0 or error.status >= 500):
                raise
            print(f"note: {error}; retrying in {delay:.0f} s", file=sys.stderr)
            time.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")


# --- commands ---------------------------------------------------------------------------------------
def command_submit(client: Client, args) -> int:
    for path in args.documents:
        try:
            raw = open(path, "rb").read()  # noqa: SIM115
        except OSError as error:
            print(f"error: {path}: {error.strerror}", file=sys.stderr)
            return EXIT_USAGE
        params = {"complete": "false"} if args.partial else None
        status, outcome = _retrying(lambda: client.call("POST", "/runs/submit/", params=params, body=raw))
        verb = "stored" if outcome.get("created") else "already stored"
        print(f"{path}: run {outcome.get('run_id')} {verb}: {outcome.get('results_created')} results created, "
              f"{outcome.get('results_skipped')} already there")
    return EXIT_OK


def command_request(client: Client, args) -> int:
    if args.torch_version:  # register the build first (idempotent)
        sha, _, label = args.build.partition("+")
        client.call("POST", "/builds/", body={"torch_version": args.torch_version, "git_sha": sha, "local_label": label,
                                              "label": args.label or ""})
    body = {"build": args.build, "machine_class": args.machine_class, "size": args.size}
    if args.suite:
        body["suite"] = args.suite
    if args.cases:
        body["cases_expected"] = args.cases
    if args.reason:
        body["reason"] = args.reason
    _, run = client.call("POST", "/runs/", body=body)
    print(run["id"])
    return EXIT_OK


def _progress_line(run: dict) -> str:
    progress = run.get("progress") or {}
    expected = progress.get("expected")
    count = f"{progress.get('stored', 0)}/{expected}" if expected else f"{progress.get('stored', 0)}"
    failed = f", {progress['failed']} failed" if progress.get("failed") else ""
    return f"run {run['id']} ({run['machine']['machine_class']}): {run['status']}, {count} cases{failed}"


def command_wait(client: Client, args) -> int:
    deadline = time.monotonic() + args.timeout
    last: dict[str, str] = {}
    while True:
        try:
            if args.run:
                runs = [_retrying(lambda: client.call("GET", f"/runs/{args.run}/"))[1]]
            else:
                page = _retrying(lambda: client.call("GET", "/runs/", params={
                    "build": args.build, "machine_class": args.machine_class, "page_size": 1000}))[1]
                runs = page.get("results", [])
        except ApiError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_USAGE if error.status == 400 else EXIT_NO_ANSWER  # 400: an option, named (a mistyped class)
        for run in runs:
            line = _progress_line(run)
            if last.get(run["id"]) != line:
                print(line, file=sys.stderr, flush=True)
                last[run["id"]] = line
        if runs and all(r["status"] in FINAL_RUN_STATUSES for r in runs):
            bad = [r for r in runs if r["status"] != "completed"]
            for run in bad:
                print(f"run {run['id']} {run['status']}", file=sys.stderr)
            return EXIT_REGRESSED if bad else EXIT_OK
        if time.monotonic() >= deadline:
            what = f"run {args.run}" if args.run else f"the runs of {args.build}" if runs else f"a run of {args.build}"
            print(f"error: {what} did not finish within {args.timeout:.0f} s", file=sys.stderr)
            return EXIT_NO_ANSWER
        time.sleep(min(args.interval, max(0.0, deadline - time.monotonic())))


def format_verdict(verdict: dict) -> str:
    against = f"against {verdict['baseline']}" if verdict.get("baseline") else "with no baseline"
    lines = [f"verdict: {verdict['verdict']} ({verdict['reason']}) for build {verdict['build']} {against} "
             f"on {verdict['machine_class']}"]
    if verdict.get("message"):
        lines.append(f"  {verdict['message']}")
    for culprit in verdict.get("culprits") or []:  # what a bisection over commits named (docs/builds.md)
        lines.append(f"  regression {culprit.get('regression')}: {culprit.get('text', '')}")
    for r in verdict.get("regressions", []):
        # the finding's numbers as the API computed them, printed as every surface prints them
        numbers = FindingNumbers.from_dict(r["metric"], r).text
        change = f" {numbers}" if numbers else ""
        message = f": {r['message']}" if r.get("message") else ""
        what = r["metric"] if r["finding"] == r["metric"] else f"{r['metric']} {r['finding']}"
        lines.append(f"  {r['workload']} [{r['config']}] {what}{change}{message}")
    for note in verdict.get("notes") or []:  # not compared, never counted (a change of compile reference)
        lines.append(f"  note: {note.get('message', '')}")
    return "\n".join(lines)


def command_verdict(client: Client, args) -> int:
    params = {"build": args.build, "machine_class": args.machine_class, "baseline": args.baseline}
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            _, verdict = _retrying(lambda: client.call("GET", "/verdict/", params=params))
        except ApiError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_USAGE if error.status == 400 else EXIT_NO_ANSWER  # 400: the arguments, named
        if verdict.get("verdict") != "pending" or time.monotonic() >= deadline:
            break
        print("detection has not finished for this build yet; waiting", file=sys.stderr, flush=True)
        time.sleep(min(args.interval, max(0.0, deadline - time.monotonic())))
    print(json.dumps(verdict, indent=1) if args.json else format_verdict(verdict))
    answer = verdict.get("verdict")
    if answer == "not_compared":  # the build itself as baseline (usage), or a variant with no base measured
        print(f"error: {verdict.get('message') or verdict.get('reason')}", file=sys.stderr)
        return EXIT_USAGE if verdict.get("reason") == "same_build" else EXIT_NO_ANSWER
    if answer == "error":  # detection failed on some series: they were not judged, never a pass
        print(f"error: {verdict.get('message') or verdict.get('reason')}", file=sys.stderr)
        return EXIT_NO_ANSWER
    if answer == "pending" or answer not in ("pass", "regressed", "suspect"):
        print(f"error: no verdict ({verdict.get('reason')}) after {args.timeout:.0f} s", file=sys.stderr)
        return EXIT_NO_ANSWER
    if answer == "suspect":
        return EXIT_REGRESSED if args.fail_on_suspect else EXIT_SUSPECT
    return EXIT_REGRESSED if answer == "regressed" else EXIT_OK


# --- arguments --------------------------------------------------------------------------------------
def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m runner ci", description=__doc__.split("\n\n")[0],
                                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--url", default=os.environ.get("PTBENCH_URL"), help="the dashboard, e.g. https://ptbench.example (default $PTBENCH_URL)")
        sub.add_argument("--token", default=os.environ.get("PTBENCH_API_TOKEN"), help="API token (default $PTBENCH_API_TOKEN)")
        sub.add_argument("--http-timeout", type=_positive, default=120.0, help="seconds per HTTP request")

    submit = commands.add_parser("submit", help="store run documents (all or nothing each; safe to repeat)",
                                  epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    common(submit)
    submit.add_argument("documents", nargs="+", help="run documents (python -m runner run --out FILE)")
    submit.add_argument("--partial", action="store_true", help="the run is not finished: it stays running")

    request = commands.add_parser("request", help="request a run of a build on a machine class; prints the run id",
                                  epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    common(request)
    request.add_argument("--build", required=True, help="<git sha>[+local_label]")
    request.add_argument("--machine-class", required=True)
    request.add_argument("--size", choices=SIZES, default="full", help="workload size (default full)")
    request.add_argument("--suite", type=suite_name, help="a suite's workloads (core, hf, timm, torchvision, all); default: core")
    request.add_argument("--cases", type=int, help="cases you will submit yourself (ci submit): the workers do not run it; without it the class's runner workers run the suite")
    request.add_argument("--torch-version", help="register the build first, with this torch version")
    request.add_argument("--label", help="with --torch-version: the build's name on pages")
    request.add_argument("--reason", choices=RUN_REASONS,
                         help="why (default requested): only nightly and requested runs raise findings; a bisection run "
                              "is never a point of a series")

    wait = commands.add_parser("wait", help="wait until a run (or every run of a build) finishes",
                                  epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    common(wait)
    target = wait.add_mutually_exclusive_group(required=True)
    target.add_argument("--run", help="a run id")
    target.add_argument("--build", help="every run of this build")
    wait.add_argument("--machine-class", help="with --build: only this class")
    wait.add_argument("--timeout", type=_positive, default=6 * 3600.0, help="seconds (default 6 h)")
    wait.add_argument("--interval", type=_positive, default=15.0, help="seconds between polls")

    verdict = commands.add_parser("verdict", help="pass / regressed / suspect / pending against the baseline; "
                                  "exit 0 pass, 1 regressed, 4 suspect, 3 pending, 2 usage",
                                  epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    common(verdict)
    verdict.add_argument("--build", required=True, help="<git sha>[+local_label]")
    verdict.add_argument("--machine-class", help="default: the build's machine class when it has one")
    verdict.add_argument("--baseline", help="default: the previous build on the same machine class")
    verdict.add_argument("--json", action="store_true", help="print the API's answer as JSON")
    verdict.add_argument("--fail-on-suspect", action="store_true", help="exit 1 (not 4) when the verdict is suspect")
    verdict.add_argument("--timeout", type=_positive, default=600.0, help="seconds to wait while detection is pending")
    verdict.add_argument("--interval", type=_positive, default=10.0)
    return parser


COMMANDS = {"submit": command_submit, "request": command_request, "wait": command_wait, "verdict": command_verdict}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if not args.url:
        parser.error("--url is required (or set PTBENCH_URL)")
    if not args.url.startswith(("http://", "https://")):
        parser.error(f"--url {args.url}: expected http:// or https://")
    client = Client(args.url, token=args.token, timeout=args.http_timeout)
    try:
        return COMMANDS[args.command](client, args)
    except ApiError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_NO_ANSWER
