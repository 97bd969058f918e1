"""Formatting for the "what changed" page (docs/explain.md): compile phases in seconds, shares."""
from django import template

register = template.Library()


@register.filter
def seconds(value) -> str:
    return "–" if value is None else f"{value:.3f} s"


@register.filter
def signed_seconds(value) -> str:
    return "" if value is None else f"{value:+.3f} s"


@register.filter
def share(value) -> str:
    return "" if value is None else f"{value:.0%}"
