"""The Split skill's parameter ranges, and messages that name the parameter."""

from __future__ import annotations

import pytest

from chunking import Limits, OptionError, Unit


@pytest.mark.parametrize(
    ("unit", "maximum", "overlap", "pages", "named"),
    [
        (Unit.CHARACTERS, 299, 0, 0, "maximumPageLength"),
        (Unit.CHARACTERS, 50_001, 0, 0, "maximumPageLength"),
        (Unit.TOKENS, 63, 0, 0, "maximumPageLength"),
        (Unit.TOKENS, 8192, 0, 0, "maximumPageLength"),
        (Unit.CHARACTERS, 2000, 1000, 0, "pageOverlapLength"),
        (Unit.TOKENS, 512, 256, 0, "pageOverlapLength"),
        (Unit.TOKENS, 512, -1, 0, "pageOverlapLength"),
        (Unit.TOKENS, 512, 64, -1, "maximumPagesToTake"),
    ],
)
def test_out_of_range_values_are_rejected_by_name(
    unit: Unit, maximum: int, overlap: int, pages: int, named: str
) -> None:
    with pytest.raises(OptionError, match=named):
        Limits(unit, maximum, overlap, pages)


@pytest.mark.parametrize(
    ("unit", "maximum", "overlap"),
    [
        (Unit.CHARACTERS, 300, 149),
        (Unit.CHARACTERS, 50_000, 24_999),
        (Unit.TOKENS, 64, 31),
        (Unit.TOKENS, 8191, 4095),
        (Unit.CHARACTERS, 2000, 500),
    ],
)
def test_edges_of_the_ranges_are_accepted(unit: Unit, maximum: int, overlap: int) -> None:
    assert Limits(unit, maximum, overlap).maximum_page_length == maximum


def test_message_states_the_allowed_range() -> None:
    with pytest.raises(OptionError) as caught:
        Limits(Unit.CHARACTERS, 100)
    assert "between 300 and 50000 characters" in str(caught.value)
    assert "got 100" in str(caught.value)


def test_defaults_are_512_tokens_with_64_overlap() -> None:
    limits = Limits()
    assert (limits.unit, limits.maximum_page_length, limits.page_overlap_length) == (
        Unit.TOKENS,
        512,
        64,
    )
