"""One finding, one set of numbers; one noise rule for what is shown as a change (issue #27 items 2-3).

A finding's before, after, change, noise and confidence are computed here once (``finding_numbers``)
and every surface shows them through ``FindingNumbers``: the regressions page, the API (and so the
verdict), ``python -m runner ci``, the board's CSV/JSON and the alerts' email and Slack text.
See docs/noise-and-findings.md.

Sign convention: ``change`` = after / before - 1 of the value shown (+2.744 = the value grew by
274.4 %), whatever the metric's direction; a separate word says whether that is ``worse`` or
``better`` for the metric. The unbacked/backed gap is shown and changed as the ratio
unbacked / backed (detection stores it as ratio - 1).

Noise rule: a change inside its series' run-to-run noise is ``within noise`` (grey); a series whose
noise is past ``TOO_NOISY_SD`` (relative sd, of the log) is ``too noisy to track``: no finding, and
no colour unless the change is past even that noise. Intervals of a positive quantity are ratio intervals (``ratio_interval``): never below 0.

Pure Python: no Django, no torch.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from contract.metrics import METRICS

GAP_METRIC = "dynamic_gap"  # stored as unbacked/backed - 1, shown as the ratio unbacked/backed
TOO_NOISY_SD = 0.20  # relative sd (of the log) past which a series is not tracked (the H100's: under 0.02)
Z_95 = 1.96  # two-sided 95 % normal quantile (as the noise bands have always used)
TWO_RUNS_95 = Z_95 * math.sqrt(2)  # half-width of the 95 % interval of the difference of two runs, in sds
WORSE, BETTER, WITHIN_NOISE, TOO_NOISY = "worse", "better", "within noise", "too noisy to track"
# A new graph-break or recompile reason at the same count (or a count not stored): the finding is the
# reason, named in the change text; the count itself is neither worse nor better (fewer is better).
NEW_REASON = "new reason"
# Timed in the runner's interleaved blocks, whose stated scatter (``speedup_noise``) is the speedup's:
# a speedup too noisy to track says the same of the compiled latency, its denominator.
BLOCK_TIMED_METRICS = tuple(m.name for m in METRICS if m.block_timed)

_SUFFIXES = {"x": "×", "ms": " ms", "s": " s"}  # a value's unit as a finding writes it; bytes: MB or GB
_UNITS = {GAP_METRIC: "×", **{m.name: _SUFFIXES[m.unit] for m in METRICS if m.unit in _SUFFIXES}}
_MEMORY = tuple(m.name for m in METRICS if m.unit == "bytes")


def sd_of_halfwidth(halfwidth: float | None) -> float | None:
    """A relative 95 % half-width (``speedup_noise``: ±h) as the sd of the log it stands for."""
    if halfwidth is None or not math.isfinite(halfwidth) or halfwidth < 0:
        return None
    return math.log1p(halfwidth) / Z_95


def ratio_interval(value: float | None, halfwidth: float | None) -> tuple[float | None, float | None]:
    """The interval of a positive ``value`` whose relative 95 % half-width is ``halfwidth``, on the
    log scale: ``value / (1 + h)`` .. ``value * (1 + h)``. Never below zero (a linear ± of 174 % is)."""
    if value is None or halfwidth is None or value <= 0 or halfwidth < 0:
        return None, None
    return value / (1 + halfwidth), value * (1 + halfwidth)


def too_noisy(sd: float | None) -> bool:
    """Whether a series with this relative run-to-run sd is too noisy to track (``TOO_NOISY_SD``)."""
    return sd is not None and math.isfinite(sd) and sd > TOO_NOISY_SD


def past_bar(change: float, bar: float) -> bool:
    """Whether a relative ``change`` is past a relative ``bar`` as a ratio: a rise past ``1 + bar``,
    a fall past ``1 / (1 + bar)`` (ratio intervals, as ``ratio_interval``): a band of ±99 % is
    passed by a fall to a twentieth, never by no fall at all as a linear bound would have it."""
    if change >= 0:
        return change > bar
    return change <= -1 or 1 / (1 + change) - 1 > bar


def past_noise(change: float, sd: float) -> bool:
    """Whether a relative ``change`` is past where two runs of sd ``sd`` (of the log) differ 95 % of
    the time: ``TWO_RUNS_95`` sds, on the log scale."""
    return change <= -1 or abs(math.log1p(change)) > TWO_RUNS_95 * sd


def judge(*, change: float | None, bar: float, worse: bool, sd: float | None = None) -> str:
    """The one rule for a change's word and colour: ``within noise`` when the change is not past
    ``bar`` (its noise band, or a floor; ``past_bar``), ``worse`` or ``better`` past it (``worse``: the change is
    the wrong way for the metric). A series whose noise ``sd`` is past the bound is ``too noisy to
    track`` unless the change is past even that noise (``past_noise``): a 4x change is never grey
    for lack of quiet runs (issue #42). '' without a change."""
    noisy = too_noisy(sd)
    if change is None:
        return TOO_NOISY if noisy else ""
    if not past_bar(change, bar) or (noisy and not past_noise(change, sd)):
        return TOO_NOISY if noisy else WITHIN_NOISE
    return WORSE if worse else BETTER


def format_value(value, metric: str = "") -> str:
    """A before/after value: 4 significant digits and the metric's unit; a status as it is; '–'."""
    if value is None or value == "":
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if metric in _MEMORY:
        return f"{value / 1e9:.4g} GB" if value >= 1e8 else f"{value / 1e6:.4g} MB"
    return f"{value:.4g}{_UNITS.get(metric, '')}"


COMPACT_FROM = 1e6  # a change of this many percent or more is written with an exponent (+5e+302 %)


def format_change(change: float | None) -> str:
    """A relative change with its sign: ``+274.4 %``; past a million percent ``+5e+302 %``, never
    three hundred digits across a table; an infinite one ``+∞ %`` (values at the schema's extremes)."""
    if change is None or math.isnan(change):
        return ""
    shown = change * 100
    if math.isinf(shown):
        return "+∞ %" if shown > 0 else "−∞ %"
    return f"{shown:+.3g} %" if abs(shown) >= COMPACT_FROM else f"{shown:+.1f} %"


@dataclass(frozen=True)
class FindingNumbers:
    """What every surface shows of one finding (``finding_numbers`` computes it)."""

    metric: str
    before: float | str | None  # a number in the metric's units (the gap: the ratio), or a status
    after: float | str | None
    change: float | None  # after / before - 1 of the values shown
    direction: str  # WORSE, BETTER or TOO_NOISY
    noise: float | None  # the relative run-to-run sd the change was judged against
    confidence: float | None  # 1 - p; 1.0 for a deterministic finding (a fact)
    certain: bool  # deterministic: a status, a count, a reason, a ratio past its threshold
    reason: str = ""  # a new graph-break or recompile reason's first line: what the finding is about

    @property
    def values_text(self) -> str:
        if self.before is None and self.after is None:
            return ""
        return f"{format_value(self.before, self.metric)} → {format_value(self.after, self.metric)}"

    @property
    def change_text(self) -> str:
        """``+274.4 % worse``; the word alone where there is no relative change; a new reason's finding
        names the reason (``-50.0 % better · new reason: graph break in loop``)."""
        if self.reason:
            counted = " ".join(p for p in (format_change(self.change), self.direction) if p) if self.direction != NEW_REASON else ""
            return " · ".join(p for p in (counted, f"new reason: {self.reason}") if p)
        return " ".join(part for part in (format_change(self.change), self.direction) if part)

    @property
    def noise_text(self) -> str:
        return "" if self.noise is None else f"± {self.noise * 100:.1f} %"

    @property
    def confidence_text(self) -> str:
        if self.certain:
            return "certain"
        return "" if self.confidence is None else f"{self.confidence:.3f}"

    @property
    def text(self) -> str:
        """One line: ``0.6379 ms → 2.388 ms (+274.4 % worse, noise ± 1.2 %), confidence 0.999``; a
        deterministic finding ends ``, certain``."""
        inner = ", ".join(p for p in (self.change_text, self.noise_text and f"noise {self.noise_text}") if p)
        out = " ".join(p for p in (self.values_text, inner and f"({inner})") if p)
        conf = self.confidence_text if self.certain else self.confidence_text and f"confidence {self.confidence_text}"
        return ", ".join(p for p in (out, conf) if p)

    def as_dict(self) -> dict:
        """The numbers and their text, as the API, the verdict and the CSV carry them."""
        return {**{k: v for k, v in asdict(self).items() if k != "metric"}, "change_text": self.change_text,
                "confidence_text": self.confidence_text, "text": self.text}

    @classmethod
    def from_dict(cls, metric: str, data: dict) -> FindingNumbers:
        """The numbers back from ``as_dict`` (the CLI reads them from the API)."""
        return cls(metric=metric, **{k: data.get(k) for k in ("before", "after", "change", "noise", "confidence")},
                   direction=data.get("direction") or WORSE, certain=bool(data.get("certain")), reason=data.get("reason") or "")


NEW_REASON_FINDINGS = ("new_graph_break", "new_recompile_reason")  # findings about a reason, not a count
REASON_METRICS = {"new_graph_break": "graph_breaks", "more_graph_breaks": "graph_breaks",
                  "new_recompile_reason": "recompiles", "more_recompiles": "recompiles"}


def reason_headline(finding: str, reasons, limit: int = 120) -> str:
    """A new-reason finding's first new reason as one line (and how many more), "" for any other."""
    if finding not in NEW_REASON_FINDINGS or not reasons:
        return ""
    line = next((ln.strip() for ln in str(reasons[0]).splitlines() if ln.strip()), "")
    more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return (line if len(line) <= limit else line[: limit - 1] + "…") + more


def finding_numbers(*, metric: str, before, after, kind: str, noise: float | None = None,
                    confidence: float | None = None, certain: bool = False, new_reason: str = "") -> FindingNumbers:
    """A finding's numbers from what detection stored: ``before``/``after`` as stored (the gap as
    ratio - 1), ``kind`` 'regression' / 'suspect' (worse) or 'improvement' (better), ``noise`` the
    relative sd it was judged against, ``certain`` for a deterministic finding (confidence 1).
    ``new_reason``: a new graph-break or recompile reason's finding; its counts read as counts read
    everywhere (fewer is better: 2 -> 1 is ``better``, 2 -> 2 neither) and the change names the reason."""
    if metric == GAP_METRIC:
        before, after = (None if v is None else v + 1 for v in (before, after))
    change = None
    if _number(before) and _number(after) is not None and before > 0:
        change = after / before - 1
    if certain and change == 0:  # a new reason at the same count (recompiles 2 -> 2): no "+0.0 % worse"
        change = None
    direction = TOO_NOISY if too_noisy(noise) else (BETTER if kind == "improvement" else WORSE)
    if new_reason:
        counts = _number(before), _number(after)
        direction = NEW_REASON if None in counts or counts[0] == counts[1] else (WORSE if counts[1] > counts[0] else BETTER)
    return FindingNumbers(metric=metric, before=before, after=after, change=change, direction=direction,
                          noise=noise if _number(noise) is not None else None,
                          confidence=1.0 if certain else confidence, certain=certain, reason=new_reason)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
