"""Table 15 of the benchmarks (bench/publish.py) at a tiny size, on both backends: the manager
drafts and publishes through the real forms of a gunicorn server, and the search page lists
each event at the first search after its publish. The bench reports a miss as a bug; here a
miss fails. Timings are never asserted.
"""

from __future__ import annotations

import pytest

from bench import publish

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]


def test_the_first_search_lists_each_published_event(database_setting, tmp_path):
    found = publish.measure_on(database_setting, rounds=1, publishes=2,
                               log=tmp_path / "gunicorn.log")
    assert found["missed"] == []
    assert (found["publishes"], found["searched"]) == (2, 4)
    printed = publish.tables(found)
    assert "publish + first search" in printed
    assert "Listed by the first search after publishing: 4 of 4" in printed
