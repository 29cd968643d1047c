"""The issue's done-when figures over the whole shared corpus, as a test.

The corpus lives in ../shared/corpus (read-only, present on developer machines
and in CI); `python -m bench.corpus_audit` prints the same figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus_audit import DEFAULT_CORPUS, SETTINGS, audit_corpus, corpus_files, main
from chunking.options import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document
from chunking.report.audit import PATH_DEBRIS, Audit, flag_path_debris

needs_corpus = pytest.mark.skipif(not DEFAULT_CORPUS.is_dir(), reason="no ../shared/corpus")


@needs_corpus
@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("kind", ["md", "html"])
def test_corpus_has_no_invariant_violations(kind: str, setting: str) -> None:
    files = corpus_files(Path(DEFAULT_CORPUS) / kind)
    assert len(files) > 200
    audit, _ = audit_corpus(files, SETTINGS[setting])
    assert audit.chunks > len(files)
    assert not audit.violations, audit.examples
    # Sections apart (the default) leaves small sections in chunks of their own: at
    # 512 tokens the mean fill is about 0.51 (0.77 with SectionPacking.PACKED), by design.
    assert sum(audit.fill) / len(audit.fill) > 0.45, "chunks should not be mostly tiny"


@needs_corpus
@pytest.mark.parametrize("kind", ["md", "html"])
def test_word_windows_keep_every_invariant_on_the_corpus(kind: str) -> None:
    """Issue 16, item 1: the words strategy (200/40, in sections) at 512 tokens."""
    files = corpus_files(Path(DEFAULT_CORPUS) / kind)
    audit, _ = audit_corpus(files, SETTINGS["512 tokens / 64"], ChunkOptions(strategy="words"))
    assert audit.chunks > len(files)
    assert not audit.violations, audit.examples


@pytest.mark.parametrize("folder", ["missing", "empty"])
def test_a_missing_or_empty_folder_is_reported_not_a_crash(
    folder: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 13, defect 7): both raised ZeroDivisionError."""
    root = tmp_path / folder
    if folder == "empty":
        root.mkdir()
        (root / "notes.txt").write_text("not a document")
    assert main([str(root)]) == 2
    assert f"no markdown or HTML documents under {root}" in capsys.readouterr().err


def test_documents_without_chunks_give_figures_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 13, defect 7): statistics.mean of no fills raised."""
    (tmp_path / "empty.md").write_text("")
    assert main([str(tmp_path)]) == 0
    assert "no chunks (the documents are empty)" in capsys.readouterr().out


def test_a_heading_path_with_debris_is_counted() -> None:
    body = "Some words of text here. " * 10
    # Only debris that markdown keeps literally: `{#id}` is the markdown parser's to strip.
    names = ["Setup ¶", "Usage [edit]", "OID Fanout (ID: {O, I, D, F})"]
    text = "# Guide\n\n" + "".join(f"## {name}\n\n{body}\n\n" for name in names)
    options = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0))
    document = chunk_document(text, options=options, format="markdown")
    debris = {"Setup ¶", "Usage [edit]"}
    expected = sum(1 for c in document.chunks if debris & set(c.headings))
    audit = Audit()
    flag_path_debris(audit, "debris.md", document)
    assert expected >= len(debris)
    assert audit.violations["heading_path_debris"] == expected
    assert "Setup ¶" in audit.examples["heading_path_debris"]


@pytest.mark.parametrize(
    ("name", "debris"),
    [
        ("Bar ¶", True),
        ("Baz[edit]", True),
        ("Title #", True),
        ("Options {#opts}", True),
        ("Usage {: .note}", True),
        ("Hooks {/*hooks*/}", True),
        ("Bar Link to this heading", True),
        ("OID Fanout (ID: {O, I, D, F})", False),
        ("Deleting graph-{hash} files", False),
        ("C#", False),
        ("Editing", False),
    ],
)
def test_what_counts_as_path_debris(name: str, debris: bool) -> None:
    assert (PATH_DEBRIS.search(name) is not None) is debris


def test_the_audit_runs_a_strategy_given_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "Some words of text here, and some more words. " * 40
    (tmp_path / "doc.md").write_text(f"# Title\n\n{body}\n\n## Part\n\n{body}\n")
    assert main([str(tmp_path), "--strategy", "words", "--words-per-chunk", "50",
                 "--word-overlap", "5"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "== 512 tokens / 64, strategy words 50/5 section: 1 documents" in out
    assert "lost_text: 0" in out
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--word-overlap", "5"])


def test_the_audit_runs_the_binary_strategy_on_offline_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cats = " ".join(f"The cat number {n} purrs on the warm mat all day." for n in range(60))
    ships = " ".join(f"A ship number {n} sails across the cold grey sea." for n in range(60))
    (tmp_path / "doc.md").write_text(f"# Title\n\n{cats} {ships}\n\n## Part\n\n{ships}\n")
    assert main([str(tmp_path), "--strategy", "binary", "--binary-candidates", "4"]) == 0
    out = capsys.readouterr().out
    assert "== 512 tokens / 64, strategy binary embeddings 4: 1 documents" in out
    assert "oversize: 0" in out
    assert "lost_text: 0" in out


def test_the_binary_bench_counts_scorer_calls_per_megabyte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.strategy_binary import main as bench

    body = " ".join(f"Sentence {n} of the bench says a few words more." for n in range(400))
    (tmp_path / "doc.md").write_text(f"# Title\n\n{body}\n")
    assert bench([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "structure" in out
    assert "scorer calls/MB" in out.splitlines()[-1]
