"""Draw a uniform random sample of mined pairs for human judgement.

Reservoir sampling over the whole bank (streamed), fixed seed, so the sample is reproducible::

    python benchmarks/mining/sample_pairs.py runs/gutenberg --n 200 --seed 2020 \
        > benchmarks/mining/sample_200.tsv

The output TSV has columns id, pattern, class, cause, effect, sentence, verdict, reason; the
verdict column ("yes": truly causal and the direction is right, "no": not) is filled in by hand.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from causal_mining import read_bank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bank", type=Path, help="mining output folder or shard folder")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2020)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    reservoir = []
    for i, pair in enumerate(read_bank(args.bank)):
        if len(reservoir) < args.n:
            reservoir.append(pair)
        else:
            j = rng.randint(0, i)
            if j < args.n:
                reservoir[j] = pair
    out = sys.stdout
    out.write("id\tpattern\tclass\tcause\teffect\tsentence\tverdict\treason\n")
    for k, p in enumerate(reservoir, start=1):
        out.write(f"{k}\t{p.pattern}\t{p.cls}\t{p.cause}\t{p.effect}\t{p.sentence}\t\t\n")


if __name__ == "__main__":
    main()
