"""Re-extract every sentence of a judged sample with the current miner and count what changed.

For each judged pair (``sample_*.tsv``: id, pattern, class, cause, effect, sentence, verdict,
reason) the sentence is run through the current :class:`causal_mining.Extractor`; the pair is
*same* (the same cause and effect come out), *changed* (another pair comes out) or *dropped*
(none). Counted per verdict, this says how many judged errors a change removes and how many
correct pairs it loses -- in-sample, on the pairs a fix was tuned on::

    python benchmarks/mining/recheck_sample.py benchmarks/mining/sample_200_round3.tsv

Prints one line per pair that is not *same*, then the counts as JSON.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from pathlib import Path

from causal_mining.extract import ExtractOptions, Extractor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample", type=Path, help="a judged sample TSV")
    args = parser.parse_args()
    with args.sample.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    extractor = Extractor(ExtractOptions())
    counts: dict[str, Counter[str]] = {"yes": Counter(), "no": Counter()}
    for row in rows:
        pairs = extractor.extract([("sample", row["sentence"])])
        if not pairs:
            outcome = "dropped"
        elif (pairs[0].cause, pairs[0].effect) == (row["cause"], row["effect"]):
            outcome = "same"
        else:
            outcome = "changed"
        counts[row["verdict"]][outcome] += 1
        if outcome != "same":
            new = f"{pairs[0].cause} || {pairs[0].effect}" if pairs else ""
            print(f"{row['id']}\t{row['verdict']}\t{outcome}\t{new}")
    print(json.dumps({verdict: dict(c) for verdict, c in counts.items()}))


if __name__ == "__main__":
    main()
