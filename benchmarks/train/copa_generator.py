"""COPA accuracy of a generator as a scorer, for the three scoring modes in one pass.

Usage: python benchmarks/train/copa_generator.py [--model PATH] [--copa FILE]

The log-probabilities each mode needs are computed once (batched) and shared:
forward = log P(alt | asks_for: premise); pmi = forward - log P(alt | asks_for: );
both = pmi + [log P(premise | other: alt) - log P(premise | other: )].
``dpc eval copa FILE --scorer generator|generator-pmi|generator-forward`` gives the same numbers
one item at a time.
"""

from __future__ import annotations

import argparse
import time

from tasks.copa import read_copa
from train.copa_scorers import as_clause
from train.data import format_input
from train.metrics import sequence_log_probs
from train.models import default_model, load_generator


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--copa", default="../shared/data/copa/copa-dev.xml")
    args = ap.parse_args()
    loaded = load_generator(args.model) if args.model else default_model()
    items = read_copa(args.copa)
    other = {"cause": "effect", "effect": "cause"}
    start = time.perf_counter()
    requests: set[tuple[str, str]] = set()
    for it in items:
        p = as_clause(it.premise)
        for alt in it.alternatives:
            a = as_clause(alt)
            requests |= {(format_input(p, it.asks_for), a), (format_input("", it.asks_for), a),
                         (format_input(a, other[it.asks_for]), p),
                         (format_input("", other[it.asks_for]), p)}
    keys = sorted(requests)
    values = sequence_log_probs(loaded.model, loaded.tokenizer, [k[0] for k in keys],
                                [k[1] for k in keys])
    lp = dict(zip(keys, values))
    correct = {"forward": 0, "pmi": 0, "both": 0, "reverse-pmi": 0}
    for it in items:
        p = as_clause(it.premise)
        scores: dict[str, list[float]] = {m: [] for m in correct}
        for alt in it.alternatives:
            a = as_clause(alt)
            fwd = lp[(format_input(p, it.asks_for), a)]
            pmi = fwd - lp[(format_input("", it.asks_for), a)]
            rev = lp[(format_input(a, other[it.asks_for]), p)] - lp[
                (format_input("", other[it.asks_for]), p)]
            for m, v in (("forward", fwd), ("pmi", pmi), ("both", pmi + rev), ("reverse-pmi", rev)):
                scores[m].append(v)
        for m, (s1, s2) in scores.items():
            correct[m] += (1 if s1 >= s2 else 2) == it.answer
    secs = time.perf_counter() - start
    print(f"model {loaded.name} on {args.copa} ({len(items)} items, {secs:.0f} s)")
    print("| mode | accuracy |\n|---|---:|")
    for m, c in correct.items():
        print(f"| {m} | {c / len(items):.3f} ({c}/{len(items)}) |")


if __name__ == "__main__":
    main()
