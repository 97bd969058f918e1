"""URL parameters: every page keeps its state in the query string, and a bad value is answered
with 400 naming the parameter (never a 500)."""
from __future__ import annotations

import functools
from collections.abc import Iterable

from django.core.paginator import EmptyPage, Page, Paginator
from django.shortcuts import render

from contract.suggest import did_you_mean, unknown_message
from dashboard.results.models import Build
from dashboard.results.selectors.build_refs import build_resolve
from dashboard.results.selectors.common import DEFAULT_RANGE, RANGES, Ambiguous, NotFound


class BadParameter(Exception):
    def __init__(self, name: str, message: str, status: int = 400):
        super().__init__(f"{name}: {message}")
        self.name, self.message, self.status = name, message, status


def answers_bad_parameters(view):
    """Turn ``BadParameter`` into a 400 page that names the parameter and what is wrong."""

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except BadParameter as bad:
            return render(request, "web/bad_parameter.html", {"name": bad.name, "message": bad.message}, status=bad.status)

    return wrapper


def _one(request, name: str) -> str | None:
    values = request.GET.getlist(name)
    if len(values) > 1:
        raise BadParameter(name, "given more than once")
    value = values[0].strip() if values else None
    return value or None


def choice(request, name: str, choices: Iterable[str], default: str | None = None) -> str | None:
    value = _one(request, name)
    if value is None:
        return default
    choices = list(choices)
    if value not in choices:
        shown = ", ".join(choices[:12]) + (", ..." if len(choices) > 12 else "")
        guess = did_you_mean(value, [c for c in choices if c])
        hint = f"; did you mean {guess!r}?" if guess else ""
        raise BadParameter(name, f"{value[:80]!r} is not one of {shown or '(none stored)'}{hint}")
    return value


def known_name(request, name: str, known: Iterable[str], what: str) -> str | None:
    """A free-text name (a workload) that must be one this server knows: 400 with a did-you-mean."""
    value = _one(request, name)
    if value is None:
        return None
    known = set(known)
    if value not in known:
        raise BadParameter(name, unknown_message(what, value, known))
    return value


def range_key(request) -> str:
    return choice(request, "range", RANGES, DEFAULT_RANGE)


def number(request, name: str, default: float, *, low: float, high: float, integer: bool = False) -> float:
    value = _one(request, name)
    if value is None:
        return default
    try:
        parsed = int(value) if integer else float(value)
    except ValueError:
        raise BadParameter(name, f"{value[:40]!r} is not a{'n integer' if integer else ' number'}") from None
    if not low <= parsed <= high:
        raise BadParameter(name, f"{parsed} is outside {low}..{high}")
    return parsed


def page(request, items, per_page: int, *, count: int | None = None) -> Page:
    """The ``page`` parameter's page of ``items`` (Django's ``Paginator``; ``count``: the number of
    items when it is known already, saving a COUNT query); past the last page: 400 naming ``page``."""
    wanted = int(number(request, "page", 1, low=1, high=1_000_000, integer=True))
    paginator = Paginator(items, per_page)
    if count is not None:
        paginator.count = count
    try:
        return paginator.page(wanted)
    except EmptyPage:
        raise BadParameter("page", f"{wanted} is past the last page ({paginator.num_pages})") from None


def build(request, name: str) -> Build | None:
    """A build named by a ref (``build_refs.build_resolve``); None when not given. Unknown: 404,
    ambiguous or malformed: 400, each naming the parameter and the candidates."""
    value = _one(request, name)
    if value is None:
        return None
    try:
        return build_resolve(ref=value)
    except ValueError as error:
        raise BadParameter(name, str(error)) from None
    except NotFound as error:
        raise BadParameter(name, str(error), 404) from None
    except Ambiguous as error:
        raise BadParameter(name, str(error)) from None


def builds(request, name: str, *, limit: int = 8) -> list[Build]:
    """Builds named by a repeated parameter (``?variant=A&variant=B``), in order, each once."""
    values = list(dict.fromkeys(v.strip() for v in request.GET.getlist(name) if v.strip()))
    if len(values) > limit:
        raise BadParameter(name, f"at most {limit} builds")
    out = []
    for value in values:
        try:
            out.append(build_resolve(ref=value))
        except (ValueError, NotFound, Ambiguous) as error:
            raise BadParameter(name, f"{value[:80]!r}: {error}") from None
    return out
