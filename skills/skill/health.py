"""`GET /api/health`'s report: the version, the configuration, and the state of the
embedding model, the embedding cache, the memory budget and the chunkers, with the
status the app answers (200, or 503 when misconfigured or degraded)."""

from __future__ import annotations

import platform
from typing import TYPE_CHECKING

from skills import __version__
from skills.skill.settings import describe_settings

if TYPE_CHECKING:
    from skills.embedding.cache import CacheState
    from skills.embedding.local import ModelLoad
    from skills.skill.chunker_state import ChunkerState
    from skills.skill.memory_budget import BudgetState
    from skills.skill.settings import Settings, SettingsError

HTTP_OK = 200
HTTP_UNAVAILABLE = 503


def misconfigured_report(error: SettingsError) -> tuple[dict[str, object], int]:
    """The report when the app settings cannot be used: what is wrong, and 503."""
    report = _base("misconfigured")
    report["error"] = str(error)
    return report, HTTP_UNAVAILABLE


def health_report(
    settings: Settings,
    *,
    load: ModelLoad | None,
    cache: CacheState | None,
    memory: BudgetState,
    chunking: ChunkerState | None,
) -> tuple[dict[str, object], int]:
    """The report and its HTTP status, from the parts' states read just now."""
    report = _base("ok")
    embedding = settings.embedding
    embeds = embedding.provider != "none"  # no model is used, whatever is configured
    embedding_report: dict[str, object] = {
        "provider": embedding.provider,
        "reason": embedding.provider_reason,
        "model": embedding.model if embeds else None,
        "dimensions": embedding.dimensions if embeds else None,
    }
    report["embedding"] = embedding_report
    report["configuration"] = describe_settings(settings)
    status = HTTP_OK
    if load is not None:
        embedding_report["local"] = load.as_json()
        if load.abandoned:
            # The model is still on a batch whose request was answered: requests
            # that need embeddings wait for it.
            report["status"], status = "degraded", HTTP_UNAVAILABLE
    # The cache never fails a record: its state is reported, never the status.
    if cache is not None or embedding.cache.mode != "off":
        report["embeddingCache"] = (
            cache.as_json()
            if cache is not None
            else {"mode": embedding.cache.mode, "state": "unused"}
        )
    report["memory"] = memory.as_json()
    if memory.hostage:
        # Clients that stopped sending (or reading) hold memory a request waits
        # for, or a quarter of it: not "ok", though every worker may be idle.
        report["status"], status = "degraded", HTTP_UNAVAILABLE
    if chunking is not None:
        report["chunking"] = chunking.as_json()
        if report["status"] == "ok":
            report["status"] = chunking.status
        if chunking.warning is not None:
            report["warnings"] = [chunking.warning]
        if chunking.degraded:
            # Overrunning work is being stopped, or every worker is stuck on a
            # record that ran long: not "ok". Starting workers are not a fault:
            # requests wait for them (within their deadline).
            status = HTTP_UNAVAILABLE
    return report, status


def _base(status: str) -> dict[str, object]:
    return {"status": status, "version": __version__, "python": platform.python_version()}
