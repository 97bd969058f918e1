"""The pages of a quick-start database (the real sample documents imported, a local run of three
tiny workloads; tests/dashboard/quickstart_data.py): every internal link answers (over HTTP from the
live server), nothing on them is what #42's crawler flags, and in headless Chromium home, /dynamic/
and a GPU workload page say what the data is (#27 items 5-8)."""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urljoin, urlsplit

import pytest
from django.core.management import call_command
from django.test import Client

from dashboard.web.crawl import crawl, format_report
from tests.fixtures.browser import open_page
from tests.dashboard.quickstart_data import LOCAL_CLASS, local_document, quickstart_database

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
WIDE = {"width": 1400, "height": 900}


@pytest.fixture
def quickstart(tmp_path):
    quickstart_database(tmp_path, detect=True)  # as the quick start: findings, verdicts and their links


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


# Parameters that only sort, filter or page a listing: each of their values is followed once per
# path, not once per listing (the compare page alone renders ~60 sort and filter links per pair).
PRESENTATION = {"sort", "dir", "page", "filter", "changed", "metric", "threshold", "range", "status", "kind", "finding", "config"}


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 3xx is the answer itself (HTTPError), as the crawl counts it


def _fetch(url: str) -> tuple[int, str, str]:
    """(status, content type, text) of one GET, its redirect not followed."""
    try:
        with urllib.request.build_opener(_NoRedirects).open(url, timeout=120) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), ""


def test_every_internal_link_of_every_page_answers(live_server, quickstart):
    # Every page reachable from / through the links the pages render (a[href], same host), each
    # fetched over HTTP from the live server; /admin/ (sign-in) is left out. A link is followed
    # when its page (path and identifying parameters: build, machine, workload, ...) or one of its
    # listing parameters' values is new. The ~900 pages go in waves (each page's links the next
    # wave), four requests at once: the server renders one while another waits on the database
    # (sequential, through the browser's request context, the crawl took 108 s of CI).
    pages, shown, queue, broken, fetched = set(), set(), ["/"], [], 0
    with ThreadPoolExecutor(4) as pool:
        while queue:
            wave = []
            for raw in queue:
                link = urlsplit(raw)
                pairs = parse_qsl(link.query, keep_blank_values=True)
                page_key = (link.path, tuple(sorted(p for p in pairs if p[0] not in PRESENTATION)))
                listing = {(link.path, k, v) for k, v in pairs if k in PRESENTATION}
                if page_key in pages and listing <= shown:
                    continue
                pages.add(page_key)
                shown |= listing
                wave.append(link.path + (f"?{link.query}" if link.query else ""))
            queue = []
            for path, (status, content_type, text) in zip(wave, pool.map(lambda path: _fetch(live_server.url + path), wave)):
                fetched += 1
                if status >= 400:
                    broken.append(f"{status} {path}")
                    continue
                if "text/html" not in content_type:
                    continue
                parser = Links()
                parser.feed(text)
                for href in parser.hrefs:
                    url = urlsplit(urljoin(live_server.url + path, href))
                    if f"{url.scheme}://{url.netloc}" != live_server.url or url.path.startswith(("/admin/", "/static/")):
                        continue
                    queue.append(url.path + (f"?{url.query}" if url.query else ""))
    assert len(pages) > 100, len(pages)  # runs, workloads, compare, regressions, dynamic, A/B
    assert broken == [], f"{len(broken)} of {fetched} links answer 4xx/5xx: {broken[:20]}"


def test_the_quick_starts_pages_have_nothing_a_person_would_trip_on(quickstart):
    # Issue #42's crawler (dashboard/web/crawl.py; what it flags: tests/dashboard/test_crawl_pages.py):
    # no 5xx, no DEBUG page, no broken link, no colour without a reason, no finding whose page or board
    # differs from its API answer. On this file's database (the snapshot, not a second import).
    client = Client(HTTP_HOST="127.0.0.1", raise_request_exception=False)

    def get(url):
        response = client.get(url)
        return response.status_code, response.get("Content-Type", ""), response.content.decode(errors="replace")

    report = crawl(get, per_kind=8, limit=80)
    assert len(report.pages) > 40 and report.coloured_cells > 0, format_report(report)
    assert not report.problems, format_report(report)


