"""The chat model that writes questions: an Azure OpenAI deployment or an OpenAI-compatible
server, through the openai package, configured like the skill's embeddings."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from skills.embedding.settings import (
    DEFAULT_AZURE_API_VERSION,
    ENV_AZURE_OPENAI_API_KEY,
    ENV_AZURE_OPENAI_API_VERSION,
    ENV_AZURE_OPENAI_ENDPOINT,
    ENV_OPENAI_API_KEY,
    ENV_OPENAI_BASE_URL,
    api_version_problem,
    deployment_problem,
    header_problem,
    url_problem,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import openai

logger = logging.getLogger(__name__)

ChatProvider = Literal["azure_openai", "openai"]
CHAT_PROVIDERS: tuple[ChatProvider, ...] = ("azure_openai", "openai")
ENV_AZURE_OPENAI_CHAT_DEPLOYMENT = "AZURE_OPENAI_CHAT_DEPLOYMENT"
ENV_OPENAI_CHAT_MODEL = "OPENAI_CHAT_MODEL"
COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default"
"""The Microsoft Entra ID scope of Azure OpenAI data-plane calls."""
NO_API_KEY = "not-needed"
"""The openai package will not build a client without a key; local servers ignore it."""
DEFAULT_MAX_RETRIES = 4
"""The openai client's own retries (with its backoff and Retry-After) on 429, 5xx, timeouts."""
CONTENT_FILTER = "content_filter"
"""Azure OpenAI's error code when its content filter refuses a prompt."""


class ChatSettingsError(ValueError):
    """The chat model is not configured; the message names the settings to set."""


class ChatError(RuntimeError):
    """The chat service cannot be used at all (credentials, a missing deployment, no server)."""


class ChatRequestFailed(RuntimeError):
    """One request failed after the client's retries; the next section may still work."""

    def __init__(self, message: str, *, filtered: bool = False) -> None:
        super().__init__(message)
        self.filtered = filtered
        """The service's content filter refused the prompt."""


class ChatModel(Protocol):
    """Sends one conversation and returns the reply's text (None: the reply had none)."""

    description: str

    def complete(self, system: str, user: str, timeout: float) -> str | None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """Where the chat model is and how to sign in to it."""

    provider: ChatProvider
    model: str
    """The Azure deployment name, or the model name an OpenAI-compatible server is sent."""
    azure_endpoint: str | None = None
    azure_api_version: str = DEFAULT_AZURE_API_VERSION
    azure_api_key: str | None = field(default=None, repr=False)
    """Without it, Microsoft Entra ID (azure-identity's DefaultAzureCredential)."""
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    max_retries: int = DEFAULT_MAX_RETRIES

    @property
    def description(self) -> str:
        """Which model, where, signed in how; never the key."""
        if self.provider == "azure_openai":
            sign_in = "key" if self.azure_api_key else "Microsoft Entra ID"
            return f"Azure OpenAI deployment {self.model} at {self.azure_endpoint} ({sign_in})"
        return f"model {self.model} at {self.openai_base_url or 'api.openai.com'}"


