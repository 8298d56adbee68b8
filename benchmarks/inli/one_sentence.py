"""Share of INLI hypotheses that are one sentence (why a variant ends at its first period).

A hypothesis counts as more than one sentence when it holds two or more sentence ends (``.``,
``!`` or ``?`` followed by a space or the end).

Usage: python benchmarks/inli/one_sentence.py [CSV]   (default ../shared/data/inli/train.csv)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.datasets import INLI_LABELS, read_inli  # noqa: E402


def main(path: str = str(ROOT / ".." / "shared" / "data" / "inli" / "train.csv")) -> None:
    texts = [row.hypothesis(label) for row in read_inli(path).rows for label in INLI_LABELS]
    several = sum(len(re.findall(r"[.!?](?:\s|$)", t.strip())) > 1 for t in texts)
    print(f"{len(texts)} hypotheses, one sentence: {1 - several / len(texts):.1%}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
