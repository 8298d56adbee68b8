"""Table 3 of the paper, automatic columns: every method on the premises of a COPA file.

For each COPA item the premise is the input, its ``asks-for`` the direction and the correct
alternative the gold (both as CausalBank-style clauses: :func:`tasks.copa.dataset.as_clause`).
Each method (:mod:`guided_generation.baselines`) returns its top K; the table reports, per method:

``COPA by generation``
    The plausibility measure (:mod:`tasks.copa.plausibility`): the share of items whose correct
    alternative is nearer the top K than the wrong one (MiniLM cosine, best over the K; chance
    50%), with the mean number of distinct keywords in the top K and the share of outputs that
    repeat a template (a word trigram shared with two other outputs of the same top K).
``Div``
    BLEU-1 of the top 3 against the gold, no brevity penalty (sacrebleu's corpus 1-gram
    precision, %, lower-cased: retrieved sentences keep their capitals); lower = more diverse (:func:`~guided_generation.metrics.div_bleu1`).
``distinct-1``, ``distinct-2``
    Mean over items of the share of distinct n-grams among the item's top K.
``coverage``
    Constrained methods: the share of decoded outputs that contain their keyword (before the
    pipeline drops those that do not). ``-`` for unconstrained methods.
``gold hit``
    The share of items where one of the top K contains a content lemma of the gold answer.

Beside the table, one number per model: how often the generator gives the correct alternative a
higher log-likelihood than the wrong one, given the premise in the asked direction.

Per-item outputs are appended to ``outputs.jsonl`` in the output folder as they are made, and a
re-run skips the (method, item) pairs already there: a long evaluation can be interrupted and
resumed.

``dpc eval generation ../shared/data/copa/copa-dev.xml --bank runs/gutenberg/causalbank --limit 100``
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from cause_effect_graph.lemmas import default_lemmatizer
from dpc_files import (
    OutputError,
    ResultsFile,
    check_output_folder,
    claim_output_folder,
    release_output_folder,
)
from guided_generation.baselines import METHODS, run_method
from guided_generation.metrics import div_bleu1, keyword_hit_rate, mean_distinct_n
from guided_generation.options import GuidedOptions
from tasks.copa.dataset import CopaItem, as_clause
from tasks.copa.plausibility import copa_by_generation
from train.metrics import sequence_log_probs

if TYPE_CHECKING:
    from guided_generation.pipeline import GuidedGenerator
    from guided_generation.retrieval import KnnRetriever

__all__ = ["MethodScores", "evaluate_generation", "format_table", "model_prefers_correct"]


@dataclass(frozen=True)
class MethodScores:
    """One row of the table (see the module docstring for each column)."""

    method: str
    items: int
    div: float
    distinct1: float
    distinct2: float
    coverage: float
    gold_hit: float
    outputs_per_item: float
    seconds_per_item: float
    copa_by_generation: float = math.nan
    distinct_keywords: float = math.nan
    template_share: float = math.nan


def _gold(item: CopaItem) -> str:
    return as_clause(item.alternatives[item.answer - 1])


#: The folder's files, besides the marker that makes it ours (:func:`dpc_files.claim_output_folder`).
OUT_FILES = ("outputs.jsonl", "scores.json", "table.md")


def _read_done(results: ResultsFile, items: Sequence[CopaItem]
               ) -> dict[tuple[str, str], dict[str, Any]]:
    """The rows an earlier run of the same options wrote to ``outputs.jsonl``, by (method, id);
    :class:`dpc_files.ResultsFile` refuses a file of another run, or not dpc's, before anything
    is written. A row of an item the COPA file does not hold, or holds with another premise, is
    another run's too."""
    premises = {item.id: item.premise for item in items}
    done: dict[tuple[str, str], dict[str, Any]] = {}
    for number, row in enumerate(results.check(), start=2):
        key = (row.get("method"), row.get("id"))
        if not all(isinstance(k, str) for k in key) or \
                premises.get(row["id"], row.get("premise")) != row.get("premise"):
            raise OutputError(f"--out {str(results.path)!r} line {number} is not an output of "
                              "this run of dpc eval generation (another COPA file?); use another "
                              "--out")
        done[key] = row  # type: ignore[index]
    return done


