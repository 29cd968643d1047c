"""The custom Web API skill wire format: parse a request body, render a response body.

Both directions are pure functions over bytes. A request that cannot be read at all
becomes a RequestError (HTTP 4xx); anything wrong inside one record is that record's
business and is answered in its own `errors`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skills.skill.records import OutputRecord
from skills.skill.render import record_data
from skills.values import json_type_name, read_json_integer

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence


REQUEST_EXAMPLE = '{"values": [{"recordId": "1", "data": {"text": "# Title\\n\\nSome text."}}]}'
"""Shown in 400 messages so a person can see what a valid body looks like."""

JSON_WHITESPACE = b" \t\r\n"
"""The four characters RFC 8259 counts as whitespace between tokens."""
WIDE_ENCODINGS: Mapping[str, str] = {
    "utf-16": "UTF-16",
    "utf-16-le": "UTF-16",
    "utf-16-be": "UTF-16",
    "utf-32": "UTF-32",
    "utf-32-le": "UTF-32",
    "utf-32-be": "UTF-32",
}
"""What `json.detect_encoding` may find besides UTF-8, and how a message names it."""

MAX_LISTED_PROBLEMS = 5
"""How many offending records a 400 message names before it says "and N more"."""


@dataclass(frozen=True, slots=True)
class InputRecord:
    """One element of the request's `values`."""

    record_id: str
    """The record's `recordId`, echoed unchanged in the answer."""
    data: object
    """The record's `data` as decoded JSON; checked per record, so a bad one fails only it."""


@dataclass(frozen=True, slots=True)
class RequestError:
    """A request body that cannot be answered record by record."""

    status: int
    """400 (unreadable), 413 (too large), 503 (embedding service throttling or down), or
    499 (the client left before its body was in; logged, never read)."""
    message: str
    """What is wrong and how to fix it, for a person reading the indexer's error."""


def parse_request(body: bytes) -> list[InputRecord] | RequestError:
    """Read a skill request body into its records, or say why it cannot be read.

    An integer with more digits than Python reads is kept as a HugeNumber: the record
    holding it deals with it (an input it uses fails that record), the batch goes on.
    """
    document = _decoded(body)
    if isinstance(document, RequestError):
        return document
    values = _values(document)
    if isinstance(values, RequestError):
        return values
    return _records(values)


def _decoded(body: bytes) -> object:
    """The body as decoded JSON, or the RequestError saying why it is not JSON we read
    (empty, UTF-16 or UTF-32, not UTF-8, not JSON, nested too deeply)."""
    if not body.strip(JSON_WHITESPACE):
        what = "is empty" if not body else "holds only whitespace"
        return RequestError(
            400, f"The request body {what}; send a JSON object such as {REQUEST_EXAMPLE}"
        )
    wide = _wide_encoding(body)
    if wide is not None:
        return RequestError(
            400,
            f"The request body is {wide} text; send the JSON as UTF-8 (RFC 8259: JSON "
            "exchanged between systems is UTF-8, as the indexer sends it).",
        )
    try:
        return json.loads(body, parse_int=read_json_integer)
    except UnicodeDecodeError as error:
        return RequestError(
            400,
            f"The request body is not UTF-8 text (byte {error.start} cannot be decoded). "
            "Send the JSON encoded as UTF-8.",
        )
    except json.JSONDecodeError as error:
        return RequestError(
            400,
            f"The request body is not valid JSON (line {error.lineno}, column {error.colno}). "
            f"Send a JSON object such as {REQUEST_EXAMPLE}",
        )
    except RecursionError:
        # json's C decoder recurses once per nesting level; no record nests this deep.
        return RequestError(
            400,
            "The request body nests JSON arrays or objects too deeply to be read. "
            f"Send a JSON object such as {REQUEST_EXAMPLE}",
        )


def _values(document: object) -> list[object] | RequestError:
    """The decoded body's `values` array, or the RequestError saying what it is instead."""
    if not isinstance(document, dict):
        return RequestError(
            400,
            f"The request body is a JSON {json_type_name(document)}; expected an object "
            f"with a 'values' array, such as {REQUEST_EXAMPLE}",
        )
    if "values" not in document:
        return RequestError(
            400,
            f"The request body has no 'values' array; expected an object such as {REQUEST_EXAMPLE}",
        )
    values = document["values"]
    if not isinstance(values, list):
        return RequestError(
            400, f"'values' must be an array of records, got a JSON {json_type_name(values)}."
        )
    return values


