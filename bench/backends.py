"""10: both backends side by side: the search matrix (9) at 100 000 events and the write
contention (4) at 10 000, on SQLite and on PostgreSQL, each through gunicorn with the same
workers, each ratio against /health measured in the same round on the same server.

`python -m bench.backends` runs only these (both backends); `python -m bench` adds the
PostgreSQL half to its SQLite figures. `python -m bench.backends --growth` runs the matrix on
PostgreSQL at 100 000 and at 1 000 000 events instead, one after the other in the same run (the
larger dataset is made once a day, in about 100 minutes on a 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from servers import gunicorn

from . import matrix
from . import writes
from .datasets import SIZES
from .datasets import postgres_working_copy
from .datasets import working_copy
from .report import RESULTS
from .report import plan_lines
from .report import spread_text
from .report import table

CONTENDED = 10_000
WRITE_RUNS = ("alone", "contended", "spread")
# The size the matrix grows to on PostgreSQL (`--growth`).
GROWN = 1_000_000


def measure_postgres(rounds: int, search: bool = True) -> dict[str, Any]:
    """The matrix and the write contention on PostgreSQL copies of the datasets (without
    `search`, the writes alone)."""
    searched: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-pg-") as scratch:
        logs = Path(scratch)
        with ExitStack() as stack:
            if search:
                database = stack.enter_context(postgres_working_copy(max(SIZES)))
                base, _ = stack.enter_context(
                    gunicorn(database, workers=2, log=logs / "matrix.log"))
                print("10: the search matrix on PostgreSQL…", flush=True)
                searched = matrix.measure(base, database, rounds)
        with postgres_working_copy(CONTENDED) as database, \
                gunicorn(database, workers=4, log=logs / "writes.log") as (base, _):
            print("10: writes under contention on PostgreSQL…", flush=True)
            written = writes.measure_both(base, database)
    return {"matrix": searched, "writes": written}


def measure_sqlite(rounds: int, search: bool = True) -> dict[str, Any]:
    """The same on SQLite copies (what `python -m bench` measures as 8 and 4)."""
    searched: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-sqlite-") as scratch:
        directory = Path(scratch)
        if search:
            largest = working_copy(max(SIZES), directory)
            with gunicorn(largest, workers=2) as (base, _):
                print("10: the search matrix on SQLite…", flush=True)
                searched = matrix.measure(base, largest, rounds)
        contended = working_copy(CONTENDED, directory)
        with gunicorn(contended, workers=4) as (base, _):
            print("10: writes under contention on SQLite…", flush=True)
            written = writes.measure_both(base, contended)
    return {"matrix": searched, "writes": written}


def measure_growth(rounds: int) -> dict[str, Any]:
    """The matrix on PostgreSQL copies of the largest dataset and of `GROWN` events."""
    grown: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-growth-") as scratch:
        for count in (max(SIZES), GROWN):
            with postgres_working_copy(count) as database, \
                    gunicorn(database, workers=2, log=Path(scratch) / f"{count}.log") as (base, _):
                print(f"10: the search matrix on PostgreSQL at {count:,} events…", flush=True)
                grown[str(count)] = matrix.measure(base, database, rounds)
    return grown


def growth_table(grown: dict[str, Any]) -> str:
    """The matrix's figures at each size, a column each, and the largest ÷ the smallest."""
    sizes = list(grown)

    def row(label: str, figure: Any, digits: int = 2) -> list[str]:
        values = [figure(grown[size]) for size in sizes]
        return [label, *[f"{value:.{digits}f}" for value in values],
                f"{values[-1] / values[0]:.2f}×"]

    rows = [
        row("worst cell p50 ÷ /health p50", lambda r: r["worst"]["overHealth"]["median"]),
        row("the 10 worst cells measured again: worst ÷ /health",
            lambda r: r["measuredAgain"]["worst"]["overHealth"]),
        row("median cell ÷ /health", lambda r: r["median"]),
        row("/health p50 ms", lambda r: r["healthP50Ms"]["median"], 3),
        row("storage in-process: median ms", lambda r: r["storage"]["medianMs"], 3),
        row("storage in-process: slowest ms", lambda r: r["storage"]["slowest"]["ms"], 3),
    ]
    cells = [["the worst cell", *[cell(grown[size]["worst"]) for size in sizes], ""],
             ["the slowest in storage", *[cell(grown[size]["storage"]["slowest"])
                                          for size in sizes], ""]]
    plans = []
    for size in sizes:
        worst = grown[size]["worst"]
        plans += [f"The worst cell at {int(size):,} events, {cell(worst)} (“{worst['text']}”): "
                  f"its plan ({worst['plan']['storageP50Ms']:.3f} ms in storage, in-process)",
                  *plan_lines(worst["plan"]), ""]
    return table("10. The search matrix on PostgreSQL as the events grow (gunicorn 2 workers, "
                 "concurrency 1)", ["figure", *[f"{int(size):,} events" for size in sizes],
                                    "largest ÷ smallest"], rows + cells) + "\n".join(plans)


