"""The one place a build named by a person is found: pages, ``/compare/``, the API, the CLI.

A ref is any of:

- a sha prefix of 7 to 40 hex digits, alone or with ``+<local_label>`` (``cf30153``,
  ``70d99e998b49+cu130``, the full sha); in a query string ``+`` decodes to a space, so
  ``70d99e998b49 cu130`` means the same;
- a build's label as pages show it (``torch 2.13.0``, ``nightly 2026-11-21``), or explicitly
  ``label:<label>``.

A ref that reads as a sha (with or without ``+local_label``) always means the sha, never a label: a
label cannot take over another build's ref (issue #46). Such labels are refused when a build is
registered (``label_problem``); one stored before that rule is still reached by ``label:<label>``.

A bare prefix names the one build it matches; among several builds of one sha, the plain build (no
local label), else the one build measured here beside imported samples of it (never a variant);
else the answer lists them ("2 builds have the sha 'cf30153c4c13': cf30153c4c13+a, cf30153c4c13+b;
name one"). A prefix of several shas asks for more digits, except a prefix of 12 digits or more (the
refs pages and CI use): two commits share 12 hex digits by chance about once in 2^48 pairs, so a
second one is almost surely a sha crafted to make another team's ref ambiguous (issue #46's probe:
it turned a CI gate's answer from 409 into 400); such a prefix names the commit stored first, and
the later one is reached by more digits of its own. Unknown and ambiguous refs raise
``NotFound`` / ``Ambiguous`` whose message lists the candidates and what settles it.
"""
from __future__ import annotations

import re

from contract.values import printable
from dashboard.results.imported import is_imported_label
from dashboard.results.models import Build
from dashboard.results.selectors.common import Ambiguous, NotFound, ref_for

_SHA_REF = re.compile(r"(?P<sha>[0-9a-f]{7,40}|unknown)(?:[+ ](?P<label>\S{1,100}))?")
LABEL_PREFIX = "label:"
SHADOW_DIGITS = 12  # a prefix this long that several commits share names the one stored first
MAX_CANDIDATES = 5


def _refs(builds, *, alternatives: bool = True) -> str:
    """The first candidates' refs: "a or b" (``alternatives``), else "a, b"."""
    refs = [ref_for(git_sha=b.git_sha, local_label=b.local_label) for b in builds[:MAX_CANDIDATES]]
    more = f" (and {len(builds) - MAX_CANDIDATES} more)" if len(builds) > MAX_CANDIDATES else ""
    if not alternatives or len(refs) == 1:
        return ", ".join(refs) + more
    return (" or ".join(refs) if len(refs) <= 2 else ", ".join(refs[:-1]) + " or " + refs[-1]) + more


def _by_sha(ref: str, sha: str, label: str | None) -> Build:
    builds = Build.objects.filter(git_sha=sha) if sha == "unknown" else Build.objects.filter(git_sha__startswith=sha)
    if len(sha) >= SHADOW_DIGITS and sha != "unknown" and len(builds.order_by().values_list("git_sha", flat=True).distinct()[:2]) > 1:
        builds = builds.filter(git_sha=builds.order_by("id").values_list("git_sha", flat=True).first())  # stored first: the module's doc
    matches = list(builds.order_by("-ordered_at", "-id")[:50])
    if label is not None:
        labelled = [b for b in matches if b.local_label == label]
        if len(labelled) == 1:
            return labelled[0]
        if labelled:
            raise Ambiguous(f"{ref!r} names {len(labelled)} builds: {_refs(labelled)}; give more digits of the sha")
        if matches:
            raise NotFound(f"no build {ref!r}: did you mean {_refs(matches)}?")
        raise NotFound(f"no build {ref!r}: no stored build's sha starts with {sha}")
    if len(matches) == 1:
        return matches[0]
    if len({b.git_sha for b in matches}) == 1:  # one commit stored as several builds: the sha is not ambiguous
        return _of_one_sha(ref, matches)
    if matches:
        raise Ambiguous(f"{ref!r} names {len(matches)} builds of {len({b.git_sha for b in matches})} commits: "
                        f"did you mean {_refs(matches)}? give more digits of the sha or the +local_label")
    raise NotFound(f"no build {ref!r}: no stored build's sha starts with {sha}")


def _of_one_sha(ref: str, builds: list[Build]) -> Build:
    """A bare sha that names several builds of one commit: the plain build (no local label), else
    the one measured here when the others are imported sample data (``results.imported``: the quick
    start's ``<sha>+cpu`` beside ``<sha>+cpu.imported``), never a variant; else the refs to choose from."""
    plain = [b for b in builds if not b.local_label]
    if len(plain) == 1:
        return plain[0]
    local = [b for b in builds if not b.overrides and not is_imported_label(b.local_label)]
    if len(local) == 1:
        return local[0]
    raise Ambiguous(f"{len(builds)} builds have the sha {ref!r}: {_refs(builds, alternatives=False)}; name one")


def build_resolve(*, ref: str) -> Build:
    """The build ``ref`` names (see the module's doc). Raises ``ValueError`` for a ref that cannot
    name a build, ``NotFound`` or ``Ambiguous`` (with candidates)."""
    text = (ref or "").strip()
    if not text or len(text) > 200:
        raise ValueError("expected a git sha prefix of 7 to 40 hex digits, optionally +local_label "
                         "(e.g. 70d99e998b49+cu130), or a build's label")
    if text.lower().startswith(LABEL_PREFIX):
        return _by_label(text, text[len(LABEL_PREFIX):].strip())
    sha_ref = _SHA_REF.fullmatch(_lower_sha(text))
    if sha_ref is not None:  # a sha is a sha: never looked up as a label
        return _by_sha(text, sha_ref["sha"], sha_ref["label"])
    return _by_label(text, text)


def _by_label(ref: str, label: str) -> Build:
    by_label = list(Build.objects.filter(label__iexact=label).order_by("-ordered_at", "-id")[:50]) if label else []
    if len(by_label) == 1:
        return by_label[0]
    if by_label:
        raise Ambiguous(f"the label {label!r} names {len(by_label)} builds: did you mean {_refs(by_label)}? give the sha")
    raise NotFound(f"no build {ref!r}: not a build label, nor a git sha prefix of 7 to 40 hex digits "
                   "(optionally +local_label, e.g. 70d99e998b49+cu130)")


def label_problem(label: str) -> str | None:
    """Why a build may not carry ``label`` (None when it may): a label that reads as a build ref of
    a sha (``7269437d6557``, ``cf30153 cu130``, ``unknown``) would shadow that sha's build."""
    text = (label or "").strip()
    if text and _SHA_REF.fullmatch(_lower_sha(text)):
        return (f"{printable(text)[:80]!r} reads as a git sha ref (7 to 40 hex digits, optionally +local_label): "
                "a build's label may not look like a sha; add a word (e.g. 'nightly 2026-11-21')")
    return None


def _lower_sha(text: str) -> str:
    """``CF30153+CU130`` -> ``cf30153+CU130``: the sha is case-blind, a local label is not."""
    sha, sep, label = re.split(r"([+ ])", text, maxsplit=1) if re.search(r"[+ ]", text) else (text, "", "")
    return sha.lower() + sep + label
