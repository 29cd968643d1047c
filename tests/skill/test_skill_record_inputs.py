"""Reading one record's inputs: types, precedence over app settings, and per-record errors."""

from __future__ import annotations

import pytest

from chunking import SplitMode, Unit, WordScope, WordWindows
from chunking.plan.binary_params import BinarySplit
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.record_inputs import (
    InputErrors,
    RecordInputs,
    read_record_inputs,
    replace_lone_surrogates,
)
from skills.skill.render import record_data
from skills.skill.settings import Settings
from skills.values import HugeNumber


def read(data: object, settings: Settings | None = None) -> RecordInputs:
    inputs = read_record_inputs(data, settings or Settings())
    assert isinstance(inputs, RecordInputs), inputs
    return inputs


def errors(data: object, settings: Settings | None = None) -> tuple[str, ...]:
    inputs = read_record_inputs(data, settings or Settings())
    assert isinstance(inputs, InputErrors), inputs
    return inputs.messages


def test_defaults_come_from_the_settings() -> None:
    inputs = read({"text": "Hello."})
    assert inputs.text == "Hello."
    assert inputs.format == "auto"
    assert inputs.options.limits.unit is Unit.TOKENS
    assert inputs.options.limits.maximum_page_length == 512
    assert inputs.options.limits.page_overlap_length == 64
    assert inputs.options.language == "en"
    assert inputs.warnings == ()


def test_record_input_beats_app_setting_beats_default() -> None:
    settings = Settings(
        unit=Unit.CHARACTERS, maximum_page_length=2000, default_language_code="fr", format="html"
    )
    from_settings = read({"text": "x"}, settings)
    assert from_settings.options.limits.maximum_page_length == 2000
    assert from_settings.options.limits.page_overlap_length == 0  # characters default
    assert from_settings.options.language == "fr"
    assert from_settings.format == "html"
    from_record = read(
        {"text": "x", "maximumPageLength": 1000, "language": "de", "format": "markdown"}, settings
    )
    assert from_record.options.limits.maximum_page_length == 1000
    assert from_record.options.language == "de"
    assert from_record.format == "markdown"


def test_unit_decides_the_default_lengths() -> None:
    limits = read({"text": "x", "unit": "characters"}).options.limits
    assert (limits.unit, limits.maximum_page_length, limits.page_overlap_length) == (
        Unit.CHARACTERS,
        5000,
        0,
    )


@pytest.mark.parametrize("value", [600, "600", " 600 ", 600.0, "+600"])
def test_numbers_arrive_as_numbers_or_numeric_strings(value: object) -> None:
    assert read({"text": "x", "maximumPageLength": value}).options.limits.maximum_page_length == 600


@pytest.mark.parametrize("value", [True, "abc", 600.5, "=600", "6e2", [600], {"v": 600}, ""])
def test_anything_else_is_not_a_number(value: object) -> None:
    (message,) = errors({"text": "x", "maximumPageLength": value})
    assert message.startswith("input 'maximumPageLength' must be an integer")
    assert 'numeric string such as "512"' in message


def test_out_of_range_values_get_the_core_message() -> None:
    (message,) = errors({"text": "x", "pageOverlapLength": "300", "maximumPageLength": 512})
    assert "pageOverlapLength must be at least 0 and less than half of maximumPageLength" in message
    (message,) = errors({"text": "x", "maximumPagesToTake": -1})
    assert "maximumPagesToTake" in message


def test_closed_sets_match_ignoring_case_and_name_the_allowed_values() -> None:
    inputs = read({"text": "x", "textSplitMode": "Sentences", "unit": "AZUREOPENAITOKENS"})
    assert inputs.options.mode is SplitMode.SENTENCES
    assert inputs.options.limits.unit is Unit.TOKENS
    (message,) = errors({"text": "x", "unit": "tokens"})
    assert (
        message == "input 'unit' must be one of characters, azureOpenAITokens (got string 'tokens')"
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"maximumPageLength": 1e308},
            "maximumPageLength must be between 64 and 8191 azureOpenAITokens (got 1e+308)",
        ),
        (
            {"maximumPageLength": -(10**4000)},
            "maximumPageLength must be between 64 and 8191 azureOpenAITokens (got under -1e+308)",
        ),
        (
            {"maximumPageLength": 123_456_789_012_345_678_901_234},
            "maximumPageLength must be between 64 and 8191 azureOpenAITokens (got 1.23e+23)",
        ),
        (
            {"maximumPageLength": 512, "pageOverlapLength": 1e308},
            "pageOverlapLength must be at least 0 and less than half of maximumPageLength "
            "(< 256; got 1e+308)",
        ),
        (
            {"maximumPagesToTake": -1e308},
            "maximumPagesToTake must be 0 (all) or more (got -1e+308)",
        ),
        (
            {"maximumPageLength": -12_345_678_901_234_567_890},
            "maximumPageLength must be between 64 and 8191 azureOpenAITokens "
            "(got -12345678901234567890)",
        ),
    ],
)
def test_huge_numbers_are_echoed_clipped(data: dict[str, object], message: str) -> None:
    """Regression (issue 13, defect 7): 1e308 was echoed as its 309 digits."""
    assert errors({"text": "x", **data}) == (message,)


