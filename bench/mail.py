"""12: what mail costs, on SQLite and on PostgreSQL.

a. Confirming a registration with its "you are registered" mail queued in the confirming
   transaction, as the site does, against the same confirmation with that queueing switched
   off (`queue_registration_confirmed`, as the confirm action calls it, made a no-op in the
   bench's processes only). Two ways, one confirmation at a time, with and without in turns
   (with, without; without, with; …), ratios round by round:
   - through gunicorn: two servers started alike (`bench/serve.py`) on two copies of one
     dataset, the confirm form posted as a browser posts it;
   - in-process: the Flask test client on one app, the switch flipped before each
     confirmation; there the mail's own call is timed too.
b. The delivery loop's throughput (`Delivery`, as `flask mail run` builds it, with the real
   `SmtpSender`) to an SMTP server on loopback (`bench/smtp_sink.py`, its own process), for
   the heavy kind (registration_confirmed: its QR code and .ics; payloads copied from the
   mails the confirmations of (a) queued) and the light `hello`; in the same round, the
   same number of mails built alone (`build_message`, nothing stored or sent) and sent by the
   same loop through a sender that sends nothing (claim, build, mark sent): the loop's storage
   and its SMTP each read as a multiple of building the messages.

`python -m bench --only mail` measures and prints these alone (65–80 s on 2 cores at load
2–3); `python -m bench` adds them to its run.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import ExitStack
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from flask import Flask
from flask import current_app
from helpers import CSRF_FIELD
from helpers import HTMX
from helpers import JSON
from helpers import PROJECT_ROOT
from helpers import TOKEN_FIELD
from helpers import query_database
from servers import ONE_ADDRESS_CROWD
from servers import HttpVisitor
from servers import free_port
from servers import gunicorn

from webapp import create_app
from webapp.domain.actions import registrations
from webapp.mail.commands import delivery_of
from webapp.mail.delivery import Delivery
from webapp.mail.delivery import DeliverySettings
from webapp.mail.message import build_message
from webapp.storage import OutboxMail
from webapp.storage.connection import close_backend
from webapp.storage.connection import open_storage
from webapp.storage.sqlite import to_text

from .datasets import postgres_working_copy
from .datasets import working_copy
from .report import spread_text
from .report import table
from .serve import QUEUE_MAIL
from .serve import QUEUEING
from .serve import queue_nothing
from .stats import percentile
from .stats import ratios
from .stats import spread

SIZE = 1_000  # events: a confirmation reads one event and its seats, not the others
EVENTS = 20  # confirmations go round these (each has 100 free seats or more)
CONFIRMATIONS = 30  # per server and round (round 0 warms both servers up and is not kept)
HEAVY = "registration_confirmed"
LIGHT = "hello"
DELIVERED = {HEAVY: 40, LIGHT: 200}  # mails a round, per kind and variant
VARIANTS = ("build", "no sender", "SMTP")
LANGUAGES = ("zh-TW", "en")
BACKENDS = ("SQLite", "PostgreSQL")
SERVE = (sys.executable, "-m", "bench.serve")
ENGLISH = {"Accept-Language": "en"}  # as the tests' visitors read


def measure(rounds: int) -> dict[str, Any]:
    """Both measurements on both backends, `rounds` rounds each."""
    found: dict[str, Any] = {}
    for backend in BACKENDS:
        found[backend] = measure_backend(backend, rounds)
    return found


def measure_backend(backend: str, rounds: int) -> dict[str, Any]:
    """(a) then (b) on fresh copies of the `SIZE` events dataset in `backend`."""
    started = time.monotonic()
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix=f"webmcp-bench-mail-{backend.lower()}-")))
        copies = stack.enter_context(databases(backend, scratch))
        with ExitStack() as servers:
            bases = {queued: servers.enter_context(gunicorn(
                copies[queued], workers=2, env={QUEUE_MAIL: "1" if queued else "0"},
                log=scratch / f"gunicorn-{'with' if queued else 'without'}-mail.log",
                wrapper=SERVE))[0] for queued in (True, False)}
            print(f"12: confirmations with and without their mail on {backend} "
                  f"(+{time.monotonic() - started:.0f} s)…", flush=True)
            events = roomy_events(copies[True], EVENTS)
            served = through_gunicorn(bases, events, rounds)
        served["mailsQueued"] = {"with": queued_mail(copies[True]),
                                 "without": queued_mail(copies[False])}
        print(f"12: the same in-process on {backend} (+{time.monotonic() - started:.0f} s)…",
              flush=True)
        confirmed = {"gunicorn": served,
                     "in-process": in_process(copies[True], scratch, events, rounds)}
        print(f"12: mail delivery on {backend} (+{time.monotonic() - started:.0f} s)…",
              flush=True)
        delivered = delivery(copies[True], scratch, rounds)
        print(f"12: {backend} done (+{time.monotonic() - started:.0f} s)", flush=True)
    return {"confirmations": confirmed, "delivery": delivered}


@contextmanager
def databases(backend: str, scratch: Path) -> Iterator[dict[bool, Path | str]]:
    """Two copies of the dataset: for the server that queues mail (True) and the one that
    does not (False)."""
    if backend == "SQLite":
        copies: dict[bool, Path | str] = {}
        for queued in (True, False):
            folder = scratch / ("with" if queued else "without")
            folder.mkdir()
            copies[queued] = working_copy(SIZE, folder)
        yield copies
        return
    with postgres_working_copy(SIZE, "_mail_with") as queuing, \
            postgres_working_copy(SIZE, "_mail_without") as silent:
        yield {True: queuing, False: silent}


def site_settings(database: Path | str, scratch: Path) -> dict[str, Any]:
    """The settings of an app in this process on `database`."""
    return {"DATABASE": str(database), "SECRET_KEY": "bench secret",
            "SITE_URL": "https://events.example.tw",
            "RATELIMIT_STORAGE_URI": f"host://{scratch / 'rate-limits.sqlite'}"}


def queued_mail(database: Path | str) -> int:
    """How many registration mails a database's outbox holds (a check that the switch works)."""
    count: int = query_database(database, "SELECT count(*) FROM outbox WHERE kind = ?",
                                [HEAVY])[0][0]
    return count


