"""`python -m bench.layout_figures`: the figures of issue 38 item 5, counted from source."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from bench.layout_figures import figures, report
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

LOCAL = """
def outer():
    import json
    from chunking import options

    def inner():
        from . import sibling

    return json, options, inner


import os
"""


def _tree(root: Path) -> None:
    (root / "chunking").mkdir()
    (root / "chunking" / "__init__.py").write_text("")
    (root / "chunking" / "local.py").write_text(LOCAL)
    (root / "skills").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    (root / "skills" / "long.py").write_text(f"def long():\n{body}\n\ndef short():\n    pass\n")


def test_figures_count_modules_local_imports_once_and_long_functions(tmp_path: Path) -> None:
    _tree(tmp_path)
    found = figures(tmp_path)
    assert found.top_level_modules == 2
    # json, `from chunking` and the nested relative import; module-level `import os` is not.
    assert found.local_imports == 3
    assert found.local_imports_of_ours == 2
    assert found.long_functions == ("skills/long.py:1 long (61)",)
    assert report(found)[0] == "top-level modules in chunking/: 2 (target <= 8)"


def test_the_command_prints_the_three_figures() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.layout_figures"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = result.stdout.splitlines()
    assert lines[0].startswith("top-level modules in chunking/: ")
    assert lines[1].startswith("function-local imports in chunking, skills")
    assert lines[2].startswith("functions over 60 lines in chunking/, skills/: ")


def test_the_core_keeps_at_its_top_only_what_every_stage_shares() -> None:
    """Issue 38: `chunking/` holds at its top the public API, the pipeline, the model and
    its helpers, and `python -m chunking`; a stage's or an edge's module goes in its
    package (docs/design/architecture.md names each), so a new one does not grow the top."""
    top = sorted(path.name for path in (ROOT / "chunking").glob("*.py"))
    assert top == [
        "__init__.py",
        "__main__.py",
        "api.py",
        "model.py",
        "offsets.py",
        "pipeline.py",
        "quick_init.py",
    ]
    assert figures(ROOT).top_level_modules <= 8
