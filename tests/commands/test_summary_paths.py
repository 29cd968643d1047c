"""`python -m skills --summary` (./run.sh): each chunk line tells its chunk apart, long
paths keep their end, and the markers are the ones getting-started explains (issue 39,
item 8)."""

from __future__ import annotations

from skills.skill.summary import HEADING_WIDTH, AnsweredFile, summary_lines

LONG = "Networking concepts for applications in Azure Kubernetes Service (AKS)"


def _lines(*chunks: dict[str, object]) -> list[str]:
    numbered = [
        {"ordinal": n, "size": 100, "title": "T", **chunk} for n, chunk in enumerate(chunks)
    ]
    record = {"recordId": "doc.md", "data": {"chunks": numbered}, "errors": [], "warnings": []}
    lines = summary_lines([AnsweredFile(record, 1.0)], "tokens", "settings")
    return [line.split(maxsplit=2)[2] for line in lines[3:]]


def test_two_chunks_under_one_long_heading_differ_and_keep_the_end() -> None:
    lines = _lines(
        {"headings": [LONG], "content": f"# {LONG}\n\nIntro."},
        {"headings": [LONG], "content": "## Azure virtual networks\n\nA.\n\n## Egress\n\nB."},
        {"headings": [LONG, "DNS resolution"], "content": "## DNS resolution\n\nC."},
    )
    assert len(set(lines)) == 3
    assert all(len(line) <= HEADING_WIDTH for line in lines)
    assert lines[0].endswith("Kubernetes Service (AKS)")
    assert lines[1] == "… › Azure virtual networks (+1 more section)"
    assert lines[2] == "… › DNS resolution"


def test_a_continuation_and_a_chunk_before_any_heading_say_so() -> None:
    lines = _lines(
        {"headings": [], "content": "Before the headings."},
        {"headings": ["COMMANDS"], "content": "## COMMANDS\n\npush"},
        {"headings": ["COMMANDS"], "content": "pop\n\n```\n# not a heading\n```"},
    )
    assert lines == ["(before the first heading; title T)", "COMMANDS", "COMMANDS (continued)"]
