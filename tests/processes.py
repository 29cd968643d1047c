"""The project's commands in a child python, as a user runs them, for tests."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.paths import ROOT


def run_python(
    *args: str, env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """`python ARGS` from the project's folder, this environment plus `env`, output kept."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
