"""Turn a file's bytes into text: by its byte order mark, its declared encoding, or detection.

Pure: bytes, file name and content type in; text, the encoding used and warnings out, or
why the file is not text this package can read (PDF, Office, images, compressed or
archived files, binary data), said the same way by the skill and the command line.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from chunking.options import clipped_repr
from chunking.parse.detect import detect_format

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
XML_DECLARATION_BYTES = 1024
"""How far BeautifulSoup looks for an XML declaration (`EncodingDetector`'s own limit)."""

WINDOWS_1252_ALIASES = frozenset(
    {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "us-ascii", "ascii"}
)
"""Labels the HTML standard reads as windows-1252, a superset (browsers do the same)."""

NOT_DOCUMENT_CODECS = frozenset({"idna", "unicode-escape", "raw-unicode-escape"})
"""Text codecs Python knows that no document is written in: they read ASCII as ASCII,
but host names, or backslash escapes turned into characters."""
ASCII_SAMPLE = bytes(range(0x20, 0x7F)) + b"\t\n\r"
"""Printable ASCII: a declaration found in a file's bytes is written in it, so the
declared encoding must read these bytes as themselves (cp037 and UTF-16 do not)."""

UNREADABLE_SHARE = 0.05
"""Text whose first characters are more than 5% control characters (tab, line breaks
and form feed aside) or U+FFFD is not text: random or compressed bytes give 11% (C0
controls alone) to 100% (replacement characters); no document of the corpus or the
samples has any (measured on decoding, see the commit)."""
UNREADABLE_SAMPLE = 65_536
"""Characters the share is measured on: the start of the text, as for magic numbers."""
_UNREADABLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufffd]")
"""Control characters (C0 but tab, line feed, form feed and carriage return; DEL; C1)
and the replacement character."""

TEXT_BYTES = bytes(range(0x20, 0x100)) + b"\t\n\x0c\r\x1b"
"""Bytes any ASCII-compatible text may hold; the rest (C0 controls) mark binary data
before any decoding. ESC stays: ISO-2022-JP shifts with it (gone once decoded)."""

UTF8_DAMAGE_RATIO = 10
"""Non-UTF-8 bytes are read as damaged UTF-8 when the valid non-ASCII characters are at
least ten times the invalid sequences; Latin-1 or windows-1251 text has no valid ones."""

WESTERN_ACCENT_SHARE = 0.25
"""In Western European text at most about one letter in five is accented (French and
German: under 5%); Cyrillic or Greek read as windows-1252 is nearly all accented letters."""

READS = "this skill reads HTML, markdown and text"
LAYOUT_ADVICE = (
    f"{READS}; extract the file's text first with the "
    "Document Layout skill (outputFormat: markdown) or Content Understanding, and map "
    "its markdown to this skill's 'text' input"
)
DECOMPRESS_ADVICE = f"{READS}; send it decompressed"
ARCHIVE_ADVICE = f"{READS}; unpack it and send the files it holds one by one"
NOT_TEXT_ADVICE = (
    f"{READS}; send the document's text (for a PDF, an Office file or a scan: "
    "the Document Layout skill's markdown)"
)


@dataclass(frozen=True, slots=True)
class Magic:
    """The signature of a binary format at a fixed place in its first bytes."""

    signature: bytes
    kind: str
    """What a file with this signature looks like, as a phrase: "a gzip file"."""
    advice: str
    """What to send instead."""
    offset: int = 0
    """Where the signature starts (tar's `ustar` is at 257)."""