def cell(found: dict[str, Any]) -> str:
    """A cell of the matrix by its row and column."""
    return f"{found['query']} with {found['filters']}"


def side_by_side(by_backend: dict[str, dict[str, Any]]) -> str:
    """One table: each figure of the matrix and of the writes, a column per backend."""
    names = list(by_backend)

    def row(label: str, figure: Any) -> list[str]:
        return [label, *[figure(by_backend[name]) for name in names]]

    searched = all(results["matrix"] for results in by_backend.values())
    search_rows = [
        row("search matrix: worst cell p50 ÷ /health p50",
            lambda r: f"{spread_text(r['matrix']['worst']['overHealth'])}×"),
        row("  the worst cell", lambda r: cell(r["matrix"]["worst"])),
        row("the 10 worst cells measured again: worst ÷ /health",
            lambda r: f"{r['matrix']['measuredAgain']['worst']['overHealth']:.2f}×"),
        row("  that cell", lambda r: cell(r["matrix"]["measuredAgain"]["worst"])),
        row("search matrix: median cell ÷ /health", lambda r: f"{r['matrix']['median']:.2f}×"),
        row("/health p50 ms (the baseline)",
            lambda r: spread_text(r["matrix"]["healthP50Ms"], 3)),
        row("storage in-process: median ms",
            lambda r: f"{r['matrix']['storage']['medianMs']:.3f}"),
        row("storage in-process: slowest ms",
            lambda r: f"{r['matrix']['storage']['slowest']['ms']:.3f}"),
        row("  the slowest cell", lambda r: cell(r["matrix"]["storage"]["slowest"])),
    ] if searched else []
    rows = [
        *search_rows,
        row("writes, one at a time: p50 ms",
            lambda r: spread_text(r["writes"]["alone"]["p50Ms"], 1)),
        row("  of those that took a seat (201)",
            lambda r: spread_text(r["writes"]["alone"]["seatP50Ms"], 1)),
        row("  of those told the event is full (409)",
            lambda r: spread_text(r["writes"]["alone"]["fullP50Ms"], 1)),
        row("writes, one at a time: CPU ms per confirmation (whole machine)",
            lambda r: spread_text(r["writes"]["alone"]["cpuMsPerConfirmation"], 1)),
        row("writes, one at a time: p95 ms",
            lambda r: spread_text(r["writes"]["alone"]["p95Ms"], 1)),
        row(f"writes, {writes.CLIENTS} at once: confirmations per second",
            lambda r: spread_text(r["writes"]["contended"]["confirmationsPerSecond"], 0)),
        row(f"writes, {writes.CLIENTS} at once: p50 ms",
            lambda r: spread_text(r["writes"]["contended"]["p50Ms"], 1)),
        row(f"writes, {writes.CLIENTS} at once: p95 ms",
            lambda r: spread_text(r["writes"]["contended"]["p95Ms"], 1)),
        row(f"writes, {writes.CLIENTS} at once over {writes.SPREAD} events: per second",
            lambda r: spread_text(r["writes"]["spread"]["confirmationsPerSecond"], 0)),
        row(f"writes, {writes.CLIENTS} at once over {writes.SPREAD} events: p50 ms",
            lambda r: spread_text(r["writes"]["spread"]["p50Ms"], 1)),
        row(f"writes, {writes.CLIENTS} at once over {writes.SPREAD} events: CPU ms each",
            lambda r: spread_text(r["writes"]["spread"]["cpuMsPerConfirmation"], 1)),
        row("writes: never oversold", lambda r: "yes" if all(
            r["writes"][run]["neverOversold"] for run in WRITE_RUNS) else "NO"),
        row("writes: every seat sold, each to a client told 201", lambda r: "yes" if all(
            r["writes"][run]["soldOut"] for run in WRITE_RUNS) else "NO"),
    ]
    first = next(iter(by_backend.values()))
    plans = []
    for name, results in by_backend.items() if searched else ():
        worst = results["matrix"]["worst"]
        plans += [f"The worst cell on {name}, {cell(worst)} (“{worst['text']}”): its plan "
                  f"({worst['plan']['storageP50Ms']:.3f} ms in storage, in-process)",
                  *plan_lines(worst["plan"]), ""]
    return table(
        f"10. Both backends ({max(SIZES):,} events for the matrix, gunicorn 2 workers, "
        f"concurrency 1; {CONTENDED:,} for the writes, {first['writes']['alone']['visitors']} "
        f"visitors per event, one or {writes.CLIENTS} in flight, gunicorn 4 workers)",
        ["figure", *names], rows) + "\n".join(plans) + goals_table(by_backend)


