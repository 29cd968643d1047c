"""The console commands `pip install` puts on PATH that run `python -m chunking`,
`python -m chunking.report` and `python -m skills`, each with broken pipes handled.

The other console scripts point at their command's `main` directly (pyproject.toml):
`chunk-push` (skills.search.push), `chunk-replay` (infra.replay), `chunk-deploy`
(infra.deploy) and `chunk-evaluate` (evaluation.__main__:console).
"""

from __future__ import annotations

from chunking.pipes import run_piped


def chunk() -> int:
    """`chunk FILE ...`: `python -m chunking`."""
    # Imported here so each command loads only its own code: start-up time.
    from skills.commands.chunk import main  # noqa: PLC0415

    return run_piped(main)


def chunk_map() -> int:
    """`chunk-map FILE -o map.html`: `python -m chunking.report`."""
    # Imported here so each command loads only its own code: start-up time.
    from skills.commands.chunk_map.command import main  # noqa: PLC0415

    return run_piped(main)


def skill() -> int:
    """`chunk-skill FILE ...` (and `chunk-skill push ...`): `python -m skills`."""
    # Imported here so each command loads only its own code: start-up time.
    from skills.__main__ import main  # noqa: PLC0415

    return run_piped(main)
