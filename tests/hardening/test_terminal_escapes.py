"""What the skill's summary prints (`python -m skills --summary`, which `./run.sh` runs)
sends no control character to the terminal (issue 35, item 7).

Reproduction: a heading holding ESC ] 0 ; ... BEL (retitle the terminal) or ESC [ 2 J
(clear it) was printed raw by ./run.sh and --summary; so was a file name holding them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.helpers import run_module

if TYPE_CHECKING:
    from pathlib import Path

HOSTILE = "Evil \x1b]0;pwned\x07 \x1b[2J\x9b31m \u202eright-to-left"


def test_the_summary_shows_control_characters_as_escapes(tmp_path: Path) -> None:
    document = tmp_path / "guide\x1b[31m.md"
    # Enough words that the few control bytes do not make the file look binary.
    words = "Some words under the heading. " * 100
    document.write_text(f"# {HOSTILE}\n\n{words}\n", encoding="utf-8")
    out = tmp_path / "response.json"
    done = run_module("skills", "--summary", "--output", str(out), str(document))
    assert done.returncode == 0, done.stderr
    controls = [c for c in done.stdout if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0]
    assert controls == []
    assert "\u202e" not in done.stdout
    assert "Evil \\x1b]0;pwned\\x07 \\x1b[2J\\x9b31m \\u202eright-to-left" in done.stdout
    assert "guide\\x1b[31m.md" in done.stdout
    # The answer itself keeps the document's text as it is.
    values = json.loads(out.read_text(encoding="utf-8"))["values"]
    assert any("\x1b]0;pwned\x07" in chunk["title"] for chunk in values[0]["data"]["chunks"])
