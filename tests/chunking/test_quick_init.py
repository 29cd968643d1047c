"""`quick_init` gives frozen dataclasses a faster `__init__` that builds the same objects:
the same signature and defaults, `__post_init__` run, the class still frozen."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from chunking.model import Anchor, Block, BlockKind, Chunk, Heading, Region, RegionKind, Repeated
from chunking.model import Span as PlannedSpan
from chunking.parse.markdown.plain_markup import Found
from chunking.quick_init import quick_init

QUICK = (Heading, Block, Region, Anchor, PlannedSpan, Repeated, Chunk, Found)


def _plain_twin(cls: type) -> type:
    """`cls`'s fields as a frozen dataclass with dataclasses' own `__init__`."""
    return dataclasses.make_dataclass(
        f"Plain{cls.__name__}",
        [
            (field.name, field.type, dataclasses.field(default=field.default))
            if field.default is not dataclasses.MISSING
            else (field.name, field.type)
            for field in dataclasses.fields(cls)
        ],
        frozen=True,
        slots=True,
    )


@pytest.mark.parametrize("cls", QUICK, ids=lambda cls: cls.__name__)
def test_the_same_signature_as_dataclasses_gives(cls: type) -> None:
    quick = inspect.signature(cls)
    plain = inspect.signature(_plain_twin(cls))
    assert [(p.name, p.kind, p.default) for p in quick.parameters.values()] == [
        (p.name, p.kind, p.default) for p in plain.parameters.values()
    ]
    assert vars(cls)["__init__"].__qualname__ == f"{cls.__qualname__}.__init__"


def test_fields_positional_keyword_and_defaults() -> None:
    heading = Heading(3, 9, 2, "Usage")
    assert (heading.start, heading.end, heading.depth, heading.text) == (3, 9, 2, "Usage")
    assert heading.anchor is None
    assert heading.section_end is None
    assert Heading(end=9, start=3, text="Usage", depth=2, section_end=40) == Heading(
        3, 9, 2, "Usage", None, 40
    )
    assert Block(BlockKind.OTHER, 1, 5) == Block(kind=BlockKind.OTHER, start=1, end=5)
    assert hash(Block(BlockKind.OTHER, 1, 5)) == hash(Block(BlockKind.OTHER, 1, 5))
    assert repr(Region(RegionKind.CODE, 0, 8, 4, "```\n")) == (
        "Region(kind=<RegionKind.CODE: 'code'>, start=0, end=8, lead_end=4, lead='```\\n')"
    )
    found = Found(4, 10, "link", 5, 7)
    assert found.span() == (4, 10)
    assert found.span("link") == (5, 7)


def test_missing_and_unknown_arguments_raise_as_before() -> None:
    with pytest.raises(TypeError):
        Block(BlockKind.OTHER, 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Block(BlockKind.OTHER, 1, 2, 3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Anchor(offset=1, name="x")  # type: ignore[call-arg]


def test_still_frozen() -> None:
    block = Block(BlockKind.OTHER, 1, 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.start = 2  # type: ignore[misc]


def test_post_init_runs() -> None:
    @quick_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Doubled:
        value: int
        twice: int = 0

        def __post_init__(self) -> None:
            object.__setattr__(self, "twice", 2 * self.value)

    assert Doubled(4).twice == 8


def test_refuses_what_it_would_get_wrong() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        value: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        values: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class KeywordOnly:
        value: int = dataclasses.field(kw_only=True)

    for cls in (NoSlots, Factory, KeywordOnly):
        with pytest.raises(TypeError):
            quick_init(cls)
