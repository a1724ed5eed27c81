"""How search works, for every backend: the terms an event is indexed under, the terms a query
needs, and the key that keeps an event's place in start order. Pure Python, no SQL.

Both backends index `document_terms(...)` under the event's `search_key` and answer a search
(`Search`) with the events holding every term of one of its conjunctions, in key order from
`first_key` on, stopping after a page and a capped count: so a query means the same thing in
SQLite and in PostgreSQL, and neither database's tokenizer decides anything.

**Text** is first made comparable (`normalize`): NFKC (full-width letters, digits and
punctuation become their usual forms, half-width katakana full-width), case-folded, and 臺
written 台. That is the one variant pair a Taiwanese searcher treats as the same character
(臺北/台北, 臺灣/台灣, 臺中/台中 are written both ways every day); other variants (裏/裡,
着/著) are rare in event text, and folding Simplified into Traditional would make different
words equal, so nothing else is folded. Then it is cut into CJK runs (Han, kana, Hangul,
Bopomofo) and words (letters and digits of any other script; everything else separates).

**An event is indexed under** (a set of terms, no positions):

- every word whole, and every prefix of it marked with `PREFIX_MARK` (`c_` … `communi_` …
  `community_`), so the word being typed is one index term rather than a scan of every word
  that starts with it;
- every piece of one to four characters of each CJK run (台北資安 → 台 北 資 安, 台北 北資
  資安, 台北資 北資安, 台北資安), so any run of one to four characters found inside a field is
  one term;
- its price and level as facet terms (`_price_free`, `_level_beginner` and the pair
  `_level_beginner_price_free`), and `_` (every event);

each written twice: at the event's location, after `LOCATION_MARK` (`community_@taipei`), and
`ANYWHERE` (`community_@`). A term's list of events is thus one list per location, and one of
every event. A search within a location reads its location's lists: words that only events of
one city hold (台北, 線上, venue names) never meet the lists of another city, so 台北 within
Kaohsiung finds nothing at once instead of reading two long lists that never meet. A search
without a location (`Search.anywhere`) reads the lists of every event when each location has
events holding each of its terms: one list a term, where reading each location's lists side
by side opens and merges four times as many (at 100 000 events, a fifth to a third of the
slowest searches' time in storage, for an index half as large again). Otherwise it reads
only the locations where every term is held: 「台北 線上」 reads nothing, the two words never
meeting in one location, where the lists of every event would be read to their ends.

**A query needs** every part of what was typed: each word whole, but the last, which is
being typed and also finds the words it starts ("communi", "communit" find "community";
"community workshop" takes "community" whole); a CJK run of up to four characters as
itself, and a longer one as all of its overlapping pieces of four (提示注入攻擊 → 提示注入
示注入攻 注入攻擊). A phrase of up to four characters (most Chinese words: 資料科學, 人工智慧,
提示注入) is thus matched exactly and read as one list, and a longer one when every four-
character piece of it is in the event: exact in practice, and it keeps the index free of
positions, which made it four times larger and twice as slow to build (bench/README.md).
Pieces of four rather than three: a four-character word read as two triples walked two lists
that hold nearly the same events (黑客松 資料科學 with a price: 0.20 → 0.14 ms in FTS5), for an
index an eighth larger.
No English stemming: what is typed must match the words as written ("communi" is a prefix of
"community", not of its stem "commun"), the prefix of the last word already finds plurals,
and a stemmer would be one more thing the two backends must agree on.

Terms hold only letters, digits and the two marks, and no word of user text holds a mark, so
operators, quotes, `*`, `NEAR`, column names or facets in what people type are only text.
Changing what this module makes changes the index: raise `VERSION`, and the storage rebuilds
the index on its next start (`terms_version`, which also follows the vocabulary file).

**Both languages.** Events are written in Chinese or in English, and people search in theirs.
An event whose text holds a word of the bilingual vocabulary (`vocabulary.py`: 工作坊 and
"workshop", 台北 and "Taipei") is also indexed under the terms each other word of its group
gives (`counterpart_terms`), as a query would need them: 工作坊 finds the events that say
"workshop" and "workshop" those that say 工作坊, reading one list like any other word.

**Keys.** An event's `search_key` is its start in whole seconds times `TIES_PER_SECOND`, plus
the lowest tie number no other event starting in that second holds: unique, in start order
(events starting in the same second by tie number, which is mostly the order they were added
in), and kept when an update leaves the start alone. "Upcoming" and date ranges are key ranges.

**Reading** a search costs about the length of the lists it walks before it has a page and a
capped count. Backends keep how many events hold each term (`Search.by_rarity`) and intersect
the rarest lists first, so a long list (a common word, a filter most events meet) is only read
where the rarer ones already agree.

**Backends.** SQLite (`sqlite.py`) keeps the terms in an FTS5 index whose rowid is the key and
answers a search with one FTS5 query walked in key order with `LIMIT`
(`SQLiteStorage.plan_search`). PostgreSQL keeps the same keys, the same terms and the
same counts; bench/README.md ("Search in PostgreSQL") says which of its indexes can stop after
a page and a capped count, as measured with these terms.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Container
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from itertools import combinations
from itertools import takewhile

from . import vocabulary

VERSION = 5
PREFIX_MARK = "_"
LOCATION_MARK = "@"
# Where a term is written for every event, whatever its location (`community_@`).
ANYWHERE = ""
# A typed prefix longer than this is cut to it (and words are indexed under prefixes up to
# it): that many letters name a word anyway.
LONGEST_PREFIX = 24
# The longest piece of a CJK run indexed as one term; longer runs are matched piece by piece.
LONGEST_GRAM = 4
# 台 and 臺 are one character to a searcher; nothing else is folded (see the docstring).
VARIANTS = str.maketrans({"臺": "台"})
TIES_PER_SECOND = 1024
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_CJK = ("\u1100-\u11ff\u3005-\u3007\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31bf"
        "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
        "\U00020000-\U0003134f")
# A CJK run, or a run of letters and digits of other scripts (`\w` without "_" and CJK).
_RUNS = re.compile(f"(?P<cjk>[{_CJK}]+)|(?P<word>(?:(?![{_CJK}])[^\\W_])+)")


@dataclass(frozen=True)
class Run:
    """A piece of normalized text: a CJK run or a word."""

    text: str
    cjk: bool


def normalize(text: str) -> str:
    """Text as search compares it: NFKC, case-folded, 臺 as 台."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return folded.translate(VARIANTS)


