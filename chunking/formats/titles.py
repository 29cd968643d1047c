"""Choosing the document title and the heading it replaces in every path."""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chunking.outline import Outline


def single_leading_h1(outline: Outline) -> int:
    """Index of the document's only H1 if it is also its first heading, else -1."""
    h1s = [i for i, h in enumerate(outline.headings) if h.depth == 1]
    if len(h1s) == 1 and h1s[0] == 0 and outline.headings[0].text:
        return 0
    return -1


def resolve_title(outline: Outline, *, given: str | None, file_name: str | None) -> tuple[str, int]:
    """The title and the index of the heading that stands for it (-1 if none).

    Order: front matter or HTML `<title>`, a single leading H1, the caller's title,
    the file name.  A single leading H1 names the document, so it is kept out of
    heading paths even when the metadata title wins.
    """
    h1 = single_leading_h1(outline)
    if outline.title:
        return outline.title, h1
    if h1 >= 0:
        return outline.headings[h1].text, h1
    if given and given.strip():
        return " ".join(given.split()), -1
    if file_name:
        return PurePath(file_name).name, -1
    return "", -1
