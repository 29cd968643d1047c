"""The documented Python API: chunk a string or a file with plain options, build options
from app settings, embed chunks (issue 30, item 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from chunking import ChunkOptions, OptionError, Unit, chunk_file, chunk_options, chunk_text
from skills.api import embed_texts, embedding_settings, options_from_app_settings
from skills.skill.settings import SettingsError
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

SAMPLE = ROOT / "samples" / "concepts-network.md"


def test_plain_options_default_to_the_skills_lengths() -> None:
    assert chunk_options().limits.maximum_page_length == 512
    characters = chunk_options(unit="characters").limits
    assert (characters.maximum_page_length, characters.page_overlap_length) == (5000, 0)
    assert chunk_options(max_length=300, unit="tokens").limits.page_overlap_length == 64
    with pytest.raises(OptionError, match="unit must be one of"):
        chunk_options(unit="words")  # type: ignore[arg-type]
    with pytest.raises(
        OptionError, match="overlap must be at least 0 and less than half of max_length"
    ):
        chunk_options(max_length=2000, overlap=1500, unit="characters")


def test_a_string_chunks_into_spans_of_it() -> None:
    text = SAMPLE.read_text(encoding="utf-8")
    document = chunk_text(text, max_length=2000, unit="characters")
    assert len(document.chunks) > 1
    assert all(text[c.start : c.end] == c.content for c in document.chunks)
    assert all(c.size <= 2000 for c in document.chunks)
    same = chunk_text(text, chunk_options(max_length=2000, unit="characters"))
    assert same.chunks == document.chunks
    with pytest.raises(OptionError, match="not both"):
        chunk_text(text, ChunkOptions(), max_length=100)


def test_a_file_is_decoded_as_the_skill_decodes_it(tmp_path: Path) -> None:
    latin = tmp_path / "latin.md"
    latin.write_bytes("# Caf\xe9\n\nUn caf\xe9 cr\xe8me.\n".encode("cp1252"))
    document = chunk_file(latin)
    assert document.chunks[0].content.startswith("# Café")
    assert document.warnings  # says the encoding was detected
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
    with pytest.raises(OptionError, match=r"report\.pdf"):
        chunk_file(pdf)


def test_app_settings_are_one_way_to_build_options() -> None:
    options = options_from_app_settings(
        {
            "CHUNK_UNIT": "characters",
            "CHUNK_MAXIMUM_PAGE_LENGTH": "1200",
            "CHUNK_SECTIONS": "packed",
        }
    )
    assert options.limits.unit is Unit.CHARACTERS
    assert options.limits.maximum_page_length == 1200
    assert options.section_fill is None


def test_embedding_needs_a_provider_and_says_how_to_name_one() -> None:
    settings = embedding_settings({}, EMBEDDING_PROVIDER="none")
    with pytest.raises(SettingsError, match="set EMBEDDING_PROVIDER"):
        embed_texts(["a text"], settings)
    with pytest.raises(SettingsError, match="EMBEDDING_PROVIDER"):
        embedding_settings({}, EMBEDDING_PROVIDER="nowhere")


def test_sections_stays_an_alias_of_section_packing() -> None:
    """`chunking.Sections` was the packing enum's name; code written against it imports."""
    import chunking

    assert chunking.Sections is chunking.SectionPacking
    assert chunking.Sections("packed") is chunking.SectionPacking.PACKED


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"max_length": 10, "unit": "characters"}, "max_length must be between 300 and 50000"),
        ({"max_length": 100_000}, 'max_length must be between 64 and 8191 tokens (unit="tokens")'),
        ({"max_lenght": 500}, "unknown option 'max_lenght'; did you mean max_length?"),
        (
            {"strategy": "words", "overlap": 10},
            "argument overlap does not apply to strategy 'words'",
        ),
    ],
)
def test_the_librarys_refusals_use_its_own_names(options: dict[str, object], words: str) -> None:
    """Issue 39, item 9: the same refusals as the skill and the command line, in the
    keyword names a caller of chunk_text wrote, never maximumPageLength."""
    with pytest.raises(OptionError) as refused:
        chunk_text("# T\n\nHello.", **options)  # type: ignore[arg-type]
    assert words in str(refused.value)
    assert "maximumPageLength" not in str(refused.value)
    assert "pageOverlapLength" not in str(refused.value)
    assert "wordOverlap" not in str(refused.value)  # the library sets it as WordWindows
