"""Worker processes live and die with the app, and the app runs (and exits) cleanly however
it is started: issue 26 item 7, issue 28 items 6 and 7. Every test runs the app in a
subprocess, as a host or a user would.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.skill.chunker_state import NO_ISOLATION_ADVICE
from tests.conftest import skill_body
from tests.paths import ROOT
from tests.servers import free_port, uvicorn_subprocess
from tests.skill.test_skill_deadline import (
    alive,
    big_record,
    descendants,
    skill_env,
    small_record,
    wait_until_ready,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.integration

PROJECT = ROOT
GONE_WITHIN_SECONDS = 5.0
"""A bound on the wait for the processes to go: a worker that outlived the app would be
there for as long as its record takes (the record below takes tens of seconds)."""
LONG_RECORD = big_record("long", "# h\n" * 3_000_000)
"""12 million characters of headings: ~20 s of chunking, far past the bound above."""
GIVE_UP_SECONDS = 60.0


def _wait(check: Callable[[], bool], seconds: float = GIVE_UP_SECONDS) -> bool:
    give_up = time.monotonic() + seconds
    while not check():
        if time.monotonic() > give_up:
            return False
        time.sleep(0.05)
    return True


def test_sigkill_of_the_app_takes_its_workers_and_forkserver_with_it() -> None:
    """Issue 26, item 7: they were re-parented to PID 1 and ran on for the whole record."""
    env = skill_env(SKILL_DEADLINE_SECONDS="120", CHUNK_WORKERS="2")
    with uvicorn_subprocess(env) as (url, server), httpx.Client(timeout=GIVE_UP_SECONDS) as client:
        wait_until_ready(client, url)

        def send() -> None:
            with contextlib.suppress(httpx.HTTPError):  # the app is killed under it
                client.post(f"{url}/api/chunk", content=skill_body([LONG_RECORD]), timeout=120)

        threading.Thread(target=send, daemon=True).start()
        assert _wait(lambda: client.get(f"{url}/api/health").json()["chunking"]["busy"] == 1)
        family = descendants(server.pid)
        assert len(family) >= 3  # the forkserver and two workers (one busy)
        server.send_signal(signal.SIGKILL)
        server.wait(GIVE_UP_SECONDS)
        assert _wait(lambda: not alive(family), GONE_WITHIN_SECONDS), alive(family)


NO_GUARD_SCRIPT = """
    import sys

    import uvicorn

    from skills.skill.app import build_app

    # No `if __name__ == "__main__":` guard: every worker process re-runs this file.
    uvicorn.run(build_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def test_a_script_without_a_main_guard_chunks_in_threads_and_says_why(tmp_path: Path) -> None:
    """Issue 28, item 6: every record of every batch failed, forever."""
    script = tmp_path / "serve.py"
    script.write_text(textwrap.dedent(NO_GUARD_SCRIPT), encoding="utf-8")
    port = free_port()
    env = {**skill_env(SKILL_DEADLINE_SECONDS="5", CHUNK_WORKERS="2"), "PYTHONPATH": str(PROJECT)}
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        server = subprocess.Popen(
            [sys.executable, str(script), str(port)], cwd=tmp_path, env=env, stderr=stderr
        )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=GIVE_UP_SECONDS) as client:

            def up() -> bool:
                try:
                    return client.get(f"{url}/api/health").status_code < 600
                except httpx.TransportError:
                    assert server.poll() is None
                    return False

            assert _wait(up)
            # The workers' starts fail (each re-runs the script) and chunking falls back.
            assert _wait(lambda: client.get(f"{url}/api/health").json().get("warnings"))
            records = [small_record(f"r{n}") for n in range(6)]
            answer = client.post(f"{url}/api/chunk", content=skill_body(records))
            assert answer.status_code == 200
            for value in answer.json()["values"]:
                assert value["errors"] == [], value
                assert value["data"]["chunks"]
            health = client.get(f"{url}/api/health").json()
            assert health["chunking"]["mode"] == "threads (fallback)"
            assert health["warnings"] == [NO_ISOLATION_ADVICE]
            assert health["chunking"]["warning"] == NO_ISOLATION_ADVICE
            # The deadline still holds: an overrunning record is answered with its error.
            overrun = client.post(
                f"{url}/api/chunk", content=skill_body([big_record(), small_record("s")])
            )
            assert overrun.status_code == 200
            big, small = overrun.json()["values"]
            assert "still being chunked at the skill's deadline" in big["errors"][0]["message"]
            assert small["data"]["chunks"]
    finally:
        server.kill()
        server.wait(GIVE_UP_SECONDS)
    assert 'no `if __name__ == "__main__":` guard' in log.read_text(encoding="utf-8")


ADAPTER_SCRIPT = """
    import asyncio
    import logging
    import sys

    import azure.functions as func

    import function_app

    logging.basicConfig(level=logging.WARNING)


    async def one_request() -> None:
        (function,) = function_app.app.get_functions()
        request = func.HttpRequest(
            method="POST",
            url="http://localhost/api/chunk",
            headers={"content-type": "application/json"},
            body=BODY,
        )
        response = await function.get_user_function()(request, None)
        print(response.status_code, flush=True)


    if __name__ == "__main__":
        if sys.argv[1] == "asyncio.run":
            asyncio.run(one_request())
        else:
            # A host that shuts its loop's executor down before the ASGI shutdown.
            loop = asyncio.new_event_loop()
            loop.run_until_complete(one_request())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.run_until_complete(function_app.app.middleware.notify_shutdown())
            loop.close()
"""


@pytest.mark.parametrize("exit_path", ["asyncio.run", "executor shut down first"])
def test_process_exit_through_the_functions_adapter_logs_no_error(
    tmp_path: Path, exit_path: str
) -> None:
    """Issue 28, item 7: every exit logged "Failed ASGI shutdown" with a traceback."""
    body = skill_body([small_record("a")])
    script = textwrap.dedent(ADAPTER_SCRIPT).replace("BODY", repr(body))
    (tmp_path / "exit_through_adapter.py").write_text(script, encoding="utf-8")
    env = {**skill_env(CHUNK_WORKERS="2"), "PYTHONPATH": str(PROJECT)}
    done = subprocess.run(
        [sys.executable, "exit_through_adapter.py", exit_path],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=GIVE_UP_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "200"
    assert "Failed ASGI" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "ERROR" not in done.stderr, done.stderr
