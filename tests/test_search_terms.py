"""The terms search makes of text (webapp/storage/search.py), the same for every backend:
what an event is indexed under, what a query needs, and that one always finds the other."""

from __future__ import annotations

import re
import string
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from webapp.storage import search

TITLE = "台北資安研討會：AI 代理人的安全設計"
FACETS = {"price": "free", "level": "beginner"}
# What user text may hold: any character at all, operators and marks included.
ANY_TEXT = st.text(max_size=100)
CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)


def indexed(*fields: str, location: str = "taipei") -> set[str]:
    return set(search.document_terms(fields, location, FACETS))


def finds(text: str, *fields: str) -> bool:
    """Whether a search for `text` (no filters) finds an event with these fields."""
    terms = search.Search.of(search.query_terms(text), {}, ["taipei"]).conjunctions[0]
    return set(terms) <= indexed(*fields)


@pytest.mark.parametrize(("typed", "compared"), [
    ("ＷｅｂＭＣＰ", "webmcp"),  # full-width letters
    ("Ｐｙｔｈｏｎ　３", "python 3"),  # full-width digits and space
    ("臺北", "台北"),
    ("ＡＩ代理人", "ai代理人"),
    ("ﾜｰｸｼｮｯﾌﾟ", "ワークショップ"),  # half-width katakana
    ("STRASSE", "strasse"),
    ("Straße", "strasse"),  # case-folded, not just lower-cased
])
def test_text_is_compared_after_nfkc_case_folding_and_tai(typed, compared):
    assert search.normalize(typed) == compared


def test_only_tai_is_folded():
    """臺/台 is the one variant pair folded; other variants stay distinct."""
    assert search.normalize("臺灣") == search.normalize("台灣")
    assert search.normalize("裏") != search.normalize("裡")
    assert search.normalize("这") != search.normalize("這")  # Simplified is not Traditional


def test_cjk_runs_and_words_are_cut_apart():
    runs = [(run.text, run.cjk) for run in search.runs(TITLE)]
    assert runs == [("台北資安研討會", True), ("ai", False), ("代理人的安全設計", True)]
    assert [run.text for run in search.runs("AI代理人 x_y")] == ["ai", "代理人", "x", "y"]


def test_an_event_is_indexed_under_its_words_prefixes_grams_and_facets():
    terms = indexed(TITLE, "Community Workshop")
    for term in ("台", "台北", "資安", "研討會", "台北資安", "代理人", "ai", "ai_", "community",
                 "c_", "communi_", "community_", "workshop_", "_", "_price_free",
                 "_level_beginner", "_level_beginner_price_free"):
        assert search.located(term, "taipei") in terms, term
    assert search.located("台北資安研", "taipei") not in terms  # only runs of up to four
    assert not any(term.endswith("@online") for term in terms)


@pytest.mark.parametrize(("typed", "needed"), [
    ("資安", ["資安"]),
    ("研討會", ["研討會"]),
    ("提示注入", ["提示注入"]),
    ("提示注入攻擊", ["提示注入", "示注入攻", "注入攻擊"]),
    ("台", ["台"]),
    ("communi", ["communi_"]),
    ("community", ["community_"]),  # the last word is being typed: a prefix
    ("community workshop", ["community", "workshop_"]),  # the others are whole
    ("workshop 社群", ["workshop", "社群"]),
    ("WebMCP 工作坊", ["webmcp", "工作坊"]),
    ("WebMCP工作坊", ["webmcp", "工作坊"]),
    ('"NEAR(a b)" title:x * AND', ["near", "a", "b", "title", "x", "and_"]),
    ("!!! *** ...", []),
])
def test_a_query_needs_every_part_of_what_was_typed(typed, needed):
    assert search.query_terms(typed) == needed


@pytest.mark.parametrize(("typed", "found"), [
    ("資安", True), ("研討會", True), ("提示注入", False), ("代理人", True), ("台", True),
    ("臺北", True), ("北資", True), ("設計", True), ("會議", False), ("ＡＩ", True),
    ("AI 安全", True), ("ai 研討會 設計", True), ("ai 提示", False), ("研討會議", False),
])
def test_chinese_is_found_by_any_run_inside_the_text(typed, found):
    assert finds(typed, TITLE) is found


def test_a_phrase_of_four_characters_is_matched_exactly():
    assert finds("資料科學", "資料科學黑客松")
    # Each triple of it is here, but not the phrase: not found.
    assert not finds("資料科學", "資料科技與材料科學")
    assert finds("資料科學黑客", "資料科學黑客松")  # longer: every piece of four is held