# a. The confirmation, with and without its mail

Confirm = Callable[[], int]  # confirms one prepared registration; the answer's status


def roomy_events(database: Path | str, count: int) -> list[str]:
    """Upcoming events open for registration with 100 free seats or more: room for every
    round's confirmations on both paths."""
    moment = datetime.now(UTC)
    now = moment if str(database).startswith("postgresql://") else to_text(moment)
    events = [row[0] for row in query_database(
        database, "SELECT id FROM events WHERE registration_deadline > ? "
        "AND capacity - held_seats >= 100 ORDER BY starts_at, id LIMIT ?", [now, count])]
    if len(events) < count:
        raise RuntimeError(f"only {len(events)} open events with 100 free seats")
    return events


def interleaved(prepare: Callable[[bool, str, str], Confirm], events: list[str], rounds: int,
                path: str, switch: Callable[[bool], None] = lambda queued: None
                ) -> dict[str, Any]:
    """Each round: CONFIRMATIONS registrations prepared with the mail (True) and as many
    without (False), not timed; then confirmed one at a time, in turns (with, without;
    without, with; …), `switch` told which before each. Round 0 warms up and is not kept.
    Each registration has an address of its own (`path` tells the paths' apart)."""
    kept: dict[bool, list[list[float]]] = {True: [], False: []}
    for number in range(rounds + 1):
        prepared = {queued: [prepare(queued, events[(number * CONFIRMATIONS + i) % len(events)],
                                     f"{path}-r{number}c{i}{'m' if queued else 'n'}")
                             for i in range(CONFIRMATIONS)] for queued in (True, False)}
        timed: dict[bool, list[float]] = {True: [], False: []}
        for i in range(CONFIRMATIONS):
            for queued in ((True, False) if i % 2 == 0 else (False, True)):
                switch(queued)
                started = time.perf_counter()
                status = prepared[queued][i]()
                timed[queued].append((time.perf_counter() - started) * 1000)
                if status != 201:
                    raise RuntimeError(f"a confirmation answered {status}")
        if number:
            for queued in (True, False):
                kept[queued].append(timed[queued])
    p50 = {queued: [percentile(ms, 0.50) for ms in kept[queued]] for queued in kept}
    pooled = {queued: [ms for batch in kept[queued] for ms in batch] for queued in kept}
    p95 = {queued: percentile(pooled[queued], 0.95) for queued in kept}
    return {
        "confirmations": CONFIRMATIONS * rounds,
        "withMail": {"p50Ms": spread(p50[True]), "p95Ms": p95[True]},
        "withoutMail": {"p50Ms": spread(p50[False]), "p95Ms": p95[False]},
        "p50Ratio": ratios(p50[True], p50[False]),
        "p95Ratio": p95[True] / p95[False],
        "p50AddedMs": spread(w - o for w, o in zip(p50[True], p50[False], strict=True)),
    }


