"""The embedder's policy with a fake client: batching, order, checks, retries, the deadline."""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skills.embedding.embedder import (
    BatchEmbedder,
    ClientReply,
    EmbeddingRequestError,
    Failure,
    FailureKind,
    RetryPolicy,
    backoff_seconds,
    plan_batches,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

DIMENSIONS = 4
FAST = RetryPolicy(max_retries=3, initial_backoff=0.001, max_backoff=0.01)


class WordSizer:
    """One token per word: easy to reason about in tests."""

    def size(self, text: str) -> int:
        return len(text.split())


def vector_of(text: str) -> list[float]:
    return [float(len(text)), float(sum(map(ord, text)) % 997), 1.0, -1.0]


@dataclass
class FakeClient:
    """Answers from a script of exceptions/replies, then correctly; records every call."""

    script: list[Failure | str] = field(default_factory=list)
    delay: float = 0.0
    description: str = "fake"
    calls: list[list[str]] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0

    async def embed_batch(self, texts: Sequence[str], timeout: float) -> ClientReply:
        self.calls.append(list(texts))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            step = self.script.pop(0) if self.script else "ok"
            if isinstance(step, Failure):
                raise EmbeddingRequestError(step)
            if step == "crash":
                raise RuntimeError("bug in a client")
            vectors = [vector_of(text) for text in texts]
            if step == "short":
                vectors = vectors[:-1]
            elif step == "wide":
                vectors = [[*v, 0.0] for v in vectors]
            elif step == "nan":
                vectors[0] = [math.nan] * DIMENSIONS
            return ClientReply(vectors)
        finally:
            self.in_flight -= 1

    async def aclose(self) -> None:
        pass


def embedder(
    client: FakeClient,
    *,
    batch_size: int = 3,
    batch_tokens: int = 100,
    max_input_tokens: int = 50,
    concurrency: int = 2,
    retry: RetryPolicy = FAST,
) -> BatchEmbedder:
    return BatchEmbedder(
        client,
        WordSizer(),
        dimensions=DIMENSIONS,
        max_input_tokens=max_input_tokens,
        batch_size=batch_size,
        batch_tokens=batch_tokens,
        concurrency=concurrency,
        retry=retry,
    )


THROTTLED = Failure(FailureKind.THROTTLED, "HTTP 429", retry_after=0.002)
DOWN = Failure(FailureKind.UNAVAILABLE, "HTTP 500")
REFUSED = Failure(FailureKind.AUTH, "HTTP 401")


@given(
    st.lists(st.integers(min_value=1, max_value=60), max_size=80),
    st.integers(min_value=1, max_value=10),
    st.integers(min_value=60, max_value=200),
)
def test_batches_keep_order_and_limits_and_are_greedy(
    sizes: list[int], max_inputs: int, max_tokens: int
) -> None:
    pairs = list(enumerate(sizes))
    batches = plan_batches(pairs, max_inputs, max_tokens)
    assert [index for batch in batches for index in batch] == list(range(len(sizes)))
    for batch in batches:
        assert 1 <= len(batch) <= max_inputs
        assert sum(sizes[i] for i in batch) <= max_tokens
    for batch, following in itertools.pairwise(batches):
        # Greedy: the next input did not fit in the batch before it.
        assert (
            len(batch) == max_inputs
            or sum(sizes[i] for i in batch) + sizes[following[0]] > max_tokens
        )


def test_count_limit_gives_ceil_n_over_batch_size_requests() -> None:
    client = FakeClient()
    texts = [f"text number {n}" for n in range(100)]
    outcome = asyncio.run(embedder(client, batch_size=16).embed(texts, time.monotonic() + 10))
    assert len(client.calls) == math.ceil(100 / 16) == outcome.stats.requests
    assert [len(call) for call in client.calls].count(16) == 6
    assert list(outcome.results) == [vector_of(text) for text in texts]
    assert outcome.stats.embedded == 100
    assert outcome.stats.tokens == 300


def test_token_budget_closes_requests_early() -> None:
    client = FakeClient()
    texts = ["w " * 40] * 5  # 40 tokens each; the budget takes two per request
    outcome = asyncio.run(
        embedder(client, batch_size=16, batch_tokens=90).embed(texts, time.monotonic() + 10)
    )
    assert [len(call) for call in client.calls] == [2, 2, 1]
    assert all(not isinstance(result, Failure) for result in outcome.results)


def test_too_long_and_empty_inputs_are_never_sent() -> None:
    client = FakeClient()
    texts = ["short one", "w " * 51, "  ", "another short"]
    outcome = asyncio.run(embedder(client).embed(texts, time.monotonic() + 10))
    assert client.calls == [["short one", "another short"]]
    first, too_long, empty, last = outcome.results
    assert first == vector_of("short one")
    assert last == vector_of("another short")
    assert isinstance(too_long, Failure)
    assert too_long.kind is FailureKind.TOO_LONG
    assert "51 tokens" in too_long.message
    assert isinstance(empty, Failure)
    assert outcome.stats.failed == 2


@pytest.mark.parametrize(
    ("step", "words"),
    [
        ("short", "returned 2 vectors for 3 inputs"),
        ("wide", "vectors of 5 dimensions, expected 4"),
        ("nan", "NaN"),
    ],
)
def test_a_wrong_answer_fails_its_batch_and_is_not_retried(step: str, words: str) -> None:
    client = FakeClient(script=[step])
    outcome = asyncio.run(
        embedder(client, concurrency=1).embed(list("abcdef"), time.monotonic() + 10)
    )
    assert len(client.calls) == 2  # no retry of the bad batch
    bad, good = outcome.results[:3], outcome.results[3:]
    for result in bad:
        assert isinstance(result, Failure)
        assert result.kind is FailureKind.BAD_RESPONSE
        assert words in result.message
    assert list(good) == [vector_of(text) for text in "def"]


def test_throttling_is_retried_after_the_hint() -> None:
    client = FakeClient(script=[THROTTLED, THROTTLED, DOWN])
    outcome = asyncio.run(embedder(client, concurrency=1).embed(["a", "b"], time.monotonic() + 10))
    assert list(outcome.results) == [vector_of("a"), vector_of("b")]
    assert (outcome.stats.requests, outcome.stats.retries, outcome.stats.throttled) == (4, 3, 2)
    assert outcome.retry_after == THROTTLED.retry_after


def test_retries_run_out() -> None:
    client = FakeClient(script=[DOWN] * 10)
    outcome = asyncio.run(embedder(client).embed(["a"], time.monotonic() + 10))
    (result,) = outcome.results
    assert isinstance(result, Failure)
    assert result.kind is FailureKind.UNAVAILABLE
    assert "gave up after 4 attempts" in result.message
    assert len(client.calls) == FAST.max_retries + 1


def test_a_paced_429_storm_outlasts_max_retries_within_the_deadline() -> None:
    """A quota saying when to come back is waited out; only faults use up retries."""
    client = FakeClient(script=[THROTTLED] * (3 * FAST.max_retries))
    outcome = asyncio.run(embedder(client).embed(["a"], time.monotonic() + 10))
    assert list(outcome.results) == [vector_of("a")]
    assert len(client.calls) == 3 * FAST.max_retries + 1


def test_429_without_retry_after_counts_as_a_fault() -> None:
    unpaced = Failure(FailureKind.THROTTLED, "HTTP 429")
    client = FakeClient(script=[unpaced] * 10)
    outcome = asyncio.run(embedder(client).embed(["a"], time.monotonic() + 10))
    (result,) = outcome.results
    assert isinstance(result, Failure)
    assert len(client.calls) == FAST.max_retries + 1


def test_credentials_refused_are_not_retried() -> None:
    client = FakeClient(script=[REFUSED])
    outcome = asyncio.run(embedder(client).embed(["a"], time.monotonic() + 10))
    assert outcome.results == (REFUSED,)
    assert len(client.calls) == 1


def test_a_retry_after_beyond_the_deadline_is_not_waited_for() -> None:
    long_wait = Failure(FailureKind.THROTTLED, "HTTP 429", retry_after=30.0)
    client = FakeClient(script=[long_wait])
    started = time.monotonic()
    outcome = asyncio.run(embedder(client).embed(["a"], started + 1.0))
    (result,) = outcome.results
    assert isinstance(result, Failure)
    assert result.kind is FailureKind.THROTTLED
    assert "would pass the skill's deadline" in result.message


def test_slow_requests_end_at_the_deadline_with_one_result_per_input() -> None:
    client = FakeClient(delay=5.0)
    started = time.monotonic()
    outcome = asyncio.run(embedder(client, batch_size=1).embed(list("abcde"), started + 0.5))
    assert len(outcome.results) == 5
    assert all(isinstance(result, Failure) for result in outcome.results)
    kinds = {result.kind for result in outcome.results if isinstance(result, Failure)}
    assert kinds <= {FailureKind.TIMEOUT, FailureKind.DEADLINE}


def test_concurrency_is_limited() -> None:
    client = FakeClient(delay=0.01)
    asyncio.run(
        embedder(client, batch_size=1, concurrency=3).embed(
            list("abcdefghij"), time.monotonic() + 5
        )
    )
    assert client.most_in_flight == 3
    assert len(client.calls) == 10


def test_progress_reports_every_finished_batch() -> None:
    client = FakeClient()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))

    asyncio.run(
        embedder(client, concurrency=1).embed(list("abcdefg"), time.monotonic() + 5, progress)
    )
    assert seen == [(3, 7), (6, 7), (7, 7)]


