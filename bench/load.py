"""HTTP load from this machine with wrk: keep-alive connections and latency percentiles."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

REPORT_SCRIPT = Path(__file__).with_name("wrk_report.lua")

Name = TypeVar("Name", bound=Hashable)
Result = TypeVar("Result")


@dataclass(frozen=True)
class Load:
    """What one wrk run saw: latency percentiles (ms) and requests per second."""

    p50: float
    p95: float
    rps: float


def run(url: str, headers: dict[str, str], concurrency: int, seconds: int) -> Load:
    """Send requests to `url` from `concurrency` keep-alive connections for `seconds`."""
    command = ["wrk", f"-t{min(concurrency, 2)}", f"-c{concurrency}", f"-d{seconds}s",
               "-s", str(REPORT_SCRIPT)]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    done = subprocess.run(command + [url], capture_output=True, text=True, check=True,
                          timeout=seconds + 60)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["errors"] or figures["non2xx"] or not figures["requests"]:
        raise RuntimeError(f"{url}: {figures['errors']} socket errors, "
                           f"{figures['non2xx']} answers other than 2xx/3xx")
    return Load(p50=figures["p50_us"] / 1000, p95=figures["p95_us"] / 1000,
                rps=figures["requests"] / (figures["duration_us"] / 1e6))


def warm_up(url: str, headers: dict[str, str]) -> None:
    """Load every worker's code paths and caches before anything is measured."""
    run(url, headers, concurrency=4, seconds=1)


def interleaved(runs: Mapping[Name, Callable[[], Result]], rounds: int
                ) -> dict[Name, list[Result]]:
    """Every run once per round, the order rotated each round, so that noise on this shared
    machine hits baseline and subject alike; returns each run's results, round by round.
    """
    names = list(runs)
    results: dict[Name, list[Result]] = {name: [] for name in names}
    for number in range(rounds):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            results[name].append(runs[name]())
    return results
