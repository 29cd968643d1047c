"""Memory in flight is bounded across requests (MEMORY_BUDGET_BYTES): a request that does
not fit beside those in flight waits its turn, or gets a 503 when none comes within its
wait; a record that could never fit is refused on its own, naming what to change.

Reproduction (issue 26, the soak): each request was capped alone, but several big ones at
once held 2.1-2.2 GB of the default instance's 2,048 MB. The HTTP tests order events with
an embedder that holds a request in flight until the test lets go, and assert admissions
and bytes reserved (from /api/health), never a latency.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.skill.answer_caps import vector_bytes
from skills.skill.app import build_app
from skills.skill.contract import InputRecord
from skills.skill.memory_budget import MemoryBudget, Reservation, admit_records
from skills.skill.memory_cost import (
    ANSWER_HELD,
    ANSWER_HELD_IN_APP,
    BODY_HELD,
    answer_bound,
    record_cost,
    record_shape,
    upper_cost,
)
from skills.skill.records import failed_record
from skills.skill.service import answer_chunk_request
from skills.skill.settings import (
    DEFAULT_MAX_REQUEST_BYTES,
    DEFAULT_MEMORY_BUDGET_BYTES,
    Settings,
)
from tests.paths import ROOT
from tests.skill.test_worker_capacity import HOLD, HoldingEmbedder

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.conftest import LiveServers

GIVE_UP_SECONDS = 60.0
"""A bound on each wait of the test for a state (a hang fails, it is not a latency)."""
BIG_TEXT = "# Big\n\n" + "Plain words in a paragraph of text. " * 560
"""~20,000 characters: its request reserves ~1.7 MB until its chunks are counted, then
~3.7 MB while it is embedded (its answer measured with the vectors to come, held
ANSWER_HELD_IN_APP times, beside its body)."""
BUDGET = 4_500_000
"""Room for one BIG_TEXT request being embedded and tiny ones, not for a second one."""


def _body(*records: tuple[str, str]) -> bytes:
    values = [{"recordId": rid, "data": {"text": text}} for rid, text in records]
    return json.dumps({"values": values}).encode()


def _memory(client: httpx.Client, url: str) -> dict[str, int]:
    memory: dict[str, int] = client.get(f"{url}/api/health").json()["memory"]
    return memory


def _wait_for(
    client: httpx.Client, url: str, check: Callable[[dict[str, int]], bool]
) -> dict[str, int]:
    give_up = time.monotonic() + GIVE_UP_SECONDS
    while not check(memory := _memory(client, url)):
        assert time.monotonic() < give_up, memory
        time.sleep(0.02)
    return memory


def _settings(deadline: float = 60.0) -> Settings:
    return Settings(memory_budget_bytes=BUDGET, chunk_workers=0, deadline_seconds=deadline)


def _serve(live_servers: LiveServers, deadline: float) -> tuple[str, HoldingEmbedder]:
    embedder = HoldingEmbedder()
    settings = _settings(deadline)
    return live_servers.start_app(build_app(settings, embedder=embedder)), embedder


@pytest.mark.integration
def test_a_second_big_request_waits_for_the_first_and_tiny_ones_go_ahead(
    live_servers: LiveServers,
) -> None:
    url, embedder = _serve(live_servers, deadline=60.0)
    held = _body(("held", BIG_TEXT.replace("Big", HOLD)))
    second = _body(("second-1", BIG_TEXT), ("second-2", "# Small\n\nShort text."))
    assert upper_cost(len(second), _settings()) < BUDGET  # it fits alone
    with httpx.Client(timeout=GIVE_UP_SECONDS) as client, ThreadPoolExecutor(2) as senders:
        first = senders.submit(client.post, f"{url}/api/chunk", content=held)
        # Its chunks counted, it holds its measured answer while it is embedded.
        held_now = _wait_for(
            client, url, lambda m: m["requests"] == 1 and m["in_flight"] > BUDGET // 2
        )
        assert BUDGET - held_now["in_flight"] < upper_cost(len(second), _settings())
        waiting = senders.submit(client.post, f"{url}/api/chunk", content=second)
        _wait_for(client, url, lambda m: m["waiting"] == 1)
        # A one-record request fits beside the first: it goes ahead of the waiting one.
        tiny = client.post(f"{url}/api/chunk", content=_body(("tiny", "# T\n\nHi.")))
        assert tiny.status_code == 200
        assert tiny.json()["values"][0]["data"]["chunks"]
        assert not waiting.done()
        assert _memory(client, url)["waiting"] == 1
        embedder.release.set()
        for future, ids in ((first, ["held"]), (waiting, ["second-1", "second-2"])):
            answer = future.result()
            assert answer.status_code == 200
            values = answer.json()["values"]
            assert [value["recordId"] for value in values] == ids
            assert all(value["errors"] == [] and value["data"]["chunks"] for value in values)
        after = _wait_for(client, url, lambda m: m["requests"] == 0)
    assert after["in_flight"] == 0
    assert (after["waited"], after["turned_away"]) == (1, 0)
    assert after["peak"] <= BUDGET


@pytest.mark.integration
def test_a_request_that_gets_no_memory_within_its_wait_is_a_503_naming_the_setting(
    live_servers: LiveServers,
) -> None:
    url, embedder = _serve(live_servers, deadline=4.0)
    held = _body(("held", BIG_TEXT.replace("Big", HOLD)))
    with httpx.Client(timeout=GIVE_UP_SECONDS) as client, ThreadPoolExecutor(1) as senders:
        first = senders.submit(client.post, f"{url}/api/chunk", content=held)
        _wait_for(client, url, lambda m: m["requests"] == 1 and m["in_flight"] > BUDGET // 2)
        turned = client.post(f"{url}/api/chunk", content=_body(("second", BIG_TEXT)))
        assert turned.status_code == 503
        assert turned.headers["retry-after"] == "30"
        message = turned.json()["error"]["message"]
        assert "MEMORY_BUDGET_BYTES" in message
        assert "Retry the batch after 30 s" in message
        embedder.release.set()
        assert first.result().status_code == 200
        after = _wait_for(client, url, lambda m: m["requests"] == 0)
    assert (after["waited"], after["turned_away"], after["in_flight"]) == (1, 1, 0)


@pytest.mark.integration
def test_a_record_that_alone_exceeds_the_budget_is_refused_and_the_rest_answered(
    live_servers: LiveServers,
) -> None:
    settings = Settings(memory_budget_bytes=1_000_000, chunk_workers=0)
    url = live_servers.start(settings)
    body = _body(("big", BIG_TEXT), ("small", "# Small\n\nShort text."))
    answer = httpx.post(f"{url}/api/chunk", content=body, timeout=GIVE_UP_SECONDS)
    assert answer.status_code == 200
    big, small = answer.json()["values"]
    (error,) = big["errors"]
    assert error["message"].startswith("not chunked: this record's text (20,167 characters)")
    assert "app setting MEMORY_BUDGET_BYTES" in error["message"]
    assert "split the document" in error["message"]
    assert big["data"] == {}
    assert small["errors"] == []
    assert small["data"]["chunks"]


@pytest.mark.integration
@pytest.mark.parametrize("answered", [True, False], ids=["fits", "refused"])
def test_a_record_whose_bound_passes_the_budget_is_answered_within_what_memory_leaves(
    live_servers: LiveServers, answered: bool
) -> None:
    """Its bound passes the whole budget, its real answer does not: it is chunked and
    answered; when its answer passes what its text leaves, it is refused naming both
    settings (and the rest of its batch is still answered)."""
    settings = Settings(chunk_workers=0)
    text = "# Long\n\n" + "Plain words in a paragraph of text. " * 12_000  # 432 K
    record = InputRecord("long", {"text": text})
    held = ANSWER_HELD_IN_APP
    besides = record_cost(record, settings) - answer_bound(len(text), record_shape({}, None)) * held
    room = 2**20 * (5 if answered else 3) // 2  # its answer: 2.1 MB
    budget = besides + held * room
    assert record_cost(record, settings) > budget
    url = live_servers.start(replace(settings, memory_budget_bytes=budget))
    body = _body(("long", text), ("small", "# Small\n\nShort text."))
    answer = httpx.post(f"{url}/api/chunk", content=body, timeout=GIVE_UP_SECONDS)
    assert answer.status_code == 200
    long, small = answer.json()["values"]
    if answered:
        assert long["errors"] == []
        assert "".join(chunk["content"] for chunk in long["data"]["chunks"][:1])
    else:
        (error,) = long["errors"]
        assert "MAX_RESPONSE_BYTES, or less when MEMORY_BUDGET_BYTES" in error["message"]
    # Past what the long record left, the small one is refused with what to change.
    assert "lower the skill's batchSize" in small["errors"][0]["message"]


# --- the budget and the cost model, in-process ------------------------------------------------


def test_waiters_are_admitted_as_bytes_are_released_earlier_waiters_first() -> None:
    async def scenario() -> list[str]:
        budget = MemoryBudget(100)
        far = time.monotonic() + GIVE_UP_SECONDS
        held: dict[str, Reservation] = {}

        async def ask(name: str, cost: int) -> None:
            reservation = await budget.reserve(cost, far)
            assert reservation is not None
            held[name] = reservation

        await ask("a", 70)
        big = asyncio.create_task(ask("big", 60))
        await asyncio.sleep(0)
        later = asyncio.create_task(ask("later", 50))
        await asyncio.sleep(0)
        state = budget.state()
        assert (state.in_flight, state.waiting) == (70, 2)
        held["a"].release()
        await big  # it waited first; "later" (50) no longer fits beside it
        await asyncio.sleep(0)
        assert (budget.state().in_flight, budget.state().waiting) == (60, 1)
        held["big"].release()
        await later
        state = budget.state()
        assert (state.in_flight, state.waiting, state.waited, state.peak) == (50, 0, 2, 70)
        return list(held)

    assert asyncio.run(scenario()) == ["a", "big", "later"]


def test_a_smaller_request_goes_ahead_of_one_that_does_not_fit_yet() -> None:
    async def scenario() -> tuple[int, int]:
        budget = MemoryBudget(100)
        far = time.monotonic() + GIVE_UP_SECONDS
        first = await budget.reserve(70, far)
        assert first is not None
        waiting = asyncio.create_task(budget.reserve(60, far))
        await asyncio.sleep(0)
        tiny = await budget.reserve(10, far)  # fits now: never waits behind a big one
        assert tiny is not None
        assert budget.state().waiting == 1
        first.shrink(65)  # 75 in flight: still no room for 60
        assert not waiting.done()
        first.release()
        assert (await waiting) is not None
        state = budget.state()
        return state.in_flight, state.requests

    assert asyncio.run(scenario()) == (70, 2)  # the tiny one and the one that waited


def test_a_reservation_is_given_back_once() -> None:
    async def scenario() -> int:
        budget = MemoryBudget(100)
        reservation = await budget.reserve(40, time.monotonic() + 1)
        assert reservation is not None
        reservation.release()
        reservation.release()
        reservation.shrink(10)
        return budget.state().in_flight

    assert asyncio.run(scenario()) == 0


def test_a_record_costs_its_body_share_its_decoded_text_and_its_answer_held_several_times() -> None:
    text = "x" * 1_000
    record = InputRecord("r", {"text": text})
    bound = answer_bound(1_000, record_shape(record.data, None))
    settings = Settings(chunk_workers=2)
    expected = 1_000 * BODY_HELD + sys.getsizeof(text) + bound * ANSWER_HELD
    assert record_cost(record, settings) == expected
    # An astral character makes Python store the whole text in 4 bytes a character.
    astral = record_cost(InputRecord("r", {"text": "x" * 999 + "😀"}), settings)
    assert astral - record_cost(record, settings) > 2_900

    # Overlap repeats text in the chunks, and short chunks are more chunks: both cost more.
    def sized(length: int, overlap: int) -> int:
        data = {"text": text, "unit": "characters", "maximumPageLength": length}
        return record_cost(InputRecord("r", {**data, "pageOverlapLength": overlap}), settings)

    assert sized(300, 149) > sized(300, 0) > sized(2_000, 0)
    # Counted as record inputs read them: a skillset's "300" is 300.
    as_text = {"text": text, "unit": "characters", "maximumPageLength": "300"}
    assert record_cost(InputRecord("r", {**as_text, "pageOverlapLength": "149"}), settings) == (
        sized(300, 149)
    )
    # With an embedding provider, the vectors its chunks are expected to get count too.
    embedding = replace(settings.embedding, provider="openai", dimensions=1_536)
    embeds = replace(settings, embedding=embedding)
    assert record_cost(record, embeds) - record_cost(record, settings) >= (
        vector_bytes(1_536) * ANSWER_HELD
    )
    # The answer's part is capped by MAX_RESPONSE_BYTES.
    capped = 1_000 * BODY_HELD + sys.getsizeof(text) + 1_000 * ANSWER_HELD
    assert record_cost(record, replace(settings, max_response_bytes=1_000)) == capped
    # Chunked in the app's own thread, the chunker's objects are the app's too.
    assert record_cost(record, replace(settings, chunk_workers=0)) > expected


SHAPES = {
    "512/64 tokens": {},
    "2000/500 characters": {"unit": "characters", "maximumPageLength": 2000,
                            "pageOverlapLength": 500},
    "300/149 characters": {"unit": "characters", "maximumPageLength": 300,
                           "pageOverlapLength": 149},
}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_answer_bound_holds_for_every_sample_document(shape: str) -> None:
    """The cost model's bound of an answer (before vectors) is above every real answer:
    the samples' documents, each alone, at three settings."""
    settings = Settings(chunk_workers=0)
    paths = sorted((ROOT / "samples" / "eval" / "docs").glob("*.md"))
    paths += sorted((ROOT / "samples").glob("*.*"))
    for path in paths:
        if path.suffix not in {".md", ".html"}:
            continue
        text = path.read_text(encoding="utf-8")
        data = {"text": text, **SHAPES[shape]}
        body = json.dumps({"values": [{"recordId": "r", "data": data}]}).encode()
        answer = asyncio.run(answer_chunk_request(body, settings))
        assert answer.status == 200
        value = json.loads(answer.body)["values"][0]
        assert not value["errors"], (path.name, value["errors"])
        bound = answer_bound(len(text), record_shape(data, settings))
        assert len(answer.body) <= bound, (path.name, len(answer.body), bound)


