"""Benchmarks: how fast the site answers people and agents, and how its cost grows.

Run with `make bench` (or `.venv/bin/python -m bench`). Every figure that matters is a ratio
against a baseline measured in the same run, as the median of several interleaved rounds with
its minimum and maximum, because these machines are shared and noisy. Tests never assert
timings; this is where speed is shown.
"""

import sys
from pathlib import Path

# The test suite's gunicorn launcher and HTTP visitor are the ones to reuse, not copy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
