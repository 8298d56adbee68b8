"""Adversarial Filtering (SWAG, Zellers et al. 2018, Algorithm 1) over an oversampled pool.

Before anything, the pool endings that restate their context's gold ending are dropped
(:mod:`tasks.swag.restatements`; ``max_gold_similarity``): as negatives they would be second
right answers, and AF would favour them. Every context then starts with ``k`` (9, as the paper)
negatives drawn at random from its pool. Each iteration splits the contexts 80/20 at random,
trains the committee (:mod:`tasks.swag.committee`) on the 80% as (k + 1)-way questions, measures
every member's and the ensemble's accuracy on the 20% (the AF curve), and for each held-out
context replaces at most ``max_replaced`` (2, as the paper) of the negatives the ensemble scores
below the gold (easy; the easiest first) with pool endings it scores above the gold
(adversarial), drawn at random among those not already chosen.

Phases: the first ``cheap_iterations`` (100, as the paper) use the cheap members alone
(:data:`tasks.swag.committee.CHEAP_MODELS`: the MLP on LM features); the cheap phase ends early
when it converges (``patience`` iterations in a row in which fewer than ``min_replaced`` of the
held-out contexts had a negative replaced). Then the whole committee, until ``iterations`` in
all, convergence, or — with ``stop_at_chance`` — once the whole committee's held-out accuracy
has been at or below chance (1 / (k + 1)) for ``patience`` iterations in a row: the committee
can no longer tell the gold apart, and filtering on would only select negatives that look *more*
real to these particular models than the real ending, an inverted cue a later model could learn.

**The final set** (SWAG's 4-way questions): the ``choices - 1`` negatives of each context that a
committee scores highest among its ``k``. The committee is cross-fitted: the contexts are cut
into 5 folds and each fold is scored by a committee trained on the other four, so no context's
choice is made by a model that trained on it. A fresh committee on a new 80/20 split of these
questions then measures what cue is left (``report["final"]``).

A context whose pool holds fewer than ``k`` endings is kept with what it has but takes no part
in the training and accuracy; the report counts and names them, as it counts contexts with no
sampled ending at all (which cannot make a question and are left out).

State (``DIR/af_state.json``: iteration done, every context's negatives, the final choice) and
the report (``DIR/report.json``: per iteration, each member's held-out accuracy and the
replacements) are written atomically after every iteration, and each iteration is seeded by
(seed, iteration), so an interrupted run resumes where it stopped and ends as an uninterrupted
one would.

The committee's torch members (CNN, BiLSTM, the joint ensemble) train on ``device=`` under
autocast in ``dtype=`` (:mod:`dpc_device`'s training rules; default the CPU in float32).
Neither is a setting of the run: a run may resume on another device.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpc_device import resolve_training
from dpc_errors import check_float, check_int, check_seed
from dpc_files import read_json, write_json
from tasks.datasets import MultipleChoiceItem
from tasks.errors import TaskError
from tasks.swag.committee import CHEAP_MODELS, ENSEMBLES, MODELS, Committee, EndingTable, pos_tags
from tasks.swag.oversample import PoolEntry, read_pool
from tasks.swag.restatements import RESTATEMENT_THRESHOLD, drop_restatements, pool_similarities

if TYPE_CHECKING:
    import torch

__all__ = ["FilterOptions", "adversarial_filter", "filtered_items", "fitted_committee"]

STATE = "af_state.json"
REPORT = "report.json"
TAGS = "pos_tags.json"


@dataclass(frozen=True)
class FilterOptions:
    """The AF settings (the ``dpc swag filter`` flags map onto these; module notes).

    ``max_replaced`` ``None`` replaces every easy negative an iteration finds a replacement for;
    ``max_gold_similarity`` ``None`` keeps restatements of the gold in the pool.
    """

    k: int = 9
    iterations: int = 130
    cheap_iterations: int = 100
    max_replaced: int | None = 2
    choices: int = 4
    ensemble: str = "joint"
    max_gold_similarity: float | None = RESTATEMENT_THRESHOLD
    test_share: float = 0.2
    min_replaced: float = 0.01
    patience: int = 2
    stop_at_chance: bool = True
    members: tuple[str, ...] = MODELS
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("k", "iterations", "patience"):
            check_int(name, getattr(self, name), 1, error=TaskError)
        check_int("cheap_iterations", self.cheap_iterations, 0, error=TaskError)
        check_seed("seed", self.seed, error=TaskError)
        if self.max_replaced is not None:
            check_int("max_replaced", self.max_replaced, 1, error=TaskError)
        check_int("choices", self.choices, 2, self.k + 1, error=TaskError)
        if self.ensemble not in ENSEMBLES:
            raise TaskError(f"`ensemble` {self.ensemble!r} is not one of {', '.join(ENSEMBLES)}")
        if self.max_gold_similarity is not None:
            check_float("max_gold_similarity", self.max_gold_similarity, -1, 1, error=TaskError)
        check_float("test_share", self.test_share, 0, 1, open_min=True, open_max=True,
                    error=TaskError)
        unknown = [m for m in self.members if m not in MODELS]
        if unknown or not self.members:
            raise TaskError(f"`members` {list(self.members)!r}: each must be one of "
                            f"{', '.join(MODELS)}")


@dataclass
class _Data:
    entries: list[PoolEntry]
    first_row: np.ndarray  # (contexts,) row of each context's gold ending; its pool follows
    pool_size: np.ndarray  # (contexts,)
    table: EndingTable


def _tags(folder: Path, texts: list[str]) -> list[list[tuple[str, str]]]:
    """spaCy's (word, POS) of every distinct text, cached in ``DIR/pos_tags.json``."""
    path = folder / TAGS
    cache: dict[str, list[list[str]]] = read_json(path) if path.exists() else {}
    missing = sorted({t for t in texts if t not in cache})
    if missing:
        for text, tags in zip(missing, pos_tags(missing)):
            cache[text] = [list(t) for t in tags]
        write_json(path, cache)
    return [[(w, p) for w, p in cache[t]] for t in texts]


