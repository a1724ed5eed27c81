"""Summaries of repeated measurements: the median with the minimum and maximum."""

from __future__ import annotations

import statistics
from collections.abc import Iterable


def spread(values: Iterable[float]) -> dict[str, float]:
    """The median, minimum and maximum of `values`."""
    values = list(values)
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def percentile(values: list[float], share: float) -> float:
    """The value below which `share` (0..1) of `values` fall (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def ratios(subject: list[float], baseline: list[float]) -> dict[str, float]:
    """Spread of subject ÷ baseline, taken round by round (both measured in the same round)."""
    return spread(s / b for s, b in zip(subject, baseline, strict=True))