def test_huge_names_are_echoed_clipped() -> None:
    record = chunk_record(
        InputRecord("1", {"text": "x", "encoderModelName": "n" * 100_000}), Settings()
    )
    assert record.errors == (
        "encoderModelName must be one of cl100k_base, r50k_base, p50k_base, p50k_edit, "
        f"o200k_base or a model name that uses one of them, such as gpt-4o (got '{'n' * 36}...)",
    )
    (warning,) = read({"text": "x", "format": "p" * 100_000}).warnings
    assert warning == (
        f"input 'format' '{'p' * 36}... is not one of auto, markdown, html, text; chunked as text"
    )


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({}, "input 'text' is required (got nothing)"),
        ({"text": None}, "input 'text' is required (got null)"),
        ({"text": 12}, "input 'text' must be a string (got number 12)"),
        ({"text": ["a"]}, "input 'text' must be a string (got array"),
        (None, "data must be a JSON object with a 'text' input (got null)"),
        ([1], "data must be a JSON object"),
        ({"text": "x", "title": 5}, "input 'title' must be a string (got number 5)"),
        ({"text": "x", "url": {"a": 1}}, "input 'url' must be a string"),
        ({"text": "x", "format": 3}, "input 'format' must be a string"),
    ],
)
def test_bad_inputs_are_errors_that_name_the_input(data: object, words: str) -> None:
    (message,) = errors(data)
    assert words in message


def test_every_problem_of_a_record_is_reported() -> None:
    assert len(errors({"unit": "x", "maximumPageLength": "y"})) == 3


def test_unknown_format_falls_back_to_text_with_a_warning() -> None:
    inputs = read({"text": "x", "format": "pdf"})
    assert inputs.format == "text"
    assert inputs.warnings == (
        "input 'format' 'pdf' is not one of auto, markdown, html, text; chunked as text",
    )


@pytest.mark.parametrize(
    ("name", "expected"), [("MD", "markdown"), ("htm", "html"), ("txt", "text"), ("", "auto")]
)
def test_format_spellings(name: str, expected: str) -> None:
    assert read({"text": "x", "format": name}).format == expected


def test_nulls_and_empty_strings_are_absent() -> None:
    inputs = read({"text": "x", "title": None, "url": "", "unit": None, "maximumPageLength": None})
    assert inputs.title is None
    assert inputs.url is None
    assert inputs.options.limits.maximum_page_length == 512


def test_language_precedence() -> None:
    assert (
        read({"text": "x", "language": "de", "defaultLanguageCode": "fr"}).options.language == "de"
    )
    assert read({"text": "x", "languageCode": "ja"}).options.language == "ja"
    assert read({"text": "x", "defaultLanguageCode": "fr"}).options.language == "fr"


def test_unknown_inputs_are_named_in_a_warning() -> None:
    inputs = read({"text": "x", "maximumPagelength": 300})
    (warning,) = inputs.warnings
    assert warning.startswith(
        "ignored unknown input(s) 'maximumPagelength' (did you mean 'maximumPageLength'?); "
        "known inputs are text,"
    )
    assert inputs.options.limits.maximum_page_length == 512


def test_lone_surrogates_become_replacement_characters_with_a_warning() -> None:
    inputs = read({"text": "a\ud800b\udfff", "title": "t\udc00"})
    assert inputs.text == "a\ufffdb\ufffd"
    assert inputs.title == "t\ufffd"
    assert (
        "input 'text' contained 2 lone surrogate(s) (invalid UTF-16); each was replaced with U+FFFD"
        in inputs.warnings
    )
    assert len(inputs.warnings) == 2


