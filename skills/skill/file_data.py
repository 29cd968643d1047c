"""Read the `file_data` input: the indexer's `{"$type": "file", "data": "<base64>"}`.

The indexer sends `/document/file_data` so when `allowSkillsetToReadFileData` is true and
the parsing mode is the default. Only the inline form is read: a `url` (with a SAS token)
is never fetched, since the skill makes no outbound calls for content.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from chunking.parse.decode import BinaryFile, DecodedFile, decode_file
from skills.values import describe

INPUT_FILE_DATA = "file_data"
FILE_TYPE = "file"
"""The `$type` the indexer gives file references."""


@dataclass(frozen=True, slots=True)
class FileDataError:
    """Why a record's `file_data` cannot be read (a per-record error)."""

    message: str


def read_file_data(
    value: object, *, file_name: str | None, content_type: str | None
) -> DecodedFile | FileDataError:
    """The text of a `file_data` input, or why there is none."""
    if not isinstance(value, dict) or value.get("$type") != FILE_TYPE:
        return FileDataError(
            f'input {INPUT_FILE_DATA!r} must be an object {{"$type": "file", "data": '
            f'"<base64>"}}, as the indexer sends /document/file_data (got {describe(value)})'
        )
    data = value.get("data")
    if data is None and value.get("url") is not None:
        return FileDataError(
            f"input {INPUT_FILE_DATA!r} holds a URL, which this skill does not fetch (it "
            "makes no outbound calls for content); send the file's bytes inline as "
            "'data' (base64), as the indexer does for /document/file_data"
        )
    if not isinstance(data, str):
        return FileDataError(
            f"input {INPUT_FILE_DATA!r} must carry the file as base64 in 'data' "
            f"(got {describe(data)})"
        )
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return FileDataError(f"input {INPUT_FILE_DATA!r}: 'data' is not valid base64")
    decoded = decode_file(raw, file_name=file_name, content_type=content_type)
    if isinstance(decoded, BinaryFile):
        return FileDataError(f"input {INPUT_FILE_DATA!r}: {decoded.message}")
    return decoded
