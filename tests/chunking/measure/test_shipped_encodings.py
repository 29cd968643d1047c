"""Every `encoderModelName` loads from files shipped in the package, never from the network."""

from __future__ import annotations

import base64
import hashlib
import importlib
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest
import tiktoken

from chunking.measure.encodings import (
    STOCK_PATTERNS,
    SUPPORTED_ENCODERS,
    EncodingUnavailable,
    checked_ranks,
    load_encoding,
    shipped_ranks,
    stock_encoding,
    tiktoken_file,
)
from chunking.measure.token_spans import _token_byte_lengths
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.render import record_data
from skills.skill.settings import Settings
from tests.helpers import python_lines_in
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

PROJECT = ROOT

TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{file}.tiktoken"
"""Where tiktoken downloads each file from (tiktoken_ext/openai_public.py)."""
TIKTOKEN_FILES: Mapping[str, str] = {
    "cl100k_base": "cl100k_base",
    "r50k_base": "r50k_base",
    "p50k_base": "p50k_base",
    "p50k_edit": "p50k_base",
    "o200k_base": "o200k_base",
}
"""The file each encoding's ranks come from; p50k_edit shares p50k_base's."""

EXPECTED_HASHES: Mapping[str, str] = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
"""`expected_hash` of each file in tiktoken_ext/openai_public.py (tiktoken 0.14)."""

SAMPLE = "Hello world!  Indented    code,\n\tnumbers 12345 and naïve café 😀 <|endoftext|>"

NO_NETWORK = textwrap.dedent(
    """
    import sys, time

    def refuse(event, args):
        if event in ("socket.getaddrinfo", "socket.connect", "socket.gethostbyname"):
            raise RuntimeError(f"network use: {event} {args!r}")

    sys.addaudithook(refuse)
    from chunking.measure.encodings import SUPPORTED_ENCODERS, load_encoding

    for name in SUPPORTED_ENCODERS:
        began = time.monotonic()
        encoding = load_encoding(name)
        assert encoding.decode(encoding.encode_ordinary("hello world")) == "hello world"
        print(name, encoding.n_vocab, round(time.monotonic() - began, 3))
    """
)
"""Loads every encoding in a process where any DNS look-up or connection raises."""


