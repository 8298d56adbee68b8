"""Two configurations item by item on COPA by generation: discordant items and exact McNemar p.

    python benchmarks/guided/paired.py "A=FILE[+FILE]:RERANK" "B=FILE[+FILE]:RERANK" [...]

The first spec is compared with each of the others, on the items both hold (frontier records,
joined by item as :mod:`slices` does): items only A gets right, items only B gets right, and the
two-sided exact McNemar p-value (binomial on the discordant items).
"""

from __future__ import annotations

import argparse
import json
import sys
from math import comb
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def tops_of(spec: str) -> tuple[str, dict[int, list[str]]]:
    label, _, rest = spec.rpartition("=")
    files, _, rerank = rest.rpartition(":")
    tops: dict[int, list[str]] = {}
    for name in files.split("+"):
        record = json.loads(Path(name).read_text(encoding="utf-8"))
        for offset, top in enumerate(record["tops"][rerank]):
            tops[record.get("start", 0) + offset] = top
    return label, tops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    args = ap.parse_args()
    from tasks.copa.dataset import read_copa
    from tasks.copa.plausibility import SentenceEncoder, decide

    items = read_copa(args.copa)
    encoder = SentenceEncoder()

    def right(tops: dict[int, list[str]]) -> dict[int, bool]:
        out = {}
        for i, top in tops.items():
            choice, tie = decide(items[i], top, encoder)
            out[i] = choice == items[i].answer and not tie
        return out

    label_a, tops_a = tops_of(args.specs[0])
    a = right(tops_a)
    for spec in args.specs[1:]:
        label_b, tops_b = tops_of(spec)
        b = right(tops_b)
        shared = sorted(set(a) & set(b))
        only_a = sum(a[i] and not b[i] for i in shared)
        only_b = sum(b[i] and not a[i] for i in shared)
        n = only_a + only_b
        p = min(1.0, 2 * sum(comb(n, j) for j in range(min(only_a, only_b) + 1)) / 2 ** n) if n else 1.0
        print(f"{label_a} vs {label_b}: {len(shared)} items, only {label_a} right {only_a}, "
              f"only {label_b} right {only_b}, exact McNemar p = {p:.3f}")


if __name__ == "__main__":
    main()