def intakes() -> None:
    """The nightly intake (issue #41): a build taken in on the local class, a failure on gpu-h100."""
    from dashboard.dispatch.models import Intake
    from dashboard.results.models import Build

    build = Build.objects.get(git_sha__startswith="cf30153c4c13", local_label="cpu")
    Intake.objects.create(machine_class=LOCAL_CLASS, state="taken", requested_by="schedule", requested_at="2026-11-26T01:00:00+00:00",
                          finished_at="2026-11-26T01:00:32+00:00", version="2.13.0+cpu", build=build, hostname="box", seconds=31.6,
                          cached=False)
    Intake.objects.create(machine_class="gpu-h100", state="failed", requested_by="schedule", requested_at="2026-11-26T01:00:00+00:00",
                          finished_at="2026-11-26T01:00:05+00:00", version="2.14.0.dev20261127+cu130", hostname="gpu0",
                          error="uv pip exited 1: error: Failed to download `torch==2.14.0.dev20261127+cu130`",
                          log="$ uv pip install ...\nerror: Failed to download `torch==2.14.0.dev20261127+cu130`")


def test_home_says_last_night_first_and_links_its_counts(browser, live_server, quickstart):
    intakes()
    page, problems = open_page(browser, live_server.url + "/", viewport=WIDE)
    page.wait_for_selector("#overview-trends[data-drawn=true]", timeout=20_000)
    first = page.locator("h1").first
    # The quick start's documents were measured days ago: not "last night" (#42 item 7).
    assert first.inner_text() == "Newest builds"
    rows = page.locator("#last-night tr.night")
    assert [rows.nth(i).get_attribute("data-class") for i in range(rows.count())] == ["cpu", LOCAL_CLASS, "gpu-h100", "gpu-h200"]
    local = rows.nth(1).inner_text()
    # The local run: measured today in its own class, its build dated by the 2.13 release, compared
    # with nothing (the imported measurement of the same commit is another host's, in class cpu).
    assert "cf30153c4c13+cpu" in local and "newest build, measured 2026-11-25 23:00" in local and "build dated 2026-08-19" in local
    assert "no earlier build: its baseline" in local and ".imported" not in local
    assert rows.nth(1).locator("td.verdict strong").inner_text() == "pass"
    assert "measured 2026-11-25 23:00" in page.inner_text(f"#class-{LOCAL_CLASS} h2")
    # Its block names the imported measurement of its commit, and that it is not compared with it.
    assert page.inner_text(f"#elsewhere-{LOCAL_CLASS}") == (
        "(the same commit measured on another host: cf30153c4c13+cpu.imported on cpu, never compared with it)")
    assert page.locator(f"#class-{LOCAL_CLASS} td.cell.better, #class-{LOCAL_CLASS} td.cell.worse").count() == 0
    counts = page.locator(f"#class-{LOCAL_CLASS} a.open-regressions")
    assert counts.count() == 3 and f"/regressions/?machine={LOCAL_CLASS}&build=cf30153c4c13%2Bcpu" in counts.first.get_attribute("href")
    # Nightly intake: per class the build taken in, and the failure, its log folded until opened.
    taken = page.locator(f"#intake tr[data-class={LOCAL_CLASS}]").inner_text()
    assert "torch 2.13.0+cpu" in taken and "cf30153c4c13+cpu" in taken and "31.6 s on box" in taken and "none yet" not in taken
    failed = page.locator("#intake tr[data-class=gpu-h100]")
    assert "none yet" in failed.inner_text() and "failed 2026-11-26 01:00 (torch 2.14.0.dev20261127+cu130): uv pip exited 1" in failed.inner_text()
    assert not failed.locator("pre.intake-log").is_visible()
    failed.locator("summary").click()
    assert "error: Failed to download" in failed.locator("pre.intake-log").inner_text()
    # Recent runs name the build by its ref.
    assert page.locator("table.runs tbody tr").first.locator(".build-ref").inner_text() == "cf30153c4c13+cpu"
    # The first row's slanted build names end above the second row's chart titles.
    boxes = page.evaluate("""() => {
      const el = document.getElementById('overview-trends');
      const bottom = s => Math.max(...[...el.querySelectorAll('g.' + s + ' .xtick text')].map(t => t.getBoundingClientRect().bottom));
      const title = [...el.querySelectorAll('.annotation')].find(a => a.textContent === 'mean compile time, cold');
      return {ticks: Math.max(bottom('xy'), bottom('x2y2')), title: title.getBoundingClientRect().top};
    }""")
    assert boxes["ticks"] < boxes["title"], boxes
    assert problems == []