@pytest.mark.parametrize(("typed", "found"), [
    ("c", True), ("comm", True), ("communi", True), ("communit", True), ("community", True),
    ("communityx", False), ("ommunity", False), ("communi work", False), ("workshopping", False),
    ("workshop", True), ("work", True), ("community work", True), ("comm workshop", False),
])
def test_the_last_word_is_a_prefix_while_it_is_typed(typed, found):
    assert finds(typed, "Community Workshop") is found


def test_a_search_covers_each_location_with_its_filters():
    found = search.Search.of(["資安"], {"price": "free"}, ["taipei", "online"])
    assert found.conjunctions == (("資安@taipei", "_price_free@taipei"),
                                  ("資安@online", "_price_free@online"))
    everything = search.Search.of([], {}, ["taipei"])
    assert everything.conjunctions == (("_@taipei",),)


def test_every_term_is_written_at_the_events_location_and_anywhere():
    terms = search.document_terms(["資安"], "taipei", {"price": "free"})
    at_taipei = {term for term in terms if term.endswith("@taipei")}
    assert {"資安@taipei", "_price_free@taipei", "_@taipei"} <= at_taipei
    assert set(terms) - at_taipei == {term.replace("@taipei", "@") for term in at_taipei}


def test_anywhere_reads_every_events_lists_only_where_each_location_holds_every_term():
    counts = {"_@": 30, "_@taipei": 10, "_@online": 20, "社群@": 12, "社群@taipei": 5,
              "社群@online": 7, "台北@": 4, "台北@taipei": 4}
    assert search.Search.anywhere(["社群"], {}, counts).by_rarity(counts) == [["社群@"]]
    assert search.Search.anywhere(["台北"], {}, counts).by_rarity(counts) == [["台北@taipei"]]
    # A location whose events are all gone does not keep the others from reading anywhere.
    emptied = {**counts, "_@kaohsiung": 0}
    assert search.Search.anywhere(["社群"], {}, emptied).by_rarity(emptied) == [["社群@"]]


def test_rarest_terms_are_read_first_and_impossible_locations_dropped():
    found = search.Search.of(["社群", "haskell"], {}, ["taipei", "online"])
    counts = {"社群@taipei": 900, "haskell@taipei": 3, "社群@online": 800}
    assert found.by_rarity(counts) == [["haskell@taipei", "社群@taipei"]]


@given(ANY_TEXT)
@example('"NEAR(a b)" OR title:webmcp* ^x -y {a b}: AND NOT')
@example("_location_taipei _@online @ _ __ a_b c@d")
@settings(max_examples=500, deadline=None)
def test_user_text_never_yields_an_operator_or_a_mark_of_its_own(text):
    for term in search.query_terms(text):
        # No space and no ASCII character but letters and digits (what the index's tokenizer
        # and FTS5's query syntax read), but the prefix mark ending the last word.
        body = term.removesuffix(search.PREFIX_MARK)
        assert body and not re.search(r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\s]", body), term


@given(st.text(max_size=60), st.text(CJK, min_size=1, max_size=12), st.text(max_size=60),
       st.data())
@settings(max_examples=300, deadline=None)
def test_any_run_of_two_or_more_cjk_characters_in_a_field_finds_its_event(before, run, after,
                                                                          data):
    """The property the issue asks for: any substring of two or more CJK characters of an
    indexed field (here inside any text, in any field) finds the event."""
    field = before + run + after
    piece = data.draw(st.sampled_from([run.text for run in search.runs(field) if run.cjk]))
    start = data.draw(st.integers(0, len(piece) - 1))
    end = data.draw(st.integers(start + 1, len(piece)))
    assert finds(piece[start:end], "an unrelated title", field)


@given(st.lists(st.text(string.ascii_letters + string.digits, min_size=1, max_size=30),
                min_size=1, max_size=8), st.data())
@settings(max_examples=200, deadline=None)
def test_whole_words_and_the_start_of_the_last_one_find_their_event(words, data):
    field = " ".join(words)
    chosen = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=3))
    typing = data.draw(st.sampled_from(words))
    cut = data.draw(st.integers(1, len(typing)))
    assert finds(" ".join([*chosen, typing[:cut]]), field)


def test_keys_keep_start_order_and_ties_take_the_next_free_number():
    start = datetime(2026, 12, 15, 2, 0, tzinfo=UTC)
    first = search.free_key(start, set())
    second = search.free_key(start, {first})
    later = search.free_key(start + timedelta(seconds=1), set())
    assert first == search.first_key(start) < second < later
    assert search.first_key(start - timedelta(microseconds=1)) < first
    assert search.first_key(datetime(1900, 1, 1, tzinfo=UTC)) < 0 < first
    with pytest.raises(ValueError, match="start at"):
        search.free_key(start, range(first, first + search.TIES_PER_SECOND))
