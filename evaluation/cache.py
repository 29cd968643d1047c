"""Embeddings cached on disk by (model, role, text hash): a sweep embeds each text once.

Each `put` is one SQLite transaction, so an interrupted run keeps every batch it
finished and a half-written batch is rolled back, never read.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import numpy.typing as npt

SCHEMA = """
create table if not exists vectors (
    model text not null,
    role text not null,
    digest blob not null,
    vector blob not null,
    truncated integer not null,
    primary key (model, role, digest)
)
"""
RATES_SCHEMA = """
create table if not exists rates (
    model text primary key,
    characters_per_second real not null
)
"""
LOOKUP_BATCH = 500
"""Digests per `in (...)` lookup: below SQLite's limit on bound parameters."""


def text_digest(text: str) -> bytes:
    """The cache key of a text (SHA-256 of its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """A SQLite file of float32 vectors; safe to delete, rebuilt on demand."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.execute(SCHEMA)
        self._db.execute(RATES_SCHEMA)

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    def get(
        self, model: str, role: str, digests: Sequence[bytes]
    ) -> dict[bytes, tuple[npt.NDArray[np.float32], bool]]:
        """The cached (vector, truncated) of each digest that has one."""
        found: dict[bytes, tuple[npt.NDArray[np.float32], bool]] = {}
        unique = list(dict.fromkeys(digests))
        for offset in range(0, len(unique), LOOKUP_BATCH):
            part = unique[offset : offset + LOOKUP_BATCH]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                "select digest, vector, truncated from vectors "
                f"where model = ? and role = ? and digest in ({marks})",
                (model, role, *part),
            )
            for digest, blob, truncated in rows:
                found[digest] = (np.frombuffer(blob, dtype=np.float32), bool(truncated))
        return found

    def put(
        self,
        model: str,
        role: str,
        items: Sequence[tuple[bytes, npt.NDArray[np.float32], bool]],
    ) -> None:
        """Store vectors (replacing any under the same key)."""
        self._db.executemany(
            "insert or replace into vectors values (?, ?, ?, ?, ?)",
            [
                (model, role, digest, np.asarray(vector, np.float32).tobytes(), int(truncated))
                for digest, vector, truncated in items
            ],
        )
        self._db.commit()

    def count(self) -> int:
        """How many vectors are stored."""
        (total,) = self._db.execute("select count(*) from vectors").fetchone()
        return int(total)

    def rate(self, model: str) -> float | None:
        """Characters per second `model` embedded at on the last run, if one ran."""
        row = self._db.execute(
            "select characters_per_second from rates where model = ?", (model,)
        ).fetchone()
        return float(row[0]) if row else None

    def set_rate(self, model: str, characters_per_second: float) -> None:
        """Remember how fast `model` embedded, for the next run's estimate."""
        self._db.execute(
            "insert or replace into rates values (?, ?)", (model, characters_per_second)
        )
        self._db.commit()