def runs(text: str) -> Iterator[Run]:
    """The CJK runs and words of `text`, normalized, in order."""
    for match in _RUNS.finditer(normalize(text)):
        yield Run(match.group(), match.lastgroup == "cjk")


def grams(run: str, size: int) -> list[str]:
    """The overlapping pieces of `size` characters of a CJK run."""
    return [run[i:i + size] for i in range(len(run) - size + 1)]


def prefix_term(word: str) -> str:
    """The term of every word that starts with `word`."""
    return word[:LONGEST_PREFIX] + PREFIX_MARK


def facet_term(facets: Mapping[str, str]) -> str:
    """The term of events with all of these facet values, e.g. `_level_beginner_price_free`;
    with none, `_`: the term of every event."""
    return PREFIX_MARK + PREFIX_MARK.join(f"{name}{PREFIX_MARK}{facets[name]}"
                                          for name in sorted(facets))


def located(term: str, location: str) -> str:
    """A term as the index holds it for events at `location`."""
    return f"{term}{LOCATION_MARK}{location}"


def text_terms(fields: Iterable[str]) -> list[str]:
    """The terms of an event's searchable text (title, summary, venue, description)."""
    terms: dict[str, None] = {}  # a set that keeps the order terms were met in
    for field in fields:
        for run in runs(field):
            if run.cjk:
                for size in range(1, LONGEST_GRAM + 1):
                    terms.update(dict.fromkeys(grams(run.text, size)))
            else:
                terms[run.text] = None
                terms.update(dict.fromkeys(
                    prefix_term(run.text[:length])
                    for length in range(1, min(len(run.text), LONGEST_PREFIX) + 1)))
    return list(terms)


def counterpart_terms(fields: Iterable[str]) -> list[str]:
    """The terms an event's text gains from the bilingual vocabulary: for each group with a
    word in the text, what a query of each word of the group needs (a Chinese word's pieces,
    an English word whole and its prefixes).

    A Chinese word is found wherever it is written, inside a longer run too (台北 in
    台北市); English words are read left to right, the longest word of the vocabulary at each
    place first, so "New Taipei" is 新北 and not also 台北.
    """
    groups = _vocabulary()
    found: dict[int, None] = {}
    for field in fields:
        typed = list(runs(field))
        start = 0
        while start < len(typed):
            run, taken = typed[start], 1
            if run.cjk:
                found.update(dict.fromkeys(
                    number for size in groups.cjk_sizes for piece in grams(run.text, size)
                    for number, whole in groups.cjk.get(piece, ()) if whole in run.text))
            elif run.text in groups.first_words:
                words = [later.text for later in
                         takewhile(lambda later: not later.cjk,
                                             typed[start:start + groups.longest])]
                for length in range(len(words), 0, -1):
                    if (numbers := groups.words.get(tuple(words[:length]))) is not None:
                        found.update(dict.fromkeys(numbers))
                        taken = length
                        break
            start += taken
    return [term for number in found for term in groups.terms[number]]


@dataclass(frozen=True)
class _Groups:
    """The vocabulary as indexing looks it up: the groups holding each Chinese word by its
    first piece of at most `LONGEST_GRAM` characters (with the whole word, to check), the
    groups holding each English word sequence, and each group's terms."""

    cjk: dict[str, list[tuple[int, str]]]
    words: dict[tuple[str, ...], list[int]]
    terms: list[list[str]]

    @functools.cached_property
    def cjk_sizes(self) -> list[int]:
        """The lengths of the Chinese words' first pieces."""
        return sorted({len(piece) for piece in self.cjk})

    @functools.cached_property
    def first_words(self) -> set[str]:
        """The words an English word sequence of the vocabulary starts with."""
        return {words[0] for words in self.words}

    @functools.cached_property
    def longest(self) -> int:
        """The most words an English word of the vocabulary is written with."""
        return max(map(len, self.words), default=1)


