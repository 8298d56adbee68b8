"""Does AF make the questions harder for a model outside the committee?

A MiniLM multiple-choice cross-encoder (:func:`train.cross_encoder.train_multiple_choice`) is
fine-tuned and tested on the same contexts with three sets of 3 negatives: (i) the AF-filtered
ones (``dpc swag filter``'s output), (ii) 3 random endings of the same pool — the pool AF drew
from, restatements of the gold dropped as AF dropped them (its ``af_state.json`` settings) —
and (iii) HellaSwag's own three wrong endings. Every ending (gold included) is the ending model's
tokenizer round trip (:func:`tasks.swag.ending_model.normalise_ending`), so the three differ only
in their negatives. Lower held-out accuracy = harder.

Each seed ``s`` draws its own 80/20 split of the contexts (CRC32 of ``"s:ind"``), its own random
negatives and its own training order; within a seed the three sets share the split, so their
differences are paired. The output gives each set's accuracy per seed, mean ± std over seeds,
and the paired differences AF − random and AF − HellaSwag.

With ``DPC_OUTSIDE_SETS=af,random`` (a comma-separated subset of af, random, hellaswag) only
those sets are measured; a later run with the others resumes the same OUT.json (which checks
that its contexts are the same). The summary gives each set's mean ± std over the seeds that
measured it, and each paired difference over the seeds that measured both sets.

Usage: python benchmarks/swag/outside_model.py POOL_DIR FILTERED.jsonl HELLASWAG.jsonl MODEL
       [EPOCHS] [MAX_MINUTES] [SEEDS] [OUT.json]
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from dpc_files import read_json, write_json
from tasks.datasets import read_multiple_choice
from tasks.swag.ending_model import load_ending_model, normalise_ending
from tasks.swag.oversample import read_pool
from tasks.swag.restatements import drop_restatements, pool_similarities
from train.cross_encoder import CrossEncoderOptions, train_multiple_choice

SETS = ("af", "random", "hellaswag")


def _accuracy(model, contexts, choices, labels) -> float:
    scores = model.choice_scores(contexts, choices)
    return float((np.asarray(scores).argmax(1) == np.asarray(labels)).mean())


def _usable(pool_dir: str) -> dict[str, object]:
    """The pool AF drew from: restatements dropped by the run's own threshold."""
    pool = read_pool(pool_dir)
    threshold = read_json(Path(pool_dir) / "af_state.json")["settings"].get("max_gold_similarity")
    if threshold is not None:
        pool, _ = drop_restatements(pool, pool_similarities(pool_dir, pool), threshold)
    return {str(e.ind): e for e in pool if len(e.endings) >= 3}


def main(pool_dir: str, filtered: str, data: str, model_path: str, epochs: float = 3.0,
         minutes: float = 10.0, seeds: int = 3, out: str | None = None) -> None:
    tok = load_ending_model(model_path)[1]
    wanted = tuple(os.environ.get("DPC_OUTSIDE_SETS", ",".join(SETS)).split(","))
    if set(wanted) - set(SETS):
        raise SystemExit(f"DPC_OUTSIDE_SETS={','.join(wanted)}: each must be one of {SETS}")
    source = {str(it.ind): it for it in read_multiple_choice(data)}
    pool = _usable(pool_dir)
    af = {str(it.ind): it for it in read_multiple_choice(filtered) if len(it.endings) == 4}
    inds = sorted(set(pool) & set(af))
    own = {ind: normalise_ending(tok, list(source[ind].endings)) for ind in inds}
    results: dict[str, object] = {"contexts": len(inds), "epochs": epochs, "seeds": {},
                                  "inds_crc32": zlib.crc32(json.dumps(inds).encode())}
    path = Path(out) if out else None
    if path is not None and path.exists():  # resume: seeds already measured are kept
        saved = read_json(path)
        if saved["inds_crc32"] != results["inds_crc32"]:
            raise SystemExit(f"{out} was measured on other contexts ({saved['contexts']}, "
                             f"here {len(inds)})")
        results = saved
    for seed in range(int(seeds)):
        if str(seed) in results["seeds"] and len(results["seeds"][str(seed)]) == len(SETS):
            continue
        rng = np.random.default_rng(seed)
        sets: dict[str, list[tuple[str, list[str], int]]] = {name: [] for name in SETS}
        for ind in inds:
            e, item = pool[ind], af[ind]
            sets["af"].append((e.ctx, list(item.endings), item.label))
            negatives = [e.endings[j] for j in rng.choice(len(e.endings), 3, replace=False)]
            sets["random"].append((e.ctx, *_shuffled([e.gold, *negatives], rng)))
            sets["hellaswag"].append((e.ctx, own[ind], source[ind].label))
        test = [zlib.crc32(f"{seed}:{ind}".encode()) % 5 == 0 for ind in inds]
        record = results["seeds"].setdefault(str(seed), {})
        for name in SETS:
            if name in record or name not in wanted:
                continue
            rows = sets[name]
            train = [r for r, t in zip(rows, test) if not t]
            held = [r for r, t in zip(rows, test) if t]
            options = CrossEncoderOptions(epochs=epochs, batch_size=16, lr=3e-5, max_length=96,
                                          max_minutes=minutes, seed=seed, progress=False)
            start = time.perf_counter()
            model = train_multiple_choice([r[0] for r in train], [r[1] for r in train],
                                          [r[2] for r in train], options)
            accuracy = _accuracy(model, [r[0] for r in held], [r[1] for r in held],
                                 [r[2] for r in held])
            record[name] = {"held_out_accuracy": round(accuracy, 4), "test": len(held),
                            "seconds": round(time.perf_counter() - start, 1)}
            print(seed, name, record[name], file=sys.stderr, flush=True)
            if path is not None:
                write_json(path, results)
    measured = list(results["seeds"].values())

    def stats(values: list[float]) -> dict[str, object]:
        a = np.array(values)
        return {"seeds": len(a), "mean": round(float(a.mean()), 4) if len(a) else None,
                "std": round(float(a.std(ddof=1)), 4) if len(a) > 1 else None}

    results["summary"] = {
        **{name: stats([s[name]["held_out_accuracy"] for s in measured if name in s])
           for name in SETS},
        **{f"af_minus_{other}": stats([s["af"]["held_out_accuracy"]
                                       - s[other]["held_out_accuracy"]
                                       for s in measured if "af" in s and other in s])
           for other in ("random", "hellaswag")}}
    if path is not None:
        write_json(path, results)
    print(json.dumps(results["summary"], indent=1))


def _shuffled(endings: list[str], rng: np.random.Generator) -> tuple[list[str], int]:
    order = rng.permutation(len(endings)).tolist()
    return [endings[i] for i in order], order.index(0)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0], args[1], args[2], args[3],
         *(float(a) for a in args[4:6]), *(int(a) for a in args[6:7]), *args[7:8])