def _usable_pool(folder: Path, max_gold_similarity: float | None, *,
                 progress: bool = False) -> tuple[list[PoolEntry], int]:
    """The pool of ``folder`` without the endings that restate their gold
    (:mod:`tasks.swag.restatements`; ``None``: all of them), and how many were dropped. The
    negatives AF chooses are indices into these endings."""
    pool = read_pool(folder)
    if max_gold_similarity is None:
        return pool, 0
    return drop_restatements(pool, pool_similarities(folder, pool, progress=progress),
                             max_gold_similarity)


def _load(folder: Path, max_gold_similarity: float | None, *, progress: bool = False
          ) -> tuple[_Data, list[PoolEntry], int]:
    """The usable pool as an :class:`EndingTable` (contexts with at least one ending), the
    contexts with none, and how many restatements were dropped."""
    pool, dropped = _usable_pool(folder, max_gold_similarity, progress=progress)
    entries = [e for e in pool if e.endings]
    empty = [e for e in pool if not e.endings]
    if not entries:
        raise TaskError(f"{os.fspath(folder / 'pool.jsonl')!r} holds no context with a sampled "
                        "ending")
    texts, lps, toks, ctx_words, first = [], [], [], [], []
    for e in entries:
        first.append(len(texts))
        texts += [e.gold, *e.endings]
        lps += [e.gold_log_prob, *e.log_probs]
        toks += [e.gold_tokens, *e.tokens]
        ctx_words += [len(e.ctx.split())] * (1 + len(e.endings))
    table = EndingTable.build(texts, lps, toks, ctx_words, _tags(folder, texts))
    sizes = np.array([len(e.endings) for e in entries])
    return _Data(entries, np.array(first), sizes, table), empty, dropped


def _questions(data: _Data, contexts: np.ndarray, negatives: list[list[int]]) -> np.ndarray:
    """(n, k + 1) table rows: each context's gold, then its negatives."""
    return np.array([[data.first_row[c]] + [data.first_row[c] + 1 + j for j in negatives[c]]
                     for c in contexts], dtype=np.int64)


def _replace(data: _Data, committee: Committee, contexts: np.ndarray,
             negatives: list[list[int]], rng: np.random.Generator,
             max_replaced: int | None) -> int:
    """Swap at most ``max_replaced`` of each held-out context's easy negatives (the easiest
    first) for adversarial pool endings drawn at random; return how many contexts changed."""
    rows = np.concatenate([data.first_row[c] + np.arange(1 + data.pool_size[c])
                           for c in contexts])
    scores = committee.scores(data.table, rows)["ensemble"]
    changed, at = 0, 0
    for c in contexts:
        s = scores[at : at + 1 + data.pool_size[c]]
        at += 1 + data.pool_size[c]
        gold, pool = s[0], s[1:]
        chosen = negatives[c]
        hard = [j for j in rng.permutation(len(pool)).tolist()
                if pool[j] > gold and j not in chosen]
        easy = sorted((slot for slot, j in enumerate(chosen) if pool[j] < gold),
                      key=lambda slot: pool[chosen[slot]])
        new = list(chosen)
        for slot in easy[:max_replaced]:
            if not hard:
                break
            new[slot] = hard.pop()
        if new != chosen:
            negatives[c] = new
            changed += 1
    return changed


