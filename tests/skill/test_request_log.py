"""The one structured line per request under `uvicorn function_app:api` (the host's worker
collects it itself): counts and seconds on stderr, no document text, no secret."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.skill.request_log import HANDLER, SKILL_LOGGER, show_request_log
from tests.servers import PROJECT, free_port, wait_for_health

if TYPE_CHECKING:
    from pathlib import Path

CANARY_TEXT = "Quetzalcoatl-canary paragraph"
CANARY_KEY = "sk-canary-0123456789abcdef"
PREFIX = "INFO:     chunk request "


def _record(record_id: str, limit: int) -> dict[str, object]:
    return {
        "recordId": record_id,
        "data": {"text": f"# Title\n\n{CANARY_TEXT}.", "maximumPageLength": limit,
                 "unit": "characters"},
    }  # fmt: skip


@pytest.mark.integration
def test_uvicorn_prints_one_line_per_request_without_text_or_secrets(tmp_path: Path) -> None:
    port = free_port()
    environment = {
        **os.environ,
        "PYTHONPATH": str(PROJECT),
        "EMBEDDING_PROVIDER": "none",
        "AZURE_OPENAI_API_KEY": CANARY_KEY,
        "CHUNK_WORKERS": "0",
    }
    with (tmp_path / "stderr").open("w", encoding="utf-8") as stderr:
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "function_app:api", "--host", "127.0.0.1",
             "--port", str(port)],
            cwd=PROJECT, env=environment, stderr=stderr, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for_health(url, server)
            good = httpx.post(f"{url}/api/chunk", json={"values": [_record("1", 300)]})
            # The second request has a record refused (below the Split skill's minimum).
            mixed = httpx.post(
                f"{url}/api/chunk", json={"values": [_record("a", 300), _record("b", 30)]}
            )
            assert good.status_code == mixed.status_code == httpx.codes.OK
        finally:
            server.terminate()
            server.wait(10)
    logged = (tmp_path / "stderr").read_text(encoding="utf-8")
    lines = [line for line in logged.splitlines() if line.startswith(PREFIX)]
    assert len(lines) == 2, logged
    first, second = (json.loads(line.removeprefix(PREFIX)) for line in lines)
    assert (first["records"], first["failed_records"], first["chunks"]) == (1, 0, 1)
    assert (second["records"], second["failed_records"], second["chunks"]) == (2, 1, 1)
    assert first["total_seconds"] >= first["chunk_seconds"] >= 0
    assert CANARY_TEXT.split(maxsplit=1)[0] not in logged
    assert CANARY_KEY not in logged


def test_under_a_host_that_collects_logs_nothing_is_added() -> None:
    """The Functions worker puts a handler on the root logger: the line goes there, once."""
    root, skills = logging.getLogger(), logging.getLogger(SKILL_LOGGER)
    before = list(skills.handlers)
    host = logging.NullHandler()
    root.addHandler(host)
    try:
        show_request_log()
        assert skills.handlers == before
        assert all(handler.name != HANDLER for handler in skills.handlers)
    finally:
        root.removeHandler(host)