def through_gunicorn(bases: dict[bool, str], events: list[str], rounds: int
                     ) -> dict[str, Any]:
    """The two servers in turns, through HTTP: a new visitor for each registration opens the
    registration form and prepares it as htmx does (not timed), then confirms it as the
    confirm form posts it (timed)."""

    def prepare(queued: bool, event_id: str, label: str) -> Confirm:
        visitor = HttpVisitor(bases[queued])
        token = visitor.prepare_registration(event_id, f"Person {label}",
                                             f"person-{label}@example.com")
        return lambda: visitor.confirm_registration(token).status

    return interleaved(prepare, events, rounds, "http")


class TestClientVisitor:
    """One browser of the in-process app: the Flask test client, reading English."""

    def __init__(self, app: Flask):
        self.client = app.test_client()
        self.csrf = ""

    def prepare(self, event_id: str, label: str) -> str:
        """Open the registration form and prepare as htmx would; the confirm form's token."""
        page = self.client.get(f"/events/{event_id}/register", headers=ENGLISH,
                               follow_redirects=True)
        self.csrf = field(CSRF_FIELD, page.get_data(as_text=True))
        answer = self.client.post(f"/events/{event_id}/register", headers={**HTMX, **ENGLISH},
                                  data={"csrf_token": self.csrf,
                                        "attendee_name": f"Person {label}",
                                        "email": f"person-{label}@example.com"})
        return field(TOKEN_FIELD, answer.get_data(as_text=True))

    def confirm(self, token: str) -> int:
        """Press "Confirm registration"; the answer's status."""
        return self.client.post("/registrations/confirm", headers={**JSON, **ENGLISH},
                                data={"csrf_token": self.csrf,
                                      "confirmation_token": token}).status_code


def field(pattern: re.Pattern[str], page: str) -> str:
    """A hidden form field's value."""
    found = pattern.search(page)
    if not found:
        raise RuntimeError(f"no {pattern.pattern!r} in the answer")
    return found.group(1)