def load_chat_settings(
    environment: Mapping[str, str],
    *,
    provider: ChatProvider | None = None,
    deployment: str | None = None,
    model: str | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> ChatSettings:
    """The chat settings from the environment and the options; ChatSettingsError says what
    is missing or unusable, all at once."""
    given = {name: value for name, value in environment.items() if value.strip()}
    deployment = deployment or given.get(ENV_AZURE_OPENAI_CHAT_DEPLOYMENT)
    model = model or given.get(ENV_OPENAI_CHAT_MODEL)
    if provider is None:
        # An Azure endpoint set for the embeddings means Azure, unless a chat deployment is
        # missing and an OpenAI-compatible server is configured instead.
        has_openai = ENV_OPENAI_BASE_URL in given or ENV_OPENAI_API_KEY in given
        has_azure = ENV_AZURE_OPENAI_ENDPOINT in given and (deployment or not has_openai)
        provider = "azure_openai" if has_azure else "openai"
    problems: list[str] = []
    if provider == "azure_openai":
        endpoint = given.get(ENV_AZURE_OPENAI_ENDPOINT)
        if endpoint is None:
            problems.append(f"set {ENV_AZURE_OPENAI_ENDPOINT} (the Azure OpenAI resource's URL)")
        if deployment is None:
            problems.append(
                f"set {ENV_AZURE_OPENAI_CHAT_DEPLOYMENT} or --deployment (a chat model's "
                "deployment name)"
            )
        checks: dict[str, tuple[str | None, Callable[[str, str], str | None]]] = {
            ENV_AZURE_OPENAI_ENDPOINT: (endpoint, url_problem),
            ENV_AZURE_OPENAI_API_KEY: (given.get(ENV_AZURE_OPENAI_API_KEY), header_problem),
            "--deployment": (deployment, deployment_problem),
            ENV_AZURE_OPENAI_API_VERSION: (
                given.get(ENV_AZURE_OPENAI_API_VERSION),
                api_version_problem,
            ),
        }
    else:
        if ENV_OPENAI_BASE_URL not in given and ENV_OPENAI_API_KEY not in given:
            problems.append(
                f"no chat model configured: set {ENV_AZURE_OPENAI_ENDPOINT} and "
                f"{ENV_AZURE_OPENAI_CHAT_DEPLOYMENT}, or {ENV_OPENAI_BASE_URL} (your own "
                f"server) or {ENV_OPENAI_API_KEY} (api.openai.com) with --model"
            )
        if model is None:
            problems.append(f"set --model or {ENV_OPENAI_CHAT_MODEL} (the chat model's name)")
        checks = {
            ENV_OPENAI_BASE_URL: (given.get(ENV_OPENAI_BASE_URL), url_problem),
            ENV_OPENAI_API_KEY: (given.get(ENV_OPENAI_API_KEY), header_problem),
        }
    for name, (value, check) in checks.items():
        problem = None if value is None else check(name, value)
        if problem is not None:
            problems.append(problem)
    if problems:
        raise ChatSettingsError("; ".join(problems))
    chosen = deployment if provider == "azure_openai" else model
    assert chosen is not None  # checked above
    return ChatSettings(
        provider=provider,
        model=chosen,
        azure_endpoint=given.get(ENV_AZURE_OPENAI_ENDPOINT),
        azure_api_version=given.get(ENV_AZURE_OPENAI_API_VERSION, DEFAULT_AZURE_API_VERSION),
        azure_api_key=given.get(ENV_AZURE_OPENAI_API_KEY),
        openai_base_url=given.get(ENV_OPENAI_BASE_URL),
        openai_api_key=given.get(ENV_OPENAI_API_KEY),
        max_retries=max_retries,
    )


def entra_token_provider(credential: Any | None = None) -> Callable[[], str]:
    """Bearer tokens for Azure OpenAI from azure-identity (DefaultAzureCredential by default)."""
    # Imported at first use: only needed without an API key.
    from azure.identity import DefaultAzureCredential, get_bearer_token_provider  # noqa: PLC0415

    get_token: Callable[[], str] = get_bearer_token_provider(
        credential or DefaultAzureCredential(), COGNITIVE_SERVICES_SCOPE
    )

    def provider() -> str:
        try:
            return get_token()
        except Exception as error:  # azure-identity raises several unrelated types
            logger.info("no Microsoft Entra ID token: %s: %s", type(error).__name__, error)
            raise ChatError(
                f"no Microsoft Entra ID token for Azure OpenAI: sign in (az login) or set "
                f"{ENV_AZURE_OPENAI_API_KEY}"
            ) from error

    return provider


class OpenAIChatModel:
    """`chat.completions.create` through the openai package, asking for a JSON object."""

    def __init__(self, client: openai.OpenAI, settings: ChatSettings) -> None:
        """`client` retries 429, 5xx and timeouts itself (`max_retries`)."""
        self.client = client
        self.settings = settings
        self.description = settings.description
        self.json_mode = True
        """Whether requests carry response_format; off after a server refused it."""

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self.client.close()

    def complete(self, system: str, user: str, timeout: float) -> str | None:
        """The reply's text; raises ChatError (give up) or ChatRequestFailed (this one)."""
        import openai  # noqa: PLC0415

        messages: list[Any] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        options: dict[str, Any] = {}
        if self.json_mode:
            options["response_format"] = {"type": "json_object"}
        try:
            response = self.client.chat.completions.create(
                model=self.settings.model, messages=messages, timeout=timeout, **options
            )
        except openai.BadRequestError as error:
            code = _field(error, "code")
            if code == CONTENT_FILTER:
                raise ChatRequestFailed(
                    "the service's content filter refused the section", filtered=True
                ) from error
            if self.json_mode and "response_format" in _field(error, "message") + str(
                _field(error, "param")
            ):
                # Not every OpenAI-compatible server has a JSON mode; the reply is checked anyway.
                logger.info("the chat service has no JSON mode; asking without it")
                self.json_mode = False
                return self.complete(system, user, timeout)
            raise ChatError(self._refused(error.status_code)) from error
        except openai.APIStatusError as error:
            status = error.status_code
            if status in {408, 429} or status >= 500:
                raise ChatRequestFailed(
                    f"the chat service kept failing (HTTP {status}) after "
                    f"{self.settings.max_retries} retries"
                ) from error
            raise ChatError(self._refused(status)) from error
        except openai.APITimeoutError as error:
            raise ChatRequestFailed(
                f"the chat service did not answer within {timeout:.3g} s"
            ) from error
        except openai.APIConnectionError as error:
            raise ChatError(
                f"cannot reach the chat service at {self._endpoint}; check "
                f"{self._endpoint_setting} and that the server is running"
            ) from error
        except (openai.APIError, ValueError, TypeError) as error:  # an unreadable body
            raise ChatRequestFailed("the chat service's answer could not be read") from error
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            return None
        return content if isinstance(content, str) else None

    @property
    def _endpoint(self) -> str:
        settings = self.settings
        if settings.provider == "azure_openai":
            return str(settings.azure_endpoint)
        return settings.openai_base_url or "api.openai.com"

    @property
    def _endpoint_setting(self) -> str:
        if self.settings.provider == "azure_openai":
            return ENV_AZURE_OPENAI_ENDPOINT
        return ENV_OPENAI_BASE_URL

    def _refused(self, status: int) -> str:
        azure = self.settings.provider == "azure_openai"
        if status in (401, 403):
            if not azure:
                check = ENV_OPENAI_API_KEY
            elif self.settings.azure_api_key:
                check = ENV_AZURE_OPENAI_API_KEY
            else:
                check = "your Microsoft Entra ID sign-in (role 'Cognitive Services OpenAI User')"
            return f"the chat service refused the credentials (HTTP {status}); check {check}"
        if status == 404:
            what = f"--deployment / {ENV_AZURE_OPENAI_CHAT_DEPLOYMENT}" if azure else "--model"
            return (
                f"the chat service has no such deployment, model or path (HTTP 404); check "
                f"{what} and {self._endpoint_setting}"
            )
        return (
            f"the chat service refused the request (HTTP {status}); check that "
            f"{self.settings.model} is a chat model"
        )


def _field(error: openai.APIStatusError, name: str) -> str:
    """A field of the service's error body, or ''."""
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            value = inner.get(name)
            return value if isinstance(value, str) else ""
    return ""


def build_chat_model(settings: ChatSettings, credential: Any | None = None) -> OpenAIChatModel:
    """The openai client for `settings` (nothing is sent until the first question)."""
    import openai  # noqa: PLC0415

    client: openai.OpenAI
    if settings.provider == "azure_openai":
        sign_in: dict[str, Any] = (
            {"api_key": settings.azure_api_key}
            if settings.azure_api_key
            else {"azure_ad_token_provider": entra_token_provider(credential)}
        )
        client = openai.AzureOpenAI(
            azure_endpoint=str(settings.azure_endpoint),
            api_version=settings.azure_api_version,
            max_retries=settings.max_retries,
            **sign_in,
        )
    else:
        client = openai.OpenAI(
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key or NO_API_KEY,
            max_retries=settings.max_retries,
        )
    return OpenAIChatModel(client, settings)
