"""The raw file as input (`file_data`), decoded by its declared or detected encoding
(issue 17, item 5)."""

from __future__ import annotations

import base64
import codecs
import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from chunking.parse.decode import BinaryFile, DecodedFile, decode_file
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.render import record_data
from skills.skill.settings import Settings

PAGE = (
    "<html><head>{meta}<title>Café</title></head><body>"
    "<h1>Résumé – naïve</h1><p>Le prix est de 5 € “net”. Crème brûlée à la française.</p>"
    "<h2>Second</h2><p>Voilà un élève très doué.</p></body></html>"
)
JAPANESE = (
    "<html><head>{meta}<title>日本語</title></head><body>"
    "<h1>日本語のページ</h1><p>これは文です。もう一つの文です。</p>"
    "<h2>二つ目</h2><p>東京は日本の首都です。</p></body></html>"
)
MARKDOWN = "# Café naïve\n\nLe résumé est très bien fait, crème brûlée à la française.\n"


def _file(data: bytes) -> dict[str, str]:
    return {"$type": "file", "data": base64.b64encode(data).decode("ascii")}


def _chunk(data: dict[str, object]) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    record = chunk_record(InputRecord("1", data), Settings())
    chunks = record_data(record).get("chunks", [])
    assert isinstance(chunks, list)
    return [chunk["content"] for chunk in chunks], record.errors, record.warnings


def _same_as_text(text: str, raw: bytes, file_name: str) -> tuple[str, ...]:
    """`file_data` holding `raw` chunks exactly as `text` given as text; its warnings."""
    expected, errors, _ = _chunk({"text": text, "fileName": file_name})
    assert errors == ()
    got, errors, warnings = _chunk({"file_data": _file(raw), "fileName": file_name})
    assert errors == ()
    assert got == expected
    return warnings


def test_utf8() -> None:
    page = PAGE.format(meta="")
    assert _same_as_text(page, page.encode(), "page.html") == ()


def test_utf16_with_a_byte_order_mark() -> None:
    page = PAGE.format(meta="")
    assert _same_as_text(page, page.encode("utf-16"), "page.html") == ()
    assert decode_file(page.encode("utf-16-be").join([codecs.BOM_UTF16_BE, b""])) == (
        DecodedFile(page, "utf-16-be", ())
    )


def test_windows_1252_declared_by_meta_charset() -> None:
    page = PAGE.format(meta='<meta charset="windows-1252">')
    assert _same_as_text(page, page.encode("cp1252"), "page.html") == ()


def test_iso_8859_1_declared_reads_as_windows_1252_like_browsers() -> None:
    page = PAGE.format(
        meta='<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    )
    decoded = decode_file(page.encode("cp1252"), file_name="page.html")
    assert decoded == DecodedFile(page, "cp1252", ())  # € and curly quotes survive


def test_shift_jis_declared_by_meta_charset() -> None:
    page = JAPANESE.format(
        meta='<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
    )
    assert _same_as_text(page, page.encode("shift_jis"), "page.html") == ()


def test_an_xml_declaration() -> None:
    page = '<?xml version="1.0" encoding="ISO-8859-1"?>' + PAGE.format(meta="")
    assert decode_file(page.encode("cp1252"), content_type="application/xhtml+xml") == (
        DecodedFile(page, "cp1252", ())
    )


def test_undeclared_latin1_markdown_is_read_as_windows_1252_with_a_warning() -> None:
    (warning,) = _same_as_text(MARKDOWN, MARKDOWN.encode("latin-1"), "notes.md")
    assert warning.startswith("input 'file_data': the file's encoding is not declared")
    assert "cp1252" in warning


def test_undeclared_cyrillic_goes_to_the_detector() -> None:
    text = "<p>Это текст на русском языке, длинный и вполне понятный для проверки.</p>"
    decoded = decode_file(text.encode("cp1251"), file_name="ru.html")
    assert isinstance(decoded, DecodedFile)
    assert decoded.text == text
    assert decoded.encoding == "windows-1251"


def test_a_declaration_that_does_not_fit_falls_back_with_a_warning() -> None:
    page = PAGE.format(meta='<meta charset="utf-8">')
    decoded = decode_file(page.encode("cp1252"), file_name="page.html")
    assert isinstance(decoded, DecodedFile)
    assert decoded.text == page
    assert decoded.warnings[0].startswith("the file declares utf-8 but byte")


def test_format_comes_from_the_file_name_or_content_type() -> None:
    text = "# Title\n\nBody text here.\n"
    raw = {"file_data": _file(text.encode())}
    for inputs, same in (
        ({"contentType": "text/plain"}, {"format": "text"}),
        ({"fileName": "a.md"}, {"format": "markdown"}),
    ):
        from_file = chunk_record(InputRecord("1", {**raw, **inputs}), Settings())
        from_text = chunk_record(InputRecord("1", {"text": text, **same}), Settings())
        assert record_data(from_file)["chunks"] == record_data(from_text)["chunks"]
    as_text = chunk_record(InputRecord("1", {**raw, "contentType": "text/plain"}), Settings())
    as_markdown = chunk_record(InputRecord("1", {**raw, "fileName": "a.md"}), Settings())
    assert record_data(as_text) != record_data(
        as_markdown
    )  # the heading is a heading only in markdown


LAYOUT = "Document Layout skill (outputFormat: markdown) or Content Understanding"


@pytest.mark.parametrize(
    ("raw", "file_name", "kind", "advice"),
    [
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "report.pdf", "a PDF", LAYOUT),
        (b"PK\x03\x04\x14\x00\x06\x00", "memo.docx", "a Word document (DOCX)", LAYOUT),
        (b"PK\x03\x04\x14\x00\x06\x00", "sheet.xlsx", "an Excel workbook (XLSX)", LAYOUT),
        (b"PK\x03\x04\x14\x00", None, "a ZIP archive", "unpack it"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", "old.doc", "an OLE file", LAYOUT),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.png", "a PNG image", LAYOUT),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "photo.jpg", "a JPEG image", LAYOUT),
        (b"abc\x00\x00\x00\x01\x02" * 100, "data.bin", "binary data", "send the document's text"),
    ],
)
def test_a_binary_file_is_a_record_error_saying_what_to_send(
    raw: bytes, file_name: str | None, kind: str, advice: str
) -> None:
    data: dict[str, object] = {"file_data": _file(raw)}
    if file_name:
        data["fileName"] = file_name
    chunks, errors, _ = _chunk(data)
    assert chunks == []
    (error,) = errors
    assert f"the file looks like {kind}" in error
    assert advice in error


