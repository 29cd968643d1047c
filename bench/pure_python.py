"""Run a module with `chunking` imported from its .py files, even where a compiled build
(`scripts/build_compiled.sh`) has put C extensions beside them: the reference a compiled
build's output is compared with.

    python -m bench.pure_python MODULE [ARGUMENTS ...]
    python -m bench.pure_python bench.identical --save pure.json   # then, compiled:
    python -m bench.identical --check pure.json
"""

from __future__ import annotations

import importlib.machinery
import runpy
import sys
from pathlib import Path

CHUNKING = Path(__file__).resolve().parent.parent / "chunking"


def _sources_only(path: str) -> importlib.machinery.FileFinder:
    """A finder for `chunking`'s folders that knows .py files only (no extension modules)."""
    folder = Path(path or ".").resolve()
    if folder != CHUNKING and CHUNKING not in folder.parents:
        raise ImportError(path)  # every other folder: the usual finders
    return importlib.machinery.FileFinder(
        str(folder),
        (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES),
    )


def sources_only() -> None:
    """From now on, `chunking`'s modules load from their .py files. Call it before the
    first import of `chunking`: a module imported already stays as it was loaded."""
    if _sources_only not in sys.path_hooks:
        sys.path_hooks.insert(0, _sources_only)
        sys.path_importer_cache.clear()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0].startswith("-"):
        print("usage: python -m bench.pure_python MODULE [ARGUMENTS ...]", file=sys.stderr)
        return 2
    if any(name == "chunking" or name.startswith("chunking.") for name in sys.modules):
        print("chunking was imported before bench.pure_python could intervene", file=sys.stderr)
        return 2
    sources_only()
    sys.argv = args
    runpy.run_module(args[0], run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
