"""The scored strategies' calls across the worker pipe: a worker's `Scoring` sends each
call to the app and waits; the app's `Bridge` answers it with its `ScoringService`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chunking.plan.scoring import Scoring, ScoringError
from skills.embedding.scoring import blocking_scoring

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Sequence
    from multiprocessing.connection import Connection

    from chunking.plan.scoring import Vector
    from skills.embedding.scoring import ScoringService

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Bridge:
    """Answers a worker's scoring calls with the app's ScoringService, in the app's loop."""

    service: ScoringService
    loop: asyncio.AbstractEventLoop

    def answer(self, call: ScoringCall, until: float) -> ScoringAnswer:
        """The answer to one call, never later than `until`; failures are answers too."""
        scoring = blocking_scoring(self.service, self.loop, until, grace=0.0)
        try:
            result = scoring.embed(call.texts) if call.pairs is None else scoring.pairs(call.pairs)
        except ScoringError as error:
            return ScoringAnswer(error=str(error))
        except Exception:  # a bug in a scorer fails only its record
            logger.exception("a scoring call failed")
            return ScoringAnswer(error="internal error while scoring; the logs have the details")
        return ScoringAnswer(result=list(result))


@dataclass(frozen=True, slots=True)
class ScoringCall:
    """What a worker asks the app: embeddings of `texts`, or scores of `pairs`."""

    texts: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True, slots=True)
class ScoringAnswer:
    result: list[Any] | None = None
    error: str | None = None


def worker_scoring(connection: Connection, pair_source: str) -> Scoring:
    """A worker's `Scoring`: each call goes to the app over the pipe and waits for it."""

    def ask(call: ScoringCall) -> list[Any]:
        connection.send(call)
        answer: ScoringAnswer = connection.recv()
        if answer.error is not None or answer.result is None:
            raise ScoringError(answer.error or "the scorer gave no answer")
        return answer.result

    def embed(texts: Sequence[str], /) -> Sequence[Vector]:
        return ask(ScoringCall(texts=tuple(texts)))

    def pairs(pairs: Sequence[tuple[str, str]], /) -> Sequence[float]:
        return ask(ScoringCall(pairs=tuple(pairs)))

    return Scoring(embed=embed, pairs=pairs, pair_source=pair_source)