def test_an_office_zip_named_by_content_type() -> None:
    decoded = decode_file(
        b"PK\x03\x04",
        content_type="application/vnd.openxmlformats-officedocument.presentationml.presentation",
    )
    assert isinstance(decoded, BinaryFile)
    assert decoded.kind == "a PowerPoint presentation (PPTX)"


def test_a_url_is_never_fetched() -> None:
    url = "https://account.blob.core.windows.net/docs/a.html"
    _, errors, _ = _chunk(
        {"file_data": {"$type": "file", "url": url, "sasToken": "?sv=2024&sig=x"}}
    )
    (error,) = errors
    assert "does not fetch" in error
    assert "'data'" in error
    assert "sig=" not in error


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"text": "x", "file_data": _file(b"x")}, "not both"),
        ({"file_data": "PGh0bWw+"}, "must be an object"),
        ({"file_data": {"data": "PGh0bWw+"}}, "must be an object"),
        ({"file_data": {"$type": "file", "data": "not base64!"}}, "not valid base64"),
        ({"file_data": {"$type": "file", "data": "é"}}, "not valid base64"),
        ({"file_data": {"$type": "file", "data": 5}}, "base64 in 'data' (got number 5)"),
        ({}, "or map 'file_data' to /document/file_data"),
    ],
)
def test_bad_file_data_is_a_record_error_in_our_words(data: dict[str, object], words: str) -> None:
    _, errors, _ = _chunk(data)
    (error,) = errors
    assert words in error


@given(st.text(max_size=200), st.sampled_from(["utf-8", "utf-16", "utf-32", "utf-8-sig"]))
def test_any_text_with_a_byte_order_mark_or_in_utf8_reads_back(text: str, codec: str) -> None:
    try:
        raw = text.encode(codec)
    except UnicodeEncodeError:  # lone surrogates
        return
    # UTF-16 little-endian text that starts with U+0000 begins with FF FE 00 00, UTF-32's
    # little-endian mark: the bytes are the same, and UTF-32 is read (pinned below).
    assume(not (codec == "utf-16" and text.startswith("\x00")))
    decoded = decode_file(raw)
    if isinstance(decoded, BinaryFile):
        # Refused only as a signature or for control characters (NUL among them).
        controls = sum(1 for c in text if unicodedata.category(c) == "Cc" and c not in "\t\n\f\r")
        assert controls or raw[:4] in (b"%PDF", b"PK\x03\x04"), decoded
        return
    assert decoded.text == text


def test_the_utf32_mark_wins_over_utf16_text_that_starts_with_nul() -> None:
    """Found by hypothesis (test_any_text_with_a_byte_order_mark_or_in_utf8_reads_back):
    "\\x00" in UTF-16 is FF FE 00 00, which is also UTF-32's little-endian mark and an
    empty text; the longer mark is checked first (BOMS), so UTF-32 is read."""
    decoded = decode_file("\x00".encode("utf-16"))
    assert isinstance(decoded, DecodedFile)
    assert (decoded.text, decoded.encoding) == ("", "utf-32-le")


def test_decoding_is_linear() -> None:
    """A few MB of undeclared windows-1252 decode in one pass each step (well under a second)."""
    import time

    raw = MARKDOWN.encode("latin-1") * 40_000  # 2.6 MB
    began = time.process_time()
    decoded = decode_file(raw, file_name="big.md")
    assert isinstance(decoded, DecodedFile)
    assert time.process_time() - began < 5
