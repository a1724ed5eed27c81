"""7: deep pages. Each search of a matrix of words by frequency × filters, at page 1 and at its
last page (LAST_PAGE, the deepest the schema allows: the page after it answers invalid_input),
in the same rounds, so the costliest page of the costliest search stands next to its page 1.

Every page of a search reads the same part of the index: the walk that counts its matches up to
SEARCH_COUNT_CAP holds every page it can show (see `SQLiteStorage.search_events`), and only the
ten events shown are then read in full.
"""

from __future__ import annotations

from functools import partial
from typing import Any
from urllib.parse import urlencode

from helpers import JSON

from webapp.datasets.synthetic import COMMON_WORD
from webapp.datasets.synthetic import FORMATS
from webapp.datasets.synthetic import RARE_TOPICS
from webapp.domain.schemas import LAST_PAGE

from . import load
from .stats import ratios
from .stats import spread

# Words by how many events hold them (synthetic.py): most, one in ten, one in thirty, one in
# a thousand; each alone and within two filters.
WORDS = {"common word": COMMON_WORD, "format word": FORMATS[1].en, "topic word": "Python",
         "rare word": RARE_TOPICS[0].en}
FILTERS = {"": {}, " + filters": {"location": "taipei", "level": "beginner"}}
PAGES = (1, LAST_PAGE)


def searches() -> dict[str, dict[str, str]]:
    """The matrix: name -> query parameters."""
    return {f"{kind}{filtered}": {"query": word, **conditions}
            for kind, word in WORDS.items() for filtered, conditions in FILTERS.items()}


def measure(base: str, rounds: int, seconds: int) -> dict[str, Any]:
    """p50 (concurrency 1) of every search at page 1 and at its last page, round by round."""
    urls = {(name, page): f"{base}/events?{urlencode({**params, 'page': page})}"
            for name, params in searches().items() for page in PAGES}
    for url in urls.values():
        load.warm_up(url, JSON)
    results = load.interleaved(
        {key: partial(load.run, url, JSON, 1, seconds) for key, url in urls.items()}, rounds)
    rows: list[dict[str, Any]] = []
    for name in searches():
        first = [r.p50 for r in results[name, 1]]
        last = [r.p50 for r in results[name, LAST_PAGE]]
        rows.append({"search": name, "firstPageP50Ms": spread(first),
                     "lastPageP50Ms": spread(last), "lastOverFirst": ratios(last, first)})
    costliest = max(rows, key=lambda row: row["lastPageP50Ms"]["median"])
    return {"lastPage": LAST_PAGE, "rows": rows, "costliest": costliest["search"]}
