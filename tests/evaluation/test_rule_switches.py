"""The switches that turn one chunking rule off so the evaluation can measure it
(`python -m evaluation --rules ...`): each changes only its rule, and at their defaults
nothing changes, chunk ids included."""

from __future__ import annotations

import dataclasses

import pytest

from chunking import chunk_document
from chunking.options import ChunkOptions, OptionError
from chunking.options.chunk_ids import cut_identity
from evaluation.__main__ import build_parser, grid_from
from evaluation.chunkers import chunk_options
from evaluation.settings import RULE_VARIANTS, Grid
from tests.helpers import options

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


def test_switches_at_their_defaults_leave_the_identity_as_it_was() -> None:
    default = ChunkOptions()
    assert "prefix_path" not in cut_identity(default)
    assert "prefix_path='leaf'" in cut_identity(ChunkOptions(prefix_path="leaf"))


@pytest.mark.parametrize("removed", ["no-lead", "no-file-title"])
def test_the_rules_the_audit_removed_are_no_longer_switches(removed: str) -> None:
    """The repeated table header / fence and the file name as title are gone from the
    chunker (they helped nowhere in the rule audit), so there is nothing to switch off."""
    assert removed not in RULE_VARIANTS
    assert not hasattr(ChunkOptions(), "repeat_lead")
    arguments = build_parser().parse_args(["--rules", f"default,{removed}"])
    with pytest.raises(OptionError, match="--rules must be among default, leaf-prefix"):
        grid_from(arguments)


def test_the_rules_axis_multiplies_only_our_rows_and_names_them() -> None:
    arguments = build_parser().parse_args(
        ["--max", "512", "--overlap", "51", "--rules", "default,leaf-prefix,title-prefix"]
    )
    grid = grid_from(arguments)
    assert isinstance(grid, Grid)
    settings, _ = grid.settings()
    labels = [s.label for s in settings]
    assert "ours 512/51 tokens prefix" in labels
    assert "ours 512/51 tokens prefix leaf-prefix" in labels
    assert "ours 512/51 tokens prefix title-prefix" in labels
    assert [label for label in labels if label.startswith("split-skill")] == [
        "split-skill 512/51 tokens"
    ]
    leaf = next(s for s in settings if s.rules == "leaf-prefix")
    assert chunk_options(leaf).prefix_path == "leaf"
    assert set(RULE_VARIANTS) == {"default", "leaf-prefix", "title-prefix"}