def adversarial_filter(folder: str | Path, options: FilterOptions = FilterOptions(), *,
                       progress: bool = True, device: str | torch.device | None = None,
                       dtype: str | torch.dtype | None = None) -> dict[str, Any]:
    """Run (or resume) AF over the pool in ``folder``; returns the report (``DIR/report.json``).

    The chosen negatives are in ``DIR/af_state.json``; :func:`filtered_items` turns them into
    HellaSwag-format items. The committee's torch members train on ``device`` (``None``: the
    CPU) under autocast in ``dtype`` (:func:`dpc_device.resolve_dtype` for training), both
    checked before the pool is read."""
    from tqdm import tqdm

    where, precision = resolve_training(device, dtype)
    folder = Path(folder)
    data, empty, dropped = _load(folder, options.max_gold_similarity, progress=progress)
    n = len(data.entries)
    eligible = np.flatnonzero(data.pool_size >= options.k)
    if len(eligible) < 5:
        raise TaskError(f"only {len(eligible)} contexts of {os.fspath(folder)!r} have at least "
                        f"k={options.k} sampled endings"
                        + (" that do not restate the gold" if options.max_gold_similarity
                           is not None else "") + "; AF needs more")
    settings = {**asdict(options), "members": list(options.members)}
    state_path, report_path = folder / STATE, folder / REPORT
    if state_path.exists():
        state = read_json(state_path)
        saved = {k: v for k, v in state["settings"].items() if k != "iterations"}
        if saved != {k: v for k, v in settings.items() if k != "iterations"}:
            raise TaskError(f"{os.fspath(state_path)!r} holds an AF run with other settings "
                            f"({state['settings']}); use the same ones or another pool folder")
        negatives = [list(map(int, x)) for x in state["negatives"]]
        report = read_json(report_path)
        # a record written just before an interruption whose state was not: done again
        report["iterations"] = [r for r in report["iterations"] if r["iteration"] < state["done"]]
        if state["stopped"].startswith("iterations=") and state["done"] < options.iterations:
            state["stopped"] = ""  # a larger budget continues the run
            report.pop("final", None)
            state.pop("final_negatives", None)
        if len(negatives) != n:
            raise TaskError(f"{os.fspath(state_path)!r} has {len(negatives)} contexts, the pool "
                            f"{n}: the pool changed after AF started; delete {STATE}")
    else:
        rng = np.random.default_rng([options.seed, 0xAF])
        negatives = [rng.choice(m, size=min(options.k, m), replace=False).tolist()
                     for m in data.pool_size]
        report = {"settings": settings, "contexts": n,
                  "contexts_4way": len(eligible), "restatements_dropped": dropped,
                  "short_pool": [str(data.entries[c].ind) for c in range(n)
                                 if data.pool_size[c] < options.k],
                  "no_sampled_ending": [str(e.ind) for e in empty],
                  "iterations": [], "stopped": "", "full_from": None}
        state = {"settings": settings, "done": 0, "quiet": 0, "chance": 0, "stopped": "",
                 "full_from": None, "negatives": negatives}
    report["settings"] = settings
    bar = tqdm(total=options.iterations, initial=state["done"], unit="it", file=sys.stderr,
               disable=not progress, dynamic_ncols=True)
    while not state["stopped"]:
        it = state["done"]
        if it >= options.iterations:
            state["stopped"] = f"iterations={options.iterations} reached"
            break
        if state["full_from"] is None and it >= options.cheap_iterations:
            state["full_from"] = it
        full = state["full_from"] is not None
        start = time.perf_counter()
        rng = np.random.default_rng([options.seed, it])
        order = rng.permutation(eligible)
        cut = round(len(order) * (1 - options.test_share))
        train, test = order[:cut], order[cut:]
        members = [m for m in options.members
                   if full or m in CHEAP_MODELS] or list(options.members)
        committee = Committee(members, seed=options.seed * 1000 + it, ensemble=options.ensemble,
                              device=where, dtype=precision)
        committee.fit(data.table, _questions(data, train, negatives))
        accuracy = committee.accuracy(data.table, _questions(data, test, negatives))
        changed = _replace(data, committee, test, negatives, rng, options.max_replaced)
        record = {"iteration": it, "members": members,
                  "accuracy": {k: round(v, 4) for k, v in accuracy.items()},
                  "held_out": len(test), "contexts_changed": changed,
                  "seconds": round(time.perf_counter() - start, 1)}
        report["iterations"].append(record)
        state["done"] = it + 1
        quiet = changed < options.min_replaced * len(test)
        state["quiet"] = state["quiet"] + 1 if quiet else 0
        at_chance = full and accuracy["ensemble"] <= 1 / (options.k + 1)
        state["chance"] = state.get("chance", 0) + 1 if at_chance else 0
        if state["quiet"] >= options.patience and not full:
            state["full_from"], state["quiet"] = it + 1, 0  # the cheap phase converged
        elif state["quiet"] >= options.patience:
            state["stopped"] = (f"converged: fewer than {options.min_replaced:.0%} of held-out "
                                f"contexts changed in {options.patience} iterations")
        elif options.stop_at_chance and state["chance"] >= options.patience:
            state["stopped"] = (f"at chance: the committee's held-out accuracy was at most "
                                f"1/{options.k + 1} in {options.patience} iterations in a row")
        state["negatives"] = negatives
        report["stopped"] = state["stopped"]
        report["full_from"] = state["full_from"]
        write_json(report_path, report)  # the report first: a state never runs ahead of it
        write_json(state_path, state)
        bar.update(1)
        bar.set_postfix(ensemble=f"{accuracy['ensemble']:.3f}", changed=changed, refresh=False)
    bar.close()
    if "final_negatives" not in state:
        state["final_negatives"] = _final_choice(data, eligible, negatives, options, where,
                                                 precision)
        report.pop("final", None)
        write_json(state_path, state)
    if "final" not in report:
        report["final"] = _final_check(data, eligible, state["final_negatives"], options, where,
                                       precision)
    report["stopped"] = state["stopped"]
    write_json(report_path, report)
    write_json(state_path, state)
    return report


