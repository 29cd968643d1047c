"""Choosing the document title and the heading it replaces in every path."""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from chunking.parse.markdown.plain_text import code_regions, plain_markdown

if TYPE_CHECKING:
    from chunking.model import Outline

TITLE_MAX_CHARACTERS = 200
"""An H1 longer than this is a section, not the title.  Of the 1,014 documents of
the corpus, real world pages and evaluation documents whose only H1 is their first
heading, the longest H1 is 156 characters (median 60, 99th percentile 123): a
caption of hundreds of characters that a lone `=` line made a setext H1 is not."""
BODY_BEFORE_TITLE_MAX = 1000
"""An H1 after more than this many non-space characters of body text is a section,
not the title.  Before the leading H1 of those documents, at most 512 come first
(an LWN page's navigation; then a Wikipedia page's 69 and a news page's 29): a
title opens a document, and a page's furniture before it stays well under this."""
NEW_WORDS_SHARE = 0.2
"""A heading with at most this share of words the title lacks says the same as the
title: one changed preposition or article in five words (`with` / `for`, `in` /
`on`): 103 of the 239 corpus markdown pages whose H1 adds a word to the front
matter title add no more than that."""
_PUNCTUATION = re.compile(r"[\W_]+")
_PLACEHOLDER = re.compile(r"\s*(?:\{\{[^{}]*\}\}|\{%[^{}]*%\})\s*")
"""A heading that is only a template tag (`{{title}}`, `{{ page.title }}`, `{% title %}`)
is where a site generator puts the metadata title: the same title, not a level."""


def _body_before(outline: Outline, offset: int) -> int:
    """Non-space characters of body text from the body start to `offset`, capped at
    `BODY_BEFORE_TITLE_MAX + 1`; markup is left out only when the raw count is over."""
    raw = outline.source[outline.body_start : offset]
    count = len(raw) - sum(raw.count(space) for space in " \t\r\n\f\v")
    if count <= BODY_BEFORE_TITLE_MAX or outline.format != "markdown":
        return min(count, BODY_BEFORE_TITLE_MAX + 1)
    # Comments, link targets and tags are not body text: measure what is embedded.
    plain = plain_markdown(outline.source, outline.body_start, offset, code_regions(outline))
    return min(sum(1 for character in plain if not character.isspace()), BODY_BEFORE_TITLE_MAX + 1)


def _first_and_only_h1(outline: Outline) -> int:
    """Index of the document's only H1 if it is its first heading and has text, else -1."""
    h1s = [i for i, h in enumerate(outline.headings) if h.depth == 1]
    if len(h1s) == 1 and h1s[0] == 0 and outline.headings[0].text:
        return 0
    return -1


def single_leading_h1(outline: Outline) -> int:
    """Index of the heading that names the document, else -1.

    That is the only H1 when it is the first heading, at most
    `TITLE_MAX_CHARACTERS` long, with at most `BODY_BEFORE_TITLE_MAX` characters
    of body text before it: a title opens a document, it does not come in its middle.
    """
    index = _first_and_only_h1(outline)
    if index < 0:
        return -1
    heading = outline.headings[index]
    if len(heading.text) > TITLE_MAX_CHARACTERS:
        return -1
    if _body_before(outline, heading.start) > BODY_BEFORE_TITLE_MAX:
        return -1
    return index


def _words(text: str) -> list[str]:
    """The words of `text`, compared without case, accents' forms or punctuation."""
    return _PUNCTUATION.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split()


def same_title(heading: str, title: str) -> bool:
    """Whether a heading says what the metadata title says, so it adds no path level.

    Words are compared without case or punctuation.  The heading is the same when
    at most `NEW_WORDS_SHARE` of its words are missing from the title (`Foo` and
    `Foo - Site`, `Foo | Site`, `Site: Foo`: a page's `<title>` usually adds the
    site's name; `Trusted Launch with AKS` and `Trusted Launch for AKS`), or when it
    is the title with words after it (`git-add(1)` and `git-add(1) Manual Page`):
    in a path it would only repeat the title in every prefix; so would a template
    tag that stands for it (`{{title}}`, see `_PLACEHOLDER`).  Otherwise it names
    the document differently (a news headline under an SEO title) and is a level.
    """
    if _PLACEHOLDER.fullmatch(heading):
        return True
    words, title_words = _words(heading), _words(title)
    if not words or not title_words:
        return False
    known = set(title_words)
    new = sum(1 for word in words if word not in known)
    return new <= NEW_WORDS_SHARE * len(words) or words[: len(title_words)] == title_words


def resolve_title(outline: Outline, *, given: str | None) -> tuple[str, int]:
    """The title and the index of the heading that stands for it (-1 if none).

    Order: front matter or HTML `<title>`, a single leading H1, the caller's title;
    else none (`""`): a file name did not help retrieval as a title (the rule audit),
    and an index that wants one to show has it as `metadata_storage_name`.  When the
    metadata title wins, the only H1 (if it is the first heading) stays out of
    heading paths only if it says the same (`same_title`); otherwise it is a level.
    """
    if outline.title:
        # Where it stands does not matter here: a heading that repeats the title is
        # left out of paths, one that says something else is a level.
        h1 = _first_and_only_h1(outline)
        hidden = h1 if h1 >= 0 and same_title(outline.headings[h1].text, outline.title) else -1
        return outline.title, hidden
    h1 = single_leading_h1(outline)
    if h1 >= 0:
        return outline.headings[h1].text, h1
    if given and given.strip():
        return " ".join(given.split()), -1
    return "", -1
