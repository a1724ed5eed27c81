"""The bilingual vocabulary (data/vocabulary.json, webapp/storage/vocabulary.py): an event
written in one language is found by a search in the other, on every backend and wherever a
search comes from. The cases are the file's own groups, every word against every other."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta

import pytest

from webapp.storage import Event
from webapp.storage import search
from webapp.storage import vocabulary
from webapp.storage.connection import get_db

GROUPS = vocabulary.word_groups()
PAIRS = [(said, typed) for group in GROUPS for said, typed in itertools.permutations(group, 2)]


def sentence(word: str) -> str:
    """A title that holds `word` among other words of its own script."""
    if next(search.runs(word)).cjk:
        return f"本週{word}活動"
    return f"An evening {word} for everyone"


def finds(typed: str, title: str) -> bool:
    """Whether a search for `typed` (no filters) finds an event with this title."""
    wanted = search.Search.of(search.query_terms(typed), {}, ["taipei"]).conjunctions[0]
    return set(wanted) <= set(search.document_terms([title], "taipei", {}))


def test_the_vocabulary_pairs_at_least_sixty_meanings_each_word_in_one_group():
    assert len(GROUPS) >= 60
    words = [search.normalize(word) for group in GROUPS for word in group]
    assert len(words) == len(set(words)), "a word is in two groups"
    for group in GROUPS:
        assert {next(search.runs(word)).cjk for word in group} == {True, False}, group


@pytest.mark.parametrize(("said", "typed"), PAIRS)
def test_every_word_finds_the_events_that_say_another_word_of_its_group(said, typed):
    assert finds(typed, sentence(said))


@pytest.mark.parametrize(("said", "typed"), [
    ("工作坊", "study group"), ("Study group", "工作坊"), ("Workshop", "讀書會"),
    ("研討會", "workshop"), ("Taipei", "高雄"),
])
def test_a_word_does_not_find_the_events_of_another_group(said, typed):
    assert not finds(typed, sentence(said))


def test_a_word_is_matched_whole_not_inside_another_word():
    assert not finds("工作坊", "A workshopping night")  # "workshopping" is not "workshop"
    assert finds("新北", "New Taipei meetup") and not finds("台北", "New Taipei meetup")
    assert finds("台北", "Taipei meetup") and not finds("新北", "Taipei meetup")
    assert finds("台北", "台北市的聚會")  # a Chinese word inside a longer run


def test_a_group_without_both_languages_or_a_word_of_two_scripts_is_refused(tmp_path,
                                                                           monkeypatch):
    one_sided = tmp_path / "one-sided.json"
    one_sided.write_text(json.dumps({"groups": [{"zh": ["工作坊"], "en": []}]}),
                         encoding="utf-8")
    with pytest.raises(ValueError, match="needs words"):
        vocabulary.read_groups(one_sided)
    monkeypatch.setattr(vocabulary, "word_groups", lambda: (("AI 工作坊", "AI workshop"),))
    search._vocabulary.cache_clear()
    try:
        with pytest.raises(ValueError, match="Chinese or English, not both"):
            search.counterpart_terms(["AI workshop"])
    finally:
        search._vocabulary.cache_clear()


def test_changing_the_vocabulary_changes_the_version_of_the_index(tmp_path, monkeypatch):
    before = search.terms_version()
    changed = tmp_path / "vocabulary.json"
    document = json.loads(vocabulary.VOCABULARY_FILE.read_text("utf-8"))
    document["groups"].append({"zh": ["手作"], "en": ["crafts"]})
    changed.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(vocabulary, "VOCABULARY_FILE", changed)
    vocabulary.digest.cache_clear()
    try:
        assert search.terms_version() != before
        assert search.terms_version() // 1_000_000 == search.VERSION
    finally:
        vocabulary.digest.cache_clear()


@pytest.mark.both_backends
@pytest.mark.parametrize(("title", "typed"), [
    ("Intro to Rust: a hands-on workshop", "工作坊"),
    ("Rust 入門工作坊", "workshop"),
    ("LLM study group", "大型語言模型 讀書會"),
    ("資安黑客松", "security hackathon"),
])
def test_a_search_in_one_language_finds_the_event_written_in_the_other(app, client, clock,
                                                                         title, typed):
    event = Event(id="evt-written-once", title=title, summary="", description="",
                  starts_at=clock() + timedelta(days=3),
                  ends_at=clock() + timedelta(days=3, hours=2), location="online",
                  venue="", price="free", level="beginner", capacity=20, held_seats=0,
                  registration_deadline=clock() + timedelta(days=2))
    with app.app_context():
        get_db().import_events([event])
    for language in ("zh-TW", "en"):
        answer = client.get(f"/{language}/events", query_string={"query": typed},
                            headers={"Accept": "application/json"})
        assert answer.status_code == 200
        assert "evt-written-once" in [found["id"] for found in answer.json["data"]["events"]]
