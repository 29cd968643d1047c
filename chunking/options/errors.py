"""The error a parameter out of range raises, and how values are shown in its message."""

from __future__ import annotations

SHOWN_DIGITS = 20
"""Integers in messages are shown whole up to this many digits, beyond in scientific
notation: a record may send 1e308, and its 309 digits would help nobody."""
SHOWN_CHARACTERS = 40
"""Other values in messages are shown as a repr of at most this many characters."""


def shown_integer(number: int) -> str:
    """`number` for a message a person reads: whole, or as `1.23e+45` when it is long."""
    if abs(number) < 10**SHOWN_DIGITS:
        return str(number)
    try:
        return f"{float(number):.3g}"
    except OverflowError:  # beyond the largest float
        return "under -1e+308" if number < 0 else "over 1e+308"


def clipped_repr(value: object) -> str:
    """`repr(value)`, clipped to SHOWN_CHARACTERS with "..." when longer."""
    text = repr(value)
    if len(text) > SHOWN_CHARACTERS:
        text = text[: SHOWN_CHARACTERS - 3] + "..."
    return text


class OptionError(ValueError):
    """A parameter is out of range; the message names it and the allowed range."""


class TooManyChunks(OptionError):
    """The text makes more chunks than `ChunkOptions.max_chunks`; planning stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the text makes more than {limit} chunks")
        self.limit = limit
