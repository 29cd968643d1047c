"""Load tiktoken encodings offline, from files shipped inside the package and checked by sha256.

tiktoken would download these files at first use, with no timeout and under its
registry lock; nothing here ever asks it to.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

import tiktoken

from chunking.options import OptionError, clipped_repr

if TYPE_CHECKING:
    from collections.abc import Mapping

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""The hash tiktoken itself expects for cl100k_base (tiktoken_ext/openai_public.py)."""
R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
"""The hash tiktoken itself expects for r50k_base (GPT-2's ranks)."""
P50K_SHA256 = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
"""The hash tiktoken itself expects for p50k_base (also the ranks of p50k_edit)."""

FILE_HASHES: Mapping[str, str] = {
    "cl100k_base": CL100K_SHA256,
    "r50k_base": R50K_SHA256,
    "p50k_base": P50K_SHA256,
}
"""Each .tiktoken file's sha256; a file that does not match is never used."""

R50K_LINES = 50_256
"""r50k_base.tiktoken is, byte for byte, the first 50,256 lines of p50k_base.tiktoken
(p50k only appends 24 tokens for runs of spaces), so only p50k's file is shipped; the
prefix is checked against r50k's own hash like any shipped file."""

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

ENDOFTEXT = "<|endoftext|>"

CL100K_SPECIAL_TOKENS = {
    ENDOFTEXT: 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

R50K_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
"""The pre-tokenizer pattern of r50k_base, p50k_base and p50k_edit, as in
tiktoken_ext/openai_public.py (GPT-2's pattern, rewritten there to run faster)."""


@dataclass(frozen=True, slots=True)
class EncodingRecipe:
    """How one encoding is built, mirroring its constructor in tiktoken_ext/openai_public.py."""

    file: str
    """The .tiktoken file (an encoding name in FILE_HASHES) holding the mergeable ranks."""
    pattern: str
    """The pre-tokenizer regex."""
    special_tokens: Mapping[str, int]
    explicit_n_vocab: int | None = None
    """tiktoken checks the ranks and special tokens add up to this many ids."""


RECIPES: Mapping[str, EncodingRecipe] = {
    "cl100k_base": EncodingRecipe("cl100k_base", CL100K_FAST_PATTERN, CL100K_SPECIAL_TOKENS),
    "r50k_base": EncodingRecipe("r50k_base", R50K_PATTERN, {ENDOFTEXT: 50256}, 50257),
    "p50k_base": EncodingRecipe("p50k_base", R50K_PATTERN, {ENDOFTEXT: 50256}, 50281),
    "p50k_edit": EncodingRecipe(
        "p50k_base",
        R50K_PATTERN,
        {
            ENDOFTEXT: 50256,
            "<|fim_prefix|>": 50281,
            "<|fim_middle|>": 50282,
            "<|fim_suffix|>": 50283,
        },
    ),
}
"""Every encoding the skill can load, all from shipped files."""

SUPPORTED_ENCODERS = tuple(RECIPES)
"""The Split skill's `encoderModelName` values (o200k_base is not among them)."""


class EncodingUnavailable(OptionError):
    """A shipped encoding file is damaged, so the encoding cannot be built."""


def tiktoken_file(file: str) -> bytes:
    """The contents of the shipped .tiktoken file `file` (a key of FILE_HASHES), unchecked."""
    if file == "r50k_base":
        return b"".join(tiktoken_file("p50k_base").splitlines(keepends=True)[:R50K_LINES])
    return resources.files("chunking").joinpath(f"data/{file}.tiktoken").read_bytes()


@functools.cache
def _shipped_ranks(file: str) -> dict[bytes, int]:
    """A shipped file's ranks, read and checked once (p50k_base and p50k_edit share them)."""
    return checked_ranks(file, tiktoken_file(file))


def checked_ranks(file: str, data: bytes) -> dict[bytes, int]:
    """The ranks in the contents of .tiktoken file `file`, after checking its hash."""
    expected = FILE_HASHES[file]
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise EncodingUnavailable(
            f"the shipped {file}.tiktoken is corrupt (sha256 {digest}, expected {expected})"
        )
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


def _build(name: str, ranks: dict[bytes, int], pattern: str | None = None) -> tiktoken.Encoding:
    recipe = RECIPES[name]
    return tiktoken.Encoding(
        name=name,
        pat_str=recipe.pattern if pattern is None else pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(recipe.special_tokens),
        explicit_n_vocab=recipe.explicit_n_vocab,
    )


@functools.cache
def stock_cl100k() -> tiktoken.Encoding:
    """cl100k_base exactly as `tiktoken.get_encoding` builds it, with tiktoken's
    own pattern: what other chunkers run with (benchmarks), and the reference
    the fast pattern is tested against."""
    return _build("cl100k_base", _shipped_ranks("cl100k_base"), CL100K_PATTERN)


def cl100k_from_bytes(data: bytes, pattern: str = CL100K_FAST_PATTERN) -> tiktoken.Encoding:
    """Build cl100k_base from the contents of its .tiktoken file, after checking the hash.

    `pattern` is the pre-tokenizer; pass `CL100K_PATTERN` for tiktoken's own.
    """
    return _build("cl100k_base", checked_ranks("cl100k_base", data), pattern)


@functools.cache
def load_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding `name`, built once per process from the shipped files.

    Any other name is an OptionError at once: nothing is downloaded, ever.
    """
    if name not in RECIPES:
        raise OptionError(
            f"encoderModelName must be one of {', '.join(SUPPORTED_ENCODERS)} "
            f"(got {clipped_repr(name)})"
        )
    return _build(name, _shipped_ranks(RECIPES[name].file))
