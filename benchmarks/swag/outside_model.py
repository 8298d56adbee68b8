"""Does AF make the questions harder for a model outside the committee?

A MiniLM multiple-choice cross-encoder (:func:`train.cross_encoder.train_multiple_choice`) is
fine-tuned and tested on the same contexts (80/20 split by a CRC32 of ``ind``) with three sets of
negatives: (i) the AF-filtered ones, (ii) 3 random endings of the same pool, (iii) HellaSwag's own
three wrong endings. Every ending (gold included) is the ending model's tokenizer round trip
(:func:`tasks.swag.ending_model.normalise_ending`), so the three differ only in their negatives.
Lower held-out accuracy = harder.

Usage: python benchmarks/swag/outside_model.py POOL_DIR FILTERED.jsonl HELLASWAG.jsonl MODEL
       [EPOCHS] [MAX_MINUTES]
"""

from __future__ import annotations

import json
import sys
import time
import zlib

import numpy as np

from tasks.datasets import read_multiple_choice
from tasks.swag.ending_model import load_ending_model, normalise_ending
from tasks.swag.oversample import read_pool
from train.cross_encoder import CrossEncoderOptions, train_multiple_choice


def _accuracy(model, contexts, choices, labels) -> float:
    scores = model.choice_scores(contexts, choices)
    return float((np.asarray(scores).argmax(1) == np.asarray(labels)).mean())


def main(pool_dir: str, filtered: str, data: str, model_path: str, epochs: float = 1.0,
         minutes: float = 4.0) -> None:
    tok = load_ending_model(model_path)[1]
    pool = {str(e.ind): e for e in read_pool(pool_dir) if len(e.endings) >= 3}
    af = {str(it.ind): it for it in read_multiple_choice(filtered) if len(it.endings) == 4}
    source = {str(it.ind): it for it in read_multiple_choice(data)}
    inds = sorted(set(pool) & set(af))
    rng = np.random.default_rng(0)
    sets: dict[str, list[tuple[str, list[str], int]]] = {"af": [], "random": [], "hellaswag": []}
    for ind in inds:
        e, item, src = pool[ind], af[ind], source[ind]
        sets["af"].append((e.ctx, list(item.endings), item.label))
        negatives = [e.endings[j] for j in rng.choice(len(e.endings), 3, replace=False)]
        sets["random"].append((e.ctx, *_shuffled([e.gold, *negatives], rng)))
        own = normalise_ending(tok, list(src.endings))
        sets["hellaswag"].append((e.ctx, own, src.label))
    test = [zlib.crc32(ind.encode()) % 5 == 0 for ind in inds]
    results = {"contexts": len(inds), "test": int(sum(test)), "epochs": epochs}
    for name, rows in sets.items():
        train = [r for r, t in zip(rows, test) if not t]
        held = [r for r, t in zip(rows, test) if t]
        options = CrossEncoderOptions(epochs=epochs, batch_size=16, lr=3e-5, max_length=96,
                                      max_minutes=minutes, seed=0, progress=False)
        start = time.perf_counter()
        model = train_multiple_choice([r[0] for r in train], [r[1] for r in train],
                                      [r[2] for r in train], options)
        accuracy = _accuracy(model, [r[0] for r in held], [r[1] for r in held],
                             [r[2] for r in held])
        results[name] = {"held_out_accuracy": round(accuracy, 4),
                         "seconds": round(time.perf_counter() - start, 1)}
        print(name, results[name], file=sys.stderr, flush=True)
    print(json.dumps(results, indent=1))


def _shuffled(endings: list[str], rng: np.random.Generator) -> tuple[list[str], int]:
    order = rng.permutation(len(endings)).tolist()
    return [endings[i] for i in order], order.index(0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4],
         *(float(a) for a in sys.argv[5:7]))
