"""Every relative link in the README, CHANGELOG and docs/ leads to a file and heading that exist."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

PAGES = sorted(
    [ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md")],
)
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")
INLINE_CODE = re.compile(r"`[^`]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
README_LIMIT = 260


def _prose(path: Path) -> list[str]:
    """The page's lines outside fenced code, where links and headings count."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation out, spaces to '-'."""
    text = re.sub(r"`|\*\*|__", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose(path):
        match = HEADING.match(line)
        if match:
            slug = _slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(path: Path) -> list[str]:
    return [m.group(1) for line in _prose(path) for m in LINK.finditer(INLINE_CODE.sub("", line))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # an absolute URL: not ours to check offline
        file_part, _, anchor = target.partition("#")
        file = (page.parent / file_part).resolve() if file_part else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    reached, queue = {ROOT / "README.md"}, [ROOT / "README.md"]
    while queue:
        page = queue.pop()
        for target in _links(page):
            file_part = target.partition("#")[0]
            if not file_part or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            file = (page.parent / file_part).resolve()
            if file.suffix == ".md" and file.exists() and file not in reached:
                reached.add(file)
                queue.append(file)
    orphans = [str(p.relative_to(ROOT)) for p in PAGES if p not in reached]
    assert not orphans, f"pages no link leads to: {orphans}"


def test_readme_is_a_guide_not_a_notebook() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LIMIT, f"README.md has {len(lines)} lines; move detail to docs/"
