"""The console commands `pip install` puts on PATH; each runs one `python -m` command.

Imports happen inside each function, so `chunk --help` loads only the chunker.
"""

from __future__ import annotations

from chunking.pipes import run_piped


def chunk() -> int:
    """`chunk FILE ...`: `python -m chunking`."""
    from chunking.__main__ import main  # noqa: PLC0415

    return run_piped(main)


def chunk_map() -> int:
    """`chunk-map FILE -o map.html`: `python -m chunking.report`."""
    from chunking.report.__main__ import main  # noqa: PLC0415

    return run_piped(main)


def skill() -> int:
    """`chunk-skill FILE ...` (and `chunk-skill push ...`): `python -m skills`."""
    from skills.__main__ import main  # noqa: PLC0415

    return run_piped(main)


def push() -> int:
    """`chunk-push PATHS --index NAME`: `python -m skills push`."""
    from skills.search.push import main  # noqa: PLC0415

    return main()


def evaluate() -> int:
    """`chunk-evaluate DOCS QUESTIONS`: `python -m evaluation`."""
    from evaluation.__main__ import main  # noqa: PLC0415

    return run_piped(main)


def replay() -> int:
    """`chunk-replay PATHS`: `python -m infra.replay`."""
    from infra.replay import main  # noqa: PLC0415

    return main()


def deploy() -> int:
    """`chunk-deploy apply|show|run|status`: `python -m infra.deploy`."""
    from infra.deploy import main  # noqa: PLC0415

    return main()
