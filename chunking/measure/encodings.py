"""Load tiktoken encodings offline, from files shipped inside the package and checked by sha256.

tiktoken would download these files at first use, with no timeout and under its
registry lock; nothing here ever asks it to.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path
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
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The hash tiktoken itself expects for o200k_base (GPT-4o, GPT-4.1, o-series)."""

FILE_HASHES: Mapping[str, str] = {
    "cl100k_base": CL100K_SHA256,
    "r50k_base": R50K_SHA256,
    "p50k_base": P50K_SHA256,
    "o200k_base": O200K_SHA256,
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

_O200K_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_O200K_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_O200K_CONTRACTION = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
_O200K_PLAIN = (
    rf"[^\r\n\p{{L}}\p{{N}}]?{_O200K_UPPER}*{_O200K_LOWER}+{_O200K_CONTRACTION}",
    rf"[^\r\n\p{{L}}\p{{N}}]?{_O200K_UPPER}+{_O200K_LOWER}*{_O200K_CONTRACTION}",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
)
"""The alternatives of o200k_base's pattern before the lookahead, in tiktoken's order."""

O200K_PATTERN = "|".join((*_O200K_PLAIN, r"\s+(?!\S)", r"\s+"))
"""o200k_base's pre-tokenizer pattern, as in tiktoken_ext/openai_public.py."""

O200K_FAST_PATTERN = "(?:" + "|".join(_O200K_PLAIN) + r")|\s+(?!\S)|\s+"
"""`O200K_PATTERN` with every alternative before the lookahead in one plain group:
the same pieces in about 83% of the time (on the corpus).

As for cl100k (`CL100K_FAST_PATTERN`): fancy-regex hands each plain alternative of a
pattern with a lookahead to the regex crate in its own call; grouped, one call finds
nearly every piece.  Grouping keeps the alternatives' order, leftmost-first matching
tries them in that order either way, and o200k's pattern has no possessive quantifier
whose meaning could change.  Tests hold it to tiktoken's own pattern.
"""

O200K_SPECIAL_TOKENS = {ENDOFTEXT: 199999, "<|endofprompt|>": 200018}


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
    "o200k_base": EncodingRecipe("o200k_base", O200K_FAST_PATTERN, O200K_SPECIAL_TOKENS),
}
"""Every encoding the skill can load, all from shipped files."""

STOCK_PATTERNS: Mapping[str, str] = {"cl100k_base": CL100K_PATTERN, "o200k_base": O200K_PATTERN}
"""tiktoken's own pattern, where the recipe runs a faster one of the same pieces."""

SUPPORTED_ENCODERS = tuple(RECIPES)
"""The encodings `encoderModelName` accepts: the Split skill's four, and o200k_base (ours)."""


class EncodingUnavailable(OptionError):
    """A shipped encoding file is damaged, so the encoding cannot be built."""


DATA = Path(__file__).parent / "data"
"""The shipped .tiktoken files and the rank tables derived from them (read as plain
files: `importlib.resources` would import tempfile and zipfile for nothing)."""

TABLE_FILES = ("cl100k_base", "p50k_base", "o200k_base")
"""The .tiktoken files with a derived rank table beside them (r50k_base is read from
p50k_base's lines, see R50K_LINES)."""

TABLE_FORMAT = b"chunking-rank-table-1"
"""The first word of a rank table's header line."""

TABLE_SEPARATOR = b"\xff\xfe"
"""Between two tokens of a rank table. Neither byte occurs in UTF-8, no token of a
shipped file holds the pair, and a token that is one of the two bytes cannot form the
pair across a separator (the bytes differ), so one `bytes.split` gives the tokens back:
`rank_table` checks that it does."""


def tiktoken_file(file: str) -> bytes:
    """The contents of the shipped .tiktoken file `file` (a key of FILE_HASHES), unchecked."""
    if file == "r50k_base":
        return b"".join(tiktoken_file("p50k_base").splitlines(keepends=True)[:R50K_LINES])
    return (DATA / f"{file}.tiktoken").read_bytes()


def table_path(file: str) -> Path:
    """Where the rank table derived from the shipped `file` lives."""
    return DATA / f"{file}.ranks"


@functools.cache
def _shipped_ranks(file: str) -> dict[bytes, int]:
    """A shipped file's ranks, read and checked once (p50k_base and p50k_edit share them):
    from its derived table when that is whole and derived from the file the hash names,
    else from the .tiktoken file itself."""
    ranks = table_ranks(file) if file in TABLE_FILES else None
    return checked_ranks(file, tiktoken_file(file)) if ranks is None else ranks


def rank_table(file: str, data: bytes) -> bytes:
    """The rank table of .tiktoken contents `data` (a shipped `file`'s, hash checked).

    A header line, `chunking-rank-table-1 FILE SOURCE-SHA256 SHA256`, where SHA256 is the
    hash of all that follows it: a line of the ranks as `first-last` runs of consecutive
    ranks (comma separated), then the tokens in rank order joined by TABLE_SEPARATOR.
    Loading one is a hash, one `split` and one `dict` (`table_ranks`), where the
    .tiktoken file needs a base64 decode and an `int` per token.
    """
    ranks = checked_ranks(file, data)
    tokens = list(ranks)
    body = TABLE_SEPARATOR.join(tokens)
    if body.split(TABLE_SEPARATOR) != tokens:
        raise ValueError(f"a token of {file} holds the rank table's separator")
    runs: list[list[int]] = []
    for rank in ranks.values():
        if runs and rank == runs[-1][1] + 1:
            runs[-1][1] = rank
        else:
            runs.append([rank, rank])
    hashed = b",".join(b"%d-%d" % (first, last) for first, last in runs) + b"\n" + body
    header = (TABLE_FORMAT, file.encode(), FILE_HASHES[file].encode())
    return b" ".join((*header, hashlib.sha256(hashed).hexdigest().encode())) + b"\n" + hashed


