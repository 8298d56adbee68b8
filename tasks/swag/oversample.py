"""Oversampling: per context, N distinct candidate endings sampled through :func:`dpc_decode.sample`.

SWAG samples (not beam-searches: beam endings are too fluent to be hard negatives) 1,023 distinct
endings per context. Here each batch holds many contexts, each drawn ``per_context`` times per
round; the engine's ``unique=True`` keeps drawing rounds until ``per_context`` distinct endings
per context are found (or ``max_rounds`` run out: the context keeps what it has, and the pool
says how many).

With ``constrain_context`` every ending must name something of its context: one disjunctive set
holding the context's content words (:func:`cause_effect_graph.lemmas.dictionary_lemmas`) and
their inflections (:func:`cause_effect_graph.word_forms.inflections`), met as whole words.

The model reads :func:`tasks.swag.ending_model.ending_prompt` of the context and stops at
:func:`~tasks.swag.ending_model.end_token_ids` (a causal LM: a line break); an ending cut off at
``max_new_tokens`` is dropped (its length would be a tell).

The pool is ``DIR/pool.jsonl``, one JSON line per context, written whole after each batch and
fsynced: an interrupted run resumes with the contexts not yet in it (a torn last line is dropped
and its context sampled again), so nothing is duplicated or lost. Each line keeps what the
committee needs: the normalised gold ending and its log-probability under the same model, every
kept ending with its log-probability and token count. ``DIR/oversample.json`` holds the
settings (a resumed run must use the same ones) and the counts.

>>> content_set("A man is sitting on a roof. he")  # doctest: +NORMALIZE_WHITESPACE
['man', 'manned', 'manning', 'mans', 'men', 'roof', 'roofed', 'roofing', 'roofs', 'rooves',
 'sat', 'sit', 'sits', 'sitting']
>>> content_set("[header] Choose a bowl. [title] Fill it.")[:4]
['bowl', 'bowled', 'bowling', 'bowls']
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import dpc_decode
from cause_effect_graph.lemmas import dictionary_lemmas
from cause_effect_graph.word_forms import inflections
from dpc_errors import check_float, check_int, check_seed
from dpc_files import check_output_folder, claim_output_folder, write_json
from tasks.errors import TaskError
from tasks.swag.ending_model import end_token_ids, ending_prompt, normalise_ending

__all__ = ["OversampleOptions", "PoolEntry", "content_set", "oversample", "oversample_spark",
           "read_pool", "sample_batch"]

POOL = "pool.jsonl"
PARTS = "pool.parts"  # a --spark run's committed partitions, folded into POOL when all are done
SETTINGS = "oversample.json"
#: WikiHow markup in HellaSwag contexts, not words of the story.
_MARKUP = re.compile(r"\[[a-z]+\]")


@dataclass(frozen=True)
class OversampleOptions:
    """How endings are sampled (the ``dpc swag oversample`` flags map onto these)."""

    per_context: int = 32
    temperature: float = 1.0
    top_p: float = 0.95
    max_new_tokens: int = 64
    max_rounds: int = 4
    contexts_per_batch: int = 8
    constrain_context: bool = False
    max_lemmas: int = 8
    seed: int = 0
    limit: int | None = None  # at most this many contexts (the first ones of the file)

    def __post_init__(self) -> None:
        for name in ("per_context", "max_new_tokens", "max_rounds", "contexts_per_batch",
                     "max_lemmas"):
            check_int(name, getattr(self, name), 1, error=TaskError)
        if self.limit is not None:  # None: every context
            check_int("limit", self.limit, 1, error=TaskError)
        check_seed("seed", self.seed, error=TaskError)
        check_float("temperature", self.temperature, 0, open_min=True, error=TaskError)
        check_float("top_p", self.top_p, 0, 1, open_min=True, error=TaskError)


@dataclass(frozen=True)
class PoolEntry:
    """One context's line of ``pool.jsonl``."""

    ind: Any
    ctx: str
    activity_label: str
    gold: str  # normalised gold ending
    gold_log_prob: float
    gold_tokens: int
    endings: list[str]  # distinct sampled endings, never the gold
    log_probs: list[float]
    tokens: list[int]
    constraint: list[str]  # the alternatives of the context set ([] unconstrained)
    drawn: int  # samples the engine returned (distinct by token ids)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def content_set(ctx: str, max_lemmas: int = 8) -> list[str]:
    """The context's content lemmas (the first ``max_lemmas``, stop words and WikiHow markup
    left out) and all their inflections, lower-case and sorted: one disjunctive set."""
    lemmas: dict[str, None] = {}
    for lemma in dictionary_lemmas(_MARKUP.sub(" ", ctx)):
        if len(lemma) >= 3:
            lemmas.setdefault(lemma, None)
    forms: set[str] = set()
    for lemma in list(lemmas)[:max_lemmas]:
        forms.update(f.lower() for f in inflections(lemma, oov=False))
    return sorted(forms)


