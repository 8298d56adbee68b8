"""Adversarial Filtering (SWAG, Zellers et al. 2018, Algorithm 1) over an oversampled pool.

Every context starts with ``k`` negatives drawn at random from its pool. Each iteration splits the
contexts 80/20 at random, trains the committee (:mod:`tasks.swag.committee`) on the 80% as 4-way
questions, measures every member's accuracy on the 20% (the AF curve), and for each held-out
context replaces the negatives the ensemble scores below the gold ending (easy) with pool endings it
scores above the gold (adversarial), drawn at random among those not already chosen. It stops
after ``iterations`` iterations, at convergence (``patience`` iterations in a row in which fewer
than ``min_replaced`` of the held-out contexts had a negative replaced), or — with
``stop_at_chance`` — once the whole committee's held-out accuracy has been at or below chance
(1 / (k + 1)) for ``patience`` iterations in a row: the committee can no longer tell the gold
apart, and filtering on would only select negatives that look *more* real to these particular
models than the real ending (below-chance accuracy), an inverted cue a later model could learn.
The first ``cheap_iterations`` use only the cheap members (MLP and bag of words), as the paper
did; they never count towards the chance stop.

A context whose pool holds fewer than ``k`` endings is kept with what it has (1 + m endings) but
takes no part in the 4-way training and accuracy; the report counts and names them, as it counts
contexts with no sampled ending at all (which cannot make a question and are left out).

State (``DIR/af_state.json``: iteration done, every context's negatives) and the report
(``DIR/report.json``: per iteration, each member's held-out accuracy and the replacements) are
written atomically after every iteration, and each iteration is seeded by (seed, iteration), so
an interrupted run resumes where it stopped and ends as an uninterrupted one would.

The committee's torch members (CNN, BiLSTM) train on ``device=`` under autocast in ``dtype=``
(:mod:`dpc_device`'s training rules; default the CPU in float32). Neither is a setting of the
run: a run may resume on another device.
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
from dpc_errors import check_float, check_int
from dpc_files import read_json, write_json
from tasks.datasets import MultipleChoiceItem
from tasks.errors import TaskError
from tasks.swag.committee import CHEAP_MODELS, MODELS, Committee, EndingTable, pos_tags
from tasks.swag.oversample import PoolEntry, read_pool

if TYPE_CHECKING:
    import torch

__all__ = ["FilterOptions", "adversarial_filter", "filtered_items", "fitted_committee"]

STATE = "af_state.json"
REPORT = "report.json"
TAGS = "pos_tags.json"


@dataclass(frozen=True)
class FilterOptions:
    """The AF settings (the ``dpc swag filter`` flags map onto these)."""

    k: int = 3
    iterations: int = 30
    cheap_iterations: int = 5
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


def _load(folder: Path) -> tuple[_Data, list[PoolEntry]]:
    """The pool as an :class:`EndingTable` (contexts with at least one ending) and the contexts
    with none."""
    pool = read_pool(folder)
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
    return _Data(entries, np.array(first), sizes, table), empty


def _questions(data: _Data, contexts: np.ndarray, negatives: list[list[int]]) -> np.ndarray:
    """(n, k + 1) table rows: each context's gold, then its negatives."""
    return np.array([[data.first_row[c]] + [data.first_row[c] + 1 + j for j in negatives[c]]
                     for c in contexts], dtype=np.int64)