def test_dynamic_page_scale_failures_and_worst_case(browser, live_server, quickstart):
    page, problems = open_page(browser, live_server.url + "/dynamic/?machine=" + LOCAL_CLASS, viewport=WIDE)
    page.wait_for_selector("#dynamic-heatmap[data-drawn=true]", timeout=20_000)
    summary = page.inner_text("#dynamic-summary")
    assert "geomean gap 1.227 over the 2 workloads where both regimes passed (every gap's own runs too noisy to track)" in summary
    # None below 1: the smallest gap is not called "worst".
    assert "smallest mlp_loop 1.012" in summary and "widest the other way positional_graph_break 1.488" in summary
    assert "1 failed, no gap: masked_attention (unbacked data_dependent_error)" in summary
    row = page.locator("#dynamic-table tr.failed")
    assert row.count() == 1 and "unbacked data_dependent_error" in row.locator("td.ratio").first.inner_text()
    # The heatmap: log2 of the ratio, symmetric around 1 (0), red at the bottom; a failed cell is
    # drawn dark and names its status.
    heat = page.evaluate("""() => { const d = document.getElementById('dynamic-heatmap').data;
      return {zmin: d[0].zmin, zmax: d[0].zmax, zmid: d[0].zmid, low: d[0].colorscale[0][1], mid: d[0].colorscale[2][1],
              failed: d.length > 1 ? d[1].text.flat().filter(Boolean) : []}; }""")
    assert heat["zmin"] == -heat["zmax"] and heat["zmid"] == 0 and heat["low"] == "#b2182b" and heat["mid"] == "#f7f7f7"
    assert "data_dependent_error" in heat["failed"]
    assert page.locator("#dynamic-heatmap text", has_text="data_dependent_error").count() >= 1
    assert problems == []

    # The imported measurement of 2.13: a geomean of 0.762 with bert_encoder 4x slower beside it.
    page, problems = open_page(browser, live_server.url + "/dynamic/?machine=cpu&build=cf30153c4c13%2Bcpu.imported", viewport=WIDE)
    summary = page.inner_text("#dynamic-summary")
    assert "geomean gap 0.762 over the 7 workloads" in summary
    # Its sides state ±158 % and ±104 %: 4.1x slower is past even that noise (issue #42): red, saying it
    # is a level within one build and no finding; the other six gaps are within theirs, grey.
    assert "worst bert_encoder 0.243 (unbacked 4.1x slower)" in summary
    assert "2 failed, no gap: masked_attention (unbacked data_dependent_error), unet_diffusion (unbacked compile_error)" in summary
    assert "not a finding" in page.locator("#worst-gap.worse").get_attribute("title")
    assert page.locator("#dynamic-table td:nth-child(4).worse").count() == 1
    assert page.locator("#dynamic-table td:nth-child(4)", has_text="too noisy to track").count() == 6
    # The heatmap draws those white (log2 0) and says why on hover, bert_encoder's red.
    page.wait_for_selector("#dynamic-heatmap[data-drawn=true]", timeout=20_000)
    quiet = page.evaluate("""() => { const d = document.getElementById('dynamic-heatmap').data[0];
      const cells = d.text.flatMap((row, w) => row.map((t, b) => [t, d.z[w][b]])).filter(c => c[0].includes('too noisy to track'));
      return {n: cells.length, zs: [...new Set(cells.map(c => c[1]))]}; }""")
    assert quiet["n"] >= 6 and quiet["zs"] == [0]
    assert problems == []


def test_gpu_workload_page_opens_on_the_h100_and_shows_each_run(browser, live_server, quickstart):
    page, problems = open_page(browser, live_server.url + "/workloads/llama_decode/", viewport=WIDE)
    page.wait_for_selector("#series-speedup[data-drawn=true]", timeout=20_000)
    assert page.locator("select[name=machine]").input_value() == "gpu-h100"
    spreads = page.inner_text("#run-spreads")
    assert "speedup over eager, speedup: 13 runs of 1 build: run-to-run sd 0.6%" in spreads
    runs = page.evaluate("""() => document.getElementById('series-speedup').data
      .filter(t => t.name === 'speedup, each run').map(t => t.y.length)""")
    assert runs == [13]
    assert page.locator("table.latest td.implementation", has_text="LlamaForCausalLM").count() == 3
    assert "transformers.LlamaForCausalLM (library)" in page.inner_text("#implementation")
    assert "Trends over 1 build (" in page.inner_text("#series")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    assert problems == []

    page, problems = open_page(browser, live_server.url + "/workloads/masked_attention/?machine=" + LOCAL_CLASS + "&regime=unbacked", viewport=WIDE)
    assert "GuardOnDataDependentSymNode" in page.inner_text("#latest-error")
    assert "workloads.suite.masked_attention.MaskedAttentionStack (ours)" in page.inner_text("#implementation")
    failed = page.locator("table.latest tr.status-data_dependent_error details.error")
    assert failed.count() == 1 and failed.locator("summary").inner_text() == "torch._inductor.exc.InductorError"
    assert problems == []



