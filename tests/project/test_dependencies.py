"""The dependency rule between our packages, over every import (function-local and
TYPE_CHECKING ones included), and a reason on every function-local import.

    chunking <- skills.values, skills.embedding
             <- skills.skill, skills.commands <- skills.search <- infra
    evaluation -> chunking, skills.embedding, and EVALUATION_MAY_IMPORT below
    bench, testing -> anything but tests
    nothing -> tests

A layer may import its own layer and those to its left. docs/design/architecture.md
draws the same rule.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from tests.paths import ROOT

CHECKED = ("chunking", "skills", "infra", "evaluation", "bench", "testing", "function_app.py")
"""What the rule covers: every .py under these (tests/ may import anything of ours)."""
OURS = frozenset({*(name.removesuffix(".py") for name in CHECKED), "tests"})

LAYERS: tuple[tuple[str, ...], ...] = (
    ("chunking",),
    ("skills", "skills.values", "skills.embedding"),
    ("skills.skill", "skills.commands", "skills.api", "skills.parameters", "skills.chunk_schema"),
    ("skills.search", "skills.__main__"),
    ("infra", "function_app"),
)
"""The layers, lowest first, by module prefix (the longest prefix decides). `skills` alone
is the package's `__init__` (its version). `skills.values` reads loosely typed values
(JSON inputs, app-setting strings) for every layer above, the embedding settings and
the record inputs alike. `skills.__main__` starts
`python -m skills` and its console script, `push` among them, so it sits with search."""

EVALUATION_MAY_IMPORT = (
    "chunking",
    "skills.embedding",
    "skills.commands.chunk_map",
    "skills.parameters",
    "skills.search.retrieval",
    "evaluation",
)
"""evaluation measures the chunker with the app's embedding providers, and draws each
question's chunk map with the chunk map page (which imports only chunking), and names a
setting as the skill's app settings and record inputs from the table of parameters (data
over chunking), and hands ranked chunks over as passages with the query-time helper's own
merge (`merge_neighbours`, pure; the Azure SDK is imported only by a search); nothing else."""

ENTRY_POINTS: dict[str, tuple[str, str]] = {
    "chunking/__main__.py": (
        "skills.commands",
        "`python -m chunking` is a documented command; the CLI lives at the app layer",
    ),
    "chunking/report/__main__.py": (
        "skills.commands",
        "`python -m chunking.report` is a documented command; the chunk map lives at the app layer",
    ),
}
"""The only modules allowed to break the rule, what they may import, and why."""

KNOWN_VIOLATIONS: dict[str, tuple[str, str]] = {}
"""Violations still expected (file -> the package it imports, why): none today. One added
while a move is under way is listed, not hidden, and leaves the list once fixed."""


@dataclass(frozen=True, slots=True)
class Import:
    """One import of one of our modules."""

    path: str
    """The importing file, relative to the repository."""
    line: int
    module: str
    """The imported module (for `from a import b`, `a.b` when that is a module)."""
    function: int
    """The line of the enclosing function's `def`; 0 at module level."""


def module_name(path: Path) -> str:
    """`skills/skill/app.py` -> `skills.skill.app`; a package's `__init__` -> the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    return (ROOT / relative).is_dir() or (ROOT / relative).with_suffix(".py").is_file()


def _imports(path: Path) -> list[Import]:
    return _imports_of_file(path, module_name(path), path.relative_to(ROOT).as_posix())


def _imports_of_file(path: Path, module: str, rel: str | None = None) -> list[Import]:
    """Every import of ours in `path`, the module `module` (at `rel` in the repository)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, function: int) -> None:
        for child in ast.iter_child_nodes(node):
            inside = function
            if not function and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                inside = child.lineno
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    names.append(full if _is_module(full) else base)
            dynamic = _dynamic_import(child)
            if dynamic is not None:
                names.append(dynamic)
            for name in dict.fromkeys(names):
                if isinstance(child, ast.stmt | ast.Call) and name.split(".", 1)[0] in OURS:
                    found.append(Import(rel or path.name, child.lineno, name, function))
            visit(child, inside)

    visit(tree, function=0)
    return found


