"""The skill end to end under an indexer's load, against a simulated embedding quota.

    python -m bench.endpoint [--seconds 60] [--parallelism 4] [--records 50] ...
    python -m bench.endpoint --soak [--seconds 600] [--clients 10] [--deadline 20]

Starts an OpenAI-compatible stub (testing/openai_stub.py) with a latency and a
tokens-per-window quota (429 + retry-after past it), serves the skill with uvicorn
in a subprocess (as `func start` or Azure would, with EMBEDDING_PROVIDER=openai
pointed at the stub), and sends batches of real corpus documents from
`--parallelism` concurrent clients, as an indexer with that degreeOfParallelism
would.  Prints records/s, chunks/s, embedding requests per chunk, the share of the
quota used, failed records, latency percentiles, and where the skill's time went
(from its own per-request log lines).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.documents import DEFAULT_CORPUS, load_corpus
from bench.soak import soak
from chunking.measure.encodings import load_encoding
from testing.openai_stub import OpenAIStub

ROOT = Path(__file__).resolve().parent.parent
SERVER_START_SECONDS = 30.0
REQUEST_TIMEOUT_SECONDS = 230.0
"""The skill's `timeout` in the skillset (PT230S, the maximum)."""
_REQUEST_LOG = re.compile(r"chunk request (\{.*\})")


