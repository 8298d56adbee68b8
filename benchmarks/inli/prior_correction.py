"""Per-label prior correction of a classifier: add a bias to each label's log-probability,
chosen on the classifier's own dev split (grid -1..1 step 0.1 for the last three labels), then
read val with and without it.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/inli/prior_correction.py runs/inli/full3

The dev split is the one the classifier was trained beside (its ``inli_classifier.json``).
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.datasets import read_inli  # noqa: E402
from tasks.inli.classifier import (  # noqa: E402
    CLASSIFIER_FILE,
    InliClassifier,
    examples,
    split_by_premise,
)

DATA = ROOT.parent / "shared/data/inli"


def main(folder: str) -> None:
    meta = json.loads((Path(folder) / CLASSIFIER_FILE).read_text(encoding="utf-8"))
    classifier = InliClassifier.load(folder)
    _, dev = split_by_premise(read_inli(DATA / "train.csv").rows, meta["dev_fraction"],
                              meta["split_seed"])
    scored = {}
    for name, rows in (("dev", dev), ("val", read_inli(DATA / "val.csv").rows)):
        p, h, y = examples(rows)
        scored[name] = (np.log(classifier.probabilities(p, h) + 1e-12), np.array(y))
    lp, y = scored["dev"]
    grid = np.round(np.arange(-1.0, 1.01, 0.1), 1)
    best = max(((((lp + np.array((0.0, *b))).argmax(1) == y).mean(), b)
                for b in itertools.product(grid, grid, grid)), key=lambda t: t[0])
    bias = np.array((0.0, *best[1]))
    print(f"dev: {(lp.argmax(1) == y).mean():.3f} without, {best[0]:.3f} with bias {bias}")
    vl, vy = scored["val"]
    for label, b in (("without", np.zeros(4)), ("with", bias)):
        pred = (vl + b).argmax(1)
        print(f"val {label} the bias: overall {(pred == vy).mean():.3f} "
              f"implied {(pred[vy == 0] == 0).mean():.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