def in_process(database: Path | str, scratch: Path, events: list[str], rounds: int
               ) -> dict[str, Any]:
    """The same confirmations through the Flask test client, in this process: no HTTP, no
    other process between the two. The mail is switched per confirmation (the confirm
    action's `queue_registration_confirmed` swapped for a no-op and back), and its own call
    is timed when it runs."""
    app = create_app({**site_settings(database, scratch), **ONE_ADDRESS_CROWD})
    calls: list[float] = []
    real = getattr(registrations, QUEUEING)

    def timed_queueing(*args: Any, **kwargs: Any) -> bool:
        started = time.perf_counter()
        try:
            queued: bool = real(*args, **kwargs)
            return queued
        finally:
            calls.append((time.perf_counter() - started) * 1000)

    def prepare(queued: bool, event_id: str, label: str) -> Confirm:
        visitor = TestClientVisitor(app)
        token = visitor.prepare(event_id, label)
        return lambda: visitor.confirm(token)

    def switch(queued: bool) -> None:
        setattr(registrations, QUEUEING, timed_queueing if queued else queue_nothing)

    before = queued_mail(database)
    try:
        found = interleaved(prepare, events, rounds, "app", switch)
    finally:
        setattr(registrations, QUEUEING, real)
        close_backend(app)
    kept = calls[CONFIRMATIONS:]  # round 0's calls warmed up
    per_round = [kept[i:i + CONFIRMATIONS] for i in range(0, len(kept), CONFIRMATIONS)]
    found["queueCallP50Ms"] = spread(percentile(batch, 0.50) for batch in per_round)
    queued = queued_mail(database) - before
    found["mailsQueued"] = {"with": len(calls), "without": queued - len(calls)}
    return found


# b. The delivery loop


class NoSender:
    """A sender that sends nothing: the loop's baseline (claim, build, mark sent)."""

    def send(self, message: EmailMessage, mail: OutboxMail) -> None:
        """Take the message and do nothing with it."""

    def close(self) -> None:
        """Nothing to let go of."""


@dataclass
class Sink:
    """The SMTP server on loopback and, once stopped, what it received."""

    port: int
    messages: int = 0
    bytes: int = 0


@contextmanager
def smtp_sink() -> Iterator[Sink]:
    """`bench/smtp_sink.py` in a process of its own until the block ends."""
    sink = Sink(free_port())
    process = subprocess.Popen([sys.executable, "-m", "bench.smtp_sink", str(sink.port)],
                               cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", sink.port), timeout=2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the SMTP server did not start") from None
                time.sleep(0.05)
        yield sink
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
        counts = [line.split() for line in output.splitlines() if line.startswith("received")]
        if counts:
            sink.messages, sink.bytes = int(counts[0][1]), int(counts[0][2])


def real_payloads(database: Path | str) -> list[dict[str, Any]]:
    """The payloads of the registration mails the confirmations queued."""
    rows = query_database(database, "SELECT payload FROM outbox WHERE kind = ? ORDER BY id",
                          [HEAVY])
    payloads = [row[0] if isinstance(row[0], dict) else json.loads(row[0]) for row in rows]
    if not payloads:
        raise RuntimeError("no registration mail was queued to copy")
    return payloads


def queue_copies(kind: str, count: int, payloads: list[dict[str, Any]], label: str) -> None:
    """Queue `count` mails of `kind` at once, in one transaction (not timed): the registration
    mails' payloads copied round the real ones, each with a registration of its own; half in
    Chinese, half in English."""
    storage = open_storage()
    try:
        now = app_now()
        with storage.transaction():
            for i in range(count):
                payload = ({**payloads[i % len(payloads)], "registrationId": f"reg-{label}-{i}"}
                           if kind == HEAVY else {})
                storage.queue_mail(f"{kind}:bench-{label}-{i}", f"person-{label}-{i}@example.com",
                                   kind, LANGUAGES[i % 2], payload, now)
    finally:
        storage.close()


def app_now() -> datetime:
    """The time on the current app's clock."""
    now: datetime = current_app.config["CLOCK"]()
    return now


def build_alone(count: int) -> tuple[float, int]:
    """Claim the due mails (not timed), build each message (timed), mark them sent (not
    timed); the seconds it took and the size of one message as sent (bytes)."""
    mails = set_aside(count)
    if len(mails) != count:
        raise RuntimeError(f"{len(mails)} of {count} mails claimed")
    now = app_now()
    started = time.perf_counter()
    for mail in mails:
        build_message(mail, now)  # let go at once, as the loop lets a sent message go
    seconds = time.perf_counter() - started
    return seconds, len(build_message(mails[0], now).as_bytes())