def _dynamic_import(node: ast.AST) -> str | None:
    """The module `importlib.import_module("a.b")` (or `import_module`, `__import__`) names
    with a literal, or None: a module imported by name is imported all the same."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    function = node.func
    name = (
        function.attr
        if isinstance(function, ast.Attribute)
        else function.id
        if isinstance(function, ast.Name)
        else ""
    )
    first = node.args[0]
    if name in {"import_module", "__import__"} and isinstance(first, ast.Constant):
        return first.value if isinstance(first.value, str) else None
    return None


def checked_files() -> list[Path]:
    """Every .py file the rule covers."""
    files: list[Path] = []
    for name in CHECKED:
        target = ROOT / name
        files.extend([target] if target.is_file() else sorted(target.rglob("*.py")))
    return files


def _layer(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    return None if best is None else best[0]


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def allowed_for(source: str) -> str:
    """What `source` may import, as the rule allows it: its own layer and those below."""
    top = source.split(".", 1)[0]
    if top in {"bench", "testing"}:
        return "anything of ours but tests"
    if top == "evaluation":
        return ", ".join(EVALUATION_MAY_IMPORT)
    own = _layer(source)
    if own is None:
        return "nothing until it has a layer in LAYERS"
    return ", ".join(prefix for layer in LAYERS[: own + 1] for prefix in layer)


def broken_rule(source: str, imported: str) -> str | None:
    """The rule `source` breaks by importing `imported`, or None; the message lists what
    `source` may import."""
    rule = _broken_rule(source, imported)
    if rule is None:
        return None
    return f"{rule}; {source} may import: {allowed_for(source)}"


def _broken_rule(source: str, imported: str) -> str | None:
    top = source.split(".", 1)[0]
    target = imported.split(".", 1)[0]
    if target == "tests":
        return "nothing imports tests"
    if top in {"bench", "testing"}:
        return None
    if top == "evaluation":
        if imported == "skills" or _under(imported, EVALUATION_MAY_IMPORT):
            return None
        return "evaluation imports only chunking, skills.embedding and the chunk map"
    if target == "testing":
        return "only tests and bench import testing"
    if target in {"bench", "evaluation"}:
        return f"only bench imports {target}" if target == "evaluation" else "only bench does"
    own, theirs = _layer(source), _layer(imported)
    if own is None or theirs is None:
        return f"{source} or {imported} has no layer in LAYERS"
    if theirs > own:
        return (
            f"{source} (layer {own}) imports {imported} (layer {theirs}): "
            "chunking <- skills.values/embedding <- skills.skill/commands <- skills.search <- infra"
        )
    return None


def violations() -> list[tuple[Import, str]]:
    """Every import against the rule, with the rule it breaks (entry points excepted)."""
    found: list[tuple[Import, str]] = []
    for path in checked_files():
        source = module_name(path)
        for one in _imports(path):
            allowed = ENTRY_POINTS.get(one.path)
            if allowed and _under(one.module, (allowed[0],)):
                continue
            rule = broken_rule(source, one.module)
            if rule:
                found.append((one, rule))
    return found


def _known(one: Import) -> bool:
    known = KNOWN_VIOLATIONS.get(one.path)
    return known is not None and _under(one.module, (known[0],))


def test_imports_follow_the_dependency_rule() -> None:
    unexpected = [f"{one.path}:{one.line}: {rule}" for one, rule in violations() if not _known(one)]
    assert not unexpected, "\n".join(unexpected)


def test_every_known_violation_still_occurs() -> None:
    """A violation listed as known and fixed since must leave the list (none are listed)."""
    for path in KNOWN_VIOLATIONS:
        assert [one for one, _ in violations() if one.path == path and _known(one)], path


def test_rule_catches_each_kind_of_violation() -> None:
    assert broken_rule("chunking.cli", "skills.skill.settings")
    assert broken_rule("skills.embedding.scoring", "skills.skill.settings")
    assert broken_rule("skills.skill.app", "skills.search.push")
    assert broken_rule("skills.search.push", "infra.deploy")
    assert broken_rule("evaluation.run", "bench.corpus_audit")
    assert broken_rule("evaluation.run", "skills.skill.settings")
    assert broken_rule("bench.endpoint", "tests.helpers")
    assert broken_rule("skills.skill.app", "testing.http_stub")
    assert broken_rule("infra.deploy", "evaluation.run")
    assert broken_rule("infra.deploy", "skills.search.definitions") is None
    assert broken_rule("evaluation.run", "skills.embedding.clients") is None
    assert broken_rule("bench.endpoint", "testing.http_stub") is None


NOQA = re.compile(r"noqa:\s*[A-Z0-9, ]+")
PRODUCT = ("chunking", "skills", "infra", "evaluation", "function_app.py")
"""Whose lazy imports must say why (tests, bench and testing import as they please)."""


def test_function_local_imports_say_why() -> None:
    """A lazy import of ours stays only where it saves start-up time (or work a path never
    needs), and says so: on its line, or in a comment above it in the same function."""
    missing: list[str] = []
    for path in checked_files():
        if not path.relative_to(ROOT).as_posix().startswith(PRODUCT):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for one in _imports(path):
            if not one.function:
                continue
            here = lines[one.line - 1]
            above = lines[one.function : one.line - 1]
            if NOQA.sub("", here.partition("#")[2]).strip():
                continue
            if any(line.strip().startswith("#") for line in above):
                continue
            missing.append(f"{one.path}:{one.line}: {one.module}")
    assert not missing, "function-local imports without a reason:\n" + "\n".join(missing)


def _runtime_imports(path: Path) -> set[str]:
    """The modules of ours `path` imports when it runs: every import but those under
    `if TYPE_CHECKING:`, function-local ones included (one there to dodge a cycle is
    the cycle still)."""
    skipped: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            skipped.update(line for child in node.body for line in _lines(child))
    return {one.module for one in _imports(path) if one.line not in skipped}


def _lines(node: ast.stmt) -> range:
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)


def _with_packages(module: str, top: str) -> list[str]:
    """`module` and the packages whose `__init__` importing it runs first (below `top`,
    which runs before anything in it)."""
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(len(top.split(".")) + 1, len(parts) + 1)]


def import_graph(top: str, *, type_only: bool = False) -> dict[str, set[str]]:
    """Each module of package `top` -> the modules of `top` it runs on import (with
    `type_only`, those it names for type checking too)."""
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / top.replace(".", "/")).rglob("*.py")):
        source = module_name(path)
        targets = graph.setdefault(source, set())
        found = {one.module for one in _imports(path)} if type_only else _runtime_imports(path)
        for module in found:
            if _under(module, (top,)):
                # The packages holding `source` are imported before it runs: importing a
                # sibling does not run their `__init__` again.
                targets.update(
                    name
                    for name in _with_packages(module, top)
                    if name != source and not _under(source, (name,))
                )
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_chunking_has_no_import_cycle() -> None:
    """No module of the core imports, at run time, one that imports it back (through any
    chain, a package's `__init__` included): a strategy's parameters sit beside it in a
    module the options can import (`chunking/plan/*_params.py`)."""
    assert cycles(import_graph("chunking")) == []


def test_skills_has_no_import_cycle() -> None:
    """No module of `skills` imports, at run time, one that imports it back."""
    assert cycles(import_graph("skills")) == []


def test_the_skill_has_no_cycle_even_for_type_checking() -> None:
    """The skill's records, contract and renderer name each other in one direction only:
    `OutputRecord` sits with the other typed answers (`records.py`), below both."""
    assert cycles(import_graph("skills.skill", type_only=True)) == []


def test_the_checks_fail_on_a_cycle_in_skills_and_a_dynamic_import(tmp_path: Path) -> None:
    """A cycle among modules of `skills` is found as one in `chunking` is, and a module
    imported by name (`importlib.import_module`) breaks the rule as an import does, the
    message listing what the importer may import."""
    graph = {
        "skills.skill.contract": {"skills.skill.render"},
        "skills.skill.render": {"skills.skill.records"},
        "skills.skill.records": {"skills.skill.contract"},
    }
    assert cycles(graph) == [
        ["skills.skill.contract", "skills.skill.records", "skills.skill.render"]
    ]
    # A module's own packages are imported before it: a sibling's import is no cycle.
    page = import_graph("skills")["skills.commands.chunk_map.page"]
    assert "skills.commands.chunk_map.build" in page
    assert "skills.commands.chunk_map" not in page
    module = tmp_path / "lazy.py"
    module.write_text(
        "import importlib\n"
        "from importlib import import_module\n"
        "def load():\n"
        "    importlib.import_module('skills.search.push')  # the push path only\n"
        "    return import_module('infra.deploy')\n",
        encoding="utf-8",
    )
    found = [
        (one.line, one.module, one.function)
        for one in _imports_of_file(module, "skills.skill.lazy")
    ]
    assert found == [(4, "skills.search.push", 3), (5, "infra.deploy", 3)]
    rule = broken_rule("skills.skill.lazy", "skills.search.push")
    assert rule is not None
    assert rule.endswith(
        "skills.skill.lazy may import: chunking, skills, skills.values, skills.embedding, "
        "skills.skill, skills.commands, skills.api, skills.parameters, skills.chunk_schema"
    )
    assert broken_rule("evaluation.run", "bench.corpus_audit") == (
        "evaluation imports only chunking, skills.embedding and the chunk map; evaluation.run "
        f"may import: {', '.join(EVALUATION_MAY_IMPORT)}"
    )


def test_cycle_check_sees_package_inits_and_skips_type_checking() -> None:
    """A cycle through a package's `__init__` counts; an import for type checking only
    does not (`chunking.contextualize.prefix` names `ChunkOptions` in annotations)."""
    assert _with_packages("chunking.plan.words_params", "chunking") == [
        "chunking.plan",
        "chunking.plan.words_params",
    ]
    graph = {
        "chunking.options": {"chunking.plan", "chunking.plan.words_params"},
        "chunking.plan": {"chunking.plan.words"},
        "chunking.plan.words": {"chunking.options"},
        "chunking.plan.words_params": set(),
    }
    assert cycles(graph) == [["chunking.options", "chunking.plan", "chunking.plan.words"]]
    prefix = ROOT / "chunking" / "contextualize" / "prefix.py"
    assert "chunking.options" in {one.module for one in _imports(prefix)}
    assert "chunking.options" not in _runtime_imports(prefix)
