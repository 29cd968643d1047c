"""Running the documented local command, `python -m uvicorn function_app:api`, for tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from collections.abc import Iterator

PROJECT = Path(__file__).parents[1]
START_SECONDS = 20.0
"""How long the server may take to answer /api/health before the test gives up."""


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_health(url: str, process: subprocess.Popen[bytes]) -> None:
    """Return once the server at `url` answers /api/health; raise if it exits or takes
    longer than START_SECONDS."""
    give_up = time.monotonic() + START_SECONDS
    while True:
        try:
            httpx.get(f"{url}/api/health", timeout=1.0)
            return
        except httpx.TransportError:
            if time.monotonic() > give_up or process.poll() is not None:
                raise
            time.sleep(0.05)


@contextmanager
def uvicorn_subprocess(
    env: dict[str, str], *, python: Path | None = None, cwd: Path = PROJECT
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The skill served by uvicorn in a child process (this python, or `python`, from
    `cwd`); yields its base URL and the process."""
    port = free_port()
    command = [
        str(python or sys.executable),
        "-m",
        "uvicorn",
        "function_app:api",
        "--host",
        "127.0.0.1",
    ]
    command += ["--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, process)
        yield url, process
    finally:
        process.terminate()
        process.wait(10)
