"""The plan stage: each strategy turns an outline into spans; parsing and the skill stay untouched.

Each strategy is a module here with a function of the `Strategy` signature
(`chunking.plan.core`: `PlanInputs` in, a `Plan` of spans and warnings out), registered
by its `StrategyDeclaration` (`chunking.plan.declaration`) in the registry
(`chunking.plan.strategies`): `structure` (the default), `words` (fixed
word windows), `semantic` (cuts where the meaning shifts, `Scoring.embed`) and `binary`
(the recursive least-similar split).  Each gets the same outline, section tree, sizer
and contextualizer, and must return spans of the source whose embedded text fits the
limit, with tables and code never cut inside a row or line. `structure`, `semantic` and
`binary` share the structure walk (`walk`) by composition. Strategies that score text
get `Scoring` (`chunking.plan.scoring`): the caller's embedder and pair scorer, so they stay
pure. Each strategy's parameters live beside it (`words_params`, `semantic_params`,
`binary_params`), which `chunking.options` imports: this package imports nothing itself,
so the options never import a strategy.
"""