def evaluate_generation(
    items: Sequence[CopaItem],
    generator: GuidedGenerator,
    methods: Sequence[str] = METHODS,
    options: GuidedOptions | None = None,
    *,
    retriever: KnnRetriever | None = None,
    lemmatize: Callable[[str], list[str]] | None = None,
    out: str | Path | None = None,
    seed: int = 0,
    progress: bool = True,
    run: Mapping[str, Any] | None = None,
) -> list[MethodScores]:
    """Run every method on every item and score it (see the module docstring).

    Parameters
    ----------
    items
        COPA items (:func:`tasks.copa.dataset.read_copa`).
    generator
        The generator and graph.
    methods
        Names from :data:`guided_generation.baselines.METHODS`.
    retriever
        Needed for ``knn``.
    lemmatize
        Text → content lemmas (default: the graph's spaCy lemmatiser).
    out
        A folder: outputs are appended to ``out/outputs.jsonl`` and reused by a re-run of the
        same run (:class:`dpc_files.ResultsFile`: the options, ``seed`` and ``run``).
    run
        What else makes the run and is not an argument here, recorded in ``outputs.jsonl``:
        the model's and graph's identities (``dpc eval generation`` gives them), ...
    """
    options = options or GuidedOptions()
    lemmatize = lemmatize or generator.lemmatizer or default_lemmatizer()
    log_path = Path(out) / "outputs.jsonl" if out is not None else None
    done: dict[tuple[str, str], dict[str, Any]] = {}
    results = None
    made = False  # whether this call made the folder (removed again if refused at once)
    if log_path is not None:
        check_output_folder(out, "--out", command="dpc eval generation")  # type: ignore[arg-type]
        made = not Path(out).exists()  # type: ignore[arg-type]
        claim_output_folder(out, "dpc eval generation")  # type: ignore[arg-type]
        results = ResultsFile(log_path, "dpc eval generation",
                              {**options.run_record(), "seed": seed, **(run or {})})
        done = _read_done(results, items)  # checked whole before anything is written
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in methods}
    try:
        _generate_all(items, methods, generator, options, retriever, lemmatize, seed, results,
                      done, rows, progress)
    except Exception:
        if made:  # refused before anything was written (a size that does not fit): removed
            release_output_folder(out)  # type: ignore[arg-type]
        raise
    return [_score(method, rows[method], lemmatize, items) for method in methods]


def _generate_all(items: Sequence[CopaItem], methods: Sequence[str], generator: Any,
                  options: GuidedOptions, retriever: Any, lemmatize: Callable[[str], list[str]],
                  seed: int, results: ResultsFile | None,
                  done: dict[tuple[str, str], dict[str, Any]],
                  rows: dict[str, list[dict[str, Any]]], progress: bool) -> None:
    """Every method's outputs for every item not in ``done``, appended to ``results`` and to
    ``rows`` (:func:`evaluate_generation`'s loop)."""
    with results.writer() if results else nullcontext(None) as write:
        # Items outside, methods inside: the guided variants then rerank one kept decode.
        for item in tqdm(items, desc="items", unit="item", disable=not progress):
            for method in methods:
                key = (method, item.id)
                if key not in done:
                    started = time.perf_counter()
                    outputs, stats = run_method(method, generator, as_clause(item.premise),
                                                item.asks_for, options, gold=_gold(item),
                                                retriever=retriever, lemmatize=lemmatize,
                                                seed=seed)
                    done[key] = {"method": method, "id": item.id, "premise": item.premise,
                                 "direction": item.asks_for, "gold": _gold(item),
                                 "outputs": [o.text for o in outputs],
                                 "keywords": [o.keyword for o in outputs],
                                 "rows": stats.get("rows"), "decoded": stats.get("outputs"),
                                 "missed": stats.get("missed"),
                                 "seconds": round(time.perf_counter() - started, 3)}
                    if write:
                        write(done[key])
                rows[method].append(done[key])