def set_aside(limit: int) -> list[OutboxMail]:
    """Claim up to `limit` due mails and mark them sent, sending nothing (not timed); returns
    the mails claimed."""
    storage = open_storage()
    try:
        now = app_now()
        mails = storage.claim_mail(now, DeliverySettings.from_config(current_app.config).lease,
                                   limit)
        for mail in mails:
            storage.mail_sent(mail, now)
    finally:
        storage.close()
    return mails


def loop(delivery: Delivery, count: int) -> float:
    """The seconds the loop takes to send every due mail (`flask mail run --once`)."""
    started = time.perf_counter()
    tally = delivery.deliver_due()
    seconds = time.perf_counter() - started
    if tally.sent != count:
        raise RuntimeError(f"{tally.sent} of {count} mails sent ({tally})")
    return seconds


def delivery(database: Path | str, scratch: Path, rounds: int) -> dict[str, Any]:
    """Each round, for each kind, each variant in turn (the order turning from round to
    round): queue the kind's mails, then time them through the variant."""
    with smtp_sink() as sink:
        app = create_app({
            **site_settings(database, scratch),
            "MAIL_HOST": "127.0.0.1", "MAIL_PORT": sink.port, "MAIL_STARTTLS": False,
            "MAIL_TIMEOUT": 10, "MAIL_FROM": "WebMCP 社群活動 <no-reply@events.example.tw>"})
        try:
            with app.app_context():
                payloads = real_payloads(database)
                smtp = delivery_of(app)
                silent = Delivery(open_storage=smtp.open_storage, open_sender=NoSender,
                                  build=smtp.build, clock=smtp.clock, settings=smtp.settings)
                # A batch of the confirmations' own mails through SMTP warms everything up;
                # the others are set aside.
                warm_up = smtp.deliver_batch().sent
                set_aside(1_000_000)
                seconds: dict[str, dict[str, list[float]]] = {
                    kind: {variant: [] for variant in VARIANTS} for kind in DELIVERED}
                sizes: dict[str, int] = {}
                for number in range(rounds):
                    for kind, count in DELIVERED.items():
                        turn = VARIANTS[number % 3:] + VARIANTS[:number % 3]
                        for variant in turn:
                            queue_copies(kind, count, payloads,
                                         f"r{number}-{variant.replace(' ', '-')}")
                            if variant == "build":
                                took, sizes[kind] = build_alone(count)
                            else:
                                took = loop(smtp if variant == "SMTP" else silent, count)
                            seconds[kind][variant].append(took)
        finally:
            close_backend(app)
    sent = warm_up + rounds * sum(DELIVERED.values())
    if sink.messages != sent:
        raise RuntimeError(f"the SMTP server received {sink.messages} of {sent} mails")
    kinds = {}
    for kind, count in DELIVERED.items():
        taken = seconds[kind]
        kinds[kind] = {
            "mails": count, "messageBytes": sizes[kind],
            **{variant: {"perSecond": spread(count / s for s in taken[variant]),
                         "overBuild": ratios(taken[variant], taken["build"])}
               for variant in VARIANTS},
            "smtpOverNoSender": ratios(taken["SMTP"], taken["no sender"]),
        }
    return {"kinds": kinds, "warmUpMails": warm_up, "received": sink.messages,
            "receivedBytes": sink.bytes}


# The tables


