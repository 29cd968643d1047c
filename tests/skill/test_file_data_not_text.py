"""`file_data` that declares no text encoding, or is not text at all (issue 28, items 2
and 3): a declaration is a text encoding that fits the bytes or a warning; compressed,
archived and binary bytes are a per-record error naming what they look like, never
chunks of mojibake; warnings say what was done."""

from __future__ import annotations

import base64
import bz2
import gzip
import io
import lzma
import random
import tarfile
import zipfile
import zlib

import pytest

from chunking.parse.decode import BinaryFile, DecodedFile, decode_file
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.render import record_data
from skills.skill.settings import Settings

PAGE = (
    '<html><head><meta charset="{charset}"><title>Notes</title></head><body>'
    "<h1>Notes</h1><p>Plain ASCII text in a page that declares a charset.</p></body></html>"
)
XML = (
    '<?xml version="1.0" encoding="{charset}"?>'
    "<html><body><h1>Notes</h1><p>Some text.</p></body></html>"
)
DOCUMENT = ("# Guide\n\nSome words about the guide, in plain text.\n\n" * 400).encode()
RANDOM_MEGABYTE = random.Random(28).randbytes(1 << 20)


def _record(raw: bytes, **inputs: str) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    data = {"file_data": {"$type": "file", "data": base64.b64encode(raw).decode()}, **inputs}
    record = chunk_record(InputRecord("1", data), Settings())
    chunks = record_data(record).get("chunks", [])
    assert isinstance(chunks, list)
    return [chunk["content"] for chunk in chunks], record.errors, record.warnings


@pytest.mark.parametrize("charset", ["zlib", "base64", "hex", "rot13", "punycode", "undefined"])
@pytest.mark.parametrize(("template", "file_name"), [(PAGE, "page.html"), (XML, "page.xhtml")])
def test_a_declared_charset_that_is_no_text_encoding_falls_back_with_a_warning(
    charset: str, template: str, file_name: str
) -> None:
    page = template.format(charset=charset)
    chunks, errors, warnings = _record(page.encode(), fileName=file_name)
    assert errors == ()
    assert chunks
    (warning,) = warnings
    assert f"declares the encoding {charset!r}, which is not a text encoding" in warning
    assert "detected instead" in warning


@pytest.mark.parametrize("charset", ["cp037", "utf-16", "utf-16-le", "utf-32", "utf-7"])
def test_an_ascii_incompatible_declaration_on_ascii_bytes_is_checked_against_them(
    charset: str,
) -> None:
    page = PAGE.format(charset=charset)
    decoded = decode_file(page.encode("ascii"), file_name="page.html")
    assert isinstance(decoded, DecodedFile)
    assert decoded.text == page  # read as the ASCII it is, not as EBCDIC or UTF-16
    (warning,) = decoded.warnings
    assert f"declares the encoding {charset!r}" in warning


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("guide.md", DOCUMENT)
    return buffer.getvalue()


def _tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("guide.md")
        info.size = len(DOCUMENT)
        archive.addfile(info, io.BytesIO(DOCUMENT))
    return buffer.getvalue()


NOT_TEXT = {
    "gzip": (gzip.compress(DOCUMENT), "a gzip file", "send it decompressed"),
    "bzip2": (bz2.compress(DOCUMENT), "a bzip2 file", "send it decompressed"),
    "xz": (lzma.compress(DOCUMENT), "an xz file", "send it decompressed"),
    "zip": (_zip(), "a ZIP archive", "unpack it"),
    "tar": (_tar(), "a tar archive", "unpack it"),
    "zlib stream": (zlib.compress(DOCUMENT), "binary data", "not text"),
    "raw deflate": (zlib.compress(DOCUMENT)[2:], "binary data", "not text"),
    "1 MB of random bytes": (RANDOM_MEGABYTE, "binary data", "not text"),
    "PNG": (b"\x89PNG\r\n\x1a\n" + RANDOM_MEGABYTE[:4096], "a PNG image", "Document Layout"),
    "PDF": (b"%PDF-1.7\n" + RANDOM_MEGABYTE[:4096], "a PDF", "Document Layout"),
}


@pytest.mark.parametrize("name", list(NOT_TEXT))
@pytest.mark.parametrize("file_name", ["guide.md", "guide.html", "guide.txt", None])
def test_bytes_that_are_not_text_are_a_record_error_naming_what_they_look_like(
    name: str, file_name: str | None
) -> None:
    raw, kind, advice = NOT_TEXT[name]
    chunks, errors, warnings = _record(raw, **({"fileName": file_name} if file_name else {}))
    assert chunks == []
    (error,) = errors
    assert error.startswith(f"input 'file_data': the file looks like {kind}")
    assert advice in error
    assert warnings == ()


def test_the_share_of_control_characters_is_measured_after_decoding() -> None:
    """Bytes that pass the byte checks (no signature, no NUL, few C0 bytes) but decode to
    replacement characters: high bytes that no single-byte text starts with in such runs."""
    raw = bytes(random.Random(3).choice(range(0x80, 0x100)) for _ in range(4096))
    decoded = decode_file(b"<html>" + raw, file_name="page.html", content_type="text/html")
    if isinstance(decoded, DecodedFile):  # a detector may find a legible reading
        assert decoded.text.count("\ufffd") < 0.05 * len(decoded.text)
    else:
        assert decoded.kind == "binary data"


def test_the_warning_on_invalid_utf8_says_what_was_done() -> None:
    """Regression: "not UTF-8; read as utf-8 (detected)" contradicted itself."""
    text = "Привет, мир. Это документ на русском языке. " * 20
    raw = text.encode() + b"\xff" + text.encode()
    decoded = decode_file(raw, file_name="notes.md")
    assert isinstance(decoded, DecodedFile)
    assert decoded.encoding == "utf-8"
    assert decoded.warnings == ("1 byte sequence(s) not valid utf-8 were replaced with U+FFFD",)
    for warning in decoded.warnings:
        assert "not UTF-8" not in warning


def test_binary_file_kinds_are_phrases() -> None:
    for raw, kind, _ in NOT_TEXT.values():
        decoded = decode_file(raw)
        assert isinstance(decoded, BinaryFile)
        assert decoded.kind == kind


def test_utf8_with_a_stray_byte_is_read_as_utf8_not_as_windows_1252() -> None:
    """Regression: one invalid byte in UTF-8 Cyrillic made the whole file windows-1252
    mojibake ("ÐŸÑ€Ð¸Ð²ÐµÑ‚") with a warning that it was detected."""
    raw = ("Привет, мир. " * 50).encode() + b"\xff"
    decoded = decode_file(raw, file_name="notes.md")
    assert isinstance(decoded, DecodedFile)
    assert decoded.text.startswith("Привет, мир.")
    assert decoded.warnings == ("1 byte sequence(s) not valid utf-8 were replaced with U+FFFD",)


def test_decoding_logs_no_library_text(caplog: pytest.LogCaptureFixture) -> None:
    """BeautifulSoup's UnicodeDammit logged "Some characters could not be decoded, and
    were replaced with REPLACEMENT CHARACTER." for such bytes; the warning is ours."""
    text = "Привет, мир. Это документ на русском языке. " * 20
    raw = text.encode() + b"\xff" + text.encode()
    with caplog.at_level("INFO"):  # charset-normalizer says more at DEBUG, never shown
        decoded = decode_file(raw, file_name="notes.md")
    assert isinstance(decoded, DecodedFile)
    assert decoded.warnings
    assert caplog.records == []