def goals_table(by_backend: dict[str, dict[str, Any]]) -> str:
    """Issue 26's goals for PostgreSQL, judged against SQLite's figures of the same run."""
    if set(by_backend) != {"SQLite", "PostgreSQL"}:
        return ""
    lite, pg = by_backend["SQLite"], by_backend["PostgreSQL"]
    # A confirmation that takes a seat: those told "full" write nothing, and the p50 of the
    # two kinds together moved 1.20-1.83x between runs of the same code.
    alone = (pg["writes"]["alone"]["seatP50Ms"]["median"]
             / lite["writes"]["alone"]["seatP50Ms"]["median"])
    rate = (pg["writes"]["spread"]["confirmationsPerSecond"]["median"]
            / lite["writes"]["spread"]["confirmationsPerSecond"]["median"])
    goals = []
    if pg["matrix"]:
        again = pg["matrix"]["measuredAgain"]["worst"]["overHealth"]
        median = pg["matrix"]["median"]
        slowest = pg["matrix"]["storage"]["slowest"]["ms"]
        goals += [
            ("PostgreSQL: the ten worst cells measured again, worst ≤ 3× /health",
             f"{again:.2f}×", again <= 3),
            ("PostgreSQL: median cell ≤ 2.5× /health", f"{median:.2f}×", median <= 2.5),
            ("PostgreSQL: slowest cell in storage ≤ 2 ms", f"{slowest:.3f} ms", slowest <= 2),
        ]
    goals += [
        ("a confirmation alone that takes a seat: PostgreSQL's p50 ≤ 1.5× SQLite's",
         f"{alone:.2f}×",
         alone <= 1.5),
        (f"{writes.CLIENTS} at once over {writes.SPREAD} events: PostgreSQL's confirmations "
         "per second ≥ SQLite's",
         f"{rate:.2f}×", rate >= 1),
    ]
    return "\n" + table("Goals of table 10", ["goal", "measured", "met"],
                        [[goal, figure, "yes" if met else "NO"] for goal, figure, met in goals])


def main() -> None:
    """Measure both backends, print the table and save the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.backends", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per figure")
    parser.add_argument("--writes-only", action="store_true",
                        help="the writes alone (10 000 events: no 100 000-event dataset)")
    parser.add_argument("--growth", action="store_true",
                        help=f"the matrix on PostgreSQL at {max(SIZES):,} and {GROWN:,} events")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    if args.growth:
        grown = measure_growth(args.rounds)
        print()
        print(growth_table(grown))
        path = RESULTS / "backends-growth.json"
        path.write_text(json.dumps(grown, indent=2, default=str) + "\n")
        print(f"Figures saved to {path}.")
        return
    search = not args.writes_only
    results = {"SQLite": measure_sqlite(args.rounds, search),
               "PostgreSQL": measure_postgres(args.rounds, search)}
    print()
    print(side_by_side(results))
    path = RESULTS / ("backends.json" if search else "backends-writes.json")
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"Figures saved to {path}.")


if __name__ == "__main__":
    main()
