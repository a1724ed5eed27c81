"""`python -m bench`: build the datasets, serve them, measure, print the tables, save JSON."""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from browser.lighthouse import LIGHTHOUSE
from servers import gunicorn

from webapp.datasets.synthetic import COMMON_WORD

from . import attendees
from . import backends
from . import door
from . import floors
from . import growth
from . import lighthouse
from . import mail
from . import matrix
from . import pages
from . import payload
from . import plans
from . import publish
from . import report
from . import round_trip
from . import time_to_tools
from . import writes
from .browser import chromium
from .datasets import SIZES
from .datasets import dataset
from .datasets import working_copy


def load_average() -> str:
    """The machine's load over the last minute (other work on it makes times noisy)."""
    return f"{os.getloadavg()[0]:.1f}"


def main() -> None:
    """Run every measurement in the order of the issue and report them."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per figure")
    parser.add_argument("--seconds", type=int, default=2, help="length of one load run")
    parser.add_argument("--only", choices=["matrix", "lighthouse", "mail", "door", "attendees",
                                            "publish"],
                        help="measure only this table (printed, not saved: latest.json keeps "
                             "whole runs)")
    args = parser.parse_args()
    if args.only == "matrix":
        only_matrix(args.rounds)
        return
    if args.only == "lighthouse":
        only_lighthouse()
        return
    if args.only == "mail":
        only_mail(args.rounds)
        return
    if args.only == "door":
        only_door(args.rounds)
        return
    if args.only == "attendees":
        only_attendees(args.rounds)
        return
    if args.only == "publish":
        if only_publish(args.rounds):
            parser.exit(1, "a first search missed a published event: a bug (see above)\n")
        return
    # Table 11 comes last and the tables are printed at the end: without Lighthouse a run
    # would measure for ten minutes and keep nothing.
    if not LIGHTHOUSE.is_file():
        parser.exit(1, f"{LIGHTHOUSE} is missing: run `make lighthouse` (or `make bench`)\n")
    started = time.monotonic()
    results: dict[str, Any] = {
        "machine": {"when": datetime.now(UTC).isoformat(timespec="seconds"),
                    "cpus": os.cpu_count(), "sqlite": sqlite3.sqlite_version,
                    "loadBefore": load_average()},
        "settings": {"rounds": args.rounds, "seconds": args.seconds, "sizes": SIZES},
    }
    for size in SIZES:
        print(f"dataset: {size:,} events at {dataset(size)}", flush=True)
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-") as scratch:
        directory = Path(scratch)
        largest = working_copy(max(SIZES), directory)
        with gunicorn(largest, workers=2) as (base, _):
            print("1, 2: search vs. the framework and storage floors…", flush=True)
            results["framework"] = floors.measure(base, largest, args.rounds, args.seconds)
            results["plans"] = plans.measure(largest)
            print("9: the search matrix…", flush=True)
            results["matrix"] = matrix.measure(base, largest, args.rounds)
            print("7: deep pages…", flush=True)
            results["pages"] = pages.measure(base, args.rounds, max(1, args.seconds // 2))
            with chromium() as browser:
                print("5: bytes…", flush=True)
                results["bytes"] = payload.measure(base, browser)
                values = round_trip.site_values(
                    base, browser, COMMON_WORD,
                    time_to_tools.REGISTRATIONS + round_trip.registrations_made(args.rounds))
                print("6: time to tools…", flush=True)
                results["timeToTools"] = time_to_tools.measure(base, browser, values["event"])
                print("8: an agent's call, round trip…", flush=True)
                results["roundTrip"] = round_trip.measure(base, browser, values, args.rounds)
        with ExitStack() as servers:
            bases = {size: servers.enter_context(
                gunicorn(working_copy(size, directory), workers=2))[0] for size in SIZES}
            print("3: growth…", flush=True)
            results["growth"] = growth.measure(bases, args.rounds, max(1, args.seconds // 2))
        contended = working_copy(10_000, directory)
        with gunicorn(contended, workers=4) as (base, _):
            print("4: writes under contention…", flush=True)
            results["writes"] = writes.measure_both(base, contended)
    results["postgresql"] = backends.measure_postgres(args.rounds)
    print("12: what mail costs…", flush=True)
    results["mail"] = mail.measure(args.rounds)
    print("11: Lighthouse performance…", flush=True)
    results["lighthouse"] = lighthouse.measure()
    results["machine"]["loadAfter"] = load_average()
    results["machine"]["seconds"] = round(time.monotonic() - started)
    print()
    print(report.render(results))
    print(f"Figures saved to {report.save(results)} ({results['machine']['seconds']} s).")


def only_matrix(rounds: int) -> None:
    """Table 9 alone, on the largest dataset: the quick check of a change to the request path."""
    print(f"load {load_average()} before", flush=True)
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-") as scratch:
        largest = working_copy(max(SIZES), Path(scratch))
        with gunicorn(largest, workers=2) as (base, _):
            found = matrix.measure(base, largest, rounds)
    print(f"load {load_average()} after\n")
    print(report.matrix_tables(found))


def only_lighthouse() -> None:
    """Table 11 alone: Lighthouse's performance score of the pages people land on."""
    print(f"load {load_average()} before", flush=True)
    found = lighthouse.measure()
    print(f"load {load_average()} after\n")
    print(report.lighthouse_table(found))


def only_mail(rounds: int) -> None:
    """Table 12 alone, on both backends: a confirmation with its mail and without, and the
    delivery loop's throughput."""
    print(f"load {load_average()} before", flush=True)
    started = time.monotonic()
    found = mail.measure(rounds)
    print(f"load {load_average()} after ({time.monotonic() - started:.0f} s)\n")
    print(mail.tables(found))


def only_door(rounds: int) -> None:
    """Table 13 alone: the door's check-in round trip against `/health`."""
    print(f"load {load_average()} before", flush=True)
    found = door.measure(rounds)
    print(f"load {load_average()} after\n")
    print(door.tables(found))


def only_attendees(rounds: int) -> None:
    """Table 14 alone: the CSV export of 10 000 attendees, its time and peak memory."""
    print(f"load {load_average()} before", flush=True)
    found = attendees.measure(rounds)
    print(f"load {load_average()} after\n")
    print(attendees.tables(found))


def only_publish(rounds: int) -> int:
    """Table 15 alone, on each backend: publish → visible in search against a plain search;
    the misses."""
    print(f"load {load_average()} before", flush=True)
    by_backend = publish.measure(rounds)
    print(f"load {load_average()} after\n")
    print("\n".join(publish.tables(found) for found in by_backend))
    return sum(len(found["missed"]) for found in by_backend)


if __name__ == "__main__":
    main()
