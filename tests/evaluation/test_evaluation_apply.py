"""The recommended setting as app settings and skillset inputs the skill accepts."""

from __future__ import annotations

from chunking.options import Unit
from evaluation.apply import configuration
from evaluation.settings import Setting
from skills.skill.record_inputs import KNOWN_INPUTS
from skills.skill.settings import ALL_ENV_NAMES, load_settings


def test_the_app_settings_load_as_the_recommended_setting() -> None:
    setting = Setting("ours", Unit.CHARACTERS, 2000, 500, "25%", title_prefix=False)
    config = configuration(setting)
    settings = load_settings(dict(config.app_settings))
    assert settings.unit is Unit.CHARACTERS
    assert settings.length_defaults(Unit.CHARACTERS) == (2000, 500)
    assert settings.title_prefix is False
    assert settings.section_packing.value == "apart"
    assert settings.strip_markup is True
    assert {name for name, _ in config.app_settings} <= set(ALL_ENV_NAMES)
    assert config.notes == ()


def test_skillset_inputs_are_inputs_the_skill_knows_written_as_constants() -> None:
    setting = Setting("ours", Unit.TOKENS, 512, 64, "64", strategy="words")
    config = configuration(setting)
    inputs = dict(config.inputs)
    assert set(inputs) <= set(KNOWN_INPUTS)
    assert inputs["maximumPageLength"] == "=512"
    assert inputs["unit"] == "='azureOpenAITokens'"
    assert inputs["wordsPerChunk"] == "=200"
    lines = config.lines()
    assert any("CHUNK_MAXIMUM_PAGE_LENGTH=512" in line for line in lines)
    assert any("az functionapp config appsettings set" in line for line in lines)


def test_a_fill_no_setting_expresses_is_said_not_dropped() -> None:
    setting = Setting("ours", Unit.TOKENS, 512, 0, "0", section_fill=0.5)
    config = configuration(setting)
    assert "CHUNK_SECTIONS" not in dict(config.app_settings)
    assert any("0.5" in note for note in config.notes)
