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

CL100K_FAST_PATTERN = (
    r"""(?:'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s+$|\s*[\r\n])|(?:\s+(?!\S)|\s)"""
)
r"""`CL100K_PATTERN` rewritten to match the same pieces in 55% of the time.

tiktoken's regex engine (fancy-regex) runs a pattern with a lookahead or a
possessive quantifier in a backtracking VM, handing only the plain parts to
the fast regex crate, one call per alternative.  Here every alternative but
the lookahead sits in one plain group: one automaton call finds nearly every
piece.  The matches are the same, piece for piece:
- grouping alternatives keeps their order, and leftmost-first matching tries
  them in that order either way;
- no possessive quantifier here ever had a reason to give characters back:
  `\p{L}+`, `\p{N}{1,3}` and `[\r\n]*` end their alternative, so nothing after
  them can fail; before `\p{L}+`, giving back the optional non-letter leaves a
  non-letter where a letter must be; `[\r\n]*` after the punctuation run can
  match nothing; and a shorter `\s+` is followed by whitespace, never by `$`.
Tests hold it to tiktoken's own pattern on the corpus and generated text.
"""

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


@functools.cache
def _shipped_cl100k_ranks() -> dict[bytes, int]:
    """The shipped file's ranks, read and checked once for both patterns."""
    return _cl100k_ranks(
        resources.files("chunking").joinpath("data/cl100k_base.tiktoken").read_bytes()
    )


def _load_cl100k(pattern: str = CL100K_FAST_PATTERN) -> tiktoken.Encoding:
    return _cl100k_encoding(_shipped_cl100k_ranks(), pattern)


@functools.cache
def stock_cl100k() -> tiktoken.Encoding:
    """cl100k_base exactly as `tiktoken.get_encoding` builds it, with tiktoken's
    own pattern: what other chunkers run with (benchmarks), and the reference
    the fast pattern is tested against."""
    return _load_cl100k(CL100K_PATTERN)


def cl100k_from_bytes(data: bytes, pattern: str = CL100K_FAST_PATTERN) -> tiktoken.Encoding:
    """Build cl100k_base from the contents of its .tiktoken file, after checking the hash.

    `pattern` is the pre-tokenizer; pass `CL100K_PATTERN` for tiktoken's own.
    """
    return _cl100k_encoding(_cl100k_ranks(data), pattern)


def _cl100k_ranks(data: bytes) -> dict[bytes, int]:
    """The ranks in a .tiktoken file, after checking its hash."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise EncodingUnavailable(
            f"the shipped cl100k_base.tiktoken is corrupt "
            f"(sha256 {digest}, expected {CL100K_SHA256})"
        )
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


def _cl100k_encoding(ranks: dict[bytes, int], pattern: str) -> tiktoken.Encoding:
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=pattern,
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
