"""COPA accuracy of a generator as a scorer, for the three scoring modes in one pass.

Usage: python benchmarks/train/copa_generator.py [--model PATH] [--copa FILE]

The four log-probabilities of :class:`tasks.copa.generator.Evidence` are computed once (batched) and
shared: forward = log P(alt | asks_for: premise); pmi = forward - log P(alt | asks_for: );
both = pmi + [log P(premise | other: alt) - log P(premise | other: )].
``dpc eval copa FILE --scorer generator|generator-pmi|generator-forward`` gives the same numbers.
"""

from __future__ import annotations

import argparse
import time

from tasks.copa import read_copa
from tasks.copa.generator import GeneratorScorer
from train.models import default_model, load_generator


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--copa", default="../shared/data/copa/copa-dev.xml")
    args = ap.parse_args()
    loaded = load_generator(args.model) if args.model else default_model()
    items = read_copa(args.copa)
    start = time.perf_counter()
    scorer = GeneratorScorer(loaded.model, loaded.tokenizer)
    scorer.prepare(items, all_evidence=True)
    modes = ("forward", "pmi", "both", "reverse-pmi")  # the last is not a scorer mode
    correct = dict.fromkeys(modes, 0)
    for it in items:
        evidence = [scorer.evidence(it.premise, it.asks_for, alt) for alt in it.alternatives]
        for m in modes:
            s1, s2 = (e.reverse_pmi if m == "reverse-pmi" else e.score(m) for e in evidence)
            correct[m] += (1 if s1 >= s2 else 2) == it.answer
    secs = time.perf_counter() - start
    print(f"model {loaded.name} on {args.copa} ({len(items)} items, {secs:.0f} s)")
    print("| mode | accuracy |\n|---|---:|")
    for m, c in correct.items():
        print(f"| {m} | {c / len(items):.3f} ({c}/{len(items)}) |")


if __name__ == "__main__":
    main()
