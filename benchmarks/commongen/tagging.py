"""The verifier's spaCy tagging: one ``nlp.pipe`` call a concept set (the code before
2026-12-01) against one call for every set's beams (``tasks.commongen.decoding._fits``), side by
side in one run, alternating, on the same texts: the first SETS dev concept sets, each with 8
"beams" taken from dev's human references. Prints each round's seconds, the median ratio and
whether both give the same verdicts.

Usage: OMP_NUM_THREADS=1 python benchmarks/commongen/tagging.py [SETS] [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cause_effect_graph.lemmas import default_lemmatizer  # noqa: E402
from tasks.commongen.dataset import read_concept_sets  # noqa: E402
from tasks.commongen.decoding import Sentence, _fits, uses_every_concept  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "commongen"


def main(n_sets: int = 400, rounds: int = 3) -> None:
    sets = read_concept_sets(DATA / "commongen.dev.cs_str.txt")[:n_sets]
    refs = [line.strip() for line in (DATA / "commongen.dev.tgt.txt").read_text().splitlines()]
    decoded = [[Sentence(refs[(8 * i + j) % len(refs)], True, 0.0) for j in range(8)]
               for i in range(len(sets))]
    list(default_lemmatizer().nlp.pipe(["A warm-up sentence."]))
    ratios = []
    for r in range(rounds):
        t = time.perf_counter()
        per_set = [uses_every_concept([b.text for b in beams], s)
                   for beams, s in zip(decoded, sets)]
        a = time.perf_counter() - t
        t = time.perf_counter()
        one = _fits(decoded, sets)
        b = time.perf_counter() - t
        ratios.append(a / b)
        print(f"round {r}: per set {a:.2f} s, one pass {b:.2f} s, ratio {a / b:.2f}, "
              f"same verdicts {per_set == one}")
    print(f"{len(sets)} sets x 8 texts: median ratio {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
