"""Chunk ids: a hash of the source, the span and a canonical form of what decides cuts.

The canonical form names its fields: an option joins it only when it is listed here,
so a new option that decides no cut (a cap, a display setting) changes no id, and one
that does is added on purpose (`tests/chunking/test_chunk_ids.py` holds every option of
`ChunkOptions` to being listed either way). The form is written as the dataclass repr
of those fields used to read, so ids are what they were.
"""

from __future__ import annotations

import hashlib
from enum import Enum
from typing import TYPE_CHECKING

from chunking.plan.strategies import PARAMETER_FIELDS, parameters_of

if TYPE_CHECKING:
    from collections.abc import Mapping

    from chunking.options import ChunkOptions

ID_DIGEST_BYTES = 16
"""128-bit ids: collisions are not a concern at index scale."""

CUT_FIELDS = (
    "limits",
    "mode",
    "encoder_model_name",
    "language",
    "title_prefix",
    "section_fill",
    "strip_markup",
    "heading_separator",
    "prefix_separator",
    "strategy",
)
"""The `ChunkOptions` fields that decide the cuts of every strategy, in order."""
LIMITS_FIELDS = ("unit", "maximum_page_length", "page_overlap_length", "maximum_pages_to_take")
"""The `Limits` fields, in order (all decide cuts)."""
STRATEGY_FIELDS: Mapping[str, tuple[str, tuple[str, ...]]] = PARAMETER_FIELDS
"""By strategy: the name the form gives its own parameters (`ChunkOptions.parameters`,
or its defaults) and their fields in order, as each strategy declares them
(`chunking.plan.strategies`). They decide cuts of that strategy only."""
SWITCH_FIELDS: Mapping[str, object] = {"prefix_path": "path"}
"""Rules the evaluation switches off to measure them, with the skill's setting: they join
the form only when they differ from it, so ids are what they were before the switches."""
NOT_CUTTING: Mapping[str, str] = {
    "max_chunks": "a cap that refuses a text past it; it changes no chunk",
}
"""`ChunkOptions` fields that decide no cut, and why."""


def cut_identity(options: ChunkOptions) -> str:
    """Everything in `options` that decides the chunks, as text: what ids are derived from."""
    limits = options.limits
    fields = [
        (name, _record("Limits", limits, LIMITS_FIELDS) if name == "limits" else None)
        for name in CUT_FIELDS
    ]
    text = (
        "ChunkOptions("
        + ", ".join(
            f"{name}={shown if shown is not None else _value(getattr(options, name))}"
            for name, shown in fields
        )
        + ")"
    )
    own = STRATEGY_FIELDS.get(options.strategy)
    if own is not None:
        label, names = own
        text += _record(label, parameters_of(options), names)
    for name, default in SWITCH_FIELDS.items():
        value = getattr(options, name)
        if value != default:
            text += f" {name}={value!r}"
    return text


def document_digest(source: str, options: ChunkOptions) -> bytes:
    """The digest every chunk id of one document starts from."""
    hasher = hashlib.blake2b(digest_size=ID_DIGEST_BYTES)
    hasher.update(source.encode("utf-8", "surrogatepass"))
    hasher.update(cut_identity(options).encode("utf-8", "surrogatepass"))
    return hasher.digest()


def chunk_id(digest: bytes, start: int, end: int) -> str:
    """The id of the chunk [start, end) of the document `digest` stands for."""
    return hashlib.blake2b(
        digest + f":{start}:{end}".encode(), digest_size=ID_DIGEST_BYTES
    ).hexdigest()


def _record(label: str, value: object, names: tuple[str, ...]) -> str:
    return f"{label}(" + ", ".join(f"{n}={_value(getattr(value, n))}" for n in names) + ")"


def _value(value: object) -> str:
    """A field's value as the form writes it (as `repr` writes an enum and a scalar)."""
    if isinstance(value, Enum):
        return f"<{type(value).__name__}.{value.name}: {value.value!r}>"
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    raise TypeError(f"no canonical form for a {type(value).__name__} option")
