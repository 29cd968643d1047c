"""Blob or table storage for the embedding cache: lookup latency against Azurite.

    python -m bench.cache_store [--rounds 30] [--dimensions 1536]

Starts Azurite (blob and table, testing/azurite) on free ports with a temporary folder,
writes 200 entries of `--dimensions` float32 values to each store, then times lookups of
16 and 200 keys (a skill call of 16 chunks, and the 200 chunks a batch of ten documents
makes at 512 tokens), all hits and all misses, with the same 16-way fan-out for both:
the blob store is `skills.embedding.cache_stores.BlobStore` as the skill runs it; the
table store reads one entity per key (PartitionKey = the key's first two hex digits,
RowKey = the key; a Table query cannot fetch a list of row keys in one call beyond 15
comparisons, and point reads are the cheapest and fastest form). Prints a markdown table
of median and 90th percentile milliseconds. Needs azure-data-tables (bench only).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skills.embedding.cache import encode_vector
from skills.embedding.cache_stores import BlobStore
from testing.azurite import Azurite

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

SIZES = (16, 200)
THREADS = 16
TABLE_VALUE_CHUNK = 60_000
"""A Table property holds at most 64 KiB of binary: a 3,072-dimension float64 vector
(24 KiB) fits in one; larger ones would need several."""


def keys(count: int, salt: str) -> list[str]:
    return [hashlib.sha256(f"{salt}{n}".encode()).hexdigest() for n in range(count)]


class TableStore:
    """The table alternative, measured only: one entity per key, read one by one."""

    def __init__(self, connection_string: str, table: str) -> None:
        from azure.data.tables import TableServiceClient

        service = TableServiceClient.from_connection_string(connection_string)
        self.table = service.create_table_if_not_exists(table)
        self.threads = concurrent.futures.ThreadPoolExecutor(THREADS)

    def put_many(self, entries: dict[str, bytes]) -> None:
        for key, value in entries.items():
            self.table.upsert_entity({"PartitionKey": key[:2], "RowKey": key, "v": value})

    def get_many(self, wanted: Sequence[str], timeout: float) -> dict[str, bytes]:
        from azure.core.exceptions import ResourceNotFoundError

        def one(key: str) -> tuple[str, bytes | None]:
            try:
                entity: Any = self.table.get_entity(key[:2], key)
            except ResourceNotFoundError:
                return key, None
            return key, bytes(entity["v"])

        found = self.threads.map(one, wanted, timeout=timeout)
        return {key: value for key, value in found if value is not None}


def timed(lookup: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Median and 90th percentile of `rounds` calls, in milliseconds (one warm-up first)."""
    lookup()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        lookup()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.9 * (len(samples) - 1))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cache_store", description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--dimensions", type=int, default=1536)
    args = parser.parse_args(argv)
    why = Azurite.available()
    if why is not None:
        print(f"python -m bench.cache_store: {why}", file=sys.stderr)
        return 2
    vector = [((n * 7919) % 2001 - 1000) / 1024.0 for n in range(args.dimensions)]
    value = encode_vector(vector)
    stored = keys(max(SIZES), "hit")
    absent = keys(max(SIZES), "miss")
    with (
        tempfile.TemporaryDirectory() as folder,
        Azurite(Path(folder), services=("blob", "table")) as azurite,
    ):
        blob = BlobStore(container="bench", connection_string=azurite.connection_string)
        table = TableStore(azurite.connection_string, "bench")
        stores: dict[str, Any] = {"blob": blob, "table": table}
        for store in stores.values():
            store.put_many(dict.fromkeys(stored, value))
        print(f"value: {len(value)} bytes ({args.dimensions} float32), {args.rounds} rounds\n")
        print("| store | keys | hits: median ms | hits: p90 ms | misses: median ms |")
        print("|---|---|---|---|---|")
        for name, store in stores.items():
            for size in SIZES:
                got = store.get_many(stored[:size], 30.0)
                assert len(got) == size, (name, size, len(got))
                hit = timed(functools.partial(store.get_many, stored[:size], 30.0), args.rounds)
                miss = timed(functools.partial(store.get_many, absent[:size], 30.0), args.rounds)
                print(f"| {name} | {size} | {hit[0]:.1f} | {hit[1]:.1f} | {miss[0]:.1f} |")
        blob.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
