"""3: search p50 as the events grow from 1 000 to 100 000 (all servers up at once, requests
interleaved across them round by round).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from . import load
from .floors import COMMON
from .floors import FILTERS
from .floors import RARE
from .stats import ratios
from .stats import spread

SEARCHES = (FILTERS, RARE, COMMON)


def measure(bases: dict[int, str], rounds: int, seconds: int) -> list[dict[str, Any]]:
    """p50 of each search at each size (concurrency 1), and largest ÷ smallest per round."""
    smallest, largest = min(bases), max(bases)
    for base in bases.values():
        for search in SEARCHES:
            load.warm_up(base + search.path, search.headers)
    runs = {(size, search.name): partial(load.run, base + search.path, search.headers, 1,
                                         seconds)
            for size, base in bases.items() for search in SEARCHES}
    results = load.interleaved(runs, rounds)
    rows = []
    for search in SEARCHES:
        p50s = {size: [r.p50 for r in results[size, search.name]] for size in bases}
        rows.append({
            "endpoint": search.name,
            "p50Ms": {str(size): spread(p50s[size]) for size in bases},
            "growth": ratios(p50s[largest], p50s[smallest]),
        })
    return rows
