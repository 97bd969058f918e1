"""The run page's case rows, built in Python (the markup its template wrote, to the byte, at a fraction
of the cost), and a result's speedup with its noise."""
from __future__ import annotations

import html
import math
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.template.defaultfilters import floatformat, truncatechars
from django.template.defaultfilters import urlencode as urlencode_filter
from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import conditional_escape, escape
from django.utils.safestring import mark_safe

from contract.case_interval import CLASS, WITHIN_RUN, halfwidth_of_sd
from contract.metrics import COMPILE_TIMES
from contract.findings import TOO_NOISY, TOO_NOISY_SD, ratio_interval, sd_of_halfwidth, too_noisy
from dashboard.web.templatetags.artifacts import artifact_html
from dashboard.web.filters.format import model_name, register


HOST_BOUND_TITLE = ("The compiled side kept the GPU waiting for the host: enqueueing took {share}% of its device time. Its "
                    "speedup follows the host CPU's speed (compare on one machine), and mode reduce-overhead (CUDA graphs) "
                    "removes most of this launch overhead.")
HOST_SLOWED_TITLE = ("While this case was timed the host ran a fixed piece of Python work in {probe} ms, at {speed}% of the "
                     "speed of this series' fastest run: this speedup is low because the host was slow, not because of the "
                     "build. Compare runs whose host ran at full speed.")


@register.simple_tag
def result_rows(results, machine_class: str, host_bound_share: float, host_slowed_below: float) -> str:
    """The run page's case rows (``_results_table.html``), each with its error row: the markup a
    ``{% for %}`` over the cases wrote, to the byte, at a fraction of its cost (~0.5 ms a row in the
    template language; a page holds 500 of a run's 1,920 cases)."""
    machine = urlencode_filter(machine_class)
    urls: dict[str, str] = {}
    out = []
    for r in results:
        name, shown = r.workload.name, r.config.case_config.page_parameters().items()
        if name not in urls:
            urls[name] = reverse("web:workload", args=[name])
        breaks = "".join(f"{_item(b, 'reason')} @ {_item(b, 'location')}&#10;" for b in r.graph_breaks or [])
        recompiles = "".join(f"{_item(c, 'reason')}&#10;" for c in r.recompiles or [])
        out.append(
            f'\n    <tr class="status-{_text(r.status)}">\n'
            f'      <td><a href="{_text(urls[name])}?machine={machine}'
            f'{"".join(f"&amp;{word}={urlencode_filter(value)}" for word, value in shown)}">{_text(name)}</a>'
            f'<div class="implementation">{model_name(r.implementation)}</div>{_distributed(r)}</td>'
            f'{"".join(f"<td>{_text(value)}</td>" for _, value in shown)}\n'
            f'      <td>{_text(r.status)}</td>\n'
            f'      <td class="num">{_speedup_cell(r, host_bound_share, host_slowed_below)}</td>\n'
            f'      <td class="num">{" / ".join(_fixed(getattr(r, m.name), 2) or "–" for m in COMPILE_TIMES)}</td>\n'
            f'      <td class="num" title="{breaks}">'
            f'{_text("–" if r.graph_break_count is None else r.graph_break_count)}</td>\n'
            f'      <td class="num" title="{recompiles}">'
            f'{_text("–" if r.recompile_count is None else r.recompile_count)}</td>\n'
            f'      <td class="repro-cell">{_repro_cell(r)}</td>\n'
            f'    </tr>\n'
            f'    {_error_row(r)}\n  '
        )
    return mark_safe("".join(out))


def _distributed(r) -> str:
    """How a distributed case ran (docs/distributed.md): its wrapper, world size, order, checkpointing."""
    if not r.world_size:
        return ""
    checkpointed = " · checkpointed" if r.checkpoint == "true" else ""
    return (f'<div class="distributed">{_text(r.parallel)} · world size {_text(r.world_size)} · '
            f'{_text(r.order)}{checkpointed}</div>')


def _text(value) -> str:
    """A value as ``{{ value }}`` writes it: localized, escaped (a string: only escaped, as Django's
    ``escape`` does)."""
    if type(value) is str:
        return html.escape(value)
    if type(value) is int and not settings.USE_THOUSAND_SEPARATOR:  # what localize writes then, without its
        return str(value)  # number_format (~0.2 ms a call: a third of the run page's rows)
    return conditional_escape(localize(value))


_QUANTA = {places: Decimal(1).scaleb(-places) for places in (2, 3)}


