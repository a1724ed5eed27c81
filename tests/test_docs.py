"""The repository documents itself: docs/ holds the design, and citations of it hold.

Code, tests and the README cite the site's `docs/design.md §N` and flask-webmcp's
`flask-webmcp/docs/chromium.md §N` (inside flask-webmcp/, its own `docs/chromium.md §N`). A
clone has no other design document, so nothing tracked may point outside the tree, and every
citation must name a file of those docs/ folders with a heading numbered N ("## N. ...").
Files inside docs/ may cite each other by name alone (`design.md §6`).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from helpers import PROJECT_ROOT

DOCS = PROJECT_ROOT / "docs"
EXTENSION = "flask-webmcp"
# Documents outside the repository that a clone never has (spelt in pieces so that this file
# does not match itself).
OUTSIDE = re.compile("|".join([
    r"\.\./" + "shared",
    "DESIGN" + r"\.md",
    "DESIGN" + " §",
    "reference/" + r"webmcp\.md",
]))
# [flask-webmcp/]docs/NAME.md §N, or §N-M / §N.M (each number must be a section of NAME.md).
CITATION = re.compile(r"((?:flask-webmcp/)?docs)/([\w.-]+\.md) §(\d+(?:[.-]\d+)*)")
# Inside docs/: NAME.md §N, relative to docs/.
LOCAL_CITATION = re.compile(r"(?<![\w/.-])([\w-]+\.md)\]?(?:\([\w.-]+\))? §(\d+(?:[.-]\d+)*)")
NUMBERED_HEADING = re.compile(r"^#{1,6} (\d+)\. ", re.MULTILINE)


def tracked_text_files() -> Iterator[tuple[str, str]]:
    """(path, text) of every file git tracks that is text (binary files are skipped)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=PROJECT_ROOT, check=True,
                            capture_output=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        path = PROJECT_ROOT / name
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            yield name, data.decode("utf-8")
        except UnicodeDecodeError:
            continue


def lines_matching(pattern: re.Pattern[str]) -> Iterator[tuple[str, int, re.Match[str]]]:
    """(path, line number, match) for every match in a tracked text file."""
    for name, text in tracked_text_files():
        for number, line in enumerate(text.splitlines(), start=1):
            for match in pattern.finditer(line):
                yield name, number, match


def section_numbers(doc: Path) -> set[str]:
    """The numbers of a document's numbered headings."""
    return set(NUMBERED_HEADING.findall(doc.read_text(encoding="utf-8")))


def cited_folder(citing: str, folder: str) -> Path:
    """The docs/ folder a citation in file `citing` means: inside flask-webmcp/, its own."""
    if citing.startswith(EXTENSION + "/") and folder == "docs":
        return PROJECT_ROOT / EXTENSION / "docs"
    return PROJECT_ROOT / folder


def broken_citation(doc_name: str, sections: str, folder: Path = DOCS) -> str | None:
    """Why `doc_name §sections` points nowhere, or None when it holds."""
    doc = folder / doc_name
    if not doc.is_file():
        return f"there is no {doc.relative_to(PROJECT_ROOT)}"
    # §3.2 cites section 3; §1-3 cites sections 1 and 3.
    wanted = {part.split(".")[0] for part in sections.split("-")}
    missing = sorted(wanted - section_numbers(doc), key=int)
    if missing:
        return f"{doc.relative_to(PROJECT_ROOT)} has no section numbered {', '.join(missing)}"
    return None


def test_nothing_cites_documents_outside_the_repository():
    found = [f"{name}:{number}: {match.group()!r}"
             for name, number, match in lines_matching(OUTSIDE)]
    assert not found, ("cite docs/design.md or flask-webmcp/docs instead of documents a clone "
                       "does not have:\n" + "\n".join(found))


def test_every_citation_of_docs_names_a_section_that_exists():
    broken = []
    for name, number, match in lines_matching(CITATION):
        why = broken_citation(match.group(2), match.group(3), cited_folder(name, match.group(1)))
        if why:
            broken.append(f"{name}:{number}: {match.group()!r}: {why}")
    assert not broken, "citations of docs/ that point nowhere:\n" + "\n".join(broken)


def test_docs_cite_each_other_by_sections_that_exist():
    broken = []
    for doc in sorted(DOCS.glob("*.md")):
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
            for match in LOCAL_CITATION.finditer(line):
                why = broken_citation(match.group(1), match.group(2))
                if why:
                    broken.append(f"docs/{doc.name}:{number}: {match.group()!r}: {why}")
    assert not broken, "citations between docs/ files that point nowhere:\n" + "\n".join(broken)


def test_the_citations_are_found_at_all():
    """Guards the patterns above: were they to match nothing, the tests would pass vacuously."""
    cited = {str(cited_folder(name, match.group(1)).relative_to(PROJECT_ROOT) / match.group(2))
             for name, _, match in lines_matching(CITATION)}
    assert cited == {"docs/design.md", "flask-webmcp/docs/chromium.md"}
    assert section_numbers(DOCS / "design.md") >= {str(n) for n in range(1, 11)}
