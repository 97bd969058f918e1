"""How a metric value is written for people: the pages (the ``metric`` filter) and alert messages."""
from __future__ import annotations


def metric_format(value, unit: str = "") -> str:
    """A metric value with its unit: ``1.234×``, ``12.3 ms``, ``7.51 s``, ``1.20 GB``, ``3``."""
    if value is None or value == "":
        return "–"
    if unit == "x":
        return f"{value:.3f}×"
    if unit == "ms":
        return f"{value:.3g} ms" if value < 1000 else f"{value:,.0f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "bytes":
        for size, name in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if abs(value) >= size:
                return f"{value / size:.2f} {name}"
        return f"{value:.0f} B"
    if unit == "rate":
        return f"{value * 100:.1f}%"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3g}"
    return f"{value:,.0f}"
