"""What a request costs in the app's memory: the model the memory budget reserves by.

A request holds its body, the text decoded from it, and its answer several times over
(the records' outputs, each record rendered, the response joined). What it holds is
known in three steps, and the reservation follows them (`memory_budget.Reservation`):

1. its body is in: `upper_cost`, from the body's length and the app's default chunk shape;
2. its records are parsed: `record_cost` for each, from its text and its own inputs;
3. its chunks are counted (before embedding): `answered_cost`, the answer as the answer
   cap measured it, vectors to come included.

Before the chunks are counted the answer is bounded from the text and the chunk shape
(`answer_bound`); vectors are counted for a typical number of chunks (an estimate the
count then replaces). The constants are fitted to `python -m bench.answer_memory`'s peaks
(docs/results/2026-12-07-cost-model.md; docs/design/hardening.md, "The cost model").
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking import Unit
from skills.skill.answer_caps import CHUNK_FIELDS_BYTES, vector_bytes
from skills.skill.file_data import INPUT_FILE_DATA
from skills.skill.settings import DEFAULT_LENGTHS
from skills.values import parse_integer

if TYPE_CHECKING:
    from skills.skill.contract import InputRecord
    from skills.skill.settings import Settings

DECODED_BYTES_PER_BODY_BYTE = 4
"""At most how many bytes of Python strings one byte of JSON body decodes to: a string
with one astral character stores every character in 4 bytes (PEP 393), so even ASCII
text may take 4x its bytes once decoded (the soak's corpus text does)."""
BODY_HELD = 2
"""How many times its bytes the app holds a body besides its decoded text: the body
itself until the request is answered, and each record's text pickled to its worker (a
byte a character at least)."""
ANSWER_HELD = 6
"""How many times its bytes the app holds an answer at its peak when workers chunk (the
deployed role): the records' outputs as they come back from the workers (~1x), one
record rendered (its pieces and their join: 2x), the rendered records kept and the
response joined from them (2x), vectors as Python floats. Fitted with CHUNK_HELD to
bench.answer_memory's peaks (docs/results/2026-12-07-cost-model.md)."""
ANSWER_HELD_IN_APP = 7
"""The same when records are chunked in the app's own threads (CHUNK_WORKERS=0): the
chunker's own objects are the app's too."""
CHUNK_HELD = 4_096
"""What each chunk of a counted answer holds beyond its bytes held ANSWER_HELD times:
its typed record's objects (measures, tuples, the vector's float objects, 32 bytes a
dimension where the answer counts 25). Matters at small chunks: 300/149 characters
made 59,042 chunks of ~1.7 KB for 200 records of 100 KB."""
IN_APP_BYTES_PER_CHARACTER = 10
"""What chunking a record in the app's thread holds beside its answer, per character of
the record (its outline, plan and line tables); measured ~9 for a 16-million-character
record. Only the records being chunked at once hold it."""
TEXT_BYTES_PER_CHARACTER = 6
"""Bytes of answer per character of a record and per copy of it in the chunks (an overlap
of half the length makes two copies): `content`, `text` and `textItems`, the reader text,
JSON escapes, beside CHUNK_FIELDS_BYTES a chunk. Fitted on 1,458 answers (the markdown
and HTML corpus and the real-world pages at 512/64 tokens, 2000/500 and 300/149
characters): at most 5.53."""
CHUNKS_PER_STEP = 3
"""At most how many chunks a record makes per `step` characters (maximumPageLength less
pageOverlapLength, in characters; CHARACTERS_PER_TOKEN a token): short sections make
chunks shorter than the step. Measured at most 2.37 (300/149 characters), 1.29 (2000/500)
and, with two characters a token, 1.1 (512/64 tokens)."""
CHARACTERS_PER_TOKEN = 2
"""Characters a token is counted as, for the most chunks a record may make: English prose
and code take about 4 a token, the measured texts at least 1.8 a chunk's token; Chinese
and Japanese text takes about 1, still within CHUNKS_PER_STEP's margin."""
TYPICAL_CHARACTERS_PER_TOKEN = 4
"""Characters a token typically takes (English prose and code), for the vectors a
record's chunks are expected to get before they are counted: an estimate, not a bound,
as the exact count replaces it once the record is chunked (`answered_cost`)."""
CHARACTERS_PER_WORD = 2
"""The fewest characters a word of the `words` strategy takes (a letter and a space)."""
BASE64_CHARACTERS_PER_BYTE = 4 / 3
"""A `file_data` record's base64 text, per byte of the file it decodes to."""


@dataclass(frozen=True, slots=True)
class Shape:
    """How a record's chunks cover its text, for the size of its answer."""

    step: int
    """The fewest characters from one chunk's start to the next's (at least 1)."""
    copies: float
    """How many chunks a character is in at most (maximumPageLength / step)."""
    typical: int
    """Characters from one chunk's start to the next's, typically (at least 1)."""


def record_shape(data: object, settings: Settings | None) -> Shape:
    """The shape of a record's chunks from its inputs as sent (`data`), or the app's
    defaults for those it does not give or gives wrong (such a record is refused later)."""
    inputs = data if isinstance(data, dict) else {}
    given = settings
    unit_name = inputs.get("unit")
    if unit_name in {unit.value for unit in Unit}:
        unit = Unit(unit_name)
    else:
        unit = Unit.TOKENS if given is None else given.unit
    length, overlap = DEFAULT_LENGTHS[unit] if given is None else given.length_defaults(unit)
    length = _count(inputs.get("maximumPageLength"), length)
    overlap = min(_count(inputs.get("pageOverlapLength"), overlap), max(length - 1, 0))
    tokens = unit is Unit.TOKENS
    step = max(length - overlap, 1)
    shape = Shape(
        step * (CHARACTERS_PER_TOKEN if tokens else 1),
        max(length, 1) / step,
        step * (TYPICAL_CHARACTERS_PER_TOKEN if tokens else 1),
    )
    words = _count(inputs.get("wordsPerChunk"), 0)
    if words > 0:
        words_step = max(words - _count(inputs.get("wordOverlap"), 0), 1)
        fewest = words_step * CHARACTERS_PER_WORD
        shape = Shape(
            min(shape.step, fewest),
            max(shape.copies, words / words_step),
            min(shape.typical, fewest),
        )
    return shape


def _count(value: object, default: int) -> int:
    """A count as record inputs read it (`parse_integer`: 512, 512.0 or "512"), else
    `default` (a wrong one fails the record later)."""
    count = parse_integer(value)
    return count if count is not None and count >= 0 else default


def answer_bound(characters: int, shape: Shape, dimensions: int = 0) -> int:
    """The bytes of answer `characters` of text make: at most, without vectors; with a
    vector of `dimensions` a chunk (0: none), the vectors of a typical count of chunks."""
    if characters <= 0:
        return 0
    chunks = 1 + CHUNKS_PER_STEP * characters // shape.step
    text = math.ceil(TEXT_BYTES_PER_CHARACTER * characters * shape.copies)
    vectors = (1 + characters // shape.typical) * vector_bytes(dimensions) if dimensions else 0
    return text + chunks * CHUNK_FIELDS_BYTES + vectors


def vector_dimensions(settings: Settings | None) -> int:
    """The dimensions of the vectors the app adds to every chunk (0 when it embeds none)."""
    if settings is None or settings.embedding.provider == "none":
        return 0
    return settings.embedding.dimensions


def answer_held(settings: Settings) -> int:
    """How many times its bytes the app holds an answer, for the settings' role."""
    return ANSWER_HELD_IN_APP if settings.chunk_workers == 0 else ANSWER_HELD


def answer_allowance(answer_bytes: int, settings: Settings) -> int:
    """What building an answer of `answer_bytes` (bound or measured) holds in the app."""
    return min(answer_bytes, settings.max_response_bytes) * answer_held(settings)


def chunking_allowance(characters: int, settings: Settings) -> int:
    """What chunking a record of `characters` holds in the app besides its answer: nothing
    when workers chunk (their memory is theirs)."""
    return characters * IN_APP_BYTES_PER_CHARACTER if settings.chunk_workers == 0 else 0


def upper_cost(body_bytes: int, settings: Settings) -> int:
    """What a request whose body has `body_bytes` bytes may cost, before its records are
    read: a character of text takes at least a byte of body, chunked in the app's
    default shape (records that ask for smaller chunks are counted once parsed)."""
    shape = record_shape(None, settings)
    bound = answer_bound(body_bytes, shape, vector_dimensions(settings))
    body = body_bytes * (BODY_HELD + DECODED_BYTES_PER_BODY_BYTE)
    return body + answer_allowance(bound, settings) + chunking_allowance(body_bytes, settings)


def record_characters(record: InputRecord) -> int:
    """Characters of a record's text, or of the file its `file_data` decodes to (at most)."""
    data = record.data if isinstance(record.data, dict) else {}
    text = data.get("text")
    if isinstance(text, str):
        return len(text)
    file_data = data.get(INPUT_FILE_DATA)
    encoded = file_data.get("data") if isinstance(file_data, dict) else None
    return int(len(encoded) / BASE64_CHARACTERS_PER_BYTE) if isinstance(encoded, str) else 0


def record_parsed_cost(record: InputRecord) -> int:
    """What a parsed record holds besides the body (counted whole, once per request): its
    text decoded, and its text pickled to a worker (a byte a character at least)."""
    data = record.data if isinstance(record.data, dict) else {}
    text = data.get("text")
    decoded = sys.getsizeof(text) if isinstance(text, str) else 0
    return record_characters(record) * (BODY_HELD - 1) + decoded


def record_answer_bound(record: InputRecord, settings: Settings) -> int:
    """The answer bound of a record's text in its own chunk shape."""
    shape = record_shape(record.data, settings)
    return answer_bound(record_characters(record), shape, vector_dimensions(settings))


def record_cost(record: InputRecord, settings: Settings) -> int:
    """What one record costs on its own until its chunks are counted."""
    characters = record_characters(record)
    if not characters:
        return 0
    # Its share of the body: a byte a character at least.
    return (
        characters
        + record_parsed_cost(record)
        + answer_allowance(record_answer_bound(record, settings), settings)
        + chunking_allowance(characters, settings)
    )


def answered_cost(parsed_cost: int, answer_bytes: int, chunks: int, settings: Settings) -> int:
    """What a request holds once its chunks are counted: what its records cost without
    their answers (`parsed_cost`), and its answer as measured (`answer_bytes`, vectors to
    come included, in `chunks` chunks)."""
    return parsed_cost + answer_allowance(answer_bytes, settings) + chunks * CHUNK_HELD


__all__ = [
    "ANSWER_HELD",
    "ANSWER_HELD_IN_APP",
    "CHUNK_HELD",
    "Shape",
    "answer_allowance",
    "answer_bound",
    "answered_cost",
    "record_answer_bound",
    "record_characters",
    "record_cost",
    "record_parsed_cost",
    "record_shape",
    "upper_cost",
    "vector_dimensions",
]