def tables(found: dict[str, Any]) -> str:
    """12a and 12b, a row per backend and path (or kind), and the worst of each."""
    rows = []
    cases = [(backend, path, c) for backend, results in found.items()
             for path, c in results["confirmations"].items()]
    for backend, path, c in cases:
        rows.append([backend, path, spread_text(c["withMail"]["p50Ms"]),
                     spread_text(c["withoutMail"]["p50Ms"]), spread_text(c["p50Ratio"]),
                     f"{c['withMail']['p95Ms']:.2f}", f"{c['withoutMail']['p95Ms']:.2f}",
                     f"{c['p95Ratio']:.2f}", spread_text(c["p50AddedMs"]),
                     spread_text(c["queueCallP50Ms"], 3) if "queueCallP50Ms" in c else "",
                     f"{c['mailsQueued']['with']} / {c['mailsQueued']['without']}"])
    worst = max(cases, key=lambda case: case[2]["p50Ratio"]["median"])
    worst_p95 = max(cases, key=lambda case: case[2]["p95Ratio"])
    rounds = cases[0][2]["confirmations"] // CONFIRMATIONS
    confirmation_table = table(
        f"12a. Confirming a registration with its mail queued vs. without ({SIZE:,} events; "
        f"{CONFIRMATIONS} confirmations a round each way, one at a time, in turns: through "
        "gunicorn, two servers of 2 workers on two copies of the database, or in-process "
        f"through the Flask test client; ms; p50: median (min–max) of {rounds} rounds; p95: "
        "over all of them; ratio = with ÷ without, round by round; the mail's call = "
        "queue_registration_confirmed alone, in-process)",
        ["backend", "path", "with p50", "without p50", "p50 ratio", "with p95",
         "without p95", "p95 ratio", "mail adds (p50 ms)", "the mail's call (p50 ms)",
         "mails queued (with / without)"], rows)
    confirmation_table += (
        f"Worst ratio: {worst[0]} {worst[1]}, p50 {spread_text(worst[2]['p50Ratio'])}× "
        f"(p95: {worst_p95[0]} {worst_p95[1]}, {worst_p95[2]['p95Ratio']:.2f}×).\n")
    delivered = []
    for backend, results in found.items():
        for kind, k in results["delivery"]["kinds"].items():
            delivered.append([
                backend, kind, f"{k['messageBytes'] / 1024:.1f} KB",
                spread_text(k["build"]["perSecond"], 0),
                spread_text(k["no sender"]["perSecond"], 0),
                spread_text(k["no sender"]["overBuild"]),
                spread_text(k["SMTP"]["perSecond"], 0), spread_text(k["SMTP"]["overBuild"]),
                spread_text(k["smtpOverNoSender"])])
    mails = ", ".join(f"{count} {kind}" for kind, count in DELIVERED.items())
    delivery_table = table(
        f"12b. The delivery loop, mails per second (a round: {mails} mails through each "
        "variant, in turns; median (min–max) of the rounds): built alone (build_message, "
        "nothing stored or sent), the loop with a sender that sends nothing (claim, build, "
        "mark sent; batches of MAIL_BATCH_SIZE 10), the loop through SmtpSender to aiosmtpd on "
        "loopback in its own process (one connection a batch); × build = time per mail ÷ "
        "building alone, same round",
        ["backend", "kind", "message", "build /s", "no sender /s", "× build", "SMTP /s",
         "× build", "SMTP ÷ no sender"], delivered)
    worst_kind = max(((b, kind) for b in found for kind in found[b]["delivery"]["kinds"]),
                     key=lambda pair: found[pair[0]]["delivery"]["kinds"][pair[1]]
                     ["SMTP"]["overBuild"]["median"])
    slowest = found[worst_kind[0]]["delivery"]["kinds"][worst_kind[1]]
    delivery_table += (
        f"Slowest to deliver against its build: {worst_kind[1]} on {worst_kind[0]}, "
        f"{spread_text(slowest['SMTP']['overBuild'])}× building alone, "
        f"{spread_text(slowest['SMTP']['perSecond'], 0)} mails/s.\n")
    return confirmation_table + "\n" + delivery_table
