"""Paired comparison of two COPA scorers on the same items: exact McNemar test.

Usage: python benchmarks/train/copa_paired.py A.jsonl B.jsonl

Each file is what ``dpc eval copa FILE --scorer NAME [--model M] --predictions OUT.jsonl``
writes (one ``{"id", "predicted", "answer"}`` per item). Prints both accuracies, how many items
the two agree on (right or wrong alike), the discordant items (right only in A, right only in
B) and the two-sided exact McNemar p-value (a binomial test on the discordant items).
"""

from __future__ import annotations

import argparse
import json

from scipy.stats import binomtest


def _right(path: str) -> dict[str, bool]:
    with open(path, encoding="utf-8") as f:
        return {d["id"]: d["predicted"] == d["answer"] for d in map(json.loads, f)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    a, b = _right(args.a), _right(args.b)
    if a.keys() != b.keys():
        raise SystemExit(f"{args.a} and {args.b} do not score the same items")
    only_a = sum(a[k] and not b[k] for k in a)
    only_b = sum(b[k] and not a[k] for k in a)
    p = binomtest(only_a, only_a + only_b).pvalue if only_a + only_b else 1.0
    print(f"A {args.a}: {sum(a.values())}/{len(a)}; B {args.b}: {sum(b.values())}/{len(b)}")
    print(f"agree on {sum(a[k] == b[k] for k in a)}; right only in A {only_a}, only in B "
          f"{only_b}; exact McNemar p = {p:.3f}")


if __name__ == "__main__":
    main()
