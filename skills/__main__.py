"""`python -m skills FILE ...`: chunk files through the skill's own request path, print the answer.

Builds the skill request an indexer would send (one record per file, recordId = the
path), answers it exactly as `POST /api/chunk` does, and prints the response JSON.
Chunks are embedded by the provider the app settings choose (EMBEDDING_PROVIDER ...);
a progress bar on stderr shows the embedding of long runs.
With --summary it prints a few lines per file instead (chunks, sizes, heading paths, time,
warnings), answering one file per request so each gets its own time; --output writes the
full JSON to a file.
Exit status: 0 when every record succeeded, 1 when some record has errors, 2 when the
request itself was refused (4xx, or 503 when the embedding service gave nothing) or a
file could not be read.

`python -m skills push PATHS --index NAME` uploads chunk documents instead (skills.search.push).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from chunking.cli.files import read_limited
from chunking.cli.pipes import command_name, run_piped
from chunking.options import Unit
from chunking.parse.decode import DecodedFile, decode_file
from skills.commands.cli import Parser
from skills.embedding.clients import build_embedder
from skills.embedding.scoring import ScoringService
from skills.skill.file_data import FILE_TYPE, INPUT_FILE_DATA
from skills.skill.service import HTTP_OK, answer_chunk_request
from skills.skill.settings import SettingsError, settings_from_environment
from skills.skill.summary import AnsweredFile, summary_lines

if TYPE_CHECKING:
    from skills.embedding.embedder import Embedder
    from skills.skill.service import Answer
    from skills.skill.settings import Settings

EXIT_RECORD_ERRORS = 1
EXIT_REFUSED = 2
BAR_WIDTH = 30
"""Characters of the progress bar itself."""
REDRAW_SECONDS = 0.1
"""Redraw the bar at most this often (the last update is always drawn)."""


class ProgressBar:
    """`embedding [#########.....]  412/1000 chunks  12.3 s` on one rewritten line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.drawn_at = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.drawn_at < REDRAW_SECONDS:
            return
        filled = BAR_WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        self.stream.write(
            f"\rembedding [{bar}] {done:>{len(str(total))}}/{total} chunks "
            f"{now - self.started:6.1f} s"
        )
        self.stream.flush()
        self.drawn_at = now
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def build_request(paths: list[str], inputs: dict[str, object]) -> dict[str, object]:
    """A skill request with one record per file: `text` (or `file_data`), `fileName` and
    the extra inputs.

    A UTF-8 file goes as `text`, readable in `--request`; any other file goes as the
    indexer sends raw files, `file_data`, so the skill decodes it, or refuses it in its
    own words (compressed, binary), exactly as it would in an indexer's request.
    """
    values: list[dict[str, object]] = []
    seen: dict[str, int] = {}
    for path in paths:
        raw = read_limited(path)
        decoded = decode_file(raw, file_name=path)
        content: dict[str, object] = (
            {"text": decoded.text}
            if isinstance(decoded, DecodedFile)
            and decoded.encoding == "utf-8"
            and not decoded.warnings
            else {INPUT_FILE_DATA: {"$type": FILE_TYPE, "data": base64.b64encode(raw).decode()}}
        )
        seen[path] = seen.get(path, 0) + 1
        record_id = path if seen[path] == 1 else f"{path}#{seen[path]}"
        data: dict[str, object] = {**content, "fileName": Path(path).name, **inputs}
        values.append({"recordId": record_id, "data": data})
    return {"values": values}


def parse_input(assignment: str) -> tuple[str, object]:
    """`NAME=VALUE` -> (NAME, VALUE as JSON when it parses, else the string)."""
    name, equals, value = assignment.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {assignment!r}")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


NUMBER_LIST = re.compile(r"\[\n\s*(-?\d[-+.eE\d]*(?:,\n\s*-?\d[-+.eE\d]*)*)\n\s*\]")
"""An indented JSON array of numbers (a vector), one number a line."""