def _score(method: str, rows: list[dict[str, Any]], lemmatize: Callable[[str], list[str]],
           items: Sequence[CopaItem]) -> MethodScores:
    outputs = [r["outputs"] for r in rows]
    golds = [r["gold"] for r in rows]
    decoded = sum((r.get("decoded") or 0) + (r.get("missed") or 0) for r in rows)
    missed = sum(r.get("missed") or 0 for r in rows)
    constrained = method.startswith("guided") or method == "gold"
    coverage = (1 - missed / decoded) if constrained and decoded else math.nan
    n = len(rows) or 1
    plausible = copa_by_generation(items, outputs, [r.get("keywords") or [] for r in rows])
    return MethodScores(
        method=method,
        items=len(rows),
        div=div_bleu1(outputs, golds, top=3, lowercase=True),
        distinct1=mean_distinct_n(outputs, 1),
        distinct2=mean_distinct_n(outputs, 2),
        coverage=coverage,
        gold_hit=keyword_hit_rate(outputs, [set(lemmatize(g)) for g in golds], lemmatize),
        outputs_per_item=sum(len(o) for o in outputs) / n,
        seconds_per_item=sum(r.get("seconds", 0.0) for r in rows) / n,
        copa_by_generation=plausible.accuracy,
        distinct_keywords=plausible.distinct_keywords,
        template_share=plausible.template_share,
    )


def model_prefers_correct(generator: GuidedGenerator, items: Sequence[CopaItem]) -> float:
    """Share of items whose correct alternative has the higher log-likelihood given the premise.

    ``log P(alternative | prompt)`` under the generator, the prompt asking for the premise's
    ``asks-for`` in the generator's input format, both alternatives as clauses; ties count as
    wrong.
    """
    sources, targets = [], []
    for item in items:
        for alt in item.alternatives:
            sources.append(generator.prompt(as_clause(item.premise), item.asks_for))
            targets.append(as_clause(alt))
    scores = sequence_log_probs(generator.model, generator.tokenizer, sources, targets,
                                end_id=generator.input_format.end_id(generator.tokenizer))
    right = 0
    for i, item in enumerate(items):
        first, second = scores[2 * i], scores[2 * i + 1]
        right += (first > second) if item.answer == 1 else (second > first)
    return right / len(items) if items else math.nan


def _cell(value: float, digits: int = 3) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def format_table(scores: Sequence[MethodScores], prefers_correct: float | None = None) -> str:
    """The results as a Markdown table (and the model's preference for the correct answer)."""
    lines = ["| method | items | COPA by generation ↑ | keywords in top K | templated ↓ "
             "| Div (BLEU-1, %) ↓ | distinct-1 | distinct-2 | coverage | gold hit "
             "| outputs/item | s/item |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in scores:
        lines.append(f"| {s.method} | {s.items} | {_cell(s.copa_by_generation)} | "
                     f"{_cell(s.distinct_keywords, 1)} | {_cell(s.template_share)} | "
                     f"{_cell(s.div, 2)} | {_cell(s.distinct1)} | "
                     f"{_cell(s.distinct2)} | {_cell(s.coverage)} | {_cell(s.gold_hit)} | "
                     f"{s.outputs_per_item:.1f} | {s.seconds_per_item:.2f} |")
    if prefers_correct is not None:
        lines.append("")
        lines.append(f"Correct alternative more likely than the wrong one under the generator: "
                     f"{_cell(prefers_correct)}")
    return "\n".join(lines)


def scores_json(scores: Sequence[MethodScores]) -> list[dict[str, Any]]:
    """JSON-ready rows (NaN as ``None``)."""
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(s).items()}
            for s in scores]
