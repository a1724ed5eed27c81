"""PostgreSQL's slot postings: which events hold each term, span by span of search keys, so that
a common conjunction is read in key order and stops after a page and a capped count
(`postgres.PostgresIndex` decides when; the GIN index of `events.terms` reads the rest).

Keys are cut into spans of `span_keys` consecutive keys, whole days of starts (`span_keys_for`):
span n holds the keys from n × `span_keys`. Within its span each event has a slot, 0, 1, 2, … in
the order events were indexed; a removed event's slot is free until another event takes it. Two
tables:

- `search_spans(span, packed)`: the key of slot s as its offset from the span's first key, at
  bytes 4s to 4s + 3 (uint32, big-endian; `FREE_OFFSET`: a free slot), stored uncompressed
  (migration 019): a batch ships its spans whole. Offsets, not keys: half the bytes shipped (a
  week's span is 619 315 200 keys, under 2³²), and a batch of 29 spans took 0.84 ms, not 1.12.
- `search_postings(term, span, slots)`: the slots of the span's events that hold the term,
  `LIST` and uint16 slot numbers (big-endian) or `BITMAP` and a bitmap (bit s of the
  little-endian integer: slot s), whichever was shorter when written.

Why slots: rows of the keys themselves (`bigint[]` per term and day) read as fast but held
1.3 GB at 100 000 events (an event holds ~600 terms, most of them common); as slots, 278 MB.
A batch (`read`) takes each conjunction's rarest term span after span, fetches the span's rows
of its other terms by primary key and joins the span's keys in the same statement, and
intersects them here as integers.

Writers hold the catalog lock (`postgres.CATALOG_LOCK`, taken by `Records` and by
`PostgresIndex.rebuild`): one transaction changes the postings at a time, so a span's slots are
read, changed and written back without row locks (a span not yet stored has no row to lock).
Readers take no lock: a batch reads its spans' postings and keys in one statement (one
snapshot), and batches cover disjoint spans.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import Connection
from psycopg.rows import DictRow
from psycopg.rows import tuple_row

from . import search
from .index import Indexed

# A span holds about this many events when the postings are built: at 100 000 events, 7-day
# spans (~950 events each) gave the fastest reads; at 1 000 000, 1-day spans (~1 370 each)
# kept the slowest cell at 4.4 ms where 7-day ones (9 600 each, 77 KB of keys a span) took 8.
EVENTS_PER_SPAN = 1_000
# Spans last at most this many days: a database keeps its spans as it grows, and a week's
# span of today's few events still holds ~1 000 of 100 000 (a year's would hold them all).
LONGEST_SPAN_DAYS = 7
KEYS_PER_DAY = 86_400 * search.TIES_PER_SECOND
LIST, BITMAP = 0, 1
FREE = 0  # the key of a free slot as a writer holds it (no event starts in 1970)
FREE_OFFSET = 0xFFFF_FFFF  # a free slot as stored: past every key of the longest span
LARGEST_LISTED_SLOT = 0xFFFF  # a list holds uint16 slot numbers
OFFSET = struct.Struct(">I")  # a key in a span's keys, as its offset from the span's first
# Up to this many slots, a mask's bits and their keys are read one at a time; past it, byte by
# byte and all the span's keys at once (the slots of a common term: 1.7-2.9x faster).
FEW_SLOTS = 64
BITS_OF_BYTE = [tuple(bit for bit in range(8) if value >> bit & 1) for value in range(256)]

SCHEMA = (
    "CREATE TABLE search_spans (span bigint PRIMARY KEY, packed bytea NOT NULL)",
    'CREATE TABLE search_postings (term text COLLATE "C", span bigint, slots bytea NOT NULL, '
    "PRIMARY KEY (term, span))",
    # The span length in keys, chosen when the postings are built (NULL: not built yet).
    "ALTER TABLE search_index ADD COLUMN span_keys bigint",
)


def span_keys_for(events: int, first: int | None, last: int | None) -> int:
    """The span length, in keys: whole days holding about `EVENTS_PER_SPAN` of the `events`
    stored from key `first` to `last`, from one day to `LONGEST_SPAN_DAYS`."""
    if not events or first is None or last is None:
        return LONGEST_SPAN_DAYS * KEYS_PER_DAY
    days = round(EVENTS_PER_SPAN * (last - first) / KEYS_PER_DAY / events)
    return min(LONGEST_SPAN_DAYS, max(1, days)) * KEYS_PER_DAY


def encode(mask: int, span_slots: int) -> bytes:
    """A term's slots in a span (bit s of `mask`: slot s) as stored: a list or a bitmap of the
    span's `span_slots` slots, whichever is shorter."""
    size = (span_slots + 7) // 8
    if 2 * mask.bit_count() > size or mask.bit_length() > LARGEST_LISTED_SLOT + 1:
        return bytes([BITMAP]) + mask.to_bytes(size, "little")
    return bytes([LIST]) + struct.pack(f">{mask.bit_count()}H", *slots_of(mask))


