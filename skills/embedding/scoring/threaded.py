"""The app's scorers for a command line: an event loop on a background thread.

`python -m chunking --strategy binary` chunks on the main thread, as it always has; the
scorers the app settings configure (the embedding provider, a cross-encoder folder or a
rerank endpoint) are async clients, so they run on a loop of their own in a daemon
thread, and each document gets a `Scoring` (`blocking_scoring`) that waits for them.
"""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

from skills.embedding.clients import build_embedder
from skills.embedding.scoring import ScoringService, blocking_scoring, build_pair_client

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from chunking.plan.scoring import Scoring
    from skills.embedding.scoring import ScorerSettings

DOCUMENT_SECONDS = 3600.0
"""How long one document's scoring may take on a command line (no skill deadline there)."""
CLOSE_SECONDS = 10.0
"""How long closing the clients may take when the command ends."""


@contextmanager
def threaded_scoring(
    settings: ScorerSettings, seconds: float = DOCUMENT_SECONDS
) -> Iterator[Callable[[], Scoring]]:
    """Yields a function giving each document a `Scoring` backed by the app's scorers,
    each call within `seconds`; the clients are closed and the loop stopped at the end."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="scoring", daemon=True)
    thread.start()
    service = ScoringService(build_embedder(settings.embedding), build_pair_client(settings))
    try:
        yield lambda: blocking_scoring(service, loop, time.monotonic() + seconds)
    finally:

        async def close() -> None:
            await service.aclose()
            if service.embedder is not None:
                await service.embedder.aclose()

        asyncio.run_coroutine_threadsafe(close(), loop).result(CLOSE_SECONDS)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_SECONDS)
        loop.close()
