"""The switches that turn one chunking rule off so the evaluation can measure it
(`python -m evaluation --rules ...`): each changes only its rule, and at their defaults
nothing changes, chunk ids included."""

from __future__ import annotations

import dataclasses

import pytest

from chunking import chunk_document
from chunking.chunk_ids import cut_identity
from chunking.options import ChunkOptions, OptionError
from evaluation.__main__ import build_parser, grid_from
from evaluation.chunkers import chunk_options
from evaluation.settings import RULE_VARIANTS, Grid
from tests.helpers import chunk_and_audit, options

SENTENCE = "The quick brown fox jumps over the lazy dog near the river bank. "
GUIDE = (
    "# Guide\n\n## Networking\n\n### DNS\n\n" + SENTENCE * 3 + "\n\n### Proxies\n\n" + SENTENCE * 2
)


def _with(opts: ChunkOptions, **changes: object) -> ChunkOptions:
    return dataclasses.replace(opts, **changes)  # type: ignore[arg-type]


def test_the_prefix_names_the_whole_path_the_innermost_heading_or_the_title_alone() -> None:
    base = options(300)
    texts = {
        path: [
            c.text.split("\n\n", 1)[0]
            for c in chunk_document(GUIDE, options=_with(base, prefix_path=path)).chunks
        ]
        for path in ("path", "leaf", "title")
    }
    assert texts["path"] == ["Guide › Networking › DNS", "Guide › Networking › Proxies"]
    assert texts["leaf"] == ["Guide › DNS", "Guide › Proxies"]
    assert texts["title"] == ["Guide", "Guide"]
    with pytest.raises(OptionError, match="prefix path"):
        ChunkOptions(prefix_path="middle")


def test_without_the_lead_a_table_continuation_does_not_repeat_the_header() -> None:
    header = "| Setting | Default | Meaning |\n| --- | --- | --- |\n"
    rows = "".join(f"| setting{n} | {n} | {SENTENCE.strip()} |\n" for n in range(40))
    text = f"# Settings\n\n## Table\n\n{header}{rows}"
    document, audit = chunk_and_audit(text, _with(options(600), repeat_lead=False))
    assert not audit.violations
    continuations = [c for c in document.chunks if c.content.startswith("| setting")]
    assert continuations
    assert all(header not in c.text for c in continuations)


def test_switches_at_their_defaults_leave_the_identity_as_it_was() -> None:
    default = ChunkOptions()
    assert "prefix_path" not in cut_identity(default)
    assert "repeat_lead" not in cut_identity(default)
    assert "prefix_path='leaf'" in cut_identity(ChunkOptions(prefix_path="leaf"))
    assert "repeat_lead=False" in cut_identity(ChunkOptions(repeat_lead=False))


def test_the_rules_axis_multiplies_only_our_rows_and_names_them() -> None:
    arguments = build_parser().parse_args(
        ["--max", "512", "--overlap", "51", "--rules", "default,leaf-prefix,no-file-title"]
    )
    grid = grid_from(arguments)
    assert isinstance(grid, Grid)
    settings, _ = grid.settings()
    labels = [s.label for s in settings]
    assert "ours 512/51 tokens prefix" in labels
    assert "ours 512/51 tokens prefix leaf-prefix" in labels
    assert "ours 512/51 tokens prefix no-file-title" in labels
    assert [label for label in labels if label.startswith("split-skill")] == [
        "split-skill 512/51 tokens"
    ]
    leaf = next(s for s in settings if s.rules == "leaf-prefix")
    assert chunk_options(leaf).prefix_path == "leaf"
    assert set(RULE_VARIANTS) >= {"default", "leaf-prefix", "title-prefix", "no-lead"}