FOLDS = 5


def _final_choice(data: _Data, eligible: np.ndarray, negatives: list[list[int]],
                  options: FilterOptions, device: torch.device,
                  dtype: torch.dtype) -> list[list[int]]:
    """Each context's ``choices - 1`` negatives (of its AF negatives) that a cross-fitted
    committee scores highest, highest first: every context is scored by a committee trained on
    the eligible contexts of the other folds (module notes)."""
    n = len(data.entries)
    fold = np.random.default_rng([options.seed, 0xF01D]).permutation(n) % FOLDS
    keep = options.choices - 1
    final = [list(x[:keep]) for x in negatives]
    for f in range(FOLDS):
        train = eligible[fold[eligible] != f]
        scored = np.flatnonzero(fold == f)
        if not len(scored) or len(train) < 5:
            continue
        committee = Committee(list(options.members), seed=options.seed * 1000 + 900 + f,
                              ensemble=options.ensemble, device=device, dtype=dtype)
        committee.fit(data.table, _questions(data, train, negatives))
        rows = np.concatenate([data.first_row[c] + 1 + np.asarray(negatives[c], dtype=np.int64)
                               for c in scored])
        scores = committee.scores(data.table, rows)["ensemble"]
        at = 0
        for c in scored:
            s = scores[at : at + len(negatives[c])]
            at += len(negatives[c])
            final[c] = [negatives[c][j] for j in np.argsort(-s, kind="stable")[:keep]]
    return final


def _final_check(data: _Data, eligible: np.ndarray, negatives: list[list[int]],
                 options: FilterOptions, device: torch.device,
                 dtype: torch.dtype) -> dict[str, Any]:
    """A fresh committee of every member on a new 80/20 split of the final questions (each
    context's gold and its ``choices - 1`` final negatives)."""
    rng = np.random.default_rng([options.seed, 0xF1A1])
    order = rng.permutation(eligible)
    cut = round(len(order) * (1 - options.test_share))
    committee = Committee(list(options.members), seed=options.seed * 1000 + 999,
                          ensemble=options.ensemble, device=device, dtype=dtype)
    committee.fit(data.table, _questions(data, order[:cut], negatives))
    accuracy = committee.accuracy(data.table, _questions(data, order[cut:], negatives))
    return {"members": list(options.members), "choices": options.choices,
            "held_out": int(len(order) - cut),
            "accuracy": {k: round(v, 4) for k, v in accuracy.items()}}


def _run_settings(folder: Path, options: FilterOptions) -> tuple[dict[str, Any] | None,
                                                                  FilterOptions]:
    """The AF state of ``folder`` (``None`` before a run) and the options its pool is read
    with: the run's own where there is one, else ``options``."""
    state_path = folder / STATE
    if not state_path.exists():
        return None, options
    state = read_json(state_path)
    saved = dict(state["settings"])
    saved["members"] = tuple(saved["members"])
    known = {f for f in FilterOptions.__dataclass_fields__}
    if not set(saved) <= known:
        raise TaskError(f"{os.fspath(state_path)!r} holds settings this version does not know "
                        f"({sorted(set(saved) - known)}): re-run the filter")
    return state, FilterOptions(**{**asdict(FilterOptions()), **saved})


