"""The sample output docs/guide/getting-started.md shows is `./run.sh`'s, from a run.

`.venv/bin/python -m tests.project.doc_samples` runs what `./run.sh` runs on the samples
and writes its summary into the page; tests/project/test_first_run.py runs the same
command and fails when the page has drifted from it (times aside: they are this
machine's, not the code's).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from tests.paths import ROOT
from tests.processes import run_python

PAGE = ROOT / "docs" / "guide" / "getting-started.md"
SAMPLES = ("samples/concepts-network.md", "samples/git-stash.html")
COMMAND = ("-m", "skills", "--summary")
"""What run.sh runs (with `--output output/response.json` and the samples)."""
BLOCK = re.compile(r"(```text\n)(settings: .*?\n)(```)", flags=re.DOTALL)
"""The page's sample output: the text block that starts with the settings line."""
SECONDS = re.compile(r"\d+(?:\.\d+)? s$", flags=re.MULTILINE)


def run_sh_line() -> str:
    """The line ./run.sh prints after the summary when it wrote the response."""
    script = (ROOT / "run.sh").read_text(encoding="utf-8")
    match = re.search(r'echo "(The whole response[^"]*)"', script)
    assert match is not None, "run.sh no longer prints where the response is"
    return match.group(1)


def summary(output: Path) -> str:
    """`python -m skills --summary` on the samples with the local model, as ./run.sh runs it."""
    done = run_python(
        *COMMAND, "--output", str(output), *SAMPLES, env={"EMBEDDING_PROVIDER": "local"}
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return done.stdout


def as_shown(summary_text: str) -> str:
    """The page's block for a summary: the summary, a blank line, run.sh's last line."""
    return f"{summary_text.rstrip()}\n\n{run_sh_line()}\n"


def shown() -> str:
    """The block the page shows now."""
    match = BLOCK.search(PAGE.read_text(encoding="utf-8"))
    assert match is not None, f"{PAGE.name} shows no sample output"
    return match.group(2)


def without_times(text: str) -> str:
    return SECONDS.sub("N s", text)


def write(summary_text: str) -> None:
    """Put the summary in the page, in place of the block there."""
    text = PAGE.read_text(encoding="utf-8")
    block = as_shown(summary_text)
    PAGE.write_text(BLOCK.sub(lambda m: m.group(1) + block + m.group(3), text), encoding="utf-8")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        write(summary(Path(folder) / "response.json"))
    print(f"wrote the sample output into {PAGE.relative_to(ROOT)}")