_MAGIC: tuple[Magic, ...] = (
    Magic(b"%PDF-", "a PDF", LAYOUT_ADVICE),
    Magic(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        "an OLE file (legacy Word, Excel or PowerPoint)",
        LAYOUT_ADVICE,
    ),
    Magic(b"\x89PNG\r\n\x1a\n", "a PNG image", LAYOUT_ADVICE),
    Magic(b"\xff\xd8\xff", "a JPEG image", LAYOUT_ADVICE),
    Magic(b"GIF87a", "a GIF image", LAYOUT_ADVICE),
    Magic(b"GIF89a", "a GIF image", LAYOUT_ADVICE),
    Magic(b"II*\x00", "a TIFF image", LAYOUT_ADVICE),
    Magic(b"MM\x00*", "a TIFF image", LAYOUT_ADVICE),
    Magic(b"WEBPVP8", "a WebP image", LAYOUT_ADVICE, offset=8),
    Magic(b"PK\x03\x04", "a ZIP archive", ARCHIVE_ADVICE),
    Magic(b"PK\x05\x06", "a ZIP archive (empty)", ARCHIVE_ADVICE),
    Magic(b"\x1f\x8b", "a gzip file", DECOMPRESS_ADVICE),
    Magic(b"1AY&SY", "a bzip2 file", DECOMPRESS_ADVICE, offset=4),  # after "BZh9"
    Magic(b"\xfd7zXZ\x00", "an xz file", DECOMPRESS_ADVICE),
    Magic(b"\x28\xb5\x2f\xfd", "a zstd file", DECOMPRESS_ADVICE),
    Magic(b"\x04\x22\x4d\x18", "an LZ4 file", DECOMPRESS_ADVICE),
    Magic(b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", ARCHIVE_ADVICE),
    Magic(b"Rar!\x1a\x07", "a RAR archive", ARCHIVE_ADVICE),
    Magic(b"ustar", "a tar archive", ARCHIVE_ADVICE, offset=257),
    Magic(b"\x7fELF", "an executable (ELF)", NOT_TEXT_ADVICE),
    Magic(b"SQLite format 3\x00", "an SQLite database", NOT_TEXT_ADVICE),
)
"""Magic numbers of binary formats, what to call them and what to send instead.

Only signatures no text starts with: a 2-byte one begins with a control character or a
byte no single-byte text puts first (gzip's 1F 8B).
"""

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
    """A file that is not text this package can read: a binary format, or bytes that
    decode to control characters and replacement characters rather than text."""

    kind: str
    """What the file looks like, as a phrase: "a PDF", "a gzip file", "binary data"."""
    message: str
    """Why it cannot be chunked, and what to send instead."""


def decode_file(
    data: bytes, *, file_name: str | None = None, content_type: str | None = None
) -> DecodedFile | BinaryFile:
    """The text of a file's bytes, or why it is not text this package reads.

    Encoding, first that applies: byte order mark, the declaration (`<meta charset>` or
    the XML declaration) if it names a text encoding that fits the bytes, UTF-8 if
    every byte fits, then detection (BeautifulSoup's UnicodeDammit), then windows-1252.
    A file is refused when its first bytes carry a binary format's signature, or when
    its text, so decoded, starts with control and replacement characters rather than
    text. Each step costs at most one pass over the bytes.
    """
    magic = _magic(data, file_name, content_type)
    if magic is not None:
        return BinaryFile(magic.kind, f"the file looks like {magic.kind}; {magic.advice}")
    head = data[:SNIFF_BYTES]
    # UTF-16 and UTF-32 text with a byte order mark is full of NUL and other low bytes;
    # without one it is not supported. Nothing else that is text has any.
    if not any(data.startswith(bom) for bom, _ in BOMS):
        nul = head.count(0)
        if nul > NUL_SHARE * len(head):
            return _not_text(f"{nul / len(head):.0%} of its first {len(head):,} bytes are NUL")
        controls = len(head.translate(None, TEXT_BYTES))
        if controls > UNREADABLE_SHARE * len(head):
            return _not_text(
                f"{controls / len(head):.0%} of its first {len(head):,} bytes are control "
                "bytes, which text has none of"
            )
    decoded = _decoded(data, file_name, content_type)
    sample = decoded.text[:UNREADABLE_SAMPLE]
    unreadable = sum(1 for _ in _UNREADABLE.finditer(sample))
    if sample and unreadable > UNREADABLE_SHARE * len(sample):
        return _not_text(
            f"{unreadable / len(sample):.0%} of its first {len(sample):,} characters are "
            f"control characters or bytes that {decoded.encoding} does not read"
        )
    return decoded


def blank(text: str) -> str | None:
    """What a text with nothing to chunk is ("is empty", "is only whitespace"), or None:
    the skill's warning and the command line's say it in these words."""
    if text.strip():
        return None
    return "is empty" if not text else "is only whitespace"


def _not_text(why: str) -> BinaryFile:
    kind = "binary data"
    return BinaryFile(
        kind,
        f"the file looks like {kind} (compressed, encrypted or a binary format), not text: "
        f"{why}; {NOT_TEXT_ADVICE}",
    )


def _decoded(data: bytes, file_name: str | None, content_type: str | None) -> DecodedFile:
    """`data` read by the first encoding that applies (see `decode_file`)."""
    for bom, codec in BOMS:
        if data.startswith(bom):
            return _decode(data[len(bom) :], codec, ())
    warnings: list[str] = []
    declared = _declared_encoding(data, file_name, content_type, warnings)
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
    damaged = _damaged_utf8(data, tuple(warnings))
    if damaged is not None:
        return damaged
    western = _western_text(data)
    if western is not None:
        warnings.append(
            "the file's encoding is not declared and it is not UTF-8; read as cp1252 "
            "(windows-1252: accented letters within Latin words)"
        )
        return DecodedFile(western, "cp1252", tuple(warnings))
    return _detected(data, tuple(warnings))


def _damaged_utf8(data: bytes, warnings: tuple[str, ...]) -> DecodedFile | None:
    """`data` as UTF-8 with its few invalid sequences replaced, if it is UTF-8 text with
    a stray byte or a cut character: its valid non-ASCII characters outnumber the
    invalid sequences many times (a Latin-1 file's accented letters are all invalid)."""
    text = data.decode("utf-8", errors="replace")
    replaced = text.count("\ufffd")
    valid = len(text) - replaced - sum(1 for c in text if c.isascii())
    if valid < UTF8_DAMAGE_RATIO * replaced:
        return None
    return DecodedFile(
        text,
        "utf-8",
        (*warnings, f"{replaced} byte sequence(s) not valid utf-8 were replaced with U+FFFD"),
    )


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


def _magic(data: bytes, file_name: str | None, content_type: str | None) -> Magic | None:
    """The binary format whose signature `data` carries, or None."""
    for magic in _MAGIC:
        if data.startswith(magic.signature, magic.offset):
            if magic.signature == b"PK\x03\x04":
                office = _office_kind(file_name, content_type)
                if office is not None:
                    return Magic(magic.signature, office, LAYOUT_ADVICE)
            return magic
    return None


def _office_kind(file_name: str | None, content_type: str | None) -> str | None:
    suffix = PurePath(file_name.split("?", 1)[0]).suffix.lower() if file_name else ""
    for key, kind in OFFICE_ZIPS.items():
        if key == suffix or (content_type and key in content_type.lower()):
            return kind
    return None


def _declared_encoding(
    data: bytes, file_name: str | None, content_type: str | None, warnings: list[str]
) -> str | None:
    """The text encoding the file declares (a Python codec name), or None; a declaration
    that is not a text encoding, or that does not fit the bytes, is a warning."""
    head = data[:DECLARATION_BYTES]
    # Markdown and text may hold HTML samples: only HTML's own <meta> counts.
    sniffed = detect_format(head.decode("latin-1"), content_type=content_type, file_name=file_name)
    label = _declared_label(head, is_html=sniffed == "html")
    if not label:
        return None
    label = label.strip().lower()
    if label in WINDOWS_1252_ALIASES:
        return "cp1252"
    try:
        codec = codecs.lookup(label).name
    except LookupError:
        return None
    problem = _declaration_problem(codec)
    if problem is not None:
        warnings.append(
            f"the file declares the encoding {clipped_repr(label)}, which {problem}; "
            "its encoding was detected instead"
        )
        return None
    return codec


def _declared_label(head: bytes, *, is_html: bool) -> str | None:
    """The encoding label `head` declares, as BeautifulSoup finds it.

    Outside HTML it reads only an XML declaration (`<?xml ... encoding="..."?>`, within
    the first 1,024 bytes), so without `<?` there the answer is None: a markdown or text
    file never loads bs4 (a fifth of a `python -m chunking` start-up).
    """
    if not is_html and b"<?" not in head[:XML_DECLARATION_BYTES]:
        return None
    from bs4.dammit import EncodingDetector  # noqa: PLC0415

    return EncodingDetector.find_declared_encoding(head, is_html=is_html)


def _declaration_problem(codec: str) -> str | None:
    """Why a document cannot be in the `codec` it declares, or None.

    A declaration found in the bytes is written in ASCII, so the codec must read
    printable ASCII as itself: bytes-to-bytes codecs (zlib, base64, hex), rot13,
    punycode and UTF-7 are no text encoding of documents; EBCDIC (cp037) and UTF-16/32
    are, but not of these bytes.
    """
    if codec in NOT_DOCUMENT_CODECS:
        return "is not a text encoding documents are written in"
    try:
        ascii_as_itself = ASCII_SAMPLE.decode(codec) == ASCII_SAMPLE.decode("ascii")
    except (LookupError, UnicodeError, ValueError):  # LookupError: not a text codec
        return "is not a text encoding documents are written in"
    if not ascii_as_itself:
        return (
            f"does not fit the file's bytes ({codec} does not read ASCII as ASCII, and the "
            "declaration itself is written in ASCII)"
        )
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
    """Bytes that are not UTF-8 and declare nothing that fits, read by the first guess
    that reads them whole, else by the guess that replaces fewest bytes.

    The guesses are BeautifulSoup's (charset-normalizer's, which tiktoken's requests
    brings, then windows-1252, the usual encoding of undeclared Western pages), tried
    here rather than by UnicodeDammit, which logs its own text when it replaces bytes.
    """
    from bs4.dammit import EncodingDetector  # noqa: PLC0415

    guesses: dict[str, str] = {}  # codec name: the label it was guessed by
    for label in EncodingDetector(data, is_html=False).encodings:
        try:
            codec = codecs.lookup(label).name
        except LookupError:
            continue
        if _declaration_problem(codec) is None:
            guesses.setdefault(codec, label)
    for codec in guesses.values():
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        return DecodedFile(
            text,
            codec,
            (
                *warnings,
                f"the file's encoding is not declared and it is not UTF-8; read as {codec} "
                "(detected)",
            ),
        )
    # No guess reads every byte: the one that replaces fewest (a stray byte in cp1251
    # text must not turn every Cyrillic letter into U+FFFD as a UTF-8 reading would).
    codec = min(
        guesses.values(),
        key=lambda label: data.decode(label, errors="replace").count("\ufffd"),
        default="cp1252",
    )
    if codecs.lookup(codec).name != "utf-8":
        warnings = (
            *warnings,
            f"the file's encoding is not declared and no encoding reads all of it; read as "
            f"{codec} (detected)",
        )
    return _decode(data, codec, warnings)
