"""Load tiktoken encodings offline: cl100k_base ships inside the package, checked by sha256."""

from __future__ import annotations

import base64
import functools
import hashlib
from importlib import resources

import tiktoken

from chunking.options import OptionError

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""The hash tiktoken itself expects for cl100k_base (tiktoken_ext/openai_public.py)."""

CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
"""cl100k_base's pre-tokenizer pattern, as in tiktoken_ext/openai_public.py."""

CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

SUPPORTED_ENCODERS = ("cl100k_base", "r50k_base", "p50k_base", "p50k_edit")
"""The Split skill's `encoderModelName` values (o200k_base is not among them)."""


class EncodingUnavailable(OptionError):
    """The encoding cannot be loaded here (not shipped, and no network)."""


def _load_cl100k() -> tiktoken.Encoding:
    return cl100k_from_bytes(
        resources.files("chunking").joinpath("data/cl100k_base.tiktoken").read_bytes()
    )


def cl100k_from_bytes(data: bytes) -> tiktoken.Encoding:
    """Build cl100k_base from the contents of its .tiktoken file, after checking the hash."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise EncodingUnavailable(
            f"the shipped cl100k_base.tiktoken is corrupt "
            f"(sha256 {digest}, expected {CL100K_SHA256})"
        )
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=CL100K_SPECIAL_TOKENS,
    )


@functools.cache
def load_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding `name`, built once per process."""
    if name not in SUPPORTED_ENCODERS:
        raise OptionError(
            f"encoderModelName must be one of {', '.join(SUPPORTED_ENCODERS)} (got {name!r})"
        )
    if name == "cl100k_base":
        return _load_cl100k()
    try:
        # Other encodings are not shipped; tiktoken downloads them where there is internet.
        return tiktoken.get_encoding(name)
    except Exception as error:  # tiktoken raises requests/OSError/ValueError variants
        raise EncodingUnavailable(
            f"encoderModelName {name!r} could not be loaded ({type(error).__name__}); "
            "only cl100k_base ships with this app, use it or allow outbound internet"
        ) from error