def dumps(document: object, indent: int | None, *, ensure_ascii: bool = False) -> str:
    """JSON, indented with each array of numbers on one line: a vector is one line, not
    384, so the skill's answer to a page reads on a screen or two."""
    text = json.dumps(document, indent=indent, ensure_ascii=ensure_ascii)
    if indent is None:
        return text
    return NUMBER_LIST.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)


def _print_json(document: object, indent: int | None) -> None:
    """Print as UTF-8 JSON; escape everything if the terminal cannot take some character."""
    try:
        print(dumps(document, indent))
    except UnicodeEncodeError:
        print(dumps(document, indent, ensure_ascii=True))


def arguments_parser() -> argparse.ArgumentParser:
    """The command line's options (`push` is handed to skills.search.push before them)."""
    parser = Parser(
        prog=command_name("python -m skills", "chunk-skill"),
        description="Chunk files through the custom skill's request path and print the "
        "response records as JSON. App settings (CHUNK_*, EMBEDDING_*, ...) come from the "
        "environment.\n\nsubcommands:\n"
        "  push PATHS --index NAME   chunk, embed and upload to an Azure AI Search index "
        "(python -m skills push --help)",
        epilog="examples:\n"
        "  python -m skills --summary samples/concepts-network.md samples/git-stash.html\n"
        "  python -m skills -i unit=characters -i maximumPageLength=2000 page.html "
        "--output answer.json",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="markdown, HTML or text files")
    parser.add_argument(
        "-i",
        "--input",
        action="append",
        default=[],
        type=parse_input,
        metavar="NAME=VALUE",
        help="an input for every record, e.g. -i maximumPageLength=300 -i unit=characters "
        "-i url=https://example.org/doc (VALUE is read as JSON when it parses; default: none)",
    )
    parser.add_argument(
        "--request", action="store_true", help="print the request instead of answering it"
    )
    parser.add_argument("--compact", action="store_true", help="print JSON on one line")
    parser.add_argument(
        "--summary",
        action="store_true",
        help="print a few lines per file (chunks, sizes, heading paths, time, warnings) "
        "instead of the JSON",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the response JSON to FILE (default: stdout, or nothing with --summary)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show the embedding progress bar on stderr (default: when stderr is a terminal)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["push"]:
        # Only `push` loads the Azure AI Search side (its SDK): start-up time for the rest.
        from skills.search.push import main as push_main  # noqa: PLC0415

        return push_main(arguments[1:])
    args = arguments_parser().parse_args(arguments)

    try:
        request = build_request(args.files, dict(args.input))
    except OSError as error:
        print(f"python -m skills: cannot read {error.filename}: {error.strerror}", file=sys.stderr)
        return EXIT_REFUSED
    body = json.dumps(request).encode("utf-8")
    indent = None if args.compact else 2
    if args.request:
        _print_json(request, indent)
        return 0

    show = sys.stderr.isatty() if args.progress is None else args.progress
    progress = ProgressBar(sys.stderr) if show else None
    settings = settings_from_environment()
    if args.summary:
        return _summarize(request, settings, progress, args.output, dict(args.input))
    answer = asyncio.run(_answer(body, settings, progress))
    if progress is not None:
        progress.finish()
    response = json.loads(answer.body)
    if not _write_json(response, indent, args.output):
        return EXIT_REFUSED
    if answer.status != HTTP_OK:
        return EXIT_REFUSED
    values = response.get("values", [])
    return EXIT_RECORD_ERRORS if any(value["errors"] for value in values) else 0


def _write_json(document: object, indent: int | None, output: str | None) -> bool:
    """The JSON on stdout, or in `output`; False (and one line) when it cannot be written."""
    if output in (None, "-"):
        _print_json(document, indent)
        return True
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(dumps(document, indent))
    except (OSError, UnicodeEncodeError) as error:
        print(f"python -m skills: cannot write {output}: {error}", file=sys.stderr)
        return False
    return True


def _summarize(
    request: dict[str, object],
    settings: Settings | SettingsError,
    progress: ProgressBar | None,
    output: str | None,
    inputs: dict[str, object],
) -> int:
    """Answer each file on its own, print the summary, and the JSON to `output` if given."""
    records = request["values"]
    assert isinstance(records, list)
    answered: list[AnsweredFile] = []
    values: list[object] = []
    refused = False
    bodies = [json.dumps({"values": [record]}).encode("utf-8") for record in records]
    timed = asyncio.run(_answer_each(bodies, settings, progress))
    for record, (answer, seconds) in zip(records, timed, strict=True):
        response = json.loads(answer.body)
        if answer.status != HTTP_OK:
            refused = True
            message = response.get("error", response) if isinstance(response, dict) else response
            refusal = {"message": f"the request was refused: {message}"}
            response = {"values": [{"recordId": record["recordId"], "data": {},
                                    "errors": [refusal], "warnings": []}]}  # fmt: skip
        values.extend(response["values"])
        answered.extend(AnsweredFile(value, seconds) for value in response["values"])
    if progress is not None:
        progress.finish()
    unit = _unit_of(settings, inputs)
    for line in summary_lines(answered, _unit_name(unit), _settings_line(settings, inputs)):
        print(line)
    if output not in (None, "-") and not _write_json({"values": values}, 2, output):
        return EXIT_REFUSED
    if refused:
        return EXIT_REFUSED
    return EXIT_RECORD_ERRORS if any(item.record.get("errors") for item in answered) else 0


def _unit_of(settings: Settings | SettingsError, inputs: dict[str, object]) -> Unit:
    """The unit the records were chunked in: the `unit` input, else the app setting's."""
    given = inputs.get("unit")
    if given == Unit.CHARACTERS.value:
        return Unit.CHARACTERS
    if given is not None or isinstance(settings, SettingsError):
        return Unit.TOKENS
    return settings.unit


def _unit_name(unit: Unit) -> str:
    return "characters" if unit is Unit.CHARACTERS else "tokens"


def _settings_line(settings: Settings | SettingsError, inputs: dict[str, object]) -> str:
    """The limits and embedding the answers were made with, on one line."""
    if isinstance(settings, SettingsError):
        return f"app settings: {settings}"
    unit = _unit_of(settings, inputs)
    default_length, default_overlap = settings.length_defaults(unit)
    length = inputs.get("maximumPageLength", default_length)
    overlap = inputs.get("pageOverlapLength", default_overlap)
    embedding = settings.embedding
    embedded = (
        "no embeddings (EMBEDDING_PROVIDER none)"
        if embedding.provider == "none"
        else f"embeddings: {embedding.provider} {embedding.model}, "
        f"{embedding.dimensions} dimensions"
    )
    why = ""
    if "maximumPageLength" not in inputs and "pageOverlapLength" not in inputs:
        why = f" (default: {settings.length_defaults_reason(unit)})"
    return (
        f"settings: {_unit_name(unit)}, maximumPageLength {length}, "
        f"pageOverlapLength {overlap}{why}, strategy {inputs.get('strategy', settings.strategy)}; "
        f"{embedded}"
    )


async def _answer(
    body: bytes, settings: Settings | SettingsError, progress: ProgressBar | None
) -> Answer:
    ((answer, _),) = await _answer_each([body], settings, progress)
    return answer


async def _answer_each(
    bodies: list[bytes], settings: Settings | SettingsError, progress: ProgressBar | None
) -> list[tuple[Answer, float]]:
    """Each request's answer and the seconds it took, with one embedder (one model load)."""
    embedder: Embedder | None = (
        None if isinstance(settings, SettingsError) else build_embedder(settings.embedding)
    )
    answers: list[tuple[Answer, float]] = []
    try:
        for body in bodies:
            started = time.monotonic()
            answer = await answer_chunk_request(
                body,
                settings,
                embedder=embedder,
                progress=progress,
                scoring=ScoringService(embedder=embedder),
            )
            answers.append((answer, time.monotonic() - started))
    finally:
        if embedder is not None:
            await embedder.aclose()
    return answers


def console() -> int:
    """`chunk-skill FILE ...` (and `chunk-skill push ...`): `python -m skills`, as a script."""
    return run_piped(main)


if __name__ == "__main__":
    sys.exit(run_piped(main))
