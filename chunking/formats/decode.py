"""Turn a file's bytes into text: by its byte order mark, its declared encoding, or detection.

Pure: bytes, file name and content type in; text, the encoding used and warnings out, or
why the file is a binary format this package cannot read (PDF, Office, images).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from bs4.dammit import EncodingDetector, UnicodeDammit

from chunking.formats.detect import detect_format

if TYPE_CHECKING:
    from collections.abc import Mapping

BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 first: its little-endian mark starts with UTF-16's.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
"""Byte order marks, and the codec that reads what follows them."""

SNIFF_BYTES = 4096
"""Only the start of a file is looked at for magic numbers and NUL bytes."""
NUL_SHARE = 0.01
"""A file whose first bytes are more than 1% NUL is binary (text has none; UTF-16
without a byte order mark is not supported)."""
DECLARATION_BYTES = 8192
"""How far into a file `<meta charset>` or an XML declaration is looked for (the HTML
standard asks browsers to look in the first 1024 bytes; pages with long heads go further)."""

WINDOWS_1252_ALIASES = frozenset(
    {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "us-ascii", "ascii"}
)
"""Labels the HTML standard reads as windows-1252, a superset (browsers do the same)."""

WESTERN_ACCENT_SHARE = 0.25
"""In Western European text at most about one letter in five is accented (French and
German: under 5%); Cyrillic or Greek read as windows-1252 is nearly all accented letters."""

LAYOUT_ADVICE = (
    "this skill reads HTML, markdown and text; extract the file's text first with the "
    "Document Layout skill (outputFormat: markdown) or Content Understanding, and map "
    "its markdown to this skill's 'text' input"
)

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF"),
    (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        "an OLE file (legacy Word, Excel or PowerPoint)",
    ),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"PK\x03\x04", "a ZIP archive"),
)
"""Magic numbers of binary formats, and what to call them."""

OFFICE_ZIPS: Mapping[str, str] = {
    ".docx": "a Word document (DOCX)",
    ".xlsx": "an Excel workbook (XLSX)",
    ".pptx": "a PowerPoint presentation (PPTX)",
    "wordprocessingml": "a Word document (DOCX)",
    "spreadsheetml": "an Excel workbook (XLSX)",
    "presentationml": "a PowerPoint presentation (PPTX)",
}
"""A ZIP archive's file name suffix or content type fragment, and the Office format it names."""


@dataclass(frozen=True, slots=True)
class DecodedFile:
    """A file's text."""

    text: str
    encoding: str
    """The codec that read it (a Python codec name)."""
    warnings: tuple[str, ...]
    """What was fixed or guessed on the way (a declared encoding that did not fit,
    undecodable bytes replaced, an encoding detected rather than declared)."""


@dataclass(frozen=True, slots=True)
class BinaryFile:
    """A file in a binary format this package cannot read."""

    kind: str
    """What the file is, as a phrase: "a PDF", "a Word document (DOCX)"."""
    message: str
    """Why it cannot be chunked, and what to use instead."""


def decode_file(
    data: bytes, *, file_name: str | None = None, content_type: str | None = None
) -> DecodedFile | BinaryFile:
    """The text of a file's bytes, or why it is a binary format.

    Encoding, first that applies: byte order mark, the declaration (`<meta charset>` or
    the XML declaration), UTF-8 if every byte fits, then detection (BeautifulSoup's
    UnicodeDammit), then windows-1252. Each step costs at most one pass over the bytes.
    """
    binary = _binary_kind(data, file_name, content_type)
    if binary is not None:
        return BinaryFile(binary, f"the file is {binary}; {LAYOUT_ADVICE}")
    for bom, codec in BOMS:
        if data.startswith(bom):
            return _decode(data[len(bom) :], codec, ())
    warnings: list[str] = []
    declared = _declared_encoding(data, file_name, content_type)
    if declared is not None:
        try:
            return DecodedFile(data.decode(declared), declared, ())
        except UnicodeDecodeError as error:
            warnings.append(
                f"the file declares {declared} but byte {error.start} does not fit it; "
                "its encoding was detected instead"
            )
    try:
        return DecodedFile(data.decode("utf-8"), "utf-8", tuple(warnings))
    except UnicodeDecodeError:
        pass
    western = _western_text(data)
    if western is not None:
        warnings.append(
            "the file's encoding is not declared and it is not UTF-8; read as cp1252 "
            "(windows-1252: accented letters within Latin words)"
        )
        return DecodedFile(western, "cp1252", tuple(warnings))
    return _detected(data, tuple(warnings))


