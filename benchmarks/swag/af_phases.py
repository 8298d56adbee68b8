"""Mean held-out accuracy of each committee member and the ensemble over ranges of AF iterations,
with the mean number of contexts changed and seconds an iteration (the phase table of
RESULTS.md §8), read from a pool folder's ``report.json``.

Usage: python benchmarks/swag/af_phases.py POOL_DIR FIRST-LAST [FIRST-LAST ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def main(folder: str, *ranges: str) -> None:
    rows = json.loads((Path(folder) / "report.json").read_text())["iterations"]
    for span in ranges:
        first, last = (int(x) for x in span.split("-"))
        part = [r for r in rows if first <= r["iteration"] <= last]
        names = sorted({n for r in part for n in r["accuracy"]})
        print(span, {n: round(100 * float(np.mean([r["accuracy"][n] for r in part
                                                     if n in r["accuracy"]])), 1)
                     for n in names},
              "changed", round(float(np.mean([r["contexts_changed"] for r in part])), 1),
              "seconds", round(float(np.mean([r["seconds"] for r in part])), 1))


if __name__ == "__main__":
    main(sys.argv[1], *sys.argv[2:])