def table_ranks(file: str, table: bytes | None = None) -> dict[bytes, int] | None:
    """The ranks in the rank table of the shipped `file` (`table`: its contents, read
    from `table_path(file)` when not given), or None when there is none, or it was not
    derived from the file FILE_HASHES names, or what follows its header does not match
    the header's hash: a stale or damaged table is never used."""
    if table is None:
        try:
            table = table_path(file).read_bytes()
        except OSError:
            return None
    header, _, hashed = table.partition(b"\n")
    expected = [TABLE_FORMAT, file.encode(), FILE_HASHES[file].encode()]
    fields = header.split(b" ")
    if fields[:3] != expected or fields[3:] != [hashlib.sha256(hashed).hexdigest().encode()]:
        return None
    runs_line, _, body = hashed.partition(b"\n")
    try:  # a table its hash vouches for, but not written by `rank_table`
        runs = [
            range(int(first), int(last) + 1)
            for first, last in (run.split(b"-") for run in runs_line.split(b","))
        ]
        return dict(zip(body.split(TABLE_SEPARATOR), itertools.chain(*runs), strict=True))
    except ValueError:
        return None


def shipped_ranks(encoding: tiktoken.Encoding) -> Mapping[bytes, int] | None:
    """The mergeable ranks of the shipped file `encoding` is built from (read and checked
    once per process), or None when it is no shipped encoding: derived tables (each
    token's byte length) come from them at C speed, not from a decode per token."""
    recipe = RECIPES.get(encoding.name)
    if recipe is None:
        return None
    ranks = _shipped_ranks(recipe.file)
    highest = max(ranks[next(reversed(ranks))], *recipe.special_tokens.values())
    if encoding.n_vocab != highest + 1:
        return None
    token, rank = next(reversed(ranks.items()))
    # The same name and size, and its last token the file's: the shipped vocabulary.
    return ranks if encoding.decode_single_token_bytes(rank) == token else None


def checked_ranks(file: str, data: bytes) -> dict[bytes, int]:
    """The ranks in the contents of .tiktoken file `file`, after checking its hash."""
    expected = FILE_HASHES[file]
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise EncodingUnavailable(
            f"the shipped {file}.tiktoken is corrupt (sha256 {digest}, expected {expected})"
        )
    # Each line is `base64-token rank`. Decoding the two columns with map and zip runs
    # the loop in C: a Python loop over cl100k's 100,256 lines was most of a start-up.
    fields = data.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


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
def stock_encoding(name: str) -> tiktoken.Encoding:
    """Encoding `name` exactly as `tiktoken.get_encoding` builds it, with tiktoken's
    own pattern: what other chunkers run with (benchmarks), and the reference
    the fast patterns are tested against."""
    encoding_name = encoding_name_of(name)
    return _build(
        encoding_name,
        _shipped_ranks(RECIPES[encoding_name].file),
        STOCK_PATTERNS.get(encoding_name),
    )


def stock_cl100k() -> tiktoken.Encoding:
    """cl100k_base exactly as `tiktoken.get_encoding` builds it (`stock_encoding`)."""
    return stock_encoding("cl100k_base")


def cl100k_from_bytes(data: bytes, pattern: str = CL100K_FAST_PATTERN) -> tiktoken.Encoding:
    """Build cl100k_base from the contents of its .tiktoken file, after checking the hash.

    `pattern` is the pre-tokenizer; pass `CL100K_PATTERN` for tiktoken's own.
    """
    return _build("cl100k_base", checked_ranks("cl100k_base", data), pattern)


def encoding_name_of(name: str) -> str:
    """The shipped encoding `name` stands for: an encoding name, or a model name that
    tiktoken maps to a shipped encoding (gpt-4o and o3 to o200k_base, gpt-4 to cl100k_base).

    Any other name is an OptionError.
    """
    if name in RECIPES:
        return name
    try:
        # A table look-up in tiktoken.model: nothing is loaded or downloaded.
        mapped = tiktoken.encoding_name_for_model(name)
    except KeyError:
        mapped = None
    if mapped is not None and mapped in RECIPES:
        return mapped
    raise OptionError(
        f"encoderModelName must be one of {', '.join(SUPPORTED_ENCODERS)} or a model "
        f"name that uses one of them, such as gpt-4o (got {clipped_repr(name)})"
    )


def load_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding `name` (or the one model `name` uses), built once per
    process from the shipped files.

    Any other name is an OptionError at once: nothing is downloaded, ever.
    """
    return _load_shipped(encoding_name_of(name))


@functools.cache
def _load_shipped(name: str) -> tiktoken.Encoding:
    return _build(name, _shipped_ranks(RECIPES[name].file))