def test_records_past_the_reservation_are_refused_one_by_one_in_order() -> None:
    records = [InputRecord(str(n), {"text": "y" * 1_000}) for n in range(4)]
    one = record_cost(records[0], Settings())
    admitted = admit_records(records, 0, reserved=2 * one, budget=2 * one, settings=Settings())
    assert [record.record_id for record in admitted.records] == ["0", "1"]
    assert sorted(admitted.refused) == [2, 3]
    message = admitted.refused[2].errors[0]
    assert "lower the skill's batchSize" in message
    assert "app setting MEMORY_BUDGET_BYTES" in message
    assert admitted.cost <= 2 * one
    merged = admitted.merge([failed_record(record.record_id) for record in admitted.records])
    assert [output.record_id for output in merged] == ["0", "1", "2", "3"]


def test_a_record_alone_in_the_whole_budget_is_chunked_with_its_answer_capped_by_what_is_left() -> (
    None
):
    """The answer's bound is 2-3x most real answers (a 16-million-character document's
    bound passes MAX_RESPONSE_BYTES; its answer is 72 MB): a record whose bound alone
    passes the budget is chunked when it holds the whole budget, its answer kept within
    what its text leaves (`answer_limit`), and refused only when that is under 1 MiB."""
    settings = Settings()
    big = InputRecord("big", {"text": "# Big\n\n" + "Words of a long document. " * 80_000})
    small = InputRecord("small", {"text": "# Small\n\nShort."})
    budget = record_cost(big, settings) * 3 // 4
    alone = admit_records([big, small], 0, reserved=budget, budget=budget, settings=settings)
    assert [record.record_id for record in alone.records] == ["big"]
    assert alone.answer_limit is not None
    assert alone.answer_limit * ANSWER_HELD + alone.parsed == alone.cost <= budget
    assert budget - alone.cost < ANSWER_HELD  # all that is left, held ANSWER_HELD times
    assert "lower the skill's batchSize" in alone.refused[1].errors[0]
    # Not first in its request, or not holding the whole budget: refused as before.
    second = admit_records([small, big], 0, reserved=budget, budget=budget, settings=settings)
    assert sorted(second.refused) == [1]
    assert second.answer_limit is None
    # With under 1 MiB left for its answer beside its text: too big for this budget.
    tight = alone.parsed + ANSWER_HELD * 2**19
    refused = admit_records([big], 0, reserved=tight, budget=tight, settings=settings)
    assert refused.records == []
    assert "split the document" in refused.refused[0].errors[0]