def _replace(data: _Data, committee: Committee, contexts: np.ndarray,
             negatives: list[list[int]], rng: np.random.Generator) -> int:
    """Swap each held-out context's easy negatives for adversarial pool endings; return how
    many contexts changed."""
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
        new = list(chosen)
        for slot, j in enumerate(chosen):
            if pool[j] < gold and hard:
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
    data, empty = _load(folder)
    n = len(data.entries)
    eligible = np.flatnonzero(data.pool_size >= options.k)
    if len(eligible) < 5:
        raise TaskError(f"only {len(eligible)} contexts of {os.fspath(folder)!r} have at least "
                        f"k={options.k} sampled endings; AF needs more")
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
        if len(negatives) != n:
            raise TaskError(f"{os.fspath(state_path)!r} has {len(negatives)} contexts, the pool "
                            f"{n}: the pool changed after AF started; delete {STATE}")
    else:
        rng = np.random.default_rng([options.seed, 0xAF])
        negatives = [rng.choice(m, size=min(options.k, m), replace=False).tolist()
                     for m in data.pool_size]
        report = {"settings": settings, "contexts": n,
                  "contexts_4way": len(eligible),
                  "short_pool": [str(data.entries[c].ind) for c in range(n)
                                 if data.pool_size[c] < options.k],
                  "no_sampled_ending": [str(e.ind) for e in empty],
                  "iterations": [], "stopped": ""}
        state = {"settings": settings, "done": 0, "quiet": 0, "chance": 0, "stopped": "",
                 "negatives": negatives}
    report["settings"] = settings
    bar = tqdm(total=options.iterations, initial=state["done"], unit="it", file=sys.stderr,
               disable=not progress, dynamic_ncols=True)
    while not state["stopped"]:
        it = state["done"]
        if it >= options.iterations:
            state["stopped"] = f"iterations={options.iterations} reached"
            break
        start = time.perf_counter()
        rng = np.random.default_rng([options.seed, it])
        order = rng.permutation(eligible)
        cut = round(len(order) * (1 - options.test_share))
        train, test = order[:cut], order[cut:]
        members = [m for m in options.members
                   if it >= options.cheap_iterations or m in CHEAP_MODELS] or list(options.members)
        committee = Committee(members, seed=options.seed * 1000 + it, device=where,
                              dtype=precision)
        committee.fit(data.table, _questions(data, train, negatives))
        accuracy = committee.accuracy(data.table, _questions(data, test, negatives))
        changed = _replace(data, committee, test, negatives, rng)
        record = {"iteration": it, "members": members,
                  "accuracy": {k: round(v, 4) for k, v in accuracy.items()},
                  "held_out": len(test), "contexts_changed": changed,
                  "seconds": round(time.perf_counter() - start, 1)}
        report["iterations"].append(record)
        state["done"] = it + 1
        quiet = changed < options.min_replaced * len(test)
        state["quiet"] = state["quiet"] + 1 if quiet else 0
        at_chance = (it >= options.cheap_iterations
                     and accuracy["ensemble"] <= 1 / (options.k + 1))
        state["chance"] = state.get("chance", 0) + 1 if at_chance else 0
        if state["quiet"] >= options.patience:
            state["stopped"] = (f"converged: fewer than {options.min_replaced:.0%} of held-out "
                                f"contexts changed in {options.patience} iterations")
        elif options.stop_at_chance and state["chance"] >= options.patience:
            state["stopped"] = (f"at chance: the committee's held-out accuracy was at most "
                                f"1/{options.k + 1} in {options.patience} iterations in a row")
        state["negatives"] = negatives
        report["stopped"] = state["stopped"]
        write_json(report_path, report)  # the report first: a state never runs ahead of it
        write_json(state_path, state)
        bar.update(1)
        bar.set_postfix(ensemble=f"{accuracy['ensemble']:.3f}", changed=changed, refresh=False)
    bar.close()
    if "final" not in report:
        report["final"] = _final_check(data, eligible, negatives, options, where, precision)
    report["stopped"] = state["stopped"]
    write_json(report_path, report)
    write_json(state_path, state)
    return report


