"""Azure AI Search errors (azure-core exceptions) as one line that says what to fix."""

from __future__ import annotations

from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    HttpResponseError,
    ResourceNotFoundError,
    ServiceRequestError,
)

HTTP_UNAUTHORIZED = 401
HTTP_FORBIDDEN = 403
SHOWN_MESSAGE = 200
"""Characters of the service's own message kept in the line."""


def describe_service_error(
    error: AzureError, *, endpoint: str, endpoint_setting: str, index: str | None = None
) -> str:
    """What went wrong talking to the search service at `endpoint` and what to change:
    the endpoint (`endpoint_setting` names where it came from), the key, or the index."""
    if isinstance(error, ServiceRequestError):
        return (
            f"cannot reach the search service at {endpoint} ({_first_line(error)}): check "
            f"{endpoint_setting} (https://NAME.search.windows.net) and the network"
        )
    status = getattr(error, "status_code", None)
    if isinstance(error, ClientAuthenticationError) or status in (
        HTTP_UNAUTHORIZED,
        HTTP_FORBIDDEN,
    ):
        shown = f"HTTP {status}" if status else _first_line(error)
        return (
            f"the search service at {endpoint} refused the credentials ({shown}): set "
            "AZURE_SEARCH_KEY to an admin key, or sign in (az login) with a role that may "
            "write (Search Service Contributor, Search Index Data Contributor)"
        )
    if isinstance(error, ResourceNotFoundError):
        if not _service_json(error):
            return (
                f"{endpoint} answered 404 with no search service's error: check "
                f"{endpoint_setting} (https://NAME.search.windows.net, nothing after it)"
            )
        if index is not None:
            return (
                f"the search service at {endpoint} has no index {index!r}: check --index, or "
                "create it with `python -m infra.deploy apply`"
            )
        return f"not found on the search service at {endpoint}: {_first_line(error)}"
    if isinstance(error, HttpResponseError):
        return f"the search service at {endpoint} answered HTTP {status}: {_first_line(error)}"
    return f"the search service at {endpoint} failed: {_first_line(error)}"


def _service_json(error: HttpResponseError) -> bool:
    """Whether the answer is the service's JSON error (not a web server's HTML page)."""
    response = error.response
    headers = getattr(response, "headers", None)
    if headers is None:
        return False
    return "json" in str(headers.get("content-type") or "").lower()


def _first_line(error: AzureError) -> str:
    text = str(getattr(error, "message", None) or error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    return line[:SHOWN_MESSAGE]