def names_context(ending: str, ctx: str) -> bool:
    """Whether ``ending`` contains a content lemma of ``ctx`` (by :func:`dictionary_lemmas`).

    >>> names_context("he pulls the shingles off the roofs.", "A man is on a roof.")
    True
    >>> names_context("she smiles.", "A man is on a roof.")
    False
    """
    ctx_lemmas = set(dictionary_lemmas(_MARKUP.sub(" ", ctx)))
    return any(lemma in ctx_lemmas for lemma in dictionary_lemmas(ending))


def read_pool(folder: str | Path) -> list[PoolEntry]:
    """The complete lines of ``DIR/pool.jsonl`` (a torn last line, from an interrupted run, is
    left out). A malformed line elsewhere is a :class:`TaskError` naming file and line."""
    path = Path(folder) / POOL
    if not path.is_file():
        raise TaskError(f"{os.fspath(path)!r} does not exist: run `dpc swag oversample` first")
    entries = []
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        torn = number == len(lines)  # no newline after it: written partly
        try:
            entries.append(PoolEntry(**json.loads(line)))
        except (json.JSONDecodeError, TypeError) as err:
            if torn:
                break
            raise TaskError(f"{os.fspath(path)}:{number}: not a pool line ({err})") from None
    return entries


def _drop_torn_line(path: Path) -> None:
    """Cut ``path`` after its last newline (what an interrupted append may have left)."""
    if not path.exists():
        return
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    if cut != len(data):
        with open(path, "r+b") as handle:
            handle.truncate(cut)


def _claim(folder: Path, settings: dict[str, Any]) -> None:
    """Write ``DIR/oversample.json`` or check that a run already there has the same settings."""
    path = folder / SETTINGS
    if path.exists():
        saved = json.loads(path.read_text())["settings"]
        diffs = [f"{k}: {saved.get(k)!r} -> {v!r}" for k, v in settings.items()
                 if k != "limit" and saved.get(k) != v]
        if diffs:
            raise TaskError(f"{os.fspath(folder)!r} holds a pool sampled with other settings "
                            f"({'; '.join(diffs)}); use another --out or the same settings")
        return
    write_json(path, {"settings": settings})


def sample_batch(model: Any, tokenizer: Any, chunk: Sequence[Any],
                 options: OversampleOptions) -> list[PoolEntry]:
    """The pool lines of one batch of contexts (``options.contexts_per_batch`` of them, as
    :func:`oversample` cuts them): the same batch gives the same lines wherever it runs. The
    seed follows the batch's first context."""
    from train.metrics import sequence_log_probs

    sampling = dpc_decode.SamplingOptions(
        num_samples=options.per_context, temperature=options.temperature, top_p=options.top_p,
        unique=True, max_rounds=options.max_rounds, max_new_tokens=options.max_new_tokens)
    ends = end_token_ids(model, tokenizer)
    lead = "" if getattr(model.config, "is_encoder_decoder", False) else " "
    inputs = [ending_prompt(model, it.ctx) for it in chunk]
    sets = [content_set(it.ctx, options.max_lemmas) if options.constrain_context else []
            for it in chunk]
    constraints = [[s] if s else [] for s in sets] if any(sets) else None
    # the seed follows the batch's first context, so a resumed run draws as a fresh one
    seed = options.seed * 1_000_003 + zlib.crc32(str(chunk[0].ind).encode())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a context short of distinct endings: counted later
        outs = dpc_decode.sample(
            model, tokenizer, inputs, constraints, options=replace(sampling, seed=seed),
            tokenize=dpc_decode.TokenizeOptions(whole_word=True) if constraints else None,
            eos_token_id=ends if ends is not None else "model")
    golds = normalise_ending(tokenizer, [it.endings[it.label] for it in chunk])
    gold_lp = sequence_log_probs(model, tokenizer, inputs, golds,
                                 end_id=ends[0] if ends else None)
    # counted as the model writes it (a causal LM after a space), its end token included
    gold_tok = [len(t) + 1 for t in tokenizer([lead + g for g in golds],
                                              add_special_tokens=False)["input_ids"]]
    entries = []
    for it, found, set_, gold, lp, gt in zip(chunk, outs, sets, golds, gold_lp, gold_tok):
        texts = normalise_ending(tokenizer, [o.text or "" for o in found])
        seen = {gold}
        endings, lps, toks = [], [], []
        for out_seq, text in zip(found, texts):
            if not out_seq.finished or len(text.split()) < 1 or text in seen:
                continue  # cut off at max_new_tokens, empty, the gold, or a repeat
            seen.add(text)
            endings.append(text)
            lps.append(round(out_seq.log_prob, 4))
            toks.append(len(out_seq.token_ids) + 1)
        entries.append(PoolEntry(it.ind, it.ctx, str(getattr(it, "activity_label", "")), gold,
                                 round(lp, 4), gt, endings, lps, toks, set_, len(found)))
    return entries


