"""The skill's one structured line per request, also where no host collects logs.

Under the Functions host (and Core Tools) the Python worker puts a handler on the root
logger, so `service.log_request`'s INFO line reaches Application Insights. Under
`uvicorn function_app:api` nothing does: INFO is dropped and only warnings reach stderr,
through Python's last-resort handler. `show_request_log` gives stderr that line then, and
nothing else new: the line holds counts and seconds, never document text or a setting.
"""

from __future__ import annotations

import logging
import sys

REQUEST_FIELDS = "chunk_request"
"""The `extra` attribute that marks the request line (`service.log_request`)."""
SKILL_LOGGER = "skills"
HANDLER = "skills-request-log"
FORMAT = "%(levelname)s:     %(message)s"
"""uvicorn's own layout (`INFO:     ...`), so the line reads like the access log beside it."""


class _RequestLineOrWarning(logging.Filter):
    """The request line, and every warning and error as before."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or hasattr(record, REQUEST_FIELDS)


def show_request_log() -> None:
    """Send the request line to stderr when no handler on the root logger would get it
    (uvicorn); do nothing under a host that collects logs, or when done already."""
    logger = logging.getLogger(SKILL_LOGGER)
    if logging.getLogger().handlers or any(h.name == HANDLER for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(HANDLER)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(_RequestLineOrWarning())
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
