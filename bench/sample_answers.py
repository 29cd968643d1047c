"""Hash the skill's answers for the sample documents: a refactoring that must not change
behaviour shows the same hashes before and after.

    python -m bench.sample_answers [--save FILE | --check FILE]

Each markdown and HTML file under samples/ becomes one record of a skill request, posted
in-process to the ASGI app (`POST /api/chunk`, embeddings off, no worker processes) at a
few record-input settings; what is hashed is the answer JSON, setting by setting.
Exits 1 when `--check` finds a difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from starlette.testclient import TestClient

from skills.skill.app import build_app
from skills.skill.settings import load_settings

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SUFFIXES = frozenset({".md", ".html"})
INPUTS: dict[str, dict[str, object]] = {
    "defaults": {},
    "500 characters": {"unit": "characters", "maximumPageLength": 500, "pageOverlapLength": 100},
    "words": {"strategy": "words"},
}
"""Record inputs added to every record, by label."""
APP_SETTINGS = {"EMBEDDING_PROVIDER": "none", "CHUNK_WORKERS": "0"}
HTTP_OK = 200


def sample_files(root: Path = SAMPLES) -> list[Path]:
    """Every markdown and HTML file under `root`, in path order."""
    return sorted(path for path in root.rglob("*") if path.suffix in SUFFIXES)


def answer_hashes(root: Path = SAMPLES) -> dict[str, str]:
    """sha256 of the answer JSON per setting, over every sample file."""
    files = sample_files(root)
    settings = load_settings(APP_SETTINGS, lambda model: False)
    hashes: dict[str, str] = {}
    with TestClient(build_app(settings)) as client:
        for label, inputs in INPUTS.items():
            values = [
                {
                    "recordId": path.relative_to(root).as_posix(),
                    "data": {
                        "text": path.read_text(encoding="utf-8"),
                        "fileName": path.name,
                        **inputs,
                    },
                }
                for path in files
            ]
            response = client.post("/api/chunk", json={"values": values})
            if response.status_code != HTTP_OK:
                raise SystemExit(f"{label}: HTTP {response.status_code}: {response.text}")
            hashes[label] = hashlib.sha256(response.content).hexdigest()
    hashes["files"] = str(len(files))
    return hashes


def main(argv: list[str] | None = None) -> int:
    """Print (and save or check) the hashes; 1 when a check differs."""
    parser = argparse.ArgumentParser(prog="python -m bench.sample_answers")
    parser.add_argument("--save", type=Path, help="write the hashes to this JSON file")
    parser.add_argument("--check", type=Path, help="compare with hashes saved earlier")
    args = parser.parse_args(argv)
    hashes = answer_hashes()
    for label, digest in hashes.items():
        print(f"{label:>16}  {digest}")
    if args.save:
        args.save.write_text(json.dumps(hashes, indent=2) + "\n", encoding="utf-8")
    if args.check:
        saved = json.loads(args.check.read_text(encoding="utf-8"))
        differ = [label for label in saved if saved[label] != hashes.get(label)]
        same = len(saved) - len(differ)
        print(f"{same} of {len(saved)} identical" + (f"; differ: {differ}" if differ else ""))
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
