"""CausalBERT on COPA-dev by cross-validation: with and without CausalBank continued training.

Usage::

    python benchmarks/train/causal_bert.py --model none --model p5k=runs/causal_bert/p5k \\
        [--seeds 0 1 2 3 4] [--folds 5] [--epochs 3] [--json benchmarks/results/causal_bert.json]

For every model (``none`` = plain all-MiniLM-L6-v2, else ``NAME=FOLDER`` from
``dpc train causal-bert``) and seed, COPA-dev is cut into ``--folds`` fixed folds (the same for
every seed and model); each fold is answered by a model COPA-trained (margin ranking, the same
code as ``--scorer causal-bert``) on the other folds, and the accuracy is over all 500 items.
The table gives mean ± sample std over seeds. Results are written to the JSON after every
(model, seed), and a rerun skips the ones already there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

import torch

from tasks.copa import accuracy, read_copa
from train.causal_bert import (
    CausalBertScorer,
    CopaRankingOptions,
    load_causal_bert,
    train_copa_ranking,
)

FOLD_SEED = 1234


def folds_of(n: int, k: int) -> list[list[int]]:
    """``k`` disjoint folds of ``range(n)`` after a fixed shuffle."""
    order = list(range(n))
    random.Random(FOLD_SEED).shuffle(order)
    return [sorted(order[i::k]) for i in range(k)]


def cross_validate(model: str | None, items: list, seed: int, folds: int,
                   options: CopaRankingOptions) -> float:
    """Accuracy over all items, each fold answered by a model trained on the others."""
    correct = 0.0
    for test in folds_of(len(items), folds):
        test_set = set(test)
        train_items = [it for i, it in enumerate(items) if i not in test_set]
        test_items = [items[i] for i in test]
        net, tok = load_causal_bert(model, seed)
        train_copa_ranking(net, tok, train_items, options)
        scorer = CausalBertScorer(net, tok, options.max_tokens)
        scorer.score_many([p for it in test_items for p in _candidates(it)])
        correct += accuracy(scorer, test_items) * len(test_items)
    return correct / len(items)


def _candidates(item) -> list[tuple[str, str]]:
    from train.causal_bert import causal_order

    return [causal_order(item.premise, item.asks_for, a) for a in item.alternatives]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", action="append", required=True,
                    help="'none' or NAME=FOLDER (repeatable)")
    ap.add_argument("--copa", default="../shared/data/copa/copa-dev.xml")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--json", default="benchmarks/results/causal_bert.json")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    items = read_copa(args.copa)
    out = Path(args.json)
    results = json.loads(out.read_text()) if out.is_file() else {}
    for spec in args.model:
        name, _, folder = spec.partition("=")
        path = folder or None
        meta = {}
        if path and (Path(path) / "causal_bert.json").is_file():
            meta = json.loads((Path(path) / "causal_bert.json").read_text())
        entry = results.setdefault(name, {"model": path, "seeds": {},
                                          "pairs": meta.get("pairs", 0),
                                          "continued_seconds": meta.get("seconds", 0.0),
                                          "bank_dev_ranking_after": meta.get("dev_accuracy_after")})
        for seed in args.seeds:
            key = str(seed)
            if key in entry["seeds"]:
                continue
            opts = CopaRankingOptions(epochs=args.epochs, lr=args.lr, seed=seed)
            start = time.perf_counter()
            acc = cross_validate(path, items, seed, args.folds, opts)
            secs = time.perf_counter() - start
            entry["seeds"][key] = {"accuracy": acc, "seconds": round(secs, 1)}
            entry["setup"] = {"folds": args.folds, "epochs": args.epochs, "lr": args.lr,
                              "copa": args.copa}
            print(f"{name} seed {seed}: {acc:.3f} ({secs:.0f} s)", flush=True)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(results, indent=1))
    print()
    print("| continued training | CausalBank pairs | continued-training time "
          "| COPA-dev CV accuracy (mean ± std) | seeds | per-seed accuracies "
          "| COPA CV time per seed |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for name, e in results.items():
        accs = [s["accuracy"] for s in e["seeds"].values()]
        if not accs:
            continue
        std = statistics.stdev(accs) if len(accs) > 1 else 0.0
        per = ", ".join(f"{a:.3f}" for a in accs)
        secs = statistics.mean(s["seconds"] for s in e["seeds"].values())
        ct = f"{e['continued_seconds'] / 60:.1f} min" if e["pairs"] else "—"
        print(f"| {name} | {e['pairs'] or 0} | {ct} | {statistics.mean(accs):.3f} ± {std:.3f} "
              f"| {len(accs)} | {per} | {secs / 60:.1f} min |")


if __name__ == "__main__":
    main()