def test_a_reservation_nobody_released_is_given_back_when_it_is_dropped() -> None:
    """A response whose background task never ran (its client went away) must not keep
    its bytes reserved for ever."""

    async def scenario() -> int:
        budget = MemoryBudget(100)
        reservation = await budget.reserve(40, time.monotonic() + 1)
        assert budget.state().in_flight == 40
        del reservation
        return budget.state().in_flight

    assert asyncio.run(scenario()) == 0


def test_a_waiter_whose_request_is_cancelled_leaves_nothing_reserved() -> None:
    async def scenario() -> tuple[int, int, int]:
        budget = MemoryBudget(100)
        first = await budget.reserve(70, time.monotonic() + GIVE_UP_SECONDS)
        assert first is not None
        waiter = asyncio.create_task(budget.reserve(60, time.monotonic() + GIVE_UP_SECONDS))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        first.release()
        state = budget.state()
        return state.in_flight, state.waiting, state.turned_away

    assert asyncio.run(scenario()) == (0, 0, 0)


def test_the_hardening_guide_states_what_the_cost_model_reserves() -> None:
    """The guide's figures are the code's (issue 35, item 4: it claimed that two requests
    at their caps run at once, while the model reserved the whole budget for one; then
    that the model reserved 330 MiB for any body of 2 MiB, a tenth of what was measured)."""
    guide = (ROOT / "docs" / "design" / "hardening.md").read_text(encoding="utf-8")
    mib = 2**20
    settings = Settings(chunk_workers=2)
    assert 640 * mib == DEFAULT_MEMORY_BUDGET_BYTES
    largest = upper_cost(DEFAULT_MAX_REQUEST_BYTES, settings)
    assert largest == 960 * mib > DEFAULT_MEMORY_BUDGET_BYTES
    assert "| the largest request the caps allow (64 MiB) | 960 MiB: admitted alone" in guide
    assert "holds 960 MiB for a request at both caps" in guide
    two = round(upper_cost(2 * mib, settings) / mib)
    assert two == 135
    assert 4 * two < 640
    assert "| a 2 MiB body | 135 MiB | 330 MiB |" in guide
    assert "a 2 MiB body without vectors holds 135 MiB" in guide
    embedding = replace(settings.embedding, provider="openai", dimensions=1_536)
    vectors = replace(settings, embedding=embedding)
    assert round(upper_cost(2 * mib, vectors) / mib) == 393
    assert "| a 2 MiB body, 1,536-dimension vectors | 393 MiB | 330 MiB |" in guide
    text = "# A\n\n" + "x" * (16_000_000 - 5)
    sixteen = record_cost(InputRecord("r", {"text": text}), settings)
    assert round(sixteen / mib) == 622
    assert sixteen < DEFAULT_MEMORY_BUDGET_BYTES
    assert "| one 16-million-character record (ASCII) | 622 MiB |" in guide
    assert f"| answer | {ANSWER_HELD} × min(its bound, `MAX_RESPONSE_BYTES`)" in guide
    assert f"| body | {BODY_HELD} × its length |" in guide
    assert f"the answer {ANSWER_HELD_IN_APP} × |" in guide