def fitted_committee(folder: str | Path, options: FilterOptions = FilterOptions(), *,
                     device: str | torch.device | None = None,
                     dtype: str | torch.dtype | None = None
                     ) -> tuple[Committee, EndingTable, dict[str, Any]]:
    """A committee fitted on the questions of the pool in ``folder`` as :func:`filtered_items`
    writes them: each context's gold ending and its final ``choices - 1`` negatives, those AF
    chose when the pool was filtered (``DIR/af_state.json``, with that run's settings), else a
    random draw from the pool (read with ``options``). Returns the committee (``options``'
    members and ensemble rule), the pool's :class:`EndingTable` (:meth:`EndingTable.featurise`
    reads new endings as the committee was trained to) and what it was fitted on.
    ``dpc serve --swag-committee DIR`` scores sampled endings with it. Like
    :func:`adversarial_filter`, it caches spaCy's tags in ``DIR/pos_tags.json`` (and the
    similarities to the gold in ``DIR/gold_similarity.json``)."""
    where, precision = resolve_training(device, dtype)
    folder = Path(folder)
    state, run = _run_settings(folder, options)
    data, _, _ = _load(folder, run.max_gold_similarity)
    negatives = _written_negatives(state, data.pool_size, run, folder)
    need = run.choices - 1
    eligible = np.flatnonzero([len(x) >= need for x in negatives])
    if len(eligible) < 5:
        raise TaskError(f"only {len(eligible)} contexts of {os.fspath(folder)!r} have at least "
                        f"{need} sampled endings; a committee needs 5 or more")
    committee = Committee(list(options.members), seed=options.seed, ensemble=options.ensemble,
                          device=where, dtype=precision)
    committee.fit(data.table, _questions(data, eligible, [x[:need] for x in negatives]))
    return committee, data.table, {"contexts": int(len(eligible)), "choices": run.choices,
                                   "filtered": state is not None,
                                   "members": list(options.members),
                                   "ensemble": options.ensemble}


def _written_negatives(state: dict[str, Any] | None, pool_size: np.ndarray,
                       run: FilterOptions, folder: Path) -> list[list[int]]:
    """Each context's negatives as the written set holds them: AF's final choice, or (before
    any AF run) a seeded draw of ``choices - 1``. An AF run that has not made its final choice
    (interrupted) is refused."""
    if state is None:
        rng = np.random.default_rng([run.seed, 0xAF])
        return [rng.choice(m, size=min(run.choices - 1, m), replace=False).tolist()
                for m in pool_size]
    if "final_negatives" not in state:
        raise TaskError(f"the AF run in {os.fspath(folder)!r} has not finished (no final choice "
                        "in af_state.json): run `dpc swag filter` on it again to finish it")
    negatives = [list(map(int, x)) for x in state["final_negatives"]]
    if len(negatives) != len(pool_size):
        raise TaskError(f"{os.fspath(folder / STATE)!r} does not match the pool (re-run the "
                        "filter)")
    return negatives


def filtered_items(folder: str | Path, *, seed: int = 0) -> list[Any]:
    """The AF result as :class:`tasks.datasets.MultipleChoiceItem`: the context, its gold ending
    and the final negatives (``choices - 1`` of them, fewer where the pool had fewer) in a
    seeded random order, ``label`` the gold's place, ``ind`` the source item's. Needs
    ``DIR/af_state.json`` (:func:`adversarial_filter`)."""
    import zlib

    folder = Path(folder)
    state, run = _run_settings(folder, FilterOptions())
    if state is None:
        raise TaskError(f"{os.fspath(folder / STATE)!r} does not exist: run the filter first")
    entries = [e for e in _usable_pool(folder, run.max_gold_similarity)[0] if e.endings]
    negatives = _written_negatives(state, np.array([len(e.endings) for e in entries]), run,
                                   folder)
    items = []
    for e, chosen in zip(entries, negatives):
        endings = [e.gold, *(e.endings[j] for j in chosen[: run.choices - 1])]
        order = np.random.default_rng([seed, zlib.crc32(str(e.ind).encode())]).permutation(
            len(endings)).tolist()
        items.append(MultipleChoiceItem(
            e.ind, e.ctx, tuple(endings[i] for i in order), order.index(0), e.activity_label,
            {"source": "dpc swag filter"}))
    return items