@dataclass(slots=True)
class Tally:
    """What the clients saw."""

    batches: int = 0
    records: int = 0
    failed_records: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    """Distinct record errors (first 80 characters) and how often they came."""
    chunks: int = 0
    http_errors: dict[int, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _start_server(port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    # The Functions host logs the app's INFO lines; plain uvicorn only its own, so the
    # server is started with logging configured like the host does.
    serve = (
        "import logging, sys, uvicorn;"
        "logging.basicConfig(level=logging.INFO, stream=sys.stderr);"
        f"uvicorn.run('function_app:api', host='127.0.0.1', port={port}, access_log=False)"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", serve],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code < 500:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("the skill server did not start")


def _batches(records: int, texts: list[tuple[str, str]]) -> list[bytes]:
    """Request bodies, each with `records` documents, cycling through the corpus."""
    bodies = []
    for start in range(0, len(texts), records):
        values = [
            {"recordId": str(start + offset), "data": {"text": text, "fileName": name}}
            for offset, (name, text) in enumerate(texts[start : start + records])
        ]
        bodies.append(json.dumps({"values": values}).encode())
    return bodies


def _client(url: str, bodies: list[bytes], stop_at: float, tally: Tally, first: int) -> None:
    index = first
    with httpx.Client(timeout=REQUEST_TIMEOUT_SECONDS) as client:
        while time.monotonic() < stop_at:
            body = bodies[index % len(bodies)]
            index += 1
            began = time.monotonic()
            response = client.post(url, content=body, headers={"content-type": "application/json"})
            elapsed = time.monotonic() - began
            with tally.lock:
                tally.batches += 1
                tally.latencies.append(elapsed)
                if response.status_code != httpx.codes.OK:
                    tally.http_errors[response.status_code] = (
                        tally.http_errors.get(response.status_code, 0) + 1
                    )
                    continue
                for record in response.json()["values"]:
                    tally.records += 1
                    if record["errors"]:
                        tally.failed_records += 1
                        key = record["errors"][0]["message"][:80]
                        tally.errors[key] = tally.errors.get(key, 0) + 1
                    else:
                        tally.chunks += len(record["data"]["chunks"])


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main(argv: list[str] | None = None) -> int:
    """Run the load, print the figures; non-zero if any record failed."""
    parser = argparse.ArgumentParser(prog="python -m bench.endpoint", description=__doc__)
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to send load")
    parser.add_argument("--parallelism", type=int, default=4, help="concurrent skill calls")
    parser.add_argument("--records", type=int, default=50, help="records per skill call")
    parser.add_argument("--latency", type=float, default=0.05, help="embedding answer delay, s")
    parser.add_argument(
        "--quota", type=int, default=400_000, help="embedding tokens per quota window"
    )
    parser.add_argument("--window", type=float, default=10.0, help="quota window, s")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument(
        "--soak",
        action="store_true",
        help="soak test instead: normal, huge, pathological and broken batches with "
        "embedding faults at random (bench/soak.py)",
    )
    parser.add_argument("--clients", type=int, default=10, help="soak: concurrent clients")
    parser.add_argument("--deadline", type=float, default=20.0, help="soak: skill deadline, s")
    parser.add_argument(
        "--server-log", type=Path, help="soak: also keep the server's log lines in this file"
    )
    args = parser.parse_args(argv)
    if args.soak:
        documents = load_corpus(args.corpus, "markdown")
        return soak(
            _start_server,
            _free_port(),
            documents,
            seconds=args.seconds,
            clients=args.clients,
            deadline=args.deadline,
            server_log=args.server_log,
        )

    documents = load_corpus(args.corpus, "markdown")
    texts = [(d.name, d.text) for d in documents]
    bodies = _batches(args.records, texts)
    encoding = load_encoding("cl100k_base")
    with OpenAIStub(
        dimensions=1536,
        latency=args.latency,
        tokens_per_minute=args.quota,
        window_seconds=args.window,
        count_tokens=lambda text: len(encoding.encode_ordinary(text)),
    ) as stub:
        port = _free_port()
        env = {
            **os.environ,
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_BASE_URL": stub.base_url,
            "OPENAI_API_KEY": "bench",
            "EMBEDDING_MODEL": "text-embedding-3-small",
            "EMBEDDING_DIMENSIONS": "1536",
        }
        server = _start_server(port, env)
        log_lines: list[str] = []
        reader = threading.Thread(
            target=lambda: log_lines.extend(iter(server.stderr.readline, "")),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        tally = Tally()
        began = time.monotonic()
        stop_at = began + args.seconds
        url = f"http://127.0.0.1:{port}/api/chunk"
        with ThreadPoolExecutor(args.parallelism) as pool:
            for worker in range(args.parallelism):
                first = worker * len(bodies) // args.parallelism
                pool.submit(_client, url, bodies, stop_at, tally, first)
        elapsed = time.monotonic() - began
        server.terminate()
        server.wait(timeout=30)
        reader.join(timeout=5)
        statuses = stub.statuses
        admitted = [e for e in stub.exchanges if e.status == httpx.codes.OK]
        tokens = sum(
            len(encoding.encode_ordinary(text))
            for exchange in admitted
            for text in exchange.body.get("input", [])
        )
    stages = [json.loads(m.group(1)) for line in log_lines if (m := _REQUEST_LOG.search(line))]
    total = sum(s["total_seconds"] for s in stages) or 1.0
    chunk_share = sum(s["chunk_seconds"] for s in stages) / total
    embed_share = sum(s["embed_seconds"] for s in stages) / total
    quota = args.quota * elapsed / args.window
    print(f"# Skill under load: {elapsed:.0f} s, {args.parallelism} concurrent calls")
    print(
        f"# of {args.records} markdown documents; embedding latency {args.latency * 1000:.0f} ms,"
    )
    print(f"# quota {args.quota} tokens per {args.window:.0f} s\n")
    print("| figure | value |\n| --- | ---: |")
    rows = [
        ("skill calls answered", f"{tally.batches}"),
        ("records answered / failed", f"{tally.records} / {tally.failed_records}"),
        ("HTTP errors", json.dumps(tally.http_errors) if tally.http_errors else "none"),
        ("records/s", f"{tally.records / elapsed:.1f}"),
        ("chunks/s", f"{tally.chunks / elapsed:.1f}"),
        ("embedding requests per chunk (answered / all)",
         f"{statuses.count(200) / max(tally.chunks, 1):.3f} / "
         f"{len(statuses) / max(tally.chunks, 1):.3f}"),
        ("embedding 429s", f"{statuses.count(429)}"),
        ("quota used", f"{tokens / quota:.1%} ({tokens} of {quota:.0f} tokens)"),
        ("latency p50 / p99", f"{_percentile(tally.latencies, 0.5):.2f} s / "
         f"{_percentile(tally.latencies, 0.99):.2f} s"),
        ("skill time chunking / embedding / other", f"{chunk_share:.1%} / {embed_share:.1%} / "
         f"{1 - chunk_share - embed_share:.1%}"),
        ("mean skill call", f"{statistics.mean(s['total_seconds'] for s in stages):.2f} s"
         if stages else "no log lines"),
    ]  # fmt: skip
    for name, value in rows:
        print(f"| {name} | {value} |")
    for message, count in sorted(tally.errors.items()):
        print(f"\nrecord error x{count}: {message}")
    return 1 if tally.failed_records or tally.http_errors else 0


if __name__ == "__main__":
    sys.exit(main())