def _records(values: list[object]) -> list[InputRecord] | RequestError:
    """Each element of `values` as a record: an object with a string recordId no other
    has. When any is not, the RequestError names the first MAX_LISTED_PROBLEMS."""
    records: list[InputRecord] = []
    problems: list[str] = []
    positions: dict[str, list[int]] = defaultdict(list)
    for index, value in enumerate(values):
        if not isinstance(value, dict):
            problems.append(f"values[{index}] is a JSON {json_type_name(value)}, not an object")
            continue
        record_id = value.get("recordId")
        if record_id is None or record_id == "":
            problems.append(f"values[{index}] has no recordId")
            continue
        if not isinstance(record_id, str):
            problems.append(
                f"values[{index}].recordId is a JSON {json_type_name(record_id)}, not a string"
            )
            continue
        positions[record_id].append(index)
        records.append(InputRecord(record_id=record_id, data=value.get("data")))

    for record_id, indexes in positions.items():
        if len(indexes) > 1:
            where = ", ".join(f"values[{index}]" for index in indexes)
            problems.append(f"recordId {record_id!r} is used {len(indexes)} times ({where})")
    if problems:
        listed = "; ".join(problems[:MAX_LISTED_PROBLEMS])
        more = len(problems) - MAX_LISTED_PROBLEMS
        if more > 0:
            listed += f"; and {more} more"
        return RequestError(
            400,
            "Every record needs a unique string recordId and must be a JSON object: "
            f"{listed}. No record was processed.",
        )
    return records


def _wide_encoding(body: bytes) -> str | None:
    """ "UTF-16" or "UTF-32" when the body is JSON in one of those (RFC 8259's detection by
    the zero bytes of the first characters), else None. Bytes that only look so (a run
    of NUL bytes) are left to the JSON reader, which says they are not JSON."""
    codec = json.detect_encoding(body)
    family = WIDE_ENCODINGS.get(codec)
    if family is None:
        return None
    try:
        text = body.decode(codec)
    except UnicodeDecodeError:
        return None
    return family if text.lstrip(" \t\r\n\ufeff")[:1] in ("{", "[") else None


Rendered = dict[str, tuple[OutputRecord, bytes]]
"""recordId -> a record and its `render_record` bytes, rendered before (to measure it)."""


def render_response(records: Sequence[OutputRecord], rendered: Rendered | None = None) -> bytes:
    """The response body: one `{recordId, data, errors, warnings}` per record, in order.

    `errors` and `warnings` are always arrays of `{"message": ...}`, never absent. Each
    record is rendered on its own (`render_record`): json.dumps builds a list of every
    piece of its document before joining them (a str per float of every vector, ~7x the
    answer's bytes at once), so one record's pieces at a time is what it holds. A record
    found in `rendered` (the same object) is not rendered again.
    """
    known = rendered or {}
    parts = [RESPONSE_OPEN]
    for index, record in enumerate(records):
        earlier = known.get(record.record_id)
        parts += [b","] if index else []
        parts.append(
            earlier[1] if earlier is not None and earlier[0] is record else render_record(record)
        )
    parts.append(RESPONSE_CLOSE)
    # One join: joining the records first and then the whole held the answer three times.
    return b"".join(parts)


RESPONSE_OPEN = b'{"values":['
RESPONSE_CLOSE = b"]}"
"""What `render_response` puts around the records (its output is what json.dumps of the
whole document gives, compact)."""


def render_record(record: OutputRecord) -> bytes:
    """One record of the response body, as compact UTF-8 JSON: what json.dumps writes,
    built a chunk (or a text item) at a time.

    json.dumps of a whole record holds a str for every piece of it, then their join as
    one str (2 or 4 bytes a character once one character needs it), then its UTF-8: ~7x
    the bytes of a 16-million-character record's answer at once (bench.answer_memory).
    Rendered item by item, a record holds its items' bytes and their join."""
    document = {
        "recordId": record.record_id,
        "data": record_data(record),
        "errors": [{"message": message} for message in record.errors],
        "warnings": [{"message": message} for message in record.warnings],
    }
    return b"".join(_json_parts(document, RECORD_LEVELS))


RECORD_LEVELS = 3
"""The record, its `data`, and `data`'s lists (`chunks`, `textItems`, ...): opened by
`_json_parts`, so that a piece is at most one chunk."""


def _json_parts(value: object, levels: int) -> Iterator[bytes]:
    """`value` as compact JSON in pieces, the objects and arrays of its first `levels`
    levels opened here and every other value rendered whole (`_dump_json`)."""
    if levels and isinstance(value, dict):
        yield b"{"
        for index, (key, item) in enumerate(value.items()):
            yield b"," + _dump_json(key) + b":" if index else _dump_json(key) + b":"
            yield from _json_parts(item, levels - 1)
        yield b"}"
    elif levels and isinstance(value, list):
        yield b"["
        for index, item in enumerate(value):
            if index:
                yield b","
            yield from _json_parts(item, levels - 1)
        yield b"]"
    else:
        yield _dump_json(value)


def render_error(error: RequestError) -> bytes:
    """The body of a 4xx/5xx answer: `{"error": {"status": ..., "message": ...}}`."""
    return _dump_json({"error": {"status": error.status, "message": error.message}})


def _dump_json(document: object) -> bytes:
    """Compact UTF-8 JSON that cannot fail on lone surrogates.

    Record data is cleaned of lone surrogates before chunking, but a recordId is echoed
    unchanged, so a surrogate could still reach here; escaping everything as \\uXXXX is
    valid JSON, and only costs size in that rare case.
    """
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(
            document, ensure_ascii=True, separators=(",", ":"), allow_nan=False
        ).encode("ascii")