def _decode(data: bytes, codec: str, warnings: tuple[str, ...]) -> DecodedFile:
    try:
        return DecodedFile(data.decode(codec), codec, warnings)
    except UnicodeDecodeError:
        text = data.decode(codec, errors="replace")
        count = text.count("\ufffd")
        return DecodedFile(
            text,
            codec,
            (*warnings, f"{count} byte sequence(s) not valid {codec} were replaced with U+FFFD"),
        )


def _binary_kind(data: bytes, file_name: str | None, content_type: str | None) -> str | None:
    """What binary format `data` is in, or None for text."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            if magic == b"PK\x03\x04":
                return _office_kind(file_name, content_type) or kind
            return kind
    if any(data.startswith(bom) for bom, _ in BOMS):
        return None  # UTF-16 and UTF-32 text is full of NUL bytes
    head = data[:SNIFF_BYTES]
    if head and head.count(0) > NUL_SHARE * len(head):
        return "binary data (NUL bytes)"
    return None


def _office_kind(file_name: str | None, content_type: str | None) -> str | None:
    suffix = PurePath(file_name.split("?", 1)[0]).suffix.lower() if file_name else ""
    for key, kind in OFFICE_ZIPS.items():
        if key == suffix or (content_type and key in content_type.lower()):
            return kind
    return None


def _declared_encoding(data: bytes, file_name: str | None, content_type: str | None) -> str | None:
    """The encoding the file declares (a Python codec name), or None."""
    head = data[:DECLARATION_BYTES]
    # Markdown and text may hold HTML samples: only HTML's own <meta> counts.
    sniffed = detect_format(head.decode("latin-1"), content_type=content_type, file_name=file_name)
    label = EncodingDetector.find_declared_encoding(head, is_html=sniffed == "html")
    if not label:
        return None
    label = label.strip().lower()
    if label in WINDOWS_1252_ALIASES:
        return "cp1252"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _western_text(data: bytes) -> str | None:
    """`data` read as windows-1252, if that gives Latin text with a few accented letters.

    Detectors guess poorly on such text (charset-normalizer calls a French page
    windows-1250 and reads `è` as `č`), and it is the commonest undeclared non-UTF-8
    file: Latin-1 and windows-1252 pages. Text in another script read this way shows
    runs of Latin-1 letters instead (Cyrillic, Greek), so it goes to the detector.
    """
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    ascii_letters = other_letters = 0
    for character in text:
        if character.isalpha():
            if character.isascii():
                ascii_letters += 1
            else:
                other_letters += 1
    if other_letters > WESTERN_ACCENT_SHARE * ascii_letters:
        return None
    return text


def _detected(data: bytes, warnings: tuple[str, ...]) -> DecodedFile:
    """Bytes that are not UTF-8 and declare nothing that fits, read by UnicodeDammit's guess."""
    # UnicodeDammit asks charset-normalizer (which tiktoken's requests brings), then falls
    # back to windows-1252, the usual encoding of undeclared Western pages.
    dammit = UnicodeDammit(data, is_html=False)
    text = dammit.unicode_markup
    codec = dammit.original_encoding
    if text is None or codec is None:
        return _decode(data, "cp1252", warnings)
    detected = (
        *warnings,
        f"the file's encoding is not declared and it is not UTF-8; read as {codec} (detected)",
    )
    if dammit.contains_replacement_characters:
        detected = (*detected, "bytes that fit no encoding tried were replaced with U+FFFD")
    return DecodedFile(text, codec, detected)
