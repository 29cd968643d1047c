"""MDX: component tags, ESM lines and JSX comments stay out of embedded text; the
markdown and code inside components stay, and plain markdown is left as it was."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.model import BlockKind, RegionKind
from chunking.parse.markdown.blocks import LineRegion, ParsedMarkdown
from chunking.parse.markdown.mdx import parse_mdx
from chunking.parse.markdown.outline import parse_markdown
from tests.helpers import chunk_and_audit

WIDE = ChunkOptions(limits=Limits(Unit.CHARACTERS, 4000, 0))

REACT = """---
title: useThing
---

<Intro>

`useThing` is a React Hook that lets you [do things](/learn/things).

```js
const thing = useThing(initial)
```

</Intro>

<InlineToc />

---

## Usage {/*usage*/}

<Recipes titleText="Basic useThing examples" titleId="examples-basic">

#### Counter (number) {/*counter-number*/}

In this example, the `count` state variable holds a **number**.

<Sandpack>

```js
export default function Counter() {
  return <button onClick={handleClick}>You pressed me {count} times</button>;
}
```

</Sandpack>

<Solution />

</Recipes>

<DeepDive>

#### Is using an updater always preferred? {/*updater*/}

You might hear a recommendation to always write code like `setAge(a => a + 1)`.

</DeepDive>

<Note>
Calling the `set` function does not change the current state in the running code.
</Note>

{/* a comment for translators */}

The end.
"""

DOCUSAURUS = """import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
import {
  Highlight,
} from '@site/src/components';

export const meta = {
  draft: false,
};

# Install

<Tabs
  groupId="package-manager"
  values={[
    {label: 'npm', value: 'npm'},
    {label: 'Yarn', value: 'yarn'},
  ]}>
<TabItem value="npm" label="Using npm">

```bash
npm install --save my-package
```

</TabItem>
<TabItem value="yarn">

Run it with Yarn:

```js
export const config = {};
import x from 'y';
```

</TabItem>
</Tabs>

<details>
<summary>More</summary>

Plain HTML stays as it is.

