"""What the deploy script sends when no length is set, against the skill's default: each
declared once, both stated in the deploy guide and the settings reference."""

from __future__ import annotations

from chunking.options import Unit, default_lengths
from skills.parameters import DEPLOY_CHARACTERS_LENGTHS, deploy_lengths, reference_table
from skills.search.definitions import chunk_settings
from tests.paths import ROOT


def test_the_deploy_sends_the_declared_lengths() -> None:
    for unit in Unit:
        sent = chunk_settings(unit=unit.value)
        assert (sent.maximum_page_length, sent.page_overlap_length) == deploy_lengths(unit)
    assert deploy_lengths(Unit.CHARACTERS) == DEPLOY_CHARACTERS_LENGTHS
    assert deploy_lengths(Unit.TOKENS) == default_lengths(Unit.TOKENS)
    sent = chunk_settings()
    assert (sent.maximum_page_length, sent.page_overlap_length) == default_lengths(Unit.TOKENS)


def test_the_guides_state_the_deploys_lengths_and_the_skills() -> None:
    page = (ROOT / "docs" / "guide" / "deploy.md").read_text(encoding="utf-8")
    for unit in Unit:
        deployed, skill = deploy_lengths(unit), default_lengths(unit)
        row = f"| `{unit.value}` | {deployed[0]} / {deployed[1]} | {skill[0]} / {skill[1]} |"
        assert row in page
    deployed, skill = DEPLOY_CHARACTERS_LENGTHS, default_lengths(Unit.CHARACTERS)
    table = reference_table()
    assert f"`characters` {deployed[0]}/{deployed[1]}" in table
    assert f"not the skill's {skill[0]}/{skill[1]}" in table
