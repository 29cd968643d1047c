"""The recommended setting as the skill is configured: app settings and skillset inputs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.options import SECTIONS_APART_FILL, SectionPacking
from skills.parameters import record_input, setting_name

if TYPE_CHECKING:
    from evaluation.settings import Setting

INPUT_MAXIMUM_PAGE_LENGTH = record_input("maximumPageLength")
INPUT_PAGE_OVERLAP_LENGTH = record_input("pageOverlapLength")
INPUT_SEMANTIC_PERCENTILE = record_input("semanticPercentile")
INPUT_SEMANTIC_WINDOW = record_input("semanticWindow")
INPUT_STRATEGY = record_input("strategy")
INPUT_TEXT_SPLIT_MODE = record_input("textSplitMode")
INPUT_UNIT = record_input("unit")
INPUT_WORD_OVERLAP = record_input("wordOverlap")
INPUT_WORDS_PER_CHUNK = record_input("wordsPerChunk")
ENV_MAXIMUM_PAGE_LENGTH = setting_name("maximumPageLength")
ENV_PAGE_OVERLAP_LENGTH = setting_name("pageOverlapLength")
ENV_SECTIONS = setting_name("sections")
ENV_STRATEGY = setting_name("strategy")
ENV_STRIP_MARKUP = setting_name("stripMarkup")
ENV_TEXT_SPLIT_MODE = setting_name("textSplitMode")
ENV_TITLE_PREFIX = setting_name("titlePrefix")
ENV_UNIT = setting_name("unit")
ENV_WORD_OVERLAP = setting_name("wordOverlap")
ENV_WORDS_PER_CHUNK = setting_name("wordsPerChunk")
# The names the skill reads a setting by, from its table of parameters.


@dataclass(frozen=True, slots=True)
class Configuration:
    """One setting of ours, as the function app and the skillset take it."""

    app_settings: tuple[tuple[str, str], ...]
    """(name, value): the app's defaults for every record."""
    inputs: tuple[tuple[str, str], ...]
    """(name, skillset `source` expression): per skill, over the app settings."""
    notes: tuple[str, ...]
    """What neither can express, in our words."""

    def lines(self) -> list[str]:
        """The configuration as a user copies it: app settings, then skillset inputs."""
        settings = " ".join(f"{name}={value}" for name, value in self.app_settings)
        inputs = ",\n".join(
            "  " + json.dumps({"name": name, "source": source}) for name, source in self.inputs
        )
        return [
            f"App settings (the function app's defaults): {settings}",
            "  az functionapp config appsettings set -g RESOURCE_GROUP -n FUNCTION_APP "
            f"--settings {settings}",
            "Or skillset inputs of the custom skill (they override the app settings; title "
            "prefix, sections and markup are app settings only):",
            inputs,
            *self.notes,
        ]


def configuration(setting: Setting) -> Configuration:
    """What to set so the skill chunks as `setting` did (ours only)."""
    app: list[tuple[str, str]] = [
        (ENV_UNIT, setting.unit.value),
        (ENV_MAXIMUM_PAGE_LENGTH, str(setting.maximum)),
        (ENV_PAGE_OVERLAP_LENGTH, str(setting.overlap)),
        (ENV_TEXT_SPLIT_MODE, setting.mode.value),
        (ENV_STRATEGY, setting.strategy),
        (ENV_TITLE_PREFIX, _flag(setting.title_prefix)),
        (ENV_STRIP_MARKUP, _flag(setting.strip_markup)),
    ]
    inputs: list[tuple[str, str]] = [
        (INPUT_UNIT, f"='{setting.unit.value}'"),
        (INPUT_MAXIMUM_PAGE_LENGTH, f"={setting.maximum}"),
        (INPUT_PAGE_OVERLAP_LENGTH, f"={setting.overlap}"),
        (INPUT_TEXT_SPLIT_MODE, f"='{setting.mode.value}'"),
        (INPUT_STRATEGY, f"='{setting.strategy}'"),
    ]
    notes: list[str] = []
    if setting.section_fill is None:
        app.append((ENV_SECTIONS, SectionPacking.PACKED.value))
    elif setting.section_fill == SECTIONS_APART_FILL:
        app.append((ENV_SECTIONS, SectionPacking.APART.value))
    else:
        notes.append(
            f"A heading ends a chunk at {setting.section_fill:g} full here; the skill's "
            f"{ENV_SECTIONS}=apart uses {SECTIONS_APART_FILL:g} (no setting takes another share)."
        )
    if setting.strategy == "words":
        app += [
            (ENV_WORDS_PER_CHUNK, str(setting.words_per_chunk)),
            (ENV_WORD_OVERLAP, str(setting.word_overlap)),
        ]
        inputs += [
            (INPUT_WORDS_PER_CHUNK, f"={setting.words_per_chunk}"),
            (INPUT_WORD_OVERLAP, f"={setting.word_overlap}"),
        ]
    elif setting.strategy == "semantic":
        inputs += [
            (INPUT_SEMANTIC_PERCENTILE, f"={setting.semantic_percentile:g}"),
            (INPUT_SEMANTIC_WINDOW, f"={setting.semantic_window}"),
        ]
    return Configuration(tuple(app), tuple(inputs), tuple(notes))


def _flag(value: bool) -> str:
    return "true" if value else "false"
