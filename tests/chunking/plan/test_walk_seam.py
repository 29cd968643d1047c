"""The planning seam (issue 38, item 2): strategies built on the structure walk see the
planning document and a measuring facade, nothing else of it."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import pytest

from chunking import ChunkOptions, Limits, OptionError, Unit, WordWindows
from chunking.contextualize.prefix import Contextualizer
from chunking.measure.sizing import make_sizer
from chunking.outline.sections import SectionTree
from chunking.pipeline import chunk_document, parse
from chunking.plan.core import PlanInputs
from chunking.plan.scoring import Scoring
from chunking.plan.walk import walk_seam
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chunking.plan.scoring import Vector

PLAN = ROOT / "chunking" / "plan"
SEAM = frozenset({"walk_seam", "WalkSeam", "Measures"})
"""What a strategy module may import from `chunking.plan.walk`."""

DOCUMENT = "\n\n".join(
    f"## Part {part}\n\n"
    + " ".join(
        f"Sentence {n} of part {part} links to [the guide](https://example.com/guide/{part}/{n})."
        for n in range(40)
    )
    for part in range(4)
)


def _imports_of(path: str) -> list[tuple[str, str]]:
    tree = ast.parse((PLAN / path).read_text(encoding="utf-8"))
    return [
        (node.module or "", alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]


def test_strategies_import_only_the_seam_of_the_walk() -> None:
    strategies = [p.name for p in PLAN.glob("*.py") if p.name != "walk.py"]
    beyond = {
        (name, imported)
        for name in strategies
        for module, imported in _imports_of(name)
        if module == "chunking.plan.walk" and imported not in SEAM
    }
    assert beyond == set()


def test_planning_imports_no_parser() -> None:
    # The plan stage plans on the outline it is given; what a parser does stays in parse.
    parsing = {
        (p.name, module)
        for p in PLAN.glob("*.py")
        for module, _ in _imports_of(p.name)
        if module.startswith("chunking.parse")
    }
    assert parsing == set()


def test_the_measures_measure_spans_as_the_walk_cuts_them() -> None:
    options = ChunkOptions(limits=Limits(Unit.TOKENS, 128, 16))
    outline = parse(DOCUMENT, "markdown")
    sizer = make_sizer(options.limits.unit, options.encoder_model_name)
    tree = SectionTree.build(outline)
    context = Contextualizer.for_options(sizer, "Guide", options)
    walk = walk_seam(PlanInputs(outline, tree, sizer, context, options, Scoring()))
    spans = walk.spans()
    measures = walk.measures
    assert len(spans) > 4
    for span in spans:
        assert measures.span(span.start, span.end) == span
        assert span.size <= measures.maximum
        assert measures.estimate(span.start, span.end) == measures.total(span.end) - measures.total(
            span.start
        )
        assert measures.room(span.start) < measures.maximum  # the title's prefix takes some
    positions = [span.start for span in spans]
    assert measures.totals(positions) == [measures.total(p) for p in positions]


def test_semantic_windows_are_the_embedded_text_without_markup() -> None:
    # The pipeline plans markdown on its plain outline when markup is left out, so the
    # windows the semantic strategy embeds hold no link target.
    seen: list[str] = []

    def embed(texts: Sequence[str], /) -> list[Vector]:
        seen.extend(texts)
        return [(float(len(text) % 7), 1.0) for text in texts]

    options = ChunkOptions(limits=Limits(Unit.TOKENS, 128, 16), strategy="semantic")
    document = chunk_document(
        DOCUMENT, options=options, format="markdown", scoring=Scoring(embed=embed)
    )
    assert document.chunks
    assert seen
    assert not [text for text in seen if "example.com" in text]
    assert any("the guide" in text for text in seen)


def test_the_options_hold_one_strategys_parameters_and_the_core_refuses_anothers() -> None:
    # Issue 38: no `ChunkOptions` field per strategy; `options.py` imports nothing of plan.
    options_imports = {
        node.module
        for node in ast.walk(
            ast.parse((ROOT / "chunking" / "options" / "__init__.py").read_text("utf-8"))
        )
        if isinstance(node, ast.ImportFrom)
    }
    assert not [module for module in options_imports if (module or "").startswith("chunking.plan")]
    windows = WordWindows(6, 1)
    chunked = chunk_document(
        DOCUMENT, options=ChunkOptions(strategy="words", parameters=windows), format="markdown"
    )
    counts = [len(chunk.content.split()) for chunk in chunked.chunks]
    assert max(counts) == 6
    assert counts.count(6) > len(counts) / 2
    with pytest.raises(OptionError, match="strategy 'semantic' takes parameters SemanticBreaks"):
        chunk_document("x", options=ChunkOptions(strategy="semantic", parameters=windows))
    with pytest.raises(OptionError, match="strategy 'structure' takes parameters None"):
        chunk_document("x", options=ChunkOptions(parameters=windows))