def _fixed(value, places: int) -> str:
    """``value|floatformat:places`` (2 or 3): the value's shortest repr rounded half up, as
    Django's filter does, without its per-call localization (a float below 1e15; anything else goes
    to the filter itself)."""
    if type(value) is float and math.isfinite(value) and abs(value) < 1e15:
        rounded = Decimal(repr(value)).quantize(_QUANTA[places], rounding=ROUND_HALF_UP)
        text = f"{rounded:f}"
        return text[1:] if text[0] == "-" and not rounded else text  # never "-0.00"
    return floatformat(value, places)


def _item(item, key: str) -> str:
    """``{{ item.key }}`` of a stored dict (a reason, a location): '' where it is missing."""
    try:
        return _text(item[key])
    except (KeyError, TypeError, IndexError):
        return _text(getattr(item, key, ""))


def _percent(value) -> str:
    """``{% widthratio value 1 100 %}``: the share in whole percent ('' where it is no number)."""
    try:
        return str(round((float(value) / float(1)) * 100))
    except (ValueError, TypeError, OverflowError):
        return ""


@register.filter
def speedup_noise(halfwidth, value=None) -> str:
    """A speedup's own 95 % half-width: ``±2%``, or grey "too noisy to track" (the run's interval as a
    ratio interval in its title) when the sd it stands for is past ``TOO_NOISY_SD`` (contract.findings)."""
    if not halfwidth:
        return ""
    if too_noisy(sd_of_halfwidth(halfwidth)):
        low, high = ratio_interval(value, halfwidth)
        span = f"95 % interval {low:.3g}–{high:.3g}×, " if low is not None else ""
        title = f"{span}±{_percent(halfwidth)}%: run-to-run sd past {TOO_NOISY_SD:.0%}, not tracked"
        return mark_safe(f' <span class="noise too-noisy" title="{title}">{TOO_NOISY}</span>')
    return mark_safe(f' <span class="noise">±{_percent(halfwidth)}%</span>')


@register.filter
def reported_noise(r) -> str:
    """A case's reported interval on the run and workload pages (``contract.case_interval``, set by
    ``with_run_to_run``): its own (``speedup_noise``) where nothing is known of its run to run, else
    the wider of its own and its series' (or class's) run to run, labelled with the one shown and
    both in its title."""
    interval = getattr(r, "interval", None)
    if interval is None or interval.sd is None:
        return speedup_noise(r.speedup_noise, r.speedup)
    if too_noisy(sd_of_halfwidth(interval.halfwidth)):
        return speedup_noise(interval.halfwidth, r.speedup)
    own = "none stated" if interval.own is None else f"±{100 * interval.own:.2f}%"
    whose = ("its series' repeated runs of one build" if interval.source != CLASS else
             "the upper quartile of the series shown here that have repeated runs: this series has none")
    title = (f"95 % interval within this run {own} (one compile timed many times); run to run "
             f"±{100 * halfwidth_of_sd(interval.sd):.2f}% (sd {100 * interval.sd:.2f}% from {whose}: each run compiles "
             f"again). Shown: the wider, {interval.source}.")
    label = "" if interval.source == WITHIN_RUN else f' <span class="noise-source">{interval.source}</span>'
    return mark_safe(f' <span class="noise" title="{escape(title)}">±{_percent(interval.halfwidth)}%{label}</span>')


def _speedup_cell(r, host_bound_share: float, host_slowed_below: float) -> str:
    if not r.speedup:
        return "–"
    cell = f"{_fixed(r.speedup, 3)}×" + reported_noise(r)
    if r.compiled_host_share is not None and r.compiled_host_share >= host_bound_share:
        cell += f' <span class="host-bound" title="{HOST_BOUND_TITLE.format(share=_percent(r.compiled_host_share))}">host-bound</span>'
        if r.host_speed is not None and r.host_speed < host_slowed_below:
            title = HOST_SLOWED_TITLE.format(probe=_fixed(r.host_probe_ms, 2), speed=_percent(r.host_speed))
            cell += f' <span class="host-bound host-slowed" title="{title}">host at {_percent(r.host_speed)}%</span>'
    return cell


def _repro_cell(r) -> str:
    if not r.repro:
        return artifact_html(r)
    words = " ".join(f"<span>{html.escape(word)}</span>" for word in r.repro.split())  # wraps between words only
    return (f'<code class="repro" id="repro-{_text(r.id)}">{words}</code> '
            f'<button type="button" class="copy" data-copy="#repro-{_text(r.id)}" hidden>copy</button>{artifact_html(r)}')


def _error_row(r) -> str:
    if not r.error:
        return ""
    error = r.error
    message = truncatechars(error.get("message", "") if isinstance(error, dict) else "", 600)
    return (f'<tr class="error-row"><td colspan="10"><pre class="error-excerpt">{_item(error, "type")}: '
            f'{conditional_escape(message)}</pre></td></tr>')
