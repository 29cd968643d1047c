"""The rank tables derived from the shipped .tiktoken files (issue 40): each is the one its
file gives, loads the same ranks, and a stale or damaged one is never used."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import pytest

from chunking.measure import encodings, rank_tables
from chunking.measure.encodings import (
    TABLE_FILES,
    checked_ranks,
    rank_table,
    table_path,
    table_ranks,
    tiktoken_file,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def test_every_rank_table_is_the_one_its_tiktoken_file_gives() -> None:
    # Fails while a table is out of date: `python -m chunking.measure.rank_tables` rewrites them.
    assert rank_tables.stale_tables() == []
    assert rank_tables.main(["--check"]) == 0


@pytest.mark.parametrize("file", TABLE_FILES)
def test_a_rank_table_holds_the_ranks_of_its_file_in_order(file: str) -> None:
    ranks = table_ranks(file)
    assert ranks is not None
    assert list(ranks.items()) == list(checked_ranks(file, tiktoken_file(file)).items())


def test_p50k_base_ranks_skip_the_end_of_text_rank() -> None:
    # p50k's ranks are not one run: 50256 is <|endoftext|>, not a mergeable token.
    ranks = table_ranks("p50k_base")
    assert ranks is not None
    assert 50256 not in ranks.values()
    assert max(ranks.values()) == 50280


def _damaged(table: bytes) -> Iterator[bytes]:
    header, _, body = table.partition(b"\n")
    yield header + b"\n" + body[:1000] + bytes([body[1000] ^ 1]) + body[1001:]  # a flipped bit
    yield header + b"\n" + body[:-1]  # cut short
    yield header.replace(b"cl100k_base", b"p50k_base", 1) + b"\n" + body  # another file's name
    source = encodings.FILE_HASHES["cl100k_base"].encode()
    yield header.replace(source, b"0" * 64) + b"\n" + body  # derived from another file
    yield header + b"\n" + body.replace(b"0-100255", b"1-100256", 1)  # ranks shifted
    yield b""


def _vouched(table: bytes, hashed: bytes) -> bytes:
    """`table`'s header over `hashed`, with the hash of `hashed`: damage a hash cannot see."""
    fields = table.partition(b"\n")[0].split(b" ")
    return b" ".join([*fields[:3], hashlib.sha256(hashed).hexdigest().encode()]) + b"\n" + hashed


def test_a_stale_or_damaged_table_is_not_used() -> None:
    table = table_path("cl100k_base").read_bytes()
    assert table_ranks("cl100k_base", table) is not None
    for damaged in _damaged(table):
        assert table_ranks("cl100k_base", damaged) is None
    body = table.partition(b"\n")[2].partition(b"\n")[2]
    for runs in (b"0-100254", b"0", b"a-b", b"0-100255-1"):  # too few ranks, unreadable runs
        assert table_ranks("cl100k_base", _vouched(table, runs + b"\n" + body)) is None
    assert table_ranks("cl100k_base", _vouched(table, b"0-100255\n" + body)) is not None


@pytest.fixture
def tables_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Rank tables read from and written to `tmp_path`; the ranks read again after."""
    monkeypatch.setattr(encodings, "table_path", lambda file: tmp_path / f"{file}.ranks")
    monkeypatch.setattr(rank_tables, "table_path", lambda file: tmp_path / f"{file}.ranks")
    encodings._shipped_ranks.cache_clear()
    yield tmp_path
    encodings._shipped_ranks.cache_clear()


def test_without_a_usable_table_the_ranks_come_from_the_tiktoken_file(tables_in: Path) -> None:
    data = tiktoken_file("cl100k_base")
    expected = list(checked_ranks("cl100k_base", data).items())
    assert list(encodings._shipped_ranks("cl100k_base").items()) == expected  # no table
    header, _, body = rank_table("cl100k_base", data).partition(b"\n")
    (tables_in / "cl100k_base.ranks").write_bytes(header + b"\n" + body[::-1])
    encodings._shipped_ranks.cache_clear()
    assert list(encodings._shipped_ranks("cl100k_base").items()) == expected


def test_the_command_names_a_stale_table_and_writes_it(
    tables_in: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for file in TABLE_FILES:
        (tables_in / f"{file}.ranks").write_bytes(table_path(file).read_bytes())
    (tables_in / "p50k_base.ranks").write_bytes(b"stale")
    assert rank_tables.main(["--check"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "out of date: p50k_base" in error
    assert rank_tables.main([]) == 0
    assert rank_tables.main(["--check"]) == 0
    assert (tables_in / "p50k_base.ranks").read_bytes() == rank_table(
        "p50k_base", tiktoken_file("p50k_base")
    )