def test_compare_on_a_class_of_one_plain_build_says_so_and_offers_its_variants(browser, live_server, quickstart):
    page, problems = open_page(browser, live_server.url + "/compare/?machine=gpu-h100", viewport=WIDE)
    said = page.inner_text("#compare-nothing")
    assert "No plain build was measured on gpu-h100 before 70d99e998b49+cu130.imported (60 runs of it" in said  # 29 of the core suite, 13 + 14 of the model families (bench/results/families), 4 of the compile paths
    assert "Only one build" not in page.inner_text("body")
    assert page.locator("#pick-base").input_value() == ""  # no variant preselected as the base
    assert page.locator("#pick-head").input_value() == "70d99e998b49+cu130.imported"
    links = page.locator("a.variant-compare")
    assert links.count() == 2
    with page.expect_navigation():
        links.first.click()
    assert page.locator("#pick-base").input_value() == "70d99e998b49+cu130.imported"
    assert page.locator("#compare-table tr.case").count() > 0
    assert problems == []


def test_suite_trends_say_which_builds_ran_other_case_sets(browser, live_server, quickstart, tmp_path):
    # A later build of another commit on the imported class that ran only the quick start's 3
    # workloads: its trend point covers 9 cases against the 27 before it, and the page says so.
    document = local_document()
    document["build"].update(git_sha="0123456789ab" + "c" * 28, local_label="cpu")
    document["machine"].update(machine_class="cpu", hostname="cpu-host")
    document["run"].update(started_at="2026-11-26T09:00:00+00:00", finished_at="2026-11-26T09:05:00+00:00")
    path = tmp_path / "later.json"
    path.write_text(json.dumps(document))
    call_command("ingest", "-v", "0", str(path))
    page, problems = open_page(browser, live_server.url + "/?machine=cpu", viewport=WIDE)
    page.wait_for_selector("#overview-trends[data-drawn=true]", timeout=20_000)
    note = page.inner_text("#trend-case-sets")
    assert "0123456789ab+cpu 9 cases" in note and "cf30153c4c13+cpu.imported 27 cases" in note
    assert problems == []


def test_the_h100_block_groups_the_core_suite_and_the_imported_families_by_suite(browser, live_server, quickstart):
    # The quick start imports the families' H100 documents (bench/results/families) into the H100
    # build: its block adds the per-suite table, whose family rows say how they were measured.
    page, problems = open_page(browser, live_server.url + "/", viewport=WIDE)
    suites = page.locator("#class-gpu-h100 table.suites tr.suite")
    assert [row.get_attribute("data-suite") for row in suites.all()] == ["core", "hf", "timm", "torchvision", "all"]
    # The hf runs' many notes are folded under one line, each note once with the runs it covers.
    hf_notes = suites.nth(1).locator("td.suite-notes")
    runs = int(re.match(r"(\d+) runs", hf_notes.inner_text()).group(1))
    folded = hf_notes.locator("details.suite-how")
    assert re.fullmatch(r"how they were measured: \d+ notes", folded.locator("summary").inner_text())
    assert not folded.locator("li.note").first.is_visible() and "five runner processes" not in hf_notes.inner_text()
    assert hf_notes.bounding_box()["height"] < 60  # two lines, not a screen of notes
    folded.locator("summary").click()
    notes = folded.locator("li.note")
    assert notes.first.is_visible() and "five runner processes shared one H100" in hf_notes.inner_text()
    counts = [int(re.search(r"\((\d+) of (\d+) runs\)$", t).group(1)) for t in notes.all_inner_texts()]
    assert len(counts) == int(folded.locator("summary").inner_text().split()[-2]) and sum(counts) <= runs
    assert page.locator(f"#class-{LOCAL_CLASS} table.suites").count() == 0  # one suite: no table
    assert problems == []