def test_replace_lone_surrogates_keeps_valid_text() -> None:
    assert replace_lone_surrogates("ok 😀") == ("ok 😀", 0)


@pytest.mark.parametrize(
    "url",
    [
        "https://x.test/docs/guide.md",
        "HTTP://Example.COM:8080/a?b=1#top",
        "https://acct.blob.core.windows.net/docs/my%20file.md",
        "https://x.test/path with spaces/é.md",
        "https://[::1]:8443/page",
    ],
)
def test_http_and_https_urls_are_kept(url: str) -> None:
    assert read({"text": "x", "url": url}).url == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("javascript:alert(1)", "an absolute http or https URL (got string 'javascript:alert(1)')"),
        ("ftp://x.test/file", "an absolute http or https URL (got string 'ftp://x.test/file')"),
        ("file:///etc/passwd", "an absolute http or https URL (got string 'file:///etc/passwd')"),
        ("x.test/page", "an absolute http or https URL (got string 'x.test/page')"),
        ("/docs/page", "an absolute http or https URL (got string '/docs/page')"),
        ("https://", "an absolute http or https URL (got string 'https://')"),
        ("http://[::1", "an absolute http or https URL (got string 'http://[::1')"),
        ("https://x.test/a\nb", "without control characters (U+000A at 16)"),
        ("https://x.test/\x00", "without control characters (U+0000 at 15)"),
        ("https://x.test/\x7f", "without control characters (U+007F at 15)"),
        ("https://x.test/\x85", "without control characters (U+0085 at 15)"),
        (" https://x.test/", "without spaces at either end (got string ' https://x.test/')"),
        (
            "https://x.test/\u00a0",
            "without spaces at either end (got string 'https://x.test/\\xa0')",
        ),
        (
            "https://x.test:99999/",
            "an absolute http or https URL (got string 'https://x.test:99999/')",
        ),
    ],
)
def test_other_urls_are_record_errors(url: str, reason: str) -> None:
    """Regression (issue 13, defect 7): `url` was copied into every chunk unchecked."""
    assert errors({"text": "x", "url": url}) == (f"input 'url' must be {reason}",)


def test_strategy_words_and_its_inputs_reach_the_options() -> None:
    options = read(
        {"text": "x", "strategy": "Words", "wordsPerChunk": "10", "wordOverlap": 2}
    ).options
    assert options.strategy == "words"
    assert options.parameters == WordWindows(10, 2)
    scoped = read({"text": "x", "strategy": "words", "wordScope": "document"}).options
    assert scoped.parameters == WordWindows(scope=WordScope.DOCUMENT)
    from_settings = read(
        {"text": "x"}, Settings(strategy="words", strategy_parameters={"words": WordWindows(30, 5)})
    )
    assert (from_settings.options.strategy, from_settings.options.parameters) == (
        "words",
        WordWindows(30, 5),
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"strategy": "sliding"},
            "input 'strategy' must be one of structure, words, semantic, binary, pages "
            "(got string 'sliding')",
        ),
        (
            {"wordsPerChunk": 10},
            "input(s) 'wordsPerChunk' only apply to strategy 'words' (strategy is 'structure'; "
            "strategies are structure, words, semantic, binary, pages)",
        ),
        (
            {"strategy": "binary", "binaryScorer": "foo"},
            "input 'binaryScorer' must be one of embeddings, crossEncoder, rerank "
            "(got string 'foo')",
        ),
        (
            {"strategy": "binary", "binaryCandidates": 0},
            "binaryCandidates must be from 1 to 256 (got 0)",
        ),
        (
            {"binaryScorer": "rerank"},
            "input(s) 'binaryScorer' only apply to strategy 'binary' (strategy is 'structure'",
        ),
        (
            {"strategy": "words", "wordsPerChunk": 10, "wordOverlap": 10},
            "wordOverlap must be at least 0 and less than half of wordsPerChunk (< 5; got 10)",
        ),
        (
            {"strategy": "words", "wordsPerChunk": 10, "wordOverlap": 5},
            "wordOverlap must be at least 0 and less than half of wordsPerChunk (< 5; got 5)",
        ),
        (
            {"strategy": "words", "pageOverlapLength": 64},
            "input 'pageOverlapLength' does not apply to strategy 'words'",
        ),
        (
            {"strategy": "words", "textSplitMode": "sentences"},
            "textSplitMode sentences does not apply to strategy 'words'",
        ),
        ({"strategy": "words", "wordScope": "page"}, "input 'wordScope' must be one of"),
    ],
)
def test_a_strategy_input_that_does_not_fit_is_a_record_error(
    data: dict[str, object], message: str
) -> None:
    found = errors({"text": "x", **data})
    assert any(message in error for error in found), found