def decode(stored: bytes) -> int:
    """The slots of a stored row as a bit mask (bit s: slot s)."""
    if stored[0] == BITMAP:
        return int.from_bytes(stored[1:], "little")
    mask = 0
    for (slot,) in struct.iter_unpack(">H", stored[1:]):
        mask |= 1 << slot
    return mask


def slots_of(mask: int) -> list[int]:
    """The slots set in `mask`, lowest first."""
    if mask.bit_count() > FEW_SLOTS:  # byte by byte: a common term sets hundreds of a span's
        stored = mask.to_bytes((mask.bit_length() + 7) // 8, "little")
        return [8 * number + bit for number, byte in enumerate(stored) if byte
                for bit in BITS_OF_BYTE[byte]]
    slots = []
    while mask:
        lowest = mask & -mask
        slots.append(lowest.bit_length() - 1)
        mask ^= lowest
    return slots


def packed_keys(keys: Sequence[int], first: int) -> bytes:
    """A span's keys (`FREE`: a free slot) as stored, for the span starting at key `first`."""
    return struct.pack(f">{len(keys)}I", *(FREE_OFFSET if key == FREE else key - first
                                           for key in keys))


def unpacked_keys(packed: bytes, first: int) -> list[int]:
    """A stored span's keys, slot by slot (`FREE`: a free slot), for the span starting at
    key `first`."""
    return [FREE if offset == FREE_OFFSET else first + offset
            for offset in struct.unpack(f">{len(packed) // OFFSET.size}I", packed)]


def matching_keys(row: Sequence[Any], width: int, span_keys: int) -> list[int]:
    """The keys of the events holding every term of a batch's row (`statement`): its slots of
    each of the `width` terms intersected, each slot read in the span's keys (spans of
    `span_keys` keys)."""
    mask = decode(row[2])
    for other in row[3:2 + width]:
        if other is None or not mask:  # no row: no event of the span holds that term
            return []
        mask &= decode(other)
    packed = row[2 + width]
    slots = slots_of(mask)
    if len(slots) > FEW_SLOTS:  # every offset unpacked at once, then picked
        every = struct.unpack(f">{len(packed) // OFFSET.size}I", packed)
        offsets = [every[slot] for slot in slots]
    else:
        offsets = [OFFSET.unpack_from(packed, OFFSET.size * slot)[0] for slot in slots]
    first = row[1] * span_keys
    return [first + offset for offset in offsets if offset != FREE_OFFSET]


# The layout's columns (NULL span_keys: not built), for a statement of their own or beside
# another one's rows: a search reads them with its counts (`PostgresIndex.counts`) rather
# than waiting for the server once more only for them.
LAYOUT_COLUMNS = ("(SELECT span_keys FROM search_index) AS span_keys, "
                  "(SELECT count(*) FROM search_spans) AS spans")


@dataclass(frozen=True)
class Layout:
    """How the postings are cut: `span_keys` keys a span, `spans` spans stored."""

    span_keys: int
    spans: int


@dataclass(frozen=True)
class Batch:
    """What one batch read: the matching keys, and for each conjunction the last span it
    read, or None when its rarest term has no span left to read."""

    keys: list[int]
    reached: list[int | None]


class Span:
    """A span's slots as a writer changes them: `keys[s]` is the key in slot s (`FREE`)."""

    def __init__(self, first: int, packed: bytes | None = None):
        self.first = first  # the span's first key
        self.stored = packed is not None  # else new to this transaction
        self.keys = unpacked_keys(packed or b"", first)
        # Taken lowest first: popped from the end.
        self._free = [slot for slot, key in enumerate(self.keys) if key == FREE][::-1]

    def take(self, key: int) -> int:
        """A slot for `key`: a free one, else a new one at the end."""
        if self._free:
            slot = self._free.pop()
            self.keys[slot] = key
            return slot
        self.keys.append(key)
        return len(self.keys) - 1

    def give_back(self, key: int) -> int | None:
        """Free the slot of `key` and return it (None: the key holds no slot here)."""
        try:
            slot = self.keys.index(key)
        except ValueError:
            return None
        self.keys[slot] = FREE
        return slot

    def packed(self) -> bytes:
        """The span's keys as stored."""
        return packed_keys(self.keys, self.first)


class SlotPostings:
    """The slot postings of one connection's database (see the module's docstring)."""

    def __init__(self, conn: Connection[DictRow]):
        self.conn = conn
        self._layout: Layout | None = None

    # -- reading ------------------------------------------------------------------------

    def layout(self) -> Layout | None:
        """How the postings are cut (None: not built), read once by this object (a storage's,
        so once a request) and again after it writes: the span length changes only when the
        postings are rebuilt (`PostgresIndex.rebuild`: a new version of `search`, or the
        migration adding them), and the count of spans only sizes the first batch."""
        if self._layout is None:
            self.learn_layout(self.conn.execute(f"SELECT {LAYOUT_COLUMNS}",
                                                prepare=True).fetchone())
        return self._layout

    def learn_layout(self, row: DictRow | None) -> None:
        """Keep the layout a row read with `LAYOUT_COLUMNS` says (None: nothing read)."""
        if row is not None and row["span_keys"] is not None:
            self._layout = Layout(row["span_keys"], row["spans"])

    def read(self, conjunctions: list[list[str]], starts: list[int], end_span: int | None,
             limit: int) -> Batch:
        """The matches of each conjunction (rarest term first, all as long) in the first
        `limit` spans of its rarest term from its start span and up to `end_span`."""
        width = len(conjunctions[0])
        layout = self.layout()
        assert layout is not None  # a batch is read only once the postings are built
        keys: list[int] = []
        reached: list[int | None] = [None] * len(conjunctions)
        got = [0] * len(conjunctions)
        sql, params = statement(conjunctions, starts, end_span, limit)
        # Binary rows as tuples: parsing the rows' bytea from text cost 5-10 ms on some
        # searches; prepared, each shape of batch is planned once per connection.
        with self.conn.cursor(binary=True, row_factory=tuple_row) as cursor:
            for row in cursor.execute(sql, params, prepare=True):
                number, span = row[0], row[1]
                got[number] += 1
                last = reached[number]  # rows come in any order (a join's)
                reached[number] = span if last is None else max(last, span)
                keys += matching_keys(row, width, layout.span_keys)
        return Batch(keys, [span if count == limit else None
                            for span, count in zip(reached, got, strict=True)])

    # -- writing (inside the transaction writing the events, under the catalog lock) ------

    def start_over(self, span_keys: int) -> None:
        """Empty the postings, to be built again with spans of `span_keys` keys."""
        self.conn.execute("DELETE FROM search_postings")
        self.conn.execute("DELETE FROM search_spans")
        self.conn.execute("UPDATE search_index SET span_keys = %s", [span_keys])
        self._layout = None

    def add(self, indexed: Sequence[Indexed]) -> None:
        """Give each event a slot in its span and set it in the rows of its terms."""
        span_keys = self._span_keys()
        if span_keys is None or not indexed:
            return
        spans = self._spans({key // span_keys for key, _ in indexed}, span_keys)
        changed: defaultdict[tuple[str, int], int] = defaultdict(int)
        for key, terms in indexed:
            span = key // span_keys
            bit = 1 << spans[span].take(key)
            for term in terms:
                changed[term, span] |= bit
        self._write_spans(spans)
        self._change(changed, spans, adding=True)

    def remove(self, indexed: Sequence[Indexed]) -> None:
        """Free each event's slot and clear it in the rows of its terms, as it was indexed
        (rows left with no slot go)."""
        span_keys = self._span_keys()
        if span_keys is None or not indexed:
            return
        spans = self._spans({key // span_keys for key, _ in indexed}, span_keys)
        changed: defaultdict[tuple[str, int], int] = defaultdict(int)
        for key, terms in indexed:
            span = key // span_keys
            slot = spans[span].give_back(key)
            if slot is not None:
                for term in terms:
                    changed[term, span] |= 1 << slot
        self._write_spans(spans)
        self._change(changed, spans, adding=False)

    def _span_keys(self) -> int | None:
        """The span length as this transaction sees it (None: the postings are not built)."""
        self._layout = None  # spans come and go: the next search counts them again
        row = self.conn.execute("SELECT span_keys FROM search_index").fetchone()
        return None if row is None else row["span_keys"]

    def _spans(self, numbers: set[int], span_keys: int) -> dict[int, Span]:
        """The spans of these numbers (of `span_keys` keys): as stored, else new."""
        stored = {row["span"]: row["packed"] for row in self.conn.execute(
            "SELECT span, packed FROM search_spans WHERE span = ANY(%s)", [list(numbers)])}
        return {number: Span(number * span_keys, stored.get(number)) for number in numbers}

    def _write_spans(self, spans: dict[int, Span]) -> None:
        """Store the spans' keys."""
        self.conn.execute(
            "INSERT INTO search_spans (span, packed) SELECT * FROM unnest(%s::bigint[], "
            "%s::bytea[]) ON CONFLICT (span) DO UPDATE SET packed = excluded.packed",
            [list(spans), [span.packed() for span in spans.values()]])

    def _change(self, changed: dict[tuple[str, int], int], spans: dict[int, Span],
                adding: bool) -> None:
        """Set (or clear) the slots of `changed` in its (term, span) rows: the rows of spans
        not stored before are copied in; stored ones are read, changed here and written
        back (deleted when left with no slot), a statement each."""
        new = {row: bits for row, bits in changed.items() if not spans[row[1]].stored}
        if new:  # no rows yet: a first load's, and most of a bulk load's (in key order)
            with self.conn.cursor().copy(
                    "COPY search_postings (term, span, slots) FROM STDIN") as copy:
                for row in rewritten(new, {}, spans, adding):
                    copy.write_row(row)
        if not (old := {row: bits for row, bits in changed.items() if row not in new}):
            return
        with self.conn.cursor(row_factory=tuple_row) as cursor:
            stored = {(term, span): decode(slots) for term, span, slots in cursor.execute(
                "SELECT p.term, p.span, p.slots FROM search_postings p "
                "JOIN unnest(%s::text[], %s::bigint[]) AS c (term, span) "
                "ON p.term = c.term AND p.span = c.span", columns(list(old)))}
        rows = list(rewritten(old, stored, spans, adding))
        if kept := [row for row in rows if row[2] is not None]:
            self.conn.execute(
                "INSERT INTO search_postings (term, span, slots) SELECT * FROM unnest("
                "%s::text[], %s::bigint[], %s::bytea[]) ON CONFLICT (term, span) "
                "DO UPDATE SET slots = excluded.slots", columns(kept))
        if emptied := [row[:2] for row in rows if row[2] is None]:
            self.conn.execute(
                "DELETE FROM search_postings p USING unnest(%s::text[], %s::bigint[]) "
                "AS c (term, span) WHERE p.term = c.term AND p.span = c.span", columns(emptied))


def rewritten(changed: dict[tuple[str, int], int], stored: dict[tuple[str, int], int],
              spans: dict[int, Span], adding: bool) -> Iterator[tuple[str, int, bytes | None]]:
    """Each changed (term, span) row as it is to be stored (None: left with no slot)."""
    for (term, span), bits in changed.items():
        mask = stored.get((term, span), 0)
        mask = mask | bits if adding else mask & ~bits
        yield term, span, encode(mask, len(spans[span].keys)) if mask else None


def columns(rows: Sequence[tuple[Any, ...]]) -> list[list[Any]]:
    """Rows as lists of their columns' values (arrays for `unnest`)."""
    return [list(column) for column in zip(*rows, strict=True)]


def statement(conjunctions: list[list[str]], starts: list[int], end_span: int | None,
              limit: int) -> tuple[str, list[Any]]:
    """One batch (`SlotPostings.read`): for each conjunction (numbered in the first column),
    the first `limit` rows of its rarest term from its start span (and up to `end_span`), each
    with the same span's rows of its other terms and the span's keys."""
    # The keys by a join, not a subquery per row: the planner scanned the few rows of
    # `search_spans` once per row read (29 rows: 1.33 -> 1.06 ms for the statement).
    branches, params = [], []
    end = "" if end_span is None else " AND span <= %s"
    for number, (conjunction, start) in enumerate(zip(conjunctions, starts, strict=True)):
        others = "".join(", (SELECT q.slots FROM search_postings q "
                         "WHERE q.term = %s AND q.span = r.span)" for _ in conjunction[1:])
        branches.append(
            f"(SELECT {number}, r.span, r.slots{others}, s.packed "
            "FROM (SELECT span, slots FROM search_postings WHERE term = %s AND span >= %s"
            f"{end} ORDER BY span LIMIT %s) r JOIN search_spans s ON s.span = r.span)")
        params += [*conjunction[1:], conjunction[0], start,
                   *([] if end_span is None else [end_span]), limit]
    return " UNION ALL ".join(branches), params
