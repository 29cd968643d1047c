"""Runs of text nodes across plain inline markup render as the nodes would one by one.

The walk renders the text around plain inline elements (no handler, no id) in one
call; these pin the cases where that could differ: the escape of the word that opens
a line when it is a node's alone, spaces decided across nodes, and the characters
`TRANSLATION` changes (CR, NBSP, invisible ones) on both sides of a tag.  The
expected sources were rendered node by node, before the walk collected runs.
"""

from __future__ import annotations

import sys

import pytest

from chunking.parse.html.render import parse_html
from chunking.parse.html.tree import TRANSLATED, TRANSLATION

RUNS = [
    # The opening word is the first node's alone: it is escaped, not the whole word.
    ("<p>-<em>n</em> x</p>", "\\-n x"),
    ("<p><em>-</em>n</p>", "\\-n"),
    ("<p>1.<b>5</b> litres</p>", "1\\.5 litres"),
    ("<p> <b>#</b><i>hash</i> tag</p>", "\\#hash tag"),
    ("<ul><li>- <a>x</a></li><li>+<b>y</b> z</li></ul>", "- \\- x\n- \\+y z"),
    ("<blockquote><p>&gt;<span>q</span></p></blockquote>", "> \\>q"),
    ("<div>\n  <p>one <code>two</code>\n  three</p>\n  <p>*<em>four</em>*</p>\n</div>",
     "one two three\n\n\\*four*"),
    # Headings are not escaped.
    ("<h2>#<em>1</em> tip</h2><p>after</p>", "## #1 tip\n\nafter"),
    # Spaces across nodes, and characters the translation changes or deletes.
    ("<p>a<span>\u200b</span>b <i> c</i>\u00a0d</p>", "ab c d"),
    ("<p>a<b>\x1c</b>b <b>\x1c </b>c</p>", "ab c"),
    ("<p>a\r\n<b>b</b>\r\nc</p>", "a b c"),
    ("<p>x<span> </span><span>y</span><span>\u00a0</span>z</p>", "x y z"),
    ("<pre>a<b> b </b>\r\nc</pre><table><tr><td>a<b> b</b>\u00a0c</td></tr></table>",
     "```\na b \nc\n```\n\n| a b c |\n| --- |"),
]  # fmt: skip


@pytest.mark.parametrize(("markup", "source"), RUNS)
def test_a_run_of_text_nodes_renders_as_its_nodes_would(markup: str, source: str) -> None:
    assert parse_html(markup).source == source


def test_translated_matches_exactly_the_characters_translation_changes() -> None:
    # Text that TRANSLATED does not match skips str.translate: it must need none; and
    # text it matches should need it (else the check costs a translate for nothing).
    changed = [
        code for code in range(sys.maxunicode + 1) if chr(code).translate(TRANSLATION) != chr(code)
    ]
    matched = [code for code in range(sys.maxunicode + 1) if TRANSLATED.search(chr(code))]
    assert matched == changed
