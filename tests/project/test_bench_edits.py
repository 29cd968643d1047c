"""bench.edits: what an edit costs a re-index, on pairs written here."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from bench.edits import OURS, SETTINGS, EditPair, changed_positions, main, measure, new_texts

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

SECTION = "Some words about {name} that make a paragraph of its own, long enough to matter.\n"


def _document(names: list[str], extra: str = "") -> str:
    parts = ["# Guide\n\n"]
    for name in names:
        parts.append(f"## {name}\n\n{SECTION.format(name=name) * 30}\n")
    return "".join(parts) + extra


def test_new_texts_counts_chunks_of_the_new_version_the_old_did_not_have() -> None:
    assert new_texts(["a", "b"], ["a", "c", "c", "b"]) == 2
    assert new_texts([], ["a"]) == 1


def test_changed_positions_cover_inserted_lines_and_mark_deletions() -> None:
    before = "one\ntwo\nthree\n"
    after = "one\nTWO\nthree\nfour\n"
    assert changed_positions(before, after) == [(4, 8), (14, 19)]
    # A deleted line leaves an empty range where it was.
    assert changed_positions(before, "one\nthree\n") == [(4, 4)]


def test_an_unchanged_document_costs_nothing_and_an_edit_at_least_the_floor() -> None:
    before = _document(["Alpha", "Beta", "Gamma", "Delta"])
    after = before.replace("about Beta that", "about Beta, edited, that", 1)
    pairs = [EditPair("same", "commit", before, before), EditPair("edit", "quarter", before, after)]
    tallies = measure(pairs, SETTINGS["512/51 tokens"])
    assert tallies[OURS]["commit"].new == 0
    assert tallies["floor"]["commit"].new == 0
    edited = tallies[OURS]["quarter"]
    assert 1 <= tallies["floor"]["quarter"].new <= edited.new < edited.total


def test_the_command_prints_a_table_per_setting_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _document(["Alpha", "Beta"])
    folder = tmp_path / "repo" / "0000"
    folder.mkdir(parents=True)
    (folder / "before.md").write_text(before, encoding="utf-8")
    (folder / "after.md").write_text(before + "\n## Added\n\nNew text.\n", encoding="utf-8")
    (tmp_path / "pairs.jsonl").write_text(
        json.dumps({"pair": "repo/0000", "kind": "commit"}) + "\n", encoding="utf-8"
    )
    out = tmp_path / "figures.json"
    assert main([str(tmp_path), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("| chunker | new chunks / chunks |") == len(SETTINGS)
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert set(figures) == set(SETTINGS)
    assert figures["512/51 tokens"][OURS]["all"]["new"] >= 1


def test_a_missing_folder_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "no pairs.jsonl" in capsys.readouterr().err
