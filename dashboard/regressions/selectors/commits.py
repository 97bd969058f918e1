"""Reads of commit ranges (issue #41, docs/builds.md): what a finding's page, its API answer, its
alerts and the CSV show of the commits between its last good and first bad build."""
from __future__ import annotations

from collections import Counter

from contract.commits import AREAS
from dashboard.regressions.models import CommitRange, Regression
from dashboard.regressions.services.commits import commit_link, commit_range_of

SHOWN = 200  # commits listed on a page; the API gives them all


def commit_summary(commit_range: CommitRange | None) -> dict | None:
    """Counts of a range: commits, those touching C++, those only Python under torch/ by area."""
    if commit_range is None:
        return None
    commits = commit_range.commits
    kinds = Counter(c["kind"] for c in commits)
    areas = Counter(a for c in commits if c["kind"] == "python" for a in c["areas"])
    return {"status": commit_range.status, "error": commit_range.error, "count": len(commits), "cpp": kinds["cpp"],
            "python": kinds["python"], "none": kinds["none"],
            "areas": {a: areas[a] for a in (*AREAS, "other") if areas[a]},
            "good_commit": commit_range.good_commit, "bad_commit": commit_range.bad_commit,
            "text": _text(commit_range, kinds, areas)}


def _text(commit_range: CommitRange, kinds: Counter, areas: Counter) -> str:
    if commit_range.status == CommitRange.Status.PENDING:
        return "commits: asked of a worker's mirror"
    if commit_range.status == CommitRange.Status.FAILED:
        return f"commits: not listed ({commit_range.error})"
    total = len(commit_range.commits)
    by_area = ", ".join(f"{a} {n}" for a, n in ((a, areas[a]) for a in (*AREAS, "other")) if n)
    return (f"{total} commit{'s' * (total != 1)}: {kinds['cpp']} touching C++, {kinds['python']} only Python under torch/"
            + (f" ({by_area})" if by_area else "") + (f", {kinds['none']} outside the build" if kinds["none"] else ""))


def commit_ranges_of_rows(regressions) -> dict[tuple[int, int], CommitRange]:
    """The ranges of many findings in one query, by (last good build id, first bad build id)."""
    pairs = {(r.last_good_build_id, r.first_bad_build_id) for r in regressions if r.last_good_build_id}
    if not pairs:
        return {}
    rows = CommitRange.objects.filter(bad_build_id__in={b for _, b in pairs}, good_build_id__in={g for g, _ in pairs})
    return {(c.good_build_id, c.bad_build_id): c for c in rows}


def commit_rows(commit_range: CommitRange | None, *, limit: int | None = None) -> list[dict]:
    if commit_range is None:
        return []
    rows = commit_range.commits if limit is None else commit_range.commits[-limit:]
    return [{**c, "link": commit_link(c["sha"])} for c in rows]


def regression_commits(regression: Regression, *, limit: int | None = SHOWN) -> dict:
    """The commit range of a finding and its culprit commit (``culprit_commit``), for a page or an answer."""
    commit_range = commit_range_of(good=regression.last_good_build, bad=regression.first_bad_build)
    return {"summary": commit_summary(commit_range), "commits": commit_rows(commit_range, limit=limit),
            "hidden": max(0, len(commit_range.commits) - limit) if commit_range and limit else 0,
            "culprit": regression.culprit_commit or None, "sides": sides_text(regression.culprit_commit)}


def sides_text(culprit: dict | None) -> str:
    """The values measured on both sides of a culprit commit: "2 before, 3 after"."""
    if not culprit or culprit.get("before") is None or culprit.get("after") is None:
        return ""
    return f"{culprit['before']:.4g} before, {culprit['after']:.4g} after"


def culprit_commit_text(culprit: dict | None) -> str:
    """One line: the culprit commit with the values on both sides, or the commits needing a source build."""
    if not culprit:
        return ""
    sides = f" ({sides_text(culprit)})" if sides_text(culprit) else ""
    if culprit.get("needs_source_build"):
        return culprit["message"] + sides
    return f"culprit commit {culprit['sha'][:12]} \"{culprit.get('subject', '')}\" by {culprit.get('author', '')}{sides} {culprit.get('link', '')}".rstrip()


def verdict_culprits(regression_ids) -> list[dict]:
    """The culprit commits bisections found for these regressions (a verdict's first lines): each
    with the regression's id and one line of text."""
    ids = [i for i in regression_ids if i]
    rows = Regression.objects.filter(pk__in=ids).exclude(culprit_commit={}).order_by("id").values_list("id", "culprit_commit")
    return [{"regression": rid, "sha": culprit.get("sha", ""), "link": culprit.get("link", ""),
             "needs_source_build": len(culprit.get("needs_source_build") or []), "text": culprit_commit_text(culprit)}
            for rid, culprit in rows]
