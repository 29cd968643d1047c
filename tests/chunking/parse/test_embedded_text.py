"""What gets embedded (markup noise out of the text) and how sections are kept apart."""

from __future__ import annotations

import pytest

from chunking import Chunk, ChunkOptions, Limits, Unit, chunk_document
from chunking.parse.markdown.plain_text import code_regions, plain_markdown
from chunking.pipeline import parse
from tests.helpers import chunk_and_audit
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "markdown"
NOISY = """---
title: Egress
---

# Egress

[!INCLUDE [retirement](includes/retirement.md)]

> [!NOTE]
> Use a [private cluster][private] or [API Server VNet Integration](api-server.md#setup "x").

## <a id="lb"></a>Load balancer

:::image type="content" source="media/lb.png" alt-text="Diagram of the load balancer.":::

See **bold** text, `[kept](in code)` and <https://example.com>. ![an icon](icon.png)

<!-- an editor's comment -->

```bash
curl [x](y) <b>kept</b>
```

[private]: https://learn.microsoft.com/private
"""


def test_markup_noise_leaves_the_embedded_text_but_code_stays_verbatim() -> None:
    outline = parse(NOISY, "markdown")
    plain = plain_markdown(NOISY, outline.body_start, outline.content_end, code_regions(outline))
    assert "includes/retirement.md" not in plain
    assert "> NOTE:" in plain
    assert "Use a private cluster or API Server VNet Integration." in plain
    assert "api-server.md" not in plain
    assert '<a id="lb"></a>' not in plain
    assert "## Load balancer" in plain
    assert "Diagram of the load balancer." in plain
    assert "media/lb.png" not in plain
    assert "See bold text, `[kept](in code)` and <https://example.com>. an icon" in plain
    assert "editor's comment" not in plain
    assert "curl [x](y) <b>kept</b>" in plain


def test_stripped_chunks_keep_their_source_span_and_fit() -> None:
    options = ChunkOptions(limits=Limits(Unit.TOKENS, 64, 0), strip_markup=True)
    document, audit = chunk_and_audit(NOISY, options, file_name="noisy.md")
    assert not audit.violations, audit.examples
    assert any("api-server.md" in c.content for c in document.chunks)
    assert not any("api-server.md" in c.text for c in document.chunks)
    for chunk in document.chunks:
        assert chunk.size <= 64


@pytest.mark.parametrize("fill", [0.0, 0.25])
def test_sections_apart_end_chunks_at_headings(fill: float) -> None:
    text = (FIXTURES / "upgrade-options.md").read_text(encoding="utf-8")
    limits = Limits(Unit.TOKENS, 512, 64)
    packed = chunk_document(
        text, options=ChunkOptions(limits=limits, section_fill=None), format="markdown"
    )
    options = ChunkOptions(limits=limits, section_fill=fill)
    apart, audit = chunk_and_audit(text, options, file_name="upgrade-options.md")
    assert not audit.violations, audit.examples
    assert len(apart.chunks) > len(packed.chunks)
    starts = [h.start for h in parse(text, "markdown").headings]

    def headings_inside(chunks: tuple[Chunk, ...]) -> int:
        """Headings after a chunk's first content line (headings it begins with are glued)."""
        total = 0
        for chunk in chunks:
            body = chunk.start
            while body in starts:
                body = (
                    text.index("\n\n", body) + 2 if "\n\n" in text[body : chunk.end] else chunk.end
                )
            total += sum(body < s < chunk.end for s in starts)
        return total

    inside = headings_inside(apart.chunks)
    assert inside < headings_inside(packed.chunks)
    if fill == 0.0:
        assert inside == 0


@pytest.mark.parametrize(
    ("source", "plain"),
    [
        ("``a ` [b](c) d`` and [e](f)", "``a ` [b](c) d`` and e"),
        ("```x``` `` y `` `z", "```x``` `` y `` `z"),
        ("``[a](b)` **c** __d__", "``[a](b)` c d"),
        ("<!-- x --><b>y</b> \\# z", "y # z"),
    ],
)
def test_inline_code_runs_and_bold_marks(source: str, plain: str) -> None:
    # The pattern starts every kind with a literal (the first backtick of a run
    # apart from the rest): a run closes only on a run of the same length.
    assert plain_markdown(source, 0, len(source), ()) == plain
