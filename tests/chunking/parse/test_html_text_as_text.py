"""HTML text that only looks like markup stays text (issue 14, item 9): a paragraph
starting with `#` or `1.`, MathML and MathJax formulas, and what a DOCTYPE's internal
subset leaves behind."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from chunking.parse.html.render import parse_html
from chunking.parse.markdown.plain_text import code_regions, plain_markdown
from tests.chunking.parse.test_html_outline import assert_invariants

if TYPE_CHECKING:
    from chunking.model import Outline

_COMMONMARK = MarkdownIt("commonmark").enable("table")


def embedded(outline: Outline) -> str:
    return plain_markdown(outline.source, 0, len(outline.source), code_regions(outline))


def block_tokens(markdown: str) -> list[str]:
    """The block structure a CommonMark reader sees in `markdown`."""
    return [token.type for token in _COMMONMARK.parse(markdown) if token.type != "inline"]


# --- text that starts like markdown structure -----------------------------------


@pytest.mark.parametrize(
    ("markup", "source"),
    [
        ("<p># of users</p>", "\\# of users"),
        ("<p>#hashtag</p>", "\\#hashtag"),
        ("<p>###### six</p>", "\\###### six"),
        ("<p>&gt; not a quote</p>", "\\> not a quote"),
        ("<p>- not an item</p>", "\\- not an item"),
        ("<p>+ not an item</p>", "\\+ not an item"),
        ("<p>* not an item</p>", "\\* not an item"),
        ("<p>1. not an item</p>", "1\\. not an item"),
        ("<p>2024) a year</p>", "2024\\) a year"),
        ("<p>```js fence</p>", "\\```js fence"),
        ("<p>~~~ fence</p>", "\\~~~ fence"),
        ("<p>| a | b |</p>", "\\| a | b |"),
        ("<p>---</p>", "\\---"),
        ("<p>***</p>", "\\***"),
        ("<p>___</p>", "\\___"),
        ("<p>text<br>===</p>", "text\n\\==="),
        ("<p>text<br>--</p>", "text\n\\--"),
        ("<p>text<br># after a break</p>", "text\n\\# after a break"),
        ("<ul><li>## not a heading</li></ul>", "- \\## not a heading"),
        ("<ol><li>1. twice numbered</li></ol>", "1. 1\\. twice numbered"),
        ("<blockquote><p># quoted</p></blockquote>", "> \\# quoted"),
        ("<dl><dt># term</dt><dd>- definition</dd></dl>", "\\# term\n  \\- definition"),
        ("<table><caption># of rows</caption><tr><td>x</td></tr></table>", "\\# of rows"),
    ],
)
def test_text_that_starts_like_structure_is_escaped(markup: str, source: str) -> None:
    outline = parse_html(markup)
    assert_invariants(outline)
    assert outline.source.startswith(source)
    assert not outline.headings
    assert "\\" not in embedded(outline)


@pytest.mark.parametrize(
    "markup",
    [
        "<p>C# and F#</p>",
        "<p>-5 degrees</p>",
        "<p>--flag</p>",
        "<p>1.5 million</p>",
        "<p>*emphasis*</p>",
        "<p>== equal</p>",
        "<p>`code`</p>",
        "<table><tr><td># cell</td></tr></table>",
        "<pre># comment in code</pre>",
        "<h2># in a heading</h2>",
    ],
)
def test_text_that_cannot_read_as_structure_is_not_escaped(markup: str) -> None:
    outline = parse_html(markup)
    assert "\\" not in outline.source.replace("\\|", "")


def test_heading_text_keeps_its_hash() -> None:
    outline = parse_html("<h2># of users</h2>")
    assert outline.source == "## # of users"
    assert [heading.text for heading in outline.headings] == ["# of users"]


def test_markdown_escapes_are_their_character_in_embedded_text() -> None:
    # plain_markdown reads CommonMark's escapes in a markdown document too.
    source = "\\# not a heading, 1\\. not a list, a \\| b, \\<T\\>, id\\_rsa, `code \\# kept`"
    assert plain_markdown(source, 0, len(source), ()) == (
        "# not a heading, 1. not a list, a | b, <T>, id_rsa, `code \\# kept`"
    )


_MARKERS = st.sampled_from(
    ["#", "##", "######", ">", "-", "+", "*", "1.", "12)", "```", "~~~", "|", "---", "***", "==="]
)
_WORDS = st.lists(
    st.text(alphabet="abcxyz019#>-+*=_|`~.)", min_size=1, max_size=6), min_size=0, max_size=4
)
_CONTAINERS = st.sampled_from(
    [
        ("<p>{}</p>", "paragraph_open"),
        ("<p>first<br>{}</p>", "paragraph_open"),
        ("<ul><li>{}</li></ul>", "bullet_list_open"),
        ("<ol><li>{}</li></ol>", "ordered_list_open"),
        ("<blockquote><p>{}</p></blockquote>", "blockquote_open"),
    ]
)


@settings(max_examples=300, deadline=None)
@example(marker="#", words=["`**", "`"], container=("<p>{}</p>", "paragraph_open"))
@given(_MARKERS, _WORDS, _CONTAINERS)
def test_text_starting_with_markdown_markers_never_reads_as_structure(
    marker: str, words: list[str], container: tuple[str, str]
) -> None:
    template, opening = container
    text = " ".join([marker, *words])
    outline = parse_html(template.format(text.replace("&", "&amp;").replace("<", "&lt;")))
    assert_invariants(outline)
    assert not outline.headings
    # A CommonMark reader sees only the structure the elements made.
    tokens = block_tokens(outline.source)
    assert tokens[0] == opening, (outline.source, tokens)
    for kind in ("heading_open", "hr", "fence", "code_block", "table_open", "html_block"):
        assert kind not in tokens, (outline.source, tokens)
    if opening == "paragraph_open":
        assert tokens.count("paragraph_open") == 1, (outline.source, tokens)
        assert "bullet_list_open" not in tokens
        assert "ordered_list_open" not in tokens
        assert "blockquote_open" not in tokens
    # ... and the embedded text has the words as they were (less `**` and `__`,
    # which plain_markdown takes for bold marks wherever they are outside inline code).
    kept = re.sub(
        r"(`+)(?:(?!\1).)+?\1|\*\*|__",
        lambda match: match.group(0) if match.group(1) else "",
        " ".join(text.split()),
    )
    assert kept in embedded(outline).replace("\n", " "), (outline.source, kept)


# --- math -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markup", "source"),
    [
        # alttext first, then the TeX annotation, then the presentation's tokens.
        (
            '<p>So <math alttext="x^2"><semantics><msup><mi>x</mi><mn>2</mn></msup>'
            '<annotation encoding="application/x-tex">x^{2}</annotation></semantics></math>.</p>',
            "So x^2.",
        ),
        (
            "<p>So <math><semantics><msup><mi>x</mi><mn>2</mn></msup>"
            '<annotation encoding="application/x-tex">x^{2}</annotation></semantics></math>.</p>',
            "So x^{2}.",
        ),
        (
            "<p>So <math><semantics><mrow><mi>a</mi><mo>≠</mo><mn>0</mn></mrow>"
            '<annotation-xml encoding="MathML-Content"><ci>a</ci></annotation-xml>'
            "</semantics></math>, then</p>",
            "So a ≠ 0, then",
        ),
        # A display formula is a line of its own.
        (
            '<p>Energy <math display="block"><mi>E</mi><mo>=</mo><mi>m</mi>'
            "<msup><mi>c</mi><mn>2</mn></msup></math> holds.</p>",
            "Energy\n\nE = m c 2\n\nholds.",
        ),
        # Wikipedia: the MathML is in a hidden span, the visible copy an aria-hidden image.
        (
            '<p>Let <span class="mwe-math-element"><span class="mwe-math-mathml-inline '
            'mwe-math-mathml-a11y" style="display: none;"><math alttext="{\\displaystyle x^{2}}">'
            "<semantics><msup><mi>x</mi><mn>2</mn></msup></semantics></math></span>"
            '<img src="x.svg" class="mwe-math-fallback-image-inline" aria-hidden="true" '
            'alt="{\\displaystyle x^{2}}"></span> be.</p>',
            "Let x^{2} be.",
        ),
        # MathJax v2 with assistive MathML: output, then the source script.
        (
            '<p>If <span class="MathJax_Preview" style="display: none;"></span>'
            '<span class="MathJax" role="presentation"><nobr aria-hidden="true"><span>y</span>'
            '</nobr><span class="MJX_Assistive_MathML" role="presentation"><math><mi>y</mi>'
            '</math></span></span><script type="math/tex" id="MathJax-Element-1">y</script>'
            " then</p>",
            "If y then",
        ),
        # MathJax v2 SVG output without assistive MathML: the script is all there is.
        (
            '<p>If <span class="MathJax_SVG"><svg><use href="#g"></use></svg></span>'
            '<script type="math/tex">q^2</script> then</p>',
            "If q^2 then",
        ),
        # Not typeset: the preview shows the formula, the script would repeat it.
        (
            '<p>If <span class="MathJax_Preview">a/b</span>'
            '<script type="math/tex">\\frac{a}{b}</script> then</p>',
            "If a/b then",
        ),
        (
            '<p>If <script type="math/tex">\\frac{a}{b}</script> and'
            '<script type="math/tex; mode=display">E=mc^2</script> then</p>',
            "If \\frac{a}{b} and\n\nE=mc^2\n\nthen",
        ),
        # MathJax v3: the CHTML glyphs are aria-hidden, the assistive MathML is read.
        (
            '<p>When <mjx-container class="MathJax" jax="CHTML"><mjx-math aria-hidden="true">'
            '<mjx-mi><mjx-c class="mjx-c1D44E"></mjx-c></mjx-mi></mjx-math>'
            '<mjx-assistive-mml display="inline"><math><mi>a</mi><mo>≠</mo><mn>0</mn></math>'
            "</mjx-assistive-mml></mjx-container>, two</p>",
            "When a ≠ 0, two",
        ),
        ("<table><tr><td><math><mi>z</mi></math></td></tr></table>", "| z |\n| --- |"),
        ('<p>a <math style="display: none"><mi>hidden</mi></math> b</p>', "a b"),
        ('<script>var x = "not math";</script><p>ok</p>', "ok"),
    ],
)
def test_math_keeps_its_text_once(markup: str, source: str) -> None:
    outline = parse_html(markup)
    assert_invariants(outline)
    assert outline.source == source


def test_mathjax_page_keeps_every_formula_once() -> None:
    path = "/work/shared/realworld/html/mathjax.html"
    try:
        with open(path, encoding="utf-8") as handle:
            page = handle.read()
    except FileNotFoundError:
        pytest.skip("the real-world pages are not here")
    source = parse_html(page).source
    assert source.count("a ≠ 0") == 1
    assert "x = − b ± b 2 − 4 a c 2 a ." in source.splitlines()


# --- the prolog -------------------------------------------------------------------


@pytest.mark.parametrize(
    "prolog",
    [
        '<!DOCTYPE html [ <!ENTITY foo "bar"> ]>',
        '<!DOCTYPE html [ <!ENTITY foo "a>b]>"> <!-- ]> --> <?pi ]> ?> %pe; ]>',
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0//EN" "x.dtd" [\n'
        "  <!ATTLIST p x CDATA #IMPLIED>\n]>",
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html [<!ENTITY a "b">]>',
        '\ufeff<!-- c --><!doctype html>\n<!doctype html [<!ENTITY x "y">]>',
        '<!DOCTYPE html [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>',
        '<?xml version="1.0"?><!DOCTYPE html><?php echo 1 ?>',
        "\ufeff<!DOCTYPE html []>",
    ],
)
def test_prolog_leaves_no_text(prolog: str) -> None:
    outline = parse_html(prolog + "<html><head><title>T</title></head><body><p>Hi &foo;</p>")
    assert_invariants(outline)
    # Entities are never resolved: `&foo;` is text.
    assert outline.source == "Hi &foo;"
    assert outline.title == "T"


def test_cdata_and_processing_instructions_in_html_leave_no_text() -> None:
    outline = parse_html('<p>a<?php echo "x" ?>b<![CDATA[ c ]]>d</p><p>e<?xml version="1.0"?></p>')
    assert outline.source == "abd\n\ne"


def test_unterminated_subset_is_linear() -> None:
    outline = parse_html("<!DOCTYPE html [" + '<!ENTITY a "b"> <!-- c --> ' * 20_000 + "<p>x</p>")
    assert "x" in outline.source
