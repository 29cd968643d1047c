"""The long fuzz run: hypothesis with a large example budget on the parsers and the endpoint.

    .venv/bin/python -m tests.fuzz --minutes 10            # every target, round robin
    .venv/bin/python -m tests.fuzz --minutes 2 --target html

Each target is a property (tests/strategies.py generates its inputs) that the default test
run also checks with a small budget (tests/hardening/test_hardening_fuzz.py). A failure prints
hypothesis's shrunk example and exits with status 1; pin it as a named regression test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, SplitMode, chunk_document
from skills.skill.contract import InputRecord, parse_request
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings
from testing.leaks import leaks
from tests.helpers import chunk_and_audit
from tests.strategies import HTML, MARKDOWN, REQUEST_BODY, limits

if TYPE_CHECKING:
    from collections.abc import Callable

    from chunking import Limits

ROUND_EXAMPLES = 200
"""Examples per target per round of the long run; rounds repeat until time is up."""
RECORD_KEYS = {"recordId", "data", "errors", "warnings"}
CUT_KINDS = ("cut_inside_code_line", "cut_inside_table_row")
"""The audit's findings that depend on where it thinks lines start."""


def check_markdown(text: str, lim: Limits, mode: SplitMode, prefix: bool) -> None:
    """Every chunking invariant holds on a markdown document, and output is deterministic."""
    opts = ChunkOptions(limits=lim, mode=mode, title_prefix=prefix)
    document, audit = chunk_and_audit(text, opts, format="markdown", file_name="fuzz.md")
    violations = dict(audit.violations)
    if "\r" in text and "\r\n" not in text:
        # The audit finds lines by "\n" only (xfail test_regression_the_audit_knows_cr_
        # line_endings), so a CR-only document's LF twin (same length, same structure) is
        # audited too. Their cuts may differ: sentence ends are found differently after
        # "\r" (xfail tests test_regression_*_cr_like_lf) and tokens count "\r" differently.
        _, twin_audit = chunk_and_audit(
            text.replace("\r", "\n"), opts, format="markdown", file_name="fuzz.md"
        )
        assert not twin_audit.violations, twin_audit.examples
        for kind in CUT_KINDS:
            violations.pop(kind, None)
    assert not violations, audit.examples
    if lim.maximum_pages_to_take:
        assert len(document.chunks) <= lim.maximum_pages_to_take
    assert chunk_document(text, options=opts, format="markdown", file_name="fuzz.md") == document


def check_html(html: str, lim: Limits) -> None:
    """Every chunking invariant holds on an HTML page (offsets point into its rendering)."""
    opts = ChunkOptions(limits=lim)
    document, audit = chunk_and_audit(html, opts, format="html")
    assert not audit.violations, audit.examples
    assert chunk_document(html, options=opts, format="html") == document


def check_request(body: bytes) -> None:
    """Any body gets a JSON answer: 400 if unreadable, else one well-formed record per record.

    No record may fail with an "internal error": that is the skill catching its own bug.
    No message may carry Python's words (an exception's name or text, testing/leaks.py).
    """
    answer = asyncio.run(answer_chunk_request(body, Settings()))
    document: Any = json.loads(answer.body)
    parsed = parse_request(body)
    echoed = body.decode("utf-8", "replace")
    if not isinstance(parsed, list):
        assert answer.status == 400, answer.body[:300]
        assert document["error"]["message"]
        assert not leaks(document["error"]["message"], echoed), document
        return
    assert answer.status == 200, answer.body[:300]
    values = document["values"]
    assert [value["recordId"] for value in values] == [record.record_id for record in parsed]
    for value, record in zip(values, parsed, strict=True):
        check_record(value, record, echoed)


def check_record(value: dict[str, Any], record: InputRecord, echoed: str = "") -> None:
    """One answered record: the exact keys, errors xor data, chunks and text items agree."""
    assert set(value) == RECORD_KEYS
    for message in value["errors"] + value["warnings"]:
        assert set(message) == {"message"}
        assert "internal error" not in message["message"], (record, message)
        assert "Traceback" not in message["message"]
        assert not leaks(message["message"], echoed), (record, message)
    if value["errors"]:
        assert value["data"] == {}
        return
    chunks = value["data"]["chunks"]
    assert value["data"]["textItems"] == [chunk["text"] for chunk in chunks]
    assert [chunk["ordinal"] for chunk in chunks] == list(range(len(chunks)))


@dataclass(frozen=True, slots=True)
class Target:
    """A property and the strategies of its arguments."""

    name: str
    check: Callable[..., None]
    arguments: tuple[st.SearchStrategy[Any], ...]


TARGETS = (
    Target(
        "markdown",
        check_markdown,
        (MARKDOWN, limits(), st.sampled_from(SplitMode), st.booleans()),
    ),
    Target("html", check_html, (HTML, limits())),
    Target("endpoint", check_request, (REQUEST_BODY,)),
)

QUIET = (HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much)


def run_target(target: Target, examples: int, tried: list[int]) -> None:
    """Run `target` for `examples` examples (raises hypothesis's error on a failure)."""

    def counted(arguments: tuple[Any, ...]) -> None:
        tried[0] += 1
        target.check(*arguments)

    test = settings(max_examples=examples, deadline=None, suppress_health_check=QUIET)(
        given(st.tuples(*target.arguments))(counted)
    )
    test()


def main(argv: list[str] | None = None) -> int:
    """Fuzz until the time is up; 0 if nothing failed."""
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to run (10)")
    parser.add_argument(
        "--target",
        choices=[target.name for target in TARGETS],
        action="append",
        help="only these targets (repeatable); all by default",
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=ROUND_EXAMPLES,
        help=f"examples per target per round ({ROUND_EXAMPLES})",
    )
    options = parser.parse_args(argv)
    chosen = [t for t in TARGETS if not options.target or t.name in options.target]
    stop = time.monotonic() + options.minutes * 60
    tried = {target.name: [0] for target in chosen}
    rounds = 0
    while time.monotonic() < stop:
        for target in chosen:
            try:
                run_target(target, options.examples, tried[target.name])
            except Exception as error:
                # hypothesis attaches the shrunk falsifying example as exception notes.
                notes = "\n".join(getattr(error, "__notes__", []))
                print(
                    f"FAILED {target.name}: {type(error).__name__}: {error}\n{notes}",
                    file=sys.stderr,
                )
                return 1
            if time.monotonic() >= stop:
                break
        rounds += 1
        total = sum(count[0] for count in tried.values())
        print(f"round {rounds}: {total:,} inputs so far", file=sys.stderr, flush=True)
    summary = ", ".join(f"{name} {count[0]:,}" for name, count in tried.items())
    print(f"fuzzed for {options.minutes:g} min without a failure: {summary} inputs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