def _final_check(data: _Data, eligible: np.ndarray, negatives: list[list[int]],
                 options: FilterOptions, device: torch.device,
                 dtype: torch.dtype) -> dict[str, Any]:
    """A fresh committee of every member on a new 80/20 split of the final questions."""
    rng = np.random.default_rng([options.seed, 0xF1A1])
    order = rng.permutation(eligible)
    cut = round(len(order) * (1 - options.test_share))
    committee = Committee(list(options.members), seed=options.seed * 1000 + 999,
                          device=device, dtype=dtype)
    committee.fit(data.table, _questions(data, order[:cut], negatives))
    accuracy = committee.accuracy(data.table, _questions(data, order[cut:], negatives))
    return {"members": list(options.members), "held_out": int(len(order) - cut),
            "accuracy": {k: round(v, 4) for k, v in accuracy.items()}}


def fitted_committee(folder: str | Path, options: FilterOptions = FilterOptions(), *,
                     device: str | torch.device | None = None,
                     dtype: str | torch.dtype | None = None
                     ) -> tuple[Committee, EndingTable, dict[str, Any]]:
    """A committee of ``options.members`` fitted on every 4-way question of the pool in
    ``folder``: each context's gold ending and its negatives, those AF chose
    (``DIR/af_state.json``, its ``k``) when the pool was filtered, else the random draw AF
    starts from (``options.k``). Returns the committee, the pool's :class:`EndingTable`
    (:meth:`EndingTable.featurise` reads new endings as the committee was trained to) and what
    it was fitted on. ``dpc serve --swag-committee DIR`` scores sampled endings with it. Like
    :func:`adversarial_filter`, it caches spaCy's tags in ``DIR/pos_tags.json``."""
    where, precision = resolve_training(device, dtype)
    folder = Path(folder)
    data, _ = _load(folder)
    state_path = folder / STATE
    k = options.k
    if state_path.exists():
        state = read_json(state_path)
        negatives = [list(map(int, x)) for x in state["negatives"]]
        k = int(state["settings"]["k"])
        if len(negatives) != len(data.entries):
            raise TaskError(f"{os.fspath(state_path)!r} does not match the pool (re-run the "
                            "filter)")
    else:
        rng = np.random.default_rng([options.seed, 0xAF])
        negatives = [rng.choice(m, size=min(k, m), replace=False).tolist()
                     for m in data.pool_size]
    eligible = np.flatnonzero(data.pool_size >= k)
    if len(eligible) < 5:
        raise TaskError(f"only {len(eligible)} contexts of {os.fspath(folder)!r} have at least "
                        f"k={k} sampled endings; a committee needs 5 or more")
    committee = Committee(list(options.members), seed=options.seed, device=where,
                          dtype=precision)
    committee.fit(data.table, _questions(data, eligible, negatives))
    return committee, data.table, {"contexts": int(len(eligible)), "k": k,
                                   "filtered": state_path.exists(),
                                   "members": list(options.members)}


def filtered_items(folder: str | Path, *, seed: int = 0) -> list[Any]:
    """The AF result as :class:`tasks.datasets.MultipleChoiceItem`: the context, its gold ending
    and chosen negatives in a seeded random order, ``label`` the gold's place, ``ind`` the source
    item's. Needs ``DIR/af_state.json`` (:func:`adversarial_filter`)."""
    import zlib

    folder = Path(folder)
    state_path = folder / STATE
    if not state_path.exists():
        raise TaskError(f"{os.fspath(state_path)!r} does not exist: run the filter first")
    negatives = read_json(state_path)["negatives"]
    entries = [e for e in read_pool(folder) if e.endings]
    if len(entries) != len(negatives):
        raise TaskError(f"{os.fspath(state_path)!r} does not match the pool (re-run the filter)")
    items = []
    for e, chosen in zip(entries, negatives):
        endings = [e.gold, *(e.endings[j] for j in chosen)]
        order = np.random.default_rng([seed, zlib.crc32(str(e.ind).encode())]).permutation(
            len(endings)).tolist()
        items.append(MultipleChoiceItem(
            e.ind, e.ctx, tuple(endings[i] for i in order), order.index(0), e.activity_label,
            {"source": "dpc swag filter"}))
    return items
