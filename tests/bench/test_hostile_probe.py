"""bench/hostile_probe.py's pieces that need no deployment (bench/lib/hostile.py): the tally of 5xx
answers from many threads, junk query strings, the site's own links, and the table that says which
item broke."""
from __future__ import annotations

import random
import threading

from bench.lib.hostile import JUNK_NAMES, JUNK_VALUES, PARAM_NAMES, PATH_TEMPLATES, PATH_VALUES, Outcome, Tally, junk_paths, junk_query, site_links, table


def test_the_tally_counts_every_request_and_keeps_each_5xx_from_many_threads():
    tally = Tally()
    threads = [threading.Thread(target=lambda i=i: [tally.record("GET", f"/p{i}", 500 if j == 0 else 200) for j in range(50)])
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tally.requests == 400 and sorted(tally.errors) == [f"500 GET /p{i}" for i in range(8)]


def test_junk_queries_are_seeded_and_reach_every_hostile_value():
    assert junk_query(random.Random(1)) == junk_query(random.Random(1))
    rng = random.Random(46)
    drawn = [junk_query(rng) for _ in range(600)]
    assert all(1 <= len(q) <= 4 and set(q) <= set(PARAM_NAMES) | set(JUNK_NAMES) for q in drawn)
    assert {v for q in drawn for v in q.values()} == set(JUNK_VALUES) and {k for q in drawn for k in q} >= set(JUNK_NAMES)
    paths = junk_paths()
    assert len(paths) == len(PATH_TEMPLATES) * len(PATH_VALUES) and "/workloads/a%00b/" in paths and "/api/v1/builds/label:/" in paths
    assert {"\x00", "%ff", "1e308", "NaN", "x" * 5000} <= set(JUNK_VALUES)


def test_site_links_keep_this_sites_pages_once_in_order():
    html = ('<a href="/compare/?head=a&amp;base=b">x</a><a href="https://example.com/">e</a><a href="/admin/">a</a>'
            '<a href="/static/app.css">s</a><a href="#top">t</a><a href="/runs/1/#case">r</a><a href="/compare/?head=a&amp;base=b">again</a>'
            '<a href="relative/">r</a><a href="//evil.test/x">p</a>')
    assert site_links(html) == ["/compare/?head=a&base=b", "/runs/1/"]


def test_the_table_says_which_item_broke_and_lists_each_5xx():
    tally = Tally()
    tally.record("GET", "/api/v1/regressions/?workload=%25ff", 500)
    tally.record("GET", "/", 200)
    outcomes = [Outcome("1", "label hijack", True, "gate still 409"), Outcome("2", "every finding", False, "/ 500"),
                Outcome("7", "redis restart", None, "elsewhere")]
    text = table(outcomes, tally, verdicts_changed=1, verdicts_watched=6, large={"results": 10, "why": "timed out"}, header=["# probe"])
    lines = text.splitlines()
    assert lines[0] == "# probe" and lines[1].split() == ["requests", "2"] and lines[2].split() == ["5xx", "answers", "1"]
    assert "1 of 6 watched" in lines[3] and "not finished: timed out" in lines[4]
    assert "1     held     label hijack (gate still 409)" in lines
    assert "2     BROKE    every finding (/ 500)" in lines and "7     not run  redis restart (elsewhere)" in lines
    assert lines[-1] == "5xx: 500 GET /api/v1/regressions/?workload=%25ff"
    done = table([], Tally(), verdicts_changed=0, verdicts_watched=6, large={"results": 10, "detect_s": 61.0, "longest_task_s": 33.3,
                                                                               "passes": 1, "bystander_s": 2.5}, header=[])
    assert "10 results, 61.0 s from its submit, longest task 33.3 s, 1 pass(es) started; another document stored in 2.5 s" in done
