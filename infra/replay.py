"""`python -m infra.replay`: replay an Azure AI Search indexer's calls against the skill.

Reads local files the way the blob indexer does, sends the skill requests the skillset
describes and checks the projected chunk documents against the index; the indexer
emulation itself is `skills.search.indexer`.

`python -m infra.replay samples/` starts the skill locally; `--endpoint URL` uses a
running one (e.g. `uvicorn function_app:api --port 7071`).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from chunking.cli.pipes import OneLineParser, command_name
from skills.commands.cli import HelpFormatter
from skills.search.checks import web_api_skills
from skills.search.definitions import INDEXED_EXTENSIONS, build_definitions
from skills.search.indexer import (
    ReplayReport,
    read_blob_documents,
    replay,
    replay_setup,
    with_file_data,
)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

    from starlette.applications import Starlette

    from skills.search.checks import WireJson

SERVER_START_SECONDS = 10.0


@contextlib.contextmanager
def serve_locally(app: Starlette) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on a free 127.0.0.1 port; yields its base URL."""
    import uvicorn  # noqa: PLC0415  (only the local mode needs a server)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    give_up = time.monotonic() + SERVER_START_SECONDS
    while not server.started:
        if time.monotonic() > give_up or not thread.is_alive():
            raise RuntimeError("the local skill server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(SERVER_START_SECONDS)


def load_definitions(directory: Path) -> tuple[WireJson, WireJson, WireJson, WireJson]:
    """Definitions saved by `python -m infra.deploy show --out DIR`."""
    data_source, index, skillset, indexer = (
        json.loads((directory / f"{name}.json").read_text(encoding="utf-8"))
        for name in ("data-source", "index", "skillset", "indexer")
    )
    return data_source, index, skillset, indexer


DEFAULT_DIMENSIONS = 1536
"""The index's vector size when neither --dimensions, EMBEDDING_DIMENSIONS nor the skill's
/api/health gives one (text-embedding-3-small's)."""
DEFAULT_MODEL = "text-embedding-3-small"
HEALTH_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Embeddings:
    """The vectors the index is built for, and where that came from."""

    dimensions: int
    model: str
    source: str
    """Where they were read (`--dimensions`, `EMBEDDING_DIMENSIONS`, the skill's health)."""


def embeddings_of(
    endpoint: str, dimensions: int | None, model: str | None, environ: dict[str, str]
) -> Embeddings:
    """The index's vector size: given, else from the environment, else what the skill at
    `endpoint` says it embeds with (GET /api/health), else the default (said so)."""
    if dimensions is not None:
        return Embeddings(dimensions, model or DEFAULT_MODEL, "--dimensions")
    if environ.get("EMBEDDING_DIMENSIONS", "").strip().isdigit():
        return Embeddings(
            int(environ["EMBEDDING_DIMENSIONS"]),
            model or environ.get("EMBEDDING_MODEL") or DEFAULT_MODEL,
            "EMBEDDING_DIMENSIONS",
        )
    base = endpoint.split("/api/", 1)[0].rstrip("/")
    try:
        health = httpx.get(f"{base}/api/health", timeout=HEALTH_SECONDS).json()
        embedding = health.get("embedding") or {}
    except (httpx.HTTPError, ValueError, AttributeError) as error:
        return Embeddings(
            DEFAULT_DIMENSIONS,
            model or DEFAULT_MODEL,
            f"the default: the skill's /api/health did not answer ({type(error).__name__}); "
            "pass --dimensions N",
        )
    found = embedding.get("dimensions")
    if isinstance(found, int):
        return Embeddings(
            found, model or str(embedding.get("model") or DEFAULT_MODEL), "the skill's /api/health"
        )
    return Embeddings(
        DEFAULT_DIMENSIONS,
        model or DEFAULT_MODEL,
        "the default: the skill embeds nothing (EMBEDDING_PROVIDER none)",
    )


def arguments_parser() -> argparse.ArgumentParser:
    """The command line's options."""

    parser = OneLineParser(
        prog=command_name("python -m infra.replay", "chunk-replay"),
        formatter_class=HelpFormatter,
        description="Replay the indexer's calls to the chunking skill on local files and "
        "validate the projected chunk documents against the index. Without --endpoint it "
        "starts the skill here, with the app settings in the environment.",
        epilog="examples:\n"
        "  python -m infra.replay samples/\n"
        "  python -m infra.replay samples/eval/docs --endpoint http://127.0.0.1:7071 "
        "--dimensions 1536",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[Path("samples")],
        help="files, and folders whose files are read (their subfolders with --recursive)",
    )
    parser.add_argument(
        "--recursive",
        action="store_true",
        help="read the files in subfolders too, as the blob indexer reads a whole container",
    )
    parser.add_argument(
        "--endpoint", help="a running skill, e.g. http://127.0.0.1:7071 (default: start one here)"
    )
    parser.add_argument(
        "--definitions",
        type=Path,
        help="JSON saved by `python -m infra.deploy show --out DIR` (default: built here)",
    )
    parser.add_argument(
        "--dimensions",
        type=int,
        default=None,
        help="the index's vector dimensions (default: $EMBEDDING_DIMENSIONS, else what the "
        f"skill's /api/health reports, else {DEFAULT_DIMENSIONS})",
    )
    parser.add_argument(
        "--model",
        default=None,
        help="the embedding model the index is built for (default: $EMBEDDING_MODEL, else "
        f"the skill's, else {DEFAULT_MODEL})",
    )
    parser.add_argument(
        "--require-vectors", action="store_true", help="fail when the skill returns no vectors"
    )
    parser.add_argument(
        "--write",
        type=Path,
        help="write the projected documents to this file, as JSON lines (default: not written)",
    )
    parser.add_argument(
        "--file-data",
        action="store_true",
        help="send the raw file as file_data (allowSkillsetToReadFileData) instead of text",
    )
    return parser


def main(argv: list[str] | None = None, environ: dict[str, str] | None = None) -> int:
    """Run the replay from the command line; 0 when the pipeline would work."""
    args = arguments_parser().parse_args(argv)
    environ = dict(os.environ) if environ is None else environ

    def say(line: str) -> None:
        print(f"replay: {line}", file=sys.stderr, flush=True)

    def run(endpoint: str) -> ReplayReport:
        embeddings = embeddings_of(
            endpoint, args.dimensions, args.model or environ.get("EMBEDDING_MODEL"), environ
        )
        say(f"the index's vectors: {embeddings.dimensions} dimensions (from {embeddings.source})")
        if args.definitions:
            data_source, index, skillset, indexer = load_definitions(args.definitions)
            for skill in web_api_skills(skillset):
                skill["uri"] = endpoint.rstrip("/") + urlsplit(skill["uri"]).path
        else:
            definitions = build_definitions(
                replay_setup(
                    endpoint,
                    embedding_dimensions=embeddings.dimensions,
                    embedding_model=embeddings.model,
                )
            )
            data_source, index, skillset, indexer = (
                definitions.data_source.as_dict(),
                definitions.index.as_dict(),
                definitions.skillset.as_dict(),
                definitions.indexer.as_dict(),
            )
        extensions = ((indexer.get("parameters") or {}).get("configuration") or {}).get(
            "indexedFileNameExtensions", ",".join(INDEXED_EXTENSIONS)
        )
        if args.file_data:
            skillset, indexer = with_file_data(skillset, indexer)
        documents = read_blob_documents(
            args.paths,
            tuple(extensions.split(",")),
            file_data=args.file_data,
            recursive=args.recursive,
        )
        skipped = [
            sub for path in args.paths if path.is_dir() for sub in sorted(path.iterdir())
            if sub.is_dir()
        ] if not args.recursive else []  # fmt: skip
        if skipped:
            say(
                f"not read: {len(skipped)} subfolder(s) ({', '.join(map(str, skipped[:3]))}); "
                "--recursive reads them"
            )
        return replay(
            documents,
            data_source,
            index,
            skillset,
            indexer,
            embedding_dimensions=embeddings.dimensions,
            embedding_model=embeddings.model,
            require_vectors=args.require_vectors,
            progress=say,
        )

    if args.endpoint:
        report = run(args.endpoint)
    else:
        # Only the local mode serves the app: start-up time with --endpoint.
        from skills.skill.app import build_app  # noqa: PLC0415

        say("starting the skill here (app settings from the environment)")
        with serve_locally(build_app()) as endpoint:
            report = run(endpoint)
    if args.write:
        with args.write.open("w", encoding="utf-8") as out:
            for document in report.documents:
                out.write(json.dumps(document, ensure_ascii=False) + "\n")
    print_report(report)
    return 0 if report.ok else 1


def print_report(report: ReplayReport) -> None:
    """A short human summary on stdout."""
    print(
        f"{report.requests} skill request(s), {report.retries} retried; "
        f"{len(report.documents)} chunk document(s) projected; "
        f"{len(report.failed)} document(s) failed; {len(report.problems)} problem(s)"
    )
    for name, reasons in report.failed.items():
        print(f"FAILED {name}: {'; '.join(reasons)}")
    for problem in report.problems:
        print(f"PROBLEM {problem}")
    for warning in report.warnings:
        print(f"warning: {warning}")
    print("OK: the indexer pipeline would work" if report.ok else "NOT OK")


if __name__ == "__main__":
    sys.exit(main())
