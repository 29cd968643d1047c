"""`python -m infra.deploy apply --dry-run` runs with no Azure variable (placeholders stand
in, named) and says which chunk lengths the skillset gets and why (issue 39, items 3, 9)."""

from __future__ import annotations

import pytest

from infra import deploy


def test_a_dry_run_needs_no_azure_and_names_its_placeholders(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert deploy.main(["apply", "--dry-run"], environ={}) == 0
    out = capsys.readouterr().out
    placed = next(line for line in out.splitlines() if "placeholders stand in" in line)
    for name in deploy.APPLY_REQUIRED:
        assert name in placed
    assert "dry run: the definitions are consistent" in out


@pytest.mark.parametrize(
    ("argv", "environ", "expected"),
    [
        ([], {}, "maximumPageLength 512, pageOverlapLength 64, azureOpenAITokens (the skill's"),
        (
            ["--unit", "characters"],
            {},
            "maximumPageLength 2000, pageOverlapLength 500, characters (the deploy's starting "
            "values in characters, as Microsoft's chunking guidance cites",
        ),
        (
            [],
            {"CHUNK_MAXIMUM_PAGE_LENGTH": "800", "CHUNK_PAGE_OVERLAP_LENGTH": "80"},
            "maximumPageLength 800, pageOverlapLength 80, azureOpenAITokens (from "
            "CHUNK_MAXIMUM_PAGE_LENGTH and CHUNK_PAGE_OVERLAP_LENGTH)",
        ),
    ],
)
def test_the_dry_run_says_which_lengths_and_why(
    capsys: pytest.CaptureFixture[str], argv: list[str], environ: dict[str, str], expected: str
) -> None:
    assert deploy.main(["apply", "--dry-run", *argv], environ=environ) == 0
    assert f"dry run: chunk lengths: {expected}" in capsys.readouterr().out


def test_a_dry_run_with_a_bad_setting_still_refuses_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert deploy.main(["apply", "--dry-run"], environ={"EMBEDDING_DIMENSIONS": "many"}) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "EMBEDDING_DIMENSIONS must be an integer" in line
