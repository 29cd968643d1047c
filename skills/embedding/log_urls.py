"""The HTTP libraries' own log lines show no URL user info and no query.

httpx (the rerank client) and httpx2 (the openai client) log every request at INFO as
`HTTP Request: POST http://user:password@host/v1/embeddings?api-key=... "HTTP/1.1 200 OK"`,
and the Functions host keeps INFO lines. A URL setting may carry a password or a key
(docs/design/hardening.md), so a filter on those loggers drops both from each line; the
scheme, host, port and path stay, for the operator.
"""

from __future__ import annotations

import logging
import re

HTTP_LIBRARY_LOGGERS = (
    "httpx",
    "httpx2",
    "azure.core.pipeline.policies.http_logging_policy",
    "azure.storage.blob._shared.policies",
)
"""Loggers that write a request's full URL (httpcore logs host and port only; the Azure
SDK's, for the embedding cache's blob store, log a SAS token's query as it is sent)."""
_URL = re.compile(
    r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?:[^\s/?#@\"']*@)?(?P<rest>[^\s?#\"']*)"
    r"(?:\?[^\s#\"']*)?"
)


def without_user_info_or_query(text: str) -> str:
    """`text` with every URL's user info (`user:password@`) and query (`?...`) dropped."""
    return _URL.sub(lambda m: m.group("scheme") + m.group("rest"), text)


class HideUrlSecrets(logging.Filter):
    """Rewrites a log record whose message holds a URL with user info or a query."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        shown = without_user_info_or_query(message)
        if shown != message:
            record.msg, record.args = shown, None
        return True


def hide_url_secrets_in_http_logs() -> None:
    """Put the filter on the HTTP libraries' loggers (once; called where a client is built)."""
    for name in HTTP_LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(each, HideUrlSecrets) for each in logger.filters):
            logger.addFilter(HideUrlSecrets())