def _append(pool_path: Path, lines: Sequence[str]) -> None:
    """Append whole lines to the pool and fsync them."""
    with open(pool_path, "a", encoding="utf-8") as handle:
        handle.write("".join(lines))
        handle.flush()
        os.fsync(handle.fileno())


def _fold_finished_parts(folder: Path) -> None:
    """A Spark run's parts (``DIR/pool.parts``), once every partition is committed: their lines
    not in the pool yet are appended in partition order (a run killed while folding leaves
    nothing twice) and the folder is removed. Unfinished parts stay, for ``--spark`` to resume;
    the local path refuses to sample beside them."""
    import shutil

    from dpc_files import read_json
    from dpc_spark import RUN_RECORD, part_path

    parts = folder / PARTS
    record = parts / RUN_RECORD
    if not record.is_file():
        return
    count = int(read_json(record)["partitions"])
    if not all(part_path(parts, n).exists() for n in range(count)):
        return
    _drop_torn_line(folder / POOL)
    done = {str(e.ind) for e in read_pool(folder)} if (folder / POOL).exists() else set()
    lines = []
    for n in range(count):
        for line in part_path(parts, n).read_text(encoding="utf-8").splitlines(keepends=True):
            if str(json.loads(line)["ind"]) not in done:
                lines.append(line)
    _append(folder / POOL, lines)
    shutil.rmtree(parts)


def _prepare(items: Sequence[Any], out: str | Path, options: OversampleOptions,
             model_name: str) -> tuple[Path, dict[str, Any], list[Any], list[Any], list[Any]]:
    """Check and claim the pool folder; fold a finished Spark run's parts in; return the folder,
    the settings, the contexts selected, those too short, and those still to sample."""
    folder = check_output_folder(out, "--out", command="dpc swag oversample")
    claim_output_folder(folder, "dpc swag oversample")
    settings = {**asdict(options), "model": model_name}
    _claim(folder, settings)
    _fold_finished_parts(folder)
    pool_path = folder / POOL
    _drop_torn_line(pool_path)
    done = {str(e.ind) for e in read_pool(folder)} if pool_path.exists() else set()
    selected = list(items)[: options.limit] if options.limit else list(items)
    short = [it for it in selected if len(it.ctx.split()) < 2]
    todo = [it for it in selected if len(it.ctx.split()) >= 2 and str(it.ind) not in done]
    return folder, settings, selected, short, todo


def _summary(folder: Path, settings: dict[str, Any], options: OversampleOptions,
             selected: Sequence[Any], short: Sequence[Any], todo: Sequence[Any], seconds: float,
             drawn: int, kept: int) -> dict[str, Any]:
    """The run's counts, also written to ``DIR/oversample.json``."""
    pool = read_pool(folder) if (folder / POOL).exists() else []
    summary = {
        "contexts_read": len(selected), "skipped_short_context": len(short),
        "sampled_this_run": len(todo), "contexts_in_pool": len(pool),
        "endings_in_pool": sum(len(e.endings) for e in pool),
        "contexts_short_of_endings": sum(len(e.endings) < options.per_context for e in pool),
        "this_run": {"seconds": round(seconds, 1), "returned": drawn, "kept": kept,
                     "kept_per_second": round(kept / seconds, 2) if seconds and todo else None},
    }
    write_json(folder / SETTINGS, {"settings": settings, "summary": summary})
    return summary