def test_every_encoder_loads_without_touching_the_network() -> None:
    """Regression (issue 13, defect 3): r50k/p50k/p50k_edit made tiktoken download its
    file with no timeout, under its registry lock; with blocked egress the record hung."""
    done = subprocess.run(
        [sys.executable, "-c", NO_NETWORK],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = {line.split()[0]: int(line.split()[1]) for line in done.stdout.splitlines()}
    assert loaded == {
        "cl100k_base": 100277,
        "r50k_base": 50257,
        "p50k_base": 50281,
        "p50k_edit": 50284,
        "o200k_base": 200019,
    }


@pytest.mark.parametrize("name", sorted(EXPECTED_HASHES))
def test_each_shipped_file_has_tiktokens_expected_hash(name: str) -> None:
    assert hashlib.sha256(tiktoken_file(name)).hexdigest() == EXPECTED_HASHES[name]


def test_r50k_base_is_the_first_lines_of_p50k_base() -> None:
    # Why one file serves both: p50k_base only adds 24 whitespace tokens after r50k's.
    r50k, p50k = tiktoken_file("r50k_base"), tiktoken_file("p50k_base")
    assert p50k.startswith(r50k)
    assert len(p50k.splitlines()) - len(r50k.splitlines()) == 24


def test_a_corrupted_file_is_refused() -> None:
    data = tiktoken_file("p50k_base")
    with pytest.raises(EncodingUnavailable, match=r"p50k_base\.tiktoken is corrupt"):
        checked_ranks("p50k_base", data.replace(b"IHRoZQ==", b"IHRoZR==", 1))


@pytest.mark.parametrize("name", SUPPORTED_ENCODERS)
def test_each_encoding_is_the_one_tiktoken_builds_from_the_same_file(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tiktoken itself, fed our files through its cache (which it checks against its own
    expected hashes), builds the same encoding: same ranks, specials and tokens."""
    file = TIKTOKEN_FILES[name]
    url = TIKTOKEN_URL.format(file=file)
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(tiktoken_file(file))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    # tiktoken's own recipe (its plugin module), not get_encoding: no registry entry is left.
    openai_public = importlib.import_module("tiktoken_ext.openai_public")
    stock = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    ours = load_encoding(name)
    assert ours._mergeable_ranks == stock._mergeable_ranks
    assert ours._special_tokens == stock._special_tokens
    assert ours.n_vocab == stock.n_vocab
    assert ours.encode(SAMPLE, allowed_special="all") == stock.encode(SAMPLE, allowed_special="all")
    if name in STOCK_PATTERNS:  # a faster pattern of the same pieces (test_encodings.py)
        assert stock_encoding(name)._pat_str == stock._pat_str
        assert stock_encoding(name).encode(SAMPLE, allowed_special="all") == stock.encode(
            SAMPLE, allowed_special="all"
        )
    else:
        assert ours._pat_str == stock._pat_str


LINES_TO_READ_RANKS = 20
"""Python lines `checked_ranks` may run for a whole file: a few, not one per rank."""
ENCODINGS_SOURCE = str(PROJECT / "chunking" / "measure" / "encodings.py")


def _ranks_line_by_line(data: bytes) -> dict[bytes, int]:
    """How the ranks were read before issue 26 (and how tiktoken's loader reads them)."""
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


def test_ranks_are_read_without_a_python_loop_per_line() -> None:
    # Issue 26: cl100k's 100,256 lines read one by one in Python were most of every
    # `python -m chunking` and worker start; before, this counted 200,000 lines and more.
    data = tiktoken_file("cl100k_base")
    with python_lines_in(ENCODINGS_SOURCE) as lines:
        checked_ranks("cl100k_base", data)
    assert lines[0] <= LINES_TO_READ_RANKS


@pytest.mark.parametrize("file", sorted(EXPECTED_HASHES))
def test_ranks_are_those_read_line_by_line(file: str) -> None:
    data = tiktoken_file(file)
    ranks = checked_ranks(file, data)
    assert list(ranks.items()) == list(_ranks_line_by_line(data).items())


def test_cl100k_gives_the_token_ids_of_the_line_by_line_ranks_on_fixtures() -> None:
    ours = load_encoding("cl100k_base")
    reference = tiktoken.Encoding(
        name="cl100k_reference",
        pat_str=ours._pat_str,
        mergeable_ranks=_ranks_line_by_line(tiktoken_file("cl100k_base")),
        special_tokens=ours._special_tokens,
    )
    texts = sorted((PROJECT / "tests" / "fixtures").rglob("*.*"))
    read = [path.read_text(encoding="utf-8", errors="replace") for path in texts]
    assert read
    assert ours.encode_ordinary_batch(read) == reference.encode_ordinary_batch(read)


def test_known_token_ids() -> None:
    # GPT-2's (r50k_base) well-known ids for "hello world"; p50k_base merges runs of spaces.
    assert load_encoding("r50k_base").encode("hello world") == [31373, 995]
    assert load_encoding("p50k_base").encode("hello world") == [31373, 995]
    assert len(load_encoding("r50k_base").encode("        x")) > 2
    assert len(load_encoding("p50k_base").encode("        x")) == 2
    assert load_encoding("p50k_edit").encode("<|fim_prefix|>", allowed_special="all") == [50281]


@pytest.mark.parametrize("name", SUPPORTED_ENCODERS)
def test_a_record_with_each_encoder_is_answered_at_once(name: str) -> None:
    record = chunk_record(
        InputRecord("1", {"text": "# Title\n\nSome words. " * 50, "encoderModelName": name}),
        Settings(),
    )
    assert record.errors == ()
    assert record_data(record)["chunks"]


def test_an_encoder_that_is_not_shipped_is_a_record_error_in_our_words() -> None:
    record = chunk_record(InputRecord("1", {"text": "x", "encoderModelName": "gpt2"}), Settings())
    assert record_data(record) == {}
    assert record.errors == (
        "encoderModelName must be one of cl100k_base, r50k_base, p50k_base, p50k_edit, "
        "o200k_base or a model name that uses one of them, such as gpt-4o (got 'gpt2')",
    )


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("text-embedding-3-large", "cl100k_base"),
    ],
)
def test_model_names_use_the_encoding_tiktoken_maps_them_to(model: str, encoding: str) -> None:
    assert tiktoken.encoding_name_for_model(model) == encoding
    assert load_encoding(model) is load_encoding(encoding)
    record = chunk_record(
        InputRecord("1", {"text": "# T\n\nWords. " * 20, "encoderModelName": model}), Settings()
    )
    assert record.errors == ()


def test_a_model_whose_encoding_is_not_shipped_is_a_record_error() -> None:
    # gpt-oss uses o200k_harmony, which is not shipped.
    record = chunk_record(
        InputRecord("1", {"text": "x", "encoderModelName": "gpt-oss-120b"}), Settings()
    )
    assert record_data(record) == {}
    assert "(got 'gpt-oss-120b')" in record.errors[0]


def test_o200k_known_token_ids() -> None:
    # tiktoken's o200k_base ids; a word keeps its contraction, unlike cl100k.
    o200k = load_encoding("o200k_base")
    assert o200k.encode("hello world") == [24912, 2375]
    assert len(o200k.encode_ordinary("it's")) < len(load_encoding("cl100k_base").encode("it's"))
    assert o200k.encode("<|endofprompt|>", allowed_special="all") == [200018]


def _byte_lengths_decoded(encoding: tiktoken.Encoding) -> list[int]:
    """Each token id's UTF-8 length, decoded one by one (0 for ids the encoding skips)."""
    lengths = []
    for token in range(encoding.n_vocab):
        try:
            lengths.append(len(encoding.decode_single_token_bytes(token)))
        except KeyError:
            lengths.append(0)
    return lengths


@pytest.mark.parametrize("name", SUPPORTED_ENCODERS)
def test_token_byte_lengths_from_the_ranks_are_those_decoded(name: str) -> None:
    # Issue 40: the table comes from the shipped ranks at C speed, not 100,000 decodes.
    encoding = load_encoding(name)
    assert shipped_ranks(encoding) is not None
    for wide in (False, True):
        assert _token_byte_lengths(encoding, wide).tolist() == _byte_lengths_decoded(encoding)


def test_an_encoding_of_other_ranks_is_not_taken_for_a_shipped_one() -> None:
    shipped = load_encoding("cl100k_base")
    other = tiktoken.Encoding(
        name="cl100k_base",  # the name alone does not make it cl100k
        pat_str=shipped._pat_str,
        mergeable_ranks={bytes([byte]): byte for byte in range(256)} | {b"ab": 256},
        special_tokens={},
    )
    assert shipped_ranks(other) is None
    assert _token_byte_lengths(other, False).tolist() == [1] * 256 + [2]
