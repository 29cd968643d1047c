"""Virtualenvs that hold exactly what an install would, built in a second from this one.

Installing from PyPI in a test takes minutes and needs the network; pointing a new venv at
this venv's whole site-packages (a .pth file) is fast but dishonest, since this venv holds
the developer tools too: a command that imports httpx would pass there and crash after
`./run.sh` or `pip install .`. So a test venv gets, as symbolic links in its own
site-packages, the files of exactly the distributions the requirements resolve to: the
requirements' closure over the installed distributions' own `Requires-Dist` (markers and
extras evaluated), read from this venv's metadata. A package an install lacks is missing
there too; nothing is downloaded or copied.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if TYPE_CHECKING:
    from collections.abc import Iterable


def requirement_lines(path: Path) -> list[str]:
    """The requirement lines of a requirements file, `-r` includes followed."""
    lines: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line.startswith("-r"):
            lines += requirement_lines(path.parent / line.removeprefix("-r").strip())
        elif line and not line.startswith("#"):
            lines.append(line)
    return lines


def closure(requirements: Iterable[str]) -> dict[str, metadata.Distribution]:
    """Every installed distribution the requirements pull in, by canonical name.

    LookupError when one is not installed here (the test would not be honest without it).
    """
    found: dict[str, metadata.Distribution] = {}
    followed: set[tuple[str, str]] = set()
    pending = [(Requirement(line), "") for line in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        try:
            distribution = found.get(name) or metadata.distribution(name)
        except metadata.PackageNotFoundError as error:
            raise LookupError(f"{requirement.name} is not installed in {sys.prefix}") from error
        found[name] = distribution
        for wanted in ("", *requirement.extras):
            if (name, wanted) not in followed:
                followed.add((name, wanted))
                pending += [(Requirement(line), wanted) for line in distribution.requires or ()]
    return found


def link_distributions(distributions: Iterable[metadata.Distribution], site: Path) -> None:
    """Symbolic links in `site` to each distribution's top-level files and folders."""
    for distribution in distributions:
        base = Path(str(distribution.locate_file("")))
        tops = {Path(str(file)).parts[0] for file in distribution.files or ()}
        for top in sorted(tops - {"..", "__pycache__"}):
            target = site / top
            if not target.exists() and (base / top).exists():
                target.symlink_to(base / top)


def make_venv(where: Path, requirements: Iterable[str]) -> Path:
    """A venv at `where` (no pip) holding exactly `requirements`' closure; its python."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120
    )
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    link_distributions(closure(requirements).values(), Path(site))
    return python