def test_the_skill_chunks_a_record_in_word_windows() -> None:
    text = (
        "Gracias por comprar en nuestra tienda en línea. Puede devolver cualquier artículo "
        "dentro de los treinta días siguientes a la entrega."
    )
    record = InputRecord(
        "r1", {"text": text, "strategy": "words", "wordsPerChunk": 10, "wordOverlap": 2}
    )
    result = chunk_record(record, Settings())
    assert not result.errors, result.errors
    chunks = record_data(result)["chunks"]
    assert isinstance(chunks, list)
    assert len(chunks) == 3  # 21 words: windows at 0, 8 and 16


def test_the_binary_strategy_reads_its_scorer_and_candidates() -> None:
    inputs = read(
        {"text": "x", "strategy": "binary", "binaryScorer": "Rerank", "binaryCandidates": "8"}
    )
    assert inputs.options.strategy == "binary"
    assert inputs.options.parameters == BinarySplit("rerank", 8)
    assert read({"text": "x", "strategy": "binary"}).options.parameters == BinarySplit()


# --- issue 28: huge numbers, hosts with spaces, a no-op overlap ------------------------------


def test_a_huge_number_in_an_input_fails_only_its_record_naming_the_input() -> None:
    """Regression (issue 28.5): a 5,000-digit number failed the whole batch with a 400."""
    assert errors({"text": "x", "maximumPageLength": HugeNumber(5000)}) == (
        "input 'maximumPageLength' holds a JSON number of 5000 digits; the skill reads "
        "numbers of at most 4300 digits (no input needs more than a few)",
    )
    assert errors({"text": [HugeNumber(4301)]})[0].startswith(
        "input 'text' holds a JSON number of 4301 digits"
    )


def test_a_huge_number_in_an_unknown_input_changes_nothing() -> None:
    """An unknown input is ignored (with a warning), whatever it holds."""
    inputs = read({"text": "Hello.", "colour": {"deep": [HugeNumber(9000)]}})
    assert inputs.text == "Hello."
    assert inputs.warnings[0].startswith("ignored unknown input(s) 'colour'")


@pytest.mark.parametrize(
    "url",
    [
        "https://exa mple.com/page",
        "https://example.com /page",
        "https://example.com\u00a0/page",
        "https://user@exa\u3000mple.com/",
        "https://exa<mple.com/",
    ],
)
def test_a_url_whose_host_has_a_space_is_refused(url: str) -> None:
    """Regression (issue 28.10): it was accepted and copied into every chunk's url."""
    (message,) = errors({"text": "x", "url": url})
    assert message.startswith("input 'url' must be a URL whose host has no spaces")


def test_a_url_with_an_ordinary_host_is_kept() -> None:
    for url in ("https://example.com/a b", "http://[::1]:8080/x", "https://bücher.de/"):
        assert read({"text": "x", "url": url}).url == url


def test_words_per_chunk_alone_gets_an_overlap_under_half() -> None:
    """The default 40-word overlap does not fit 50-word windows: a fifth of them does."""
    assert read({"text": "x", "strategy": "words", "wordsPerChunk": 50}).options.parameters == (
        WordWindows(50, 10)
    )
    assert read({"text": "x", "strategy": "words", "wordsPerChunk": 81}).options.parameters == (
        WordWindows(81, 40)
    )


@pytest.mark.parametrize("zero", [0, "0", 0.0])
def test_page_overlap_0_with_words_is_the_no_op_it_is(zero: object) -> None:
    """Regression (issue 28.10): `pageOverlapLength: 0` with `strategy: words` was refused
    although 0 changes nothing (a skillset moved from the Split skill sends it)."""
    inputs = read({"text": "x", "strategy": "words", "pageOverlapLength": zero})
    assert inputs.options.strategy == "words"
    assert inputs.warnings == ()
