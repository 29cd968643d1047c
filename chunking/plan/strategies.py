"""The registry: every strategy's declaration (`chunking.plan.declaration`), by name.

Each strategy is declared once, beside its planner; what the other surfaces need is read
from `DECLARATIONS`: the names `strategy` may take, the planner `chunking.pipeline`
calls, the parameters chunk ids hold (`chunking.options.chunk_ids`), the rows of the parameter
table (`skills.parameters`), which strategies score. Adding a strategy is its module
and one line here.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from chunking.options.errors import OptionError
from chunking.plan.binary import BINARY
from chunking.plan.pages import PAGES
from chunking.plan.semantic import SEMANTIC
from chunking.plan.structure import STRUCTURE
from chunking.plan.words import WORDS

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from chunking.options import ChunkOptions, ParameterNames
    from chunking.plan.core import Strategy
    from chunking.plan.declaration import Parameter, StrategyDeclaration

DECLARATIONS: tuple[StrategyDeclaration, ...] = (STRUCTURE, WORDS, SEMANTIC, BINARY, PAGES)
"""Every strategy, in the order surfaces list them (the first is the default)."""

BY_NAME: Mapping[str, StrategyDeclaration] = {d.name: d for d in DECLARATIONS}
STRATEGIES: dict[str, Strategy] = {d.name: d.plan for d in DECLARATIONS}
"""Every strategy by the name `strategy` / `CHUNK_STRATEGY` / `--strategy` selects."""
STRATEGY_NAMES: tuple[str, ...] = tuple(BY_NAME)
"""The strategies `strategy` may name."""
STRATEGY_PARAMETERS: Mapping[str, tuple[str, ...]] = {
    d.name: d.inputs for d in DECLARATIONS if d.rows
}
"""Each strategy's own parameters, by their record input names: given with another
strategy, they are an error (`strategy_conflicts`)."""
SCORED_STRATEGIES: tuple[str, ...] = tuple(d.name for d in DECLARATIONS if d.scored)
"""The strategies that call `chunking.plan.scoring.Scoring` (embeddings or pair scores)."""
PARAMETER_TYPES: Mapping[str, type[Any]] = {
    d.name: d.parameters for d in DECLARATIONS if d.parameters is not None
}
"""By strategy: the dataclass of its own parameters (`ChunkOptions.parameters`)."""
PARAMETER_FIELDS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    name: (kind.__name__, tuple(f.name for f in fields(kind)))
    for name, kind in PARAMETER_TYPES.items()
}
"""By strategy: its parameters' dataclass name and fields in order (what chunk ids hold
of them)."""


def parameters_of(options: ChunkOptions) -> object | None:
    """The chosen strategy's own parameters: those `options` hold, else its defaults;
    None: it has none. Raises OptionError for parameters of another strategy."""
    kind = PARAMETER_TYPES.get(options.strategy)
    given = options.parameters
    if given is None:
        default: object | None = None if kind is None else kind()
        return default
    if kind is None or not isinstance(given, kind):
        wanted = f"{kind.__name__} or None" if kind is not None else "None (it has none)"
        raise OptionError(
            f"strategy {options.strategy!r} takes parameters {wanted} (got {type(given).__name__})"
        )
    found: object = given
    return found


def strategy_parameter_rows() -> tuple[Parameter, ...]:
    """Every strategy's rows of the parameter table, in registry order, each naming its
    strategy."""
    return tuple(replace(row, strategy=d.name) for d in DECLARATIONS for row in d.rows)


def strategy_conflicts(strategy: str, given: Collection[str], names: ParameterNames) -> list[str]:
    """Why the parameters `given` (record input names) do not go with `strategy`: one
    validation, which the skill and the command line word alike."""
    problems: list[str] = []
    for owner, parameters in STRATEGY_PARAMETERS.items():
        named = [names.spell(name) for name in parameters if name in given]
        if owner != strategy and named:
            problems.append(
                f"{names.noun}(s) {', '.join(named)} only apply to strategy {owner!r} "
                f"(strategy is {strategy!r}; strategies are {', '.join(STRATEGY_NAMES)})"
            )
    declared = BY_NAME.get(strategy)
    for name, why in (declared.refused if declared else {}).items():
        if name in given:
            problems.append(
                f"{names.noun} {names.spell(name)} does not apply to strategy "
                f"{strategy!r}: {why(names.spell)}"
            )
    return problems
