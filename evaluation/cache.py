"""Embeddings cached on disk by (model, role, text hash): a sweep embeds each text once."""

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
