"""The committee's two ensemble rules side by side on a pool's random (k + 1)-way questions.

One committee of all four members and the joint model (``Committee(ensemble="joint")``) is fitted
per seed on a random 80% of the contexts, each with k random pool negatives (restatements of the
gold dropped as ``dpc swag filter`` drops them), and scored on the other 20%: each member's
held-out accuracy, the joint model's, and the sum of the members' logits (the ``"sum"`` rule)
from the same fitted members. The stronger rule is the better adversary for AF.

Usage: python benchmarks/swag/ensemble_rule.py POOL_DIR [K] [SEEDS]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from tasks.swag.adversarial_filter import _load, _questions
from tasks.swag.committee import Committee, _correct
from tasks.swag.restatements import RESTATEMENT_THRESHOLD


def main(folder: str, k: int = 9, seeds: int = 3) -> None:
    data, _, dropped = _load(Path(folder), RESTATEMENT_THRESHOLD)
    eligible = np.flatnonzero(data.pool_size >= k)
    out: dict[str, object] = {"contexts": int(len(eligible)), "k": k,
                              "restatements_dropped": dropped, "seeds": {}}
    for seed in range(seeds):
        rng = np.random.default_rng([seed, 0xE5])
        negatives = [rng.choice(m, size=min(k, m), replace=False).tolist()
                     for m in data.pool_size]
        order = rng.permutation(eligible)
        cut = round(0.8 * len(order))
        start = time.perf_counter()
        committee = Committee(seed=seed, ensemble="joint")
        committee.fit(data.table, _questions(data, order[:cut], negatives))
        test = _questions(data, order[cut:], negatives)
        scores = committee.scores(data.table, test.reshape(-1))
        summed = sum(scores[m] for m in committee.members)
        accuracy = {name: float(_correct(s.reshape(test.shape)).mean())
                    for name, s in {**scores, "sum": summed}.items()}
        accuracy["joint"] = accuracy.pop("ensemble")
        out["seeds"][seed] = {"accuracy": {n: round(a, 4) for n, a in accuracy.items()},
                              "held_out": int(len(test)),
                              "seconds": round(time.perf_counter() - start, 1)}
        print(seed, out["seeds"][seed], file=sys.stderr, flush=True)
    names = list(next(iter(out["seeds"].values()))["accuracy"])
    out["mean"] = {n: round(float(np.mean([s["accuracy"][n] for s in out["seeds"].values()])), 4)
                   for n in names}
    out["std"] = {n: round(float(np.std([s["accuracy"][n] for s in out["seeds"].values()],
                                        ddof=1)), 4) for n in names} if seeds > 1 else None
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:4]))
