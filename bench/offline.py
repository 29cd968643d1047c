"""Keep a benchmark run offline: empty download caches and no outgoing connections."""

from __future__ import annotations

import os
import socket
import tempfile
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

OFFLINE_FLAGS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


class NetworkForbidden(RuntimeError):
    """Something in the benchmark tried to open a network connection."""


def _guarded(original: Callable[..., Any]) -> Callable[..., Any]:
    """`original` for Unix sockets; a `NetworkForbidden` for every other family."""

    def connect(sock: socket.socket, address: Any) -> Any:
        if sock.family == socket.AF_UNIX:
            return original(sock, address)
        raise NetworkForbidden(f"the benchmark runs offline; refused a connection to {address!r}")

    return connect


@contextmanager
def offline() -> Iterator[None]:
    """Run the body with empty tiktoken/HF caches and network connections refused.

    A peer that would silently download a tokenizer or a recipe fails loudly
    instead, and is reported unavailable.
    """
    saved = {name: os.environ.get(name) for name in ("TIKTOKEN_CACHE_DIR", *OFFLINE_FLAGS)}
    original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex
    with tempfile.TemporaryDirectory(prefix="bench-empty-cache-") as empty:
        os.environ["TIKTOKEN_CACHE_DIR"] = empty
        for name in OFFLINE_FLAGS:
            os.environ[name] = "1"
        socket.socket.connect = _guarded(original_connect)  # type: ignore[method-assign]
        socket.socket.connect_ex = _guarded(original_connect_ex)  # type: ignore[method-assign]
        try:
            yield
        finally:
            socket.socket.connect = original_connect  # type: ignore[method-assign]
            socket.socket.connect_ex = original_connect_ex  # type: ignore[method-assign]
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
