"""A rerank endpoint as a `PairClient`: `binaryScorer` rerank, RERANK_ENDPOINT.

The Cohere Rerank API as Azure AI Foundry serves it for its serverless Cohere Rerank
deployments (MicrosoftDocs/azure-ai-docs, articles/ai-foundry/how-to/
deploy-models-cohere-rerank.md, "v1/rerank request"): `POST /v1/rerank` with
`Authorization: Bearer <key>` and a JSON body `{model, query, documents, top_n}`; the
answer is `{results: [{index, relevance_score}, ...]}`, ordered by relevance, `index`
pointing into `documents`. Pairs that share a first text go in one request (query =
that text, documents = the second texts); distinct first texts are sent concurrently,
`MAX_CONCURRENT_REQUESTS` at a time. Every failure (an HTTP status, a timeout, a reset,
an answer that is not JSON or scores the wrong documents) is a `ScoringError` that says
so in our words; nothing is retried: the `binary` strategy's record fails, within its
deadline.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from chunking.plan.scoring import ScoringError
from skills.embedding.log_urls import hide_url_secrets_in_http_logs
from skills.values import shown_url

if TYPE_CHECKING:
    from collections.abc import Sequence

RERANK_PATH = "/v1/rerank"
MAX_CONCURRENT_REQUESTS = 4
"""Requests in flight for one call: a split's 16 candidates in four rounds, within the
1,000 requests a minute an Azure AI Foundry rerank deployment allows."""


def rerank_url(endpoint: str) -> str:
    """The URL to POST to: `endpoint` itself when its path ends in `/rerank`, else the
    endpoint (a deployment's target URL) with `/v1/rerank` added."""
    if urlsplit(endpoint).path.rstrip("/").endswith("/rerank"):
        return endpoint
    return endpoint.rstrip("/") + RERANK_PATH


class RerankClient:
    """`PairClient` of a Cohere-style rerank endpoint, over one pooled httpx client."""

    source = "rerank"

    def __init__(
        self,
        endpoint: str,
        api_key: str | None = None,
        model: str | None = None,
        *,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = rerank_url(endpoint)
        self.host = shown_url(self.url)
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        hide_url_secrets_in_http_logs()
        self._client = client or httpx.AsyncClient()
        self._headers = headers

    async def score(self, pairs: Sequence[tuple[str, str]], timeout: float) -> list[float]:
        """One score per pair, in order, within `timeout` seconds; raises `ScoringError`."""
        groups: dict[str, list[int]] = {}
        for index, (query, _) in enumerate(pairs):
            groups.setdefault(query, []).append(index)
        limit = asyncio.Semaphore(MAX_CONCURRENT_REQUESTS)
        scores = [0.0] * len(pairs)

        async def one(query: str, indices: list[int]) -> None:
            async with limit:
                found = await self._rerank(query, [pairs[i][1] for i in indices], timeout)
            for index, score in zip(indices, found, strict=True):
                scores[index] = score

        await asyncio.gather(*(one(query, indices) for query, indices in groups.items()))
        return scores

    async def _rerank(self, query: str, documents: list[str], timeout: float) -> list[float]:
        """The relevance of each document to `query`, in the documents' order."""
        body: dict[str, Any] = {"query": query, "documents": documents, "top_n": len(documents)}
        if self.model:
            body["model"] = self.model
        try:
            answer = await self._client.post(
                self.url, json=body, headers=self._headers, timeout=max(timeout, 0.001)
            )
        except httpx.TimeoutException:
            raise ScoringError(
                f"the rerank endpoint ({self.host}) did not answer within {timeout:.1f} s"
            ) from None
        except httpx.ConnectError:
            raise ScoringError(
                f"the rerank endpoint ({self.host}) could not be reached: no connection"
            ) from None
        except httpx.HTTPError:
            raise ScoringError(
                f"the rerank endpoint ({self.host}) could not be reached: the request failed"
            ) from None
        if answer.status_code != httpx.codes.OK:
            # Its own text is not shown: it may quote the documents or name internals.
            raise ScoringError(
                f"the rerank endpoint ({self.host}) answered HTTP {answer.status_code} "
                "(its message is not shown)"
            )
        try:
            results = json.loads(answer.content)["results"]
            ranked = {int(item["index"]): float(item["relevance_score"]) for item in results}
        except (ValueError, KeyError, TypeError):
            raise ScoringError(
                f"the rerank endpoint ({self.host}) answered something other than "
                "{results: [{index, relevance_score}]}"
            ) from None
        if sorted(ranked) != list(range(len(documents))) or len(results) != len(documents):
            raise ScoringError(
                f"the rerank endpoint ({self.host}) scored {len(results)} documents of "
                f"{len(documents)} sent"
            )
        if not all(math.isfinite(score) for score in ranked.values()):
            raise ScoringError(f"the rerank endpoint ({self.host}) answered a score not a number")
        return [ranked[index] for index in range(len(documents))]

    async def aclose(self) -> None:
        await self._client.aclose()