def oversample(items: Sequence[Any], out: str | Path, model: Any, tokenizer: Any,
               options: OversampleOptions = OversampleOptions(), *, model_name: str = "",
               progress: bool = True) -> dict[str, Any]:
    """Sample the pool of every context of ``items`` (``MultipleChoiceItem``-like: ``ind``,
    ``ctx``, ``endings``, ``label``, ``activity_label``) into ``out``; resumes a run there.

    Contexts under 2 words are skipped and counted. Returns the summary also written to
    ``DIR/oversample.json``: contexts read, skipped, sampled (this run and in all), endings
    kept, contexts with fewer than ``per_context`` distinct endings, samples/s of this run.
    """
    from tqdm import tqdm

    folder, settings, selected, short, todo = _prepare(items, out, options, model_name)
    if (folder / PARTS).exists():
        raise TaskError(f"{os.fspath(folder / PARTS)!r} holds the parts of an unfinished Spark "
                        "run: resume it with --spark, or remove that folder")
    kept = drawn = 0
    start = time.perf_counter()
    bar = tqdm(total=len(todo), unit="ctx", file=sys.stderr, disable=not progress,
               dynamic_ncols=True)
    step = options.contexts_per_batch
    for at in range(0, len(todo), step):
        chunk = todo[at : at + step]
        entries = sample_batch(model, tokenizer, chunk, options)
        drawn += sum(e.drawn for e in entries)
        kept += sum(len(e.endings) for e in entries)
        _append(folder / POOL, [e.to_json() + "\n" for e in entries])
        bar.update(len(chunk))
    bar.close()
    return _summary(folder, settings, options, selected, short, todo,
                    time.perf_counter() - start, drawn, kept)


def _spark_batch(options: OversampleOptions, state: tuple[Any, Any], index: int,
                 chunk: Sequence[Any]) -> list[dict[str, Any]]:
    """One batch's pool lines on a Spark executor (:func:`sample_batch`, as the local path)."""
    model, tokenizer = state
    return [asdict(e) for e in sample_batch(model, tokenizer, chunk, options)]


def oversample_spark(items: Sequence[Any], out: str | Path, load: Callable[[], tuple[Any, Any]],
                     options: OversampleOptions = OversampleOptions(), *, model_name: str = "",
                     master: str = "local[*]", partitions: int | None = None,
                     key: Any = None, progress: bool = True) -> dict[str, Any]:
    """:func:`oversample` on Spark: the same batches of contexts, each Spark task sampling a
    contiguous run of them with the model ``load()`` gives (once per executor process), so a
    fresh run's pool is the local path's, line for line. Partitions are committed under
    ``DIR/pool.parts`` (a killed job resumes there) and appended to the pool, in context order,
    when all are done. ``partitions``: default four per core, at most 25 batches each; ``key``:
    what identifies the model ``load`` gives (default ``model_name``), so an executor process
    reuses a model it loaded for the same key."""
    from dpc_files import text_digest
    from dpc_spark import (
        claim_parts,
        default_partitions,
        read_parts,
        run_partitions,
        spark_session,
    )

    folder, settings, selected, short, todo = _prepare(items, out, options, model_name)
    step = options.contexts_per_batch
    batches = [todo[at : at + step] for at in range(0, len(todo), step)]
    start = time.perf_counter()
    if batches:
        session, created = spark_session(master, "dpc-swag-oversample")
        try:
            run = {"the contexts to sample": {"count": len(todo), "digest": text_digest(
                [str(it.ind) for it in todo])}}
            count = claim_parts(folder / PARTS, run, partitions, lambda: default_partitions(
                len(batches), session.sparkContext.defaultParallelism),
                command="dpc swag oversample --spark", option="--out's Spark parts")
            run_partitions(batches, folder / PARTS, count, load=load,
                           key=model_name if key is None else key,
                           apply=partial(_spark_batch, options), master=master,
                           app_name="dpc-swag-oversample", progress=progress,
                           desc="partitions (spark)")
        finally:
            if created:
                session.stop()
        entries = list(read_parts(folder / PARTS, range(count)))
        _fold_finished_parts(folder)
    else:
        entries = []
    return _summary(folder, settings, options, selected, short, todo,
                    time.perf_counter() - start, sum(e["drawn"] for e in entries),
                    sum(len(e["endings"]) for e in entries))