def test_backoff_doubles_up_to_its_cap() -> None:
    policy = RetryPolicy(max_retries=9, initial_backoff=0.5, max_backoff=8.0)
    assert [backoff_seconds(policy, n, 0.0) for n in range(6)] == [0.5, 1, 2, 4, 8, 8]
    assert backoff_seconds(policy, 0, 0.999) > 0.5 * 0.75


def test_a_retry_after_past_the_deadline_holds_back_every_other_batch() -> None:
    long_wait = Failure(FailureKind.THROTTLED, "HTTP 429", retry_after=30.0)
    client = FakeClient(script=[long_wait])
    outcome = asyncio.run(
        embedder(client, batch_size=3, concurrency=1).embed(
            list("abcdefghi"), time.monotonic() + 2.0
        )
    )
    assert len(client.calls) == 1  # the other two batches are never sent
    assert all(isinstance(r, Failure) and r.kind is FailureKind.THROTTLED for r in outcome.results)
    last = outcome.results[-1]
    assert isinstance(last, Failure)
    assert last.message.startswith("not sent: the embedding service asked to wait")
    assert outcome.retry_after == 30.0


def test_a_crashing_client_still_gives_one_result_per_input() -> None:
    client = FakeClient(script=["crash"])
    outcome = asyncio.run(embedder(client, concurrency=1).embed(list("abcd"), time.monotonic() + 5))
    crashed, fine = outcome.results[:3], outcome.results[3:]
    assert all(isinstance(r, Failure) and "internal error" in r.message for r in crashed)
    assert not any(isinstance(r, Failure) and "RuntimeError" in r.message for r in crashed)
    assert list(fine) == [vector_of("d")]