@functools.cache
def _vocabulary() -> _Groups:
    cjk: dict[str, list[tuple[int, str]]] = {}
    words: dict[tuple[str, ...], list[int]] = {}
    terms = []
    for number, group in enumerate(vocabulary.word_groups()):
        group_terms: dict[str, None] = {}
        for word in group:
            parts = list(runs(word))
            if len(parts) == 1 and parts[0].cjk:
                whole = parts[0].text
                cjk.setdefault(whole[:LONGEST_GRAM], []).append((number, whole))
                group_terms.update(dict.fromkeys(query_terms(whole)))
            elif parts and not any(part.cjk for part in parts):
                words.setdefault(tuple(part.text for part in parts), []).append(number)
                group_terms.update(dict.fromkeys(text_terms([word])))
            else:
                raise ValueError(f"a vocabulary word is Chinese or English, not both: {word!r}")
        terms.append(list(group_terms))
    return _Groups(cjk, words, terms)


def terms_version() -> int:
    """The version of the terms this module makes: `VERSION`, and the vocabulary it reads."""
    return VERSION * 1_000_000 + vocabulary.digest() % 1_000_000


def document_terms(fields: Iterable[str], location: str, facets: Mapping[str, str]
                   ) -> list[str]:
    """Every term an event is found by: the terms of its text and of its words' counterparts
    in the other language, and every combination of its facet values (none included: every
    event), each at its location and `ANYWHERE`."""
    names = sorted(facets)
    combined = [facet_term({name: facets[name] for name in chosen})
                for size in range(len(names) + 1) for chosen in combinations(names, size)]
    fields = list(fields)
    terms = list(dict.fromkeys(text_terms(fields) + counterpart_terms(fields))) + combined
    return [located(term, place) for place in (location, ANYWHERE) for term in terms]


def query_terms(text: str) -> list[str]:
    """The terms an event must all hold to match `text`; none when the text has no letter,
    digit or CJK character."""
    typed = list(runs(text))
    terms: dict[str, None] = {}
    for number, run in enumerate(typed, start=1):
        if run.cjk:
            size = min(len(run.text), LONGEST_GRAM)
            terms.update(dict.fromkeys(grams(run.text, size)))
        else:
            terms[prefix_term(run.text) if number == len(typed) else run.text] = None
    return list(terms)


@dataclass(frozen=True)
class Search:
    """What a search reads: for each location it covers, the terms an event there must all
    hold. Its matches are the union of the conjunctions' matches, in key order."""

    conjunctions: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, words: list[str], facets: Mapping[str, str], locations: Iterable[str]
           ) -> Search:
        """The search for the terms of the words typed (`query_terms`; none: any event)
        among events with these facet values at one of `locations`."""
        # The facet term narrows the words to the filters; alone, `_` lists every event.
        wanted = [*words, facet_term(facets)] if facets or not words else words
        return cls(tuple(tuple(located(term, location) for term in wanted)
                         for location in locations))

    @property
    def terms(self) -> set[str]:
        """Every term the search reads."""
        return {term for conjunction in self.conjunctions for term in conjunction}

    @classmethod
    def anywhere(cls, words: list[str], facets: Mapping[str, str], events: Mapping[str, int]
                 ) -> Search:
        """The search for these terms at any location (`events`: how many events hold each
        term at each location and anywhere, every-event terms included): the lists of every
        event when each location with events holds every term, else each location's lists
        where it does (see the module docstring)."""
        every = every_event(ANYWHERE)
        locations = sorted(term.removeprefix(every) for term, held in events.items()
                           if term.startswith(every) and term != every and held)
        located = cls.of(words, facets, locations)
        if len(located.by_rarity(events)) < len(locations):
            return located
        return cls.of(words, facets, [ANYWHERE])

    def by_rarity(self, events: Mapping[str, int]) -> list[list[str]]:
        """Each conjunction with its rarest term first (`events`: how many events hold each
        term), leaving out those with a term no event holds: they match nothing."""
        return [sorted(conjunction, key=lambda term: (events.get(term, 0), term))
                for conjunction in self.conjunctions
                if all(events.get(term, 0) for term in conjunction)]


def every_event(location: str) -> str:
    """The term every event at `location` is indexed under (`ANYWHERE`: every event)."""
    return located(facet_term({}), location)


def _second(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(seconds=1)


def first_key(moment: datetime) -> int:
    """The smallest key of an event starting at or after `moment` (to the second)."""
    return _second(moment) * TIES_PER_SECOND


def free_key(starts_at: datetime, taken: Container[int]) -> int:
    """The key of an event starting at `starts_at`: the first of its second not `taken`."""
    first = first_key(starts_at)
    for key in range(first, first + TIES_PER_SECOND):
        if key not in taken:
            return key
    raise ValueError(f"more than {TIES_PER_SECOND} events start at {starts_at.isoformat()}")
