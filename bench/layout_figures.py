"""The layout figures issue 38 (item 5) sets targets for, printed with one command.

    python -m bench.layout_figures [ROOT]

- top-level modules of `chunking/` (every `*.py` directly under it);
- function-local imports (an import statement inside a function, nested ones counted
  once) in the checked packages, and how many of them import one of our modules;
- functions over 60 lines (from `def` to their last line) in `chunking/` and `skills/`.

Each line shows the figure and its target; the exit status is 0 either way (a figure,
not a gate). Read from the source with `ast`: nothing is imported.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("chunking", "skills", "infra", "evaluation", "bench", "testing", "function_app.py")
"""Where function-local imports are counted (the dependency test's packages)."""
OURS = frozenset({"chunking", "skills", "infra", "evaluation", "bench", "testing", "tests"})
LONG_FUNCTION_LINES = 60
LONG_FUNCTION_PACKAGES = ("chunking", "skills")

TOP_LEVEL_TARGET = 8
LOCAL_IMPORTS_TARGET = 15
LONG_FUNCTIONS_TARGET = 8


@dataclass(frozen=True, slots=True)
class Figures:
    """The figures of one checkout."""

    top_level_modules: int
    local_imports: int
    local_imports_of_ours: int
    long_functions: tuple[str, ...]
    """`path:line name (lines)` of each function over the limit."""


def _python_files(root: Path, names: tuple[str, ...]) -> list[Path]:
    found: list[Path] = []
    for name in names:
        path = root / name
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(path.rglob("*.py")))
    return found


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _is_ours(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in OURS
    return any(alias.name.split(".")[0] in OURS for alias in node.names)


def figures(root: Path = ROOT) -> Figures:
    """Count the figures under `root`."""
    local: dict[tuple[Path, int], bool] = {}
    for path in _python_files(root, CHECKED):
        for function in _functions(ast.parse(path.read_text(encoding="utf-8"))):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    local[path, node.lineno] = _is_ours(node)
    long: list[str] = []
    for path in _python_files(root, LONG_FUNCTION_PACKAGES):
        for function in _functions(ast.parse(path.read_text(encoding="utf-8"))):
            lines = (function.end_lineno or function.lineno) - function.lineno + 1
            if lines > LONG_FUNCTION_LINES:
                where = path.relative_to(root).as_posix()
                long.append(f"{where}:{function.lineno} {function.name} ({lines})")
    return Figures(
        top_level_modules=len(list((root / "chunking").glob("*.py"))),
        local_imports=len(local),
        local_imports_of_ours=sum(local.values()),
        long_functions=tuple(sorted(long)),
    )


def report(found: Figures) -> list[str]:
    """The lines the command prints."""
    return [
        f"top-level modules in chunking/: {found.top_level_modules} (target <= {TOP_LEVEL_TARGET})",
        f"function-local imports in {', '.join(CHECKED)}: {found.local_imports}, "
        f"{found.local_imports_of_ours} of our modules (target <= {LOCAL_IMPORTS_TARGET})",
        f"functions over {LONG_FUNCTION_LINES} lines in "
        f"{', '.join(p + '/' for p in LONG_FUNCTION_PACKAGES)}: {len(found.long_functions)} "
        f"(target <= {LONG_FUNCTIONS_TARGET})",
        *(f"  {where}" for where in found.long_functions),
    ]


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.layout_figures [ROOT]`."""
    arguments = sys.argv[1:] if argv is None else argv
    root = Path(arguments[0]) if arguments else ROOT
    if not (root / "chunking").is_dir():
        print(f"python -m bench.layout_figures: no chunking/ under {root}", file=sys.stderr)
        return 2
    print("\n".join(report(figures(root))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
