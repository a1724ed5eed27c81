"""The bilingual vocabulary of event words (`data/vocabulary.json`): groups of words that name
the same thing in Traditional Chinese, as written in Taiwan, and in English (工作坊 and
"workshop", 讀書會 and "study group", 台北 and "Taipei").

Events on this site are written in either language, and people search in theirs: without it,
工作坊 finds the one workshop written in Chinese and misses the five written in English.
`search.document_terms` indexes an event whose text holds a word of a group under the terms
every other word of the group gives (see `search.counterpart_terms`), so a query is what was
typed, read like any other, and pages, WebMCP and `/mcp` agree because the index does.

A group is one meaning, and a word belongs to one group only: a word in two groups would make
the two meanings one. The file is read once per process; changing it changes the index's
terms, so its digest is part of the index's version (`search.terms_version`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from ..config import SITE_ROOT

VOCABULARY_FILE = SITE_ROOT / "data" / "vocabulary.json"
LANGUAGES = ("zh", "en")


def read_groups(path: Path) -> tuple[tuple[str, ...], ...]:
    """The word groups of a vocabulary file, each group's words in the file's order (Chinese
    first); raises ValueError for a file that is not a list of groups in both languages."""
    document = json.loads(path.read_text(encoding="utf-8"))
    groups = []
    for group in document["groups"]:
        if set(group) != set(LANGUAGES) or not all(
                group[language] and all(isinstance(word, str) and word.strip()
                                        for word in group[language])
                for language in LANGUAGES):
            raise ValueError(f"a group needs words in {' and '.join(LANGUAGES)}: {group!r}")
        groups.append(tuple(word for language in LANGUAGES for word in group[language]))
    return tuple(groups)


@functools.cache
def word_groups() -> tuple[tuple[str, ...], ...]:
    """The site's word groups (read once per process)."""
    return read_groups(VOCABULARY_FILE)


@functools.cache
def digest() -> int:
    """A number that changes whenever the site's vocabulary file does."""
    return int.from_bytes(hashlib.sha256(VOCABULARY_FILE.read_bytes()).digest()[:4], "big")