</details>
"""


def _texts(text: str, file_name: str, options: ChunkOptions = WIDE) -> str:
    document, audit = chunk_and_audit(text, options, file_name=file_name)
    assert not audit.violations, audit.examples
    return "\n".join(chunk.text for chunk in document.chunks)


def _tag_lines(text: str) -> list[str]:
    """Lines outside fences that are only component tags, ESM or JSX comments."""
    found: list[str] = []
    in_code = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code and re.fullmatch(
            r"\s*(?:</?[A-Z][^\n]*>|\{/\*.*\*/\}|import .*|export .*)\s*", line
        ):
            found.append(line)
    return found


def test_react_components_leave_the_embedded_text_and_their_content_stays() -> None:
    text = _texts(REACT, "useThing.md")
    assert _tag_lines(text) == []
    for gone in ("<Intro>", "</Sandpack>", "<InlineToc", "titleId", "{/*", "translators"):
        assert gone not in text
    assert "`useThing` is a React Hook that lets you do things." in text
    assert "const thing = useThing(initial)" in text
    # Code inside a component is code: its JSX and `export` stay verbatim.
    assert "  return <button onClick={handleClick}>You pressed me {count} times</button>;" in text
    assert "export default function Counter() {" in text
    # A title a reader sees on the page stays, as a line of its own.
    assert "\nBasic useThing examples\n" in text
    assert "#### Is using an updater always preferred?\n" in text
    assert "Calling the `set` function does not change the current state" in text
    assert "The end." in text


def test_heading_ids_stay_the_anchors() -> None:
    outline = parse_markdown(REACT)
    assert [h.anchor for h in outline.headings] == ["usage", "counter-number", "updater"]
    assert outline.headings[0].text == "Usage"


def test_markup_lines_are_markup_blocks_and_fences_inside_are_code() -> None:
    outline = parse_markdown(REACT)
    source = outline.source
    kinds = {source[b.start : b.end]: b.kind for b in outline.blocks}
    assert kinds["<Sandpack>"] is BlockKind.MARKUP
    assert kinds["</Sandpack>"] is BlockKind.MARKUP_END
    assert kinds["<InlineToc />"] is BlockKind.MARKUP_END
    # Before a heading, plain markup goes with what precedes; a titled tag with what follows.
    assert kinds["<DeepDive>"] is BlockKind.MARKUP_END
    assert kinds['<Recipes titleText="Basic useThing examples" titleId="examples-basic">'] is (
        BlockKind.MARKUP
    )
    code = [source[r.start : r.end] for r in outline.regions if r.kind is RegionKind.CODE]
    assert any("onClick={handleClick}" in region for region in code)


def test_a_component_on_the_line_before_text_or_a_fence_does_not_swallow_it() -> None:
    # CommonMark reads `<Note>` and the lines up to a blank line as one HTML block.
    page = (
        "<Note>\nRead [the guide](/guide) first.\n</Note>\n\n"
        '<Sandpack>\n```js\nconst a = <Greeting name="Taylor" />;\n```\n</Sandpack>\n'
    )
    outline = parse_markdown(page)
    assert any(r.kind is RegionKind.CODE for r in outline.regions)
    text = _texts(page, "note.md")
    assert "Read the guide first." in text
    assert 'const a = <Greeting name="Taylor" />;' in text
    assert "<Note>" not in text
    assert "Sandpack" not in text


def test_docusaurus_esm_and_multi_line_tags_leave_the_text_and_code_stays() -> None:
    text = _texts(DOCUSAURUS, "install.mdx")
    assert "@theme/Tabs" not in text
    assert "Highlight" not in text
    assert "draft" not in text
    assert "groupId" not in text
    assert "value: 'yarn'" not in text
    assert "Using npm" in text  # a tab's label is what a reader clicks
    assert "npm install --save my-package" in text
    assert "Run it with Yarn:" in text
    assert "export const config = {};\nimport x from 'y';" in text  # code, not ESM
    # HTML is not JSX: the existing rules apply (tags out, text in).
    assert "More" in text
    assert "Plain HTML stays as it is." in text


PLAIN = [
    # A component named in prose, and prose lines that start with "import"/"export".
    "# Guide\n\nWrap the app in <Provider> and\nimport the module as you would.\n\n"
    "export the data to a file.\n",
    # A lone component-looking line, never closed: not MDX-like.
    "# Generics\n\n<T>\n\nA type parameter.\n",
    # Component tags inside code only (a csproj).
    '# Build\n\n```xml\n<Project Sdk="Microsoft.NET.Sdk">\n</Project>\n```\n',
    # Indented code that shows tags.
    "# Show\n\nParagraph.\n\n    <Foo>\n    </Foo>\n",
    # Lower-case HTML blocks.
    "# Html\n\n<details>\n<summary>Sum</summary>\n\nBody\n\n</details>\n",
]


@pytest.mark.parametrize("page", PLAIN)
def test_markdown_that_is_not_mdx_is_read_as_before(page: str) -> None:
    outline = parse_markdown(page, file_name="page.md")
    assert outline.hidden == ()
    assert not any(b.kind in {BlockKind.MARKUP, BlockKind.MARKUP_END} for b in outline.blocks)


def test_prose_that_looks_like_mdx_keeps_its_words() -> None:
    text = _texts(PLAIN[0], "guide.md")
    assert "import the module as you would." in text
    assert "export the data to a file." in text


def test_an_mdx_file_name_is_enough() -> None:
    page = "# Video\n\n<VideoPlayer src={url} autoplay />\n\nWatch it.\n"
    assert parse_markdown(page, file_name="a.md").hidden == ()
    assert parse_markdown(page, file_name="a.mdx").hidden != ()
    text = _texts(page, "a.mdx")
    assert "VideoPlayer" not in text
    assert "Watch it." in text


def test_without_markup_stripping_the_embedded_text_keeps_the_tags() -> None:
    options = ChunkOptions(limits=Limits(Unit.CHARACTERS, 4000, 0), strip_markup=False)
    document = chunk_document(REACT, options=options, file_name="useThing.md")
    assert "<Sandpack>" in "".join(chunk.text for chunk in document.chunks)


def test_no_chunk_starts_with_a_closing_tag_or_ends_on_an_opening_one() -> None:
    for maximum in (64, 100, 160, 300):
        options = ChunkOptions(limits=Limits(Unit.TOKENS, maximum, 0))
        document, audit = chunk_and_audit(REACT, options, file_name="useThing.md")
        assert not audit.violations, audit.examples
        for chunk in document.chunks:
            assert not re.match(r"\s*</[A-Z]", chunk.content), (maximum, chunk.content)
            if not re.search(r"<(?:DeepDive)>\s*$", chunk.content):
                assert not re.search(r"<[A-Z][^/>]*>\s*$", chunk.content), (maximum, chunk.content)
            body = chunk.text.split("\n\n", 1)[-1] if chunk.headings else chunk.text
            assert body.strip(), (maximum, chunk.content)


_PROSE = st.sampled_from(
    ["Some words here.", "More **bold** text.", "A [link](/x) to follow.", "1. a list item"]
)
_CODE = st.sampled_from(["```js\nconst a = <A b={1} />;\n```", "```bash\nexport X=1\n```"])
_TAGS = st.sampled_from(["Note", "Pitfall", "Sandpack", "DeepDive", "Solution"])


@st.composite
def _mdx_pages(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        choice = draw(st.integers(0, 4))
        if choice == 0:
            parts.append(draw(_PROSE))
        elif choice == 1:
            parts.append(draw(_CODE))
        elif choice == 2:
            parts.append(f"## Heading {len(parts)} {{/*h{len(parts)}*/}}")
        else:
            tag = draw(_TAGS)
            inner = draw(st.lists(st.one_of(_PROSE, _CODE), min_size=0, max_size=3))
            gap = draw(st.sampled_from(["\n", "\n\n"]))
            parts.append(gap.join([f"<{tag}>", *inner, f"</{tag}>"]))
    return "\n\n".join(parts) + "\n"


@settings(max_examples=60, deadline=None)
@given(_mdx_pages(), st.sampled_from([64, 100, 300]))
def test_mdx_pages_embed_no_tags_and_lose_no_words(page: str, maximum: int) -> None:
    options = ChunkOptions(limits=Limits(Unit.TOKENS, maximum, 0))
    document, audit = chunk_and_audit(page, options, file_name="page.md")
    assert not audit.violations, audit.examples
    text = "\n".join(chunk.text for chunk in document.chunks)
    assert _tag_lines(text) == []
    assert "{/*" not in text
    for word in ("words", "bold", "link", "const", "export"):
        if word in page:
            assert word in text


def test_a_markup_line_the_parser_reads_as_code_is_given_back() -> None:
    page = "<Note>\n\ntext\n\n</Note>\n\n<Tip>\n\nmore\n\n</Tip>\n"
    seen: list[str] = []

    def parse(text: str) -> tuple[ParsedMarkdown, list[str]]:
        # A parser that reads the first five lines as one code block, whatever they hold.
        seen.append(text)
        return ParsedMarkdown([], [LineRegion(RegionKind.CODE, 0, 5, 1)], None), []

    _, _, markup = parse_mdx(page, None, parse)
    assert markup is not None
    assert seen[-1].startswith("<Note>\n\ntext\n\n</Note>\n")
    assert [page[b.start : b.end] for b in markup.blocks] == ["<Tip>", "</Tip>"]
