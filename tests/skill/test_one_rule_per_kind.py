"""One rule per parameter on every surface: the same raw value given as a record input, an
app setting and a `python -m chunking` flag is accepted or refused alike, and refused in
the same words but for how each surface names the parameter and shows the value
(`skills.values.read_value`, `skills.values.Source`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunking.options import Unit
from infra.deploy import arguments_parser
from infra.deploy import main as deploy
from skills.commands.cli import FLAGS, Parser, add_chunk_arguments, read_chunk_arguments
from skills.parameters import BY_NAME, PARAMETERS, Parameter
from skills.search.definitions import chunk_settings_from_environment
from skills.skill.record_inputs import RECORD_INPUT, InputErrors, read_record_inputs
from skills.skill.settings import (
    ALL_ENV_NAMES,
    APP_SETTINGS,
    Settings,
    SettingsError,
    load_settings,
)
from skills.values import Problem, read_value

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

SHARED = tuple(
    row
    for row in PARAMETERS
    if row.record_input and row.setting and row.flag and row.name != "format"
)
"""The parameters every surface has (`format` apart: a record may name it `md`, and an
unknown name is chunked as text with a warning, as the Split skill's callers expect)."""

RAW_VALUES = (
    "0", "1", "-1", "7", "64", "100", "300", "512", "2000", "50001", "9" * 25,
    "1.5", "512.0", "1e3", "95", "nan", "inf", "-0", "+12", "1_000", "\u0663",
    "abc", "true", "pages", "PAGES", "Sentences", "characters", "Characters",
    "azureOpenAITokens", "tokens", "structure", "WORDS", "semantic", "Binary", "pages",
    "section", "Document", "embeddings", "crossencoder", "rerank", "h3", "en", "cl100k_base",
)  # fmt: skip
"""Values that sit on the edges of the rules: integers and not, numbers the JSON reader
takes but Python's int() and float() differ on, names in another case."""


def _normalised(message: str, name: str, shown: str, form: str = "") -> str:
    """`message` with the surface's own parts (the parameter's name, the value as shown,
    what a number looks like there) replaced by placeholders."""
    message = message.replace(form, "") if form else message
    return message.replace(name, "<name>").replace(f"(got {shown})", "(got <value>)")


def as_record_input(row: Parameter, raw: str) -> str | None:
    """None when a record accepts `raw` for `row`, else its errors, normalised."""
    data: dict[str, object] = {"text": "x", row.name: raw}
    if row.strategy is not None:
        data["strategy"] = row.strategy
    read = read_record_inputs(data, Settings())
    if not isinstance(read, InputErrors):
        return None
    form = RECORD_INPUT.forms.get(row.kind, "")
    said = "; ".join(read.messages)
    return _normalised(said, RECORD_INPUT.name(row.name), RECORD_INPUT.show(raw), form)


def as_app_setting(row: Parameter, raw: str) -> str | None:
    """None when the app setting takes `raw`, else its problems, normalised."""
    environ = {"EMBEDDING_PROVIDER": "none", str(row.setting): raw}
    if row.strategy is not None:
        environ["CHUNK_STRATEGY"] = row.strategy
    try:
        load_settings(environ, local_installed=lambda model: False)
    except SettingsError as error:
        said = str(error).removeprefix("invalid app settings: ")
        said = re.sub(r" \(from app settings [A-Z_, ]+\)$", "", said)
        return _normalised(said, APP_SETTINGS.name(row.name), APP_SETTINGS.show(raw))
    return None


@pytest.fixture(scope="module")
def parser() -> argparse.ArgumentParser:
    made = Parser(prog="test")
    add_chunk_arguments(made)
    return made


@pytest.fixture(scope="module", autouse=True)
def no_app_settings() -> Iterator[None]:
    """The command line reads the lengths' defaults from this environment's app settings:
    none here, and no embedding provider, so they are the defaults a record starts from."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ALL_ENV_NAMES:
            patch.delenv(name, raising=False)
        patch.setenv("EMBEDDING_PROVIDER", "none")
        yield


def as_flag(parser: argparse.ArgumentParser, row: Parameter, raw: str) -> str | None:
    """None when the command line takes `raw` for `row`'s flag, else its problems."""
    assert row.flag is not None
    argv = [f"{row.flag.name}={raw}"]
    if row.strategy is not None:
        argv += ["--strategy", row.strategy]
    read = read_chunk_arguments(parser.parse_args(argv))
    if not isinstance(read, tuple):
        return None
    said = "; ".join(problem.message for problem in read)
    said = said.removesuffix(": the default overlap; give --overlap")
    return _normalised(said, FLAGS.name(row.name), FLAGS.show(raw))


def test_every_kind_of_every_surface_is_among_the_shared_rows() -> None:
    # The property below covers each kind a record input, an app setting and a flag share.
    assert {row.kind for row in SHARED} == {"string", "integer", "number", "choice"}
    assert len(SHARED) >= 12


@settings(max_examples=300, deadline=None)
@given(row=st.sampled_from(SHARED), raw=st.sampled_from(RAW_VALUES) | st.integers().map(str))
@example(row=BY_NAME["unit"], raw="Characters")
@example(row=BY_NAME["maximumPageLength"], raw="1_000")
@example(row=BY_NAME["semanticPercentile"], raw="nan")
@example(row=BY_NAME["maximumPageLength"], raw="0")
@example(row=BY_NAME["wordsPerChunk"], raw="0")
def test_a_value_is_read_by_one_rule_on_every_surface(
    parser: argparse.ArgumentParser, row: Parameter, raw: str
) -> None:
    record, setting = as_record_input(row, raw), as_app_setting(row, raw)
    flag = as_flag(parser, row, raw)
    assert record == setting == flag, (row.name, raw, record, setting, flag)


@pytest.mark.parametrize(
    ("row", "raw", "message"),
    [
        ("unit", "chars", "<name> must be one of characters, azureOpenAITokens (got <value>)"),
        ("maximumPageLength", "1_000", "<name> must be an integer (got <value>)"),
        ("semanticWindow", "2.5", "<name> must be an integer (got <value>)"),
        ("semanticPercentile", "nan", "<name> must be a number (got <value>)"),
        (
            "maximumPageLength",
            "0",
            "maximumPageLength must be between 64 and 8191 azureOpenAITokens (got 0)",
        ),
        ("wordsPerChunk", "0", "wordsPerChunk must be at least 1 (got 0)"),
    ],
)
def test_the_words_of_a_refusal_are_the_same_on_every_surface(
    parser: argparse.ArgumentParser, row: str, raw: str, message: str
) -> None:
    parameter = BY_NAME[row]
    assert as_record_input(parameter, raw) == message
    assert as_app_setting(parameter, raw) == message
    assert as_flag(parser, parameter, raw) == message


def test_a_choice_is_matched_ignoring_case_on_every_surface(
    parser: argparse.ArgumentParser,
) -> None:
    # Regression: the command line's argparse choices refused --unit Characters, which a
    # record and CHUNK_UNIT take.
    record = read_record_inputs({"text": "x", "unit": "Characters"}, Settings())
    assert not isinstance(record, InputErrors)
    assert record.options.limits.unit is Unit.CHARACTERS
    assert load_settings({"CHUNK_UNIT": "Characters"}, lambda model: False).unit is Unit.CHARACTERS
    read = read_chunk_arguments(parser.parse_args(["--unit", "Characters", "--max", "2000"]))
    assert not isinstance(read, tuple)
    assert read.options.limits.unit is Unit.CHARACTERS
    assert chunk_settings_from_environment({"CHUNK_UNIT": "Characters"}).unit is Unit.CHARACTERS


def test_the_deploy_reads_the_chunk_app_settings_as_the_skill_does() -> None:
    # Regression: the deploy read CHUNK_UNIT with Unit(...), case and all, and said
    # "'chars' is not a valid Unit"; the Function says what it takes.
    with pytest.raises(ValueError, match=r"^invalid chunk settings: ") as refused:
        chunk_settings_from_environment({"CHUNK_UNIT": "chars", "CHUNK_MAXIMUM_PAGE_LENGTH": "x"})
    with pytest.raises(SettingsError) as skill:
        load_settings({"CHUNK_UNIT": "chars", "CHUNK_MAXIMUM_PAGE_LENGTH": "x"}, lambda m: False)
    for words in (
        "CHUNK_UNIT must be one of characters, azureOpenAITokens (got 'chars')",
        "CHUNK_MAXIMUM_PAGE_LENGTH must be an integer (got 'x')",
    ):
        assert words in str(refused.value)
        assert words in str(skill.value)


def test_a_problem_is_a_value_naming_the_parameter_as_its_surface_does() -> None:
    row = BY_NAME["unit"]
    problems = [read_value(row, "chars", source) for source in (RECORD_INPUT, APP_SETTINGS, FLAGS)]
    assert problems == [
        Problem(
            "input 'unit'",
            "input 'unit' must be one of characters, azureOpenAITokens (got string 'chars')",
        ),
        Problem(
            "CHUNK_UNIT", "CHUNK_UNIT must be one of characters, azureOpenAITokens (got 'chars')"
        ),
        Problem(
            "option --unit",
            "option --unit must be one of characters, azureOpenAITokens (got 'chars')",
        ),
    ]
    assert [read_value(row, "", source) for source in (RECORD_INPUT, APP_SETTINGS, FLAGS)] == [
        None
    ] * 3


def test_no_option_a_record_sets_is_bounded_twice() -> None:
    # The options a record sets are bounded by their own types (Limits, a strategy's
    # parameters): a row naming bounds too would refuse the same value in other words on
    # one surface (CHUNK_MAXIMUM_PAGE_LENGTH=0 said "an integer of at least 1", a record's
    # 0 "between 64 and 8191").
    bounded = [
        row.name
        for row in PARAMETERS
        if row.record_input and (row.minimum is not None or row.maximum is not None)
    ]
    assert bounded == []


def test_the_deploys_chunk_flags_are_read_as_the_skill_reads_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Regression: argparse's choices and int() read them: --unit Characters was refused,
    # --maximum-page-length 1_000 taken.
    with pytest.raises(SystemExit) as stopped:
        deploy(["show", "--unit", "chars", "--maximum-page-length", "1_000"], environ={})
    assert stopped.value.code == 2
    assert capsys.readouterr().err.endswith(
        ": option --unit must be one of characters, azureOpenAITokens (got 'chars'); "
        "option --maximum-page-length must be an integer (got '1_000')\n"
    )
    parsed = arguments_parser().parse_args(["show", "--unit", "Characters"])
    assert parsed.unit == "Characters"  # a string until read, then taken as characters
    assert chunk_settings_from_environment({"CHUNK_UNIT": parsed.unit}).unit is Unit.CHARACTERS


@pytest.mark.parametrize("row", [row for row in SHARED if row.kind in {"string", "choice"}])
def test_an_empty_value_gives_nothing_on_every_surface(
    parser: argparse.ArgumentParser, row: Parameter
) -> None:
    # Regression: `python -m chunking --encoder=` raised KeyError once flags were read as
    # records are; "" is no value on every surface, so the default holds.
    assert as_record_input(row, "") is None
    assert as_app_setting(row, "") is None
    assert as_flag(parser, row, "") is None
    assert row.flag is not None
    read = read_chunk_arguments(parser.parse_args([f"{row.flag.name}="]))
    unread = read_chunk_arguments(parser.parse_args([]))
    assert not isinstance(read, tuple)
    assert not isinstance(unread, tuple)
    assert read.options == unread.options
