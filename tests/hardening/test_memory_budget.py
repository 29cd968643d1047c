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
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.skill.app import build_app
from skills.skill.contract import InputRecord
from skills.skill.memory_budget import (
    ANSWER_HELD,
    MemoryBudget,
    Reservation,
    admit_records,
    record_cost,
    upper_cost,
)
from skills.skill.records import failed_record
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
"""~20,000 characters: its request reserves ~3.3 MB (5x the body, 5x its answer)."""
BUDGET = 5_000_000
"""Room for one BIG_TEXT request and tiny ones, not for two BIG_TEXT requests."""


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


def _serve(live_servers: LiveServers, deadline: float) -> tuple[str, HoldingEmbedder]:
    embedder = HoldingEmbedder()
    settings = Settings(memory_budget_bytes=BUDGET, chunk_workers=0, deadline_seconds=deadline)
    return live_servers.start_app(build_app(settings, embedder=embedder)), embedder


@pytest.mark.integration
def test_a_second_big_request_waits_for_the_first_and_tiny_ones_go_ahead(
    live_servers: LiveServers,
) -> None:
    url, embedder = _serve(live_servers, deadline=60.0)
    held = _body(("held", BIG_TEXT.replace("Big", HOLD)))
    second = _body(("second-1", BIG_TEXT), ("second-2", "# Small\n\nShort text."))
    assert upper_cost(len(held), Settings()) * 2 > BUDGET > upper_cost(len(held), Settings())
    with httpx.Client(timeout=GIVE_UP_SECONDS) as client, ThreadPoolExecutor(2) as senders:
        first = senders.submit(client.post, f"{url}/api/chunk", content=held)
        # Its body in, it holds what it may cost (a request reserves as its body arrives).
        _wait_for(client, url, lambda m: m["requests"] == 1 and m["in_flight"] > BUDGET // 2)
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


def test_a_request_costs_its_body_its_decoded_text_and_its_answer_held_several_times() -> None:
    record = InputRecord("r", {"text": "x" * 1_000})
    cost = record_cost(record, cap=10**9)
    # Body share, the decoded str (1 byte a character plus its header), the answer.
    assert 1_000 + 1_000 + 32_000 * ANSWER_HELD < cost < 1_000 + 1_100 + 32_000 * ANSWER_HELD
    # An astral character makes Python store the whole text in 4 bytes a character.
    astral = record_cost(InputRecord("r", {"text": "x" * 999 + "😀"}), cap=10**9)
    assert astral - cost > 2_900
    # The answer's part is capped by MAX_RESPONSE_BYTES.
    assert record_cost(record, cap=1_000) < 1_000 + 1_100 + 1_000 * ANSWER_HELD


def test_records_past_the_reservation_are_refused_one_by_one_in_order() -> None:
    records = [InputRecord(str(n), {"text": "y" * 1_000}) for n in range(4)]
    one = record_cost(records[0], cap=10**9)
    admitted = admit_records(records, 0, reserved=2 * one, budget=2 * one, settings=Settings())
    assert [record.record_id for record in admitted.records] == ["0", "1"]
    assert sorted(admitted.refused) == [2, 3]
    message = admitted.refused[2].errors[0]
    assert "lower the skill's batchSize" in message
    assert "app setting MEMORY_BUDGET_BYTES" in message
    assert admitted.cost <= 2 * one
    merged = admitted.merge([failed_record(record.record_id) for record in admitted.records])
    assert [output.record_id for output in merged] == ["0", "1", "2", "3"]


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
    at their caps run at once, while the model reserved the whole budget for one)."""
    guide = (ROOT / "docs" / "design" / "hardening.md").read_text(encoding="utf-8")
    mib = 2**20
    largest = upper_cost(DEFAULT_MAX_REQUEST_BYTES, Settings())
    assert largest == 800 * mib > DEFAULT_MEMORY_BUDGET_BYTES == 640 * mib
    assert "costs 64 MiB + 256 MiB + 480 MiB = 800 MiB, more than\nthe 640 MiB budget" in guide
    # From 2 MiB of body the answer's allowance is at its cap: 330 MiB or more each.
    assert upper_cost(2 * mib, Settings()) >= 330 * mib > DEFAULT_MEMORY_BUDGET_BYTES // 2
    assert upper_cost(2 * mib - 1, Settings()) < 330 * mib
    assert "budget admits **one** at a time" in guide
    assert "330 MiB or more for any body of 2 MiB or more" in guide
