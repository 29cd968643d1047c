"""Azurite, the Azure Storage emulator, as a child process on 127.0.0.1 for tests and benches.

    with Azurite(tmp_path) as azurite:           # blob only, a free port, its own folder
        azurite.connection_string                # Azurite's documented dev account
        ...
    with Azurite(tmp_path, services=("blob", "table")) as azurite:  # the store benchmark

The npm package is pinned in testing/azurite/package.json and installed into that folder
by `scripts/setup.sh --dev` (`npm ci`), never globally. `Azurite.available()` says why it
cannot run (no node, or not installed) so tests can skip with that reason.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from types import TracebackType

HOST = "127.0.0.1"
FOLDER = Path(__file__).resolve().parent / "azurite"
"""The npm project that pins azurite (package.json, package-lock.json, node_modules/)."""
START_SECONDS = 30.0
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
"""Azurite's well-known development account and key (public, in Microsoft's docs)."""
SERVICES = {"blob": "BlobEndpoint", "table": "TableEndpoint"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


class Azurite:
    """One Azurite process with its own data folder, stopped (and waited for) on exit."""

    def __init__(self, location: Path, services: tuple[str, ...] = ("blob",)) -> None:
        self.location = location
        self.services = services
        self.ports = {service: _free_port() for service in services}
        self._process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def available() -> str | None:
        """None when Azurite can run here, else why not (for a test's skip reason)."""
        if shutil.which("node") is None:
            return "node is not installed (Azurite, the Azure Storage emulator, runs on it)"
        if not (FOLDER / "node_modules" / "azurite" / "package.json").is_file():
            return "Azurite is not installed: scripts/setup.sh --dev runs npm ci in testing/azurite"
        return None

    def start(self) -> Self:
        why = self.available()
        if why is not None:
            raise RuntimeError(why)
        self.location.mkdir(parents=True, exist_ok=True)
        main = FOLDER / "node_modules" / "azurite" / "dist" / "src" / "azurite.js"
        command = [
            "node",
            str(main),
            "--location",
            str(self.location),
            "--silent",
            "--disableTelemetry",
            "--skipApiVersionCheck",
            "--loose",
        ]
        for service in ("blob", "queue", "table"):
            port = self.ports.get(service)
            # Azurite starts every service; the ones not asked for get a free port anyway.
            command += [f"--{service}Host", HOST, f"--{service}Port", str(port or _free_port())]
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.location
        )
        give_up = time.monotonic() + START_SECONDS
        for port in self.ports.values():
            while True:
                try:
                    socket.create_connection((HOST, port), timeout=0.5).close()
                    break
                except OSError:
                    if self._process.poll() is not None or time.monotonic() > give_up:
                        error = self._process.stderr.read() if self._process.stderr else b""
                        self.stop()
                        message = error.decode("utf-8", "replace")[-500:]
                        raise RuntimeError(f"Azurite did not start: {message}") from None
                    time.sleep(0.1)
        return self

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr is not None:
            process.stderr.close()

    def endpoint(self, service: str = "blob") -> str:
        return f"http://{HOST}:{self.ports[service]}/{ACCOUNT}"

    @property
    def connection_string(self) -> str:
        return connection_string({s: self.endpoint(s) for s in self.services})

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


def connection_string(endpoints: dict[str, str]) -> str:
    """A connection string for the dev account at `endpoints` ({"blob": url, ...})."""
    parts = ["DefaultEndpointsProtocol=http", f"AccountName={ACCOUNT}", f"AccountKey={KEY}"]
    parts += [f"{SERVICES[service]}={url}" for service, url in endpoints.items()]
    return ";".join(parts) + ";"
