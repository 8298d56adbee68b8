"""The everyday-English text of RESULTS.md §2e, and how much of it carries a causal cue.

Usage: python benchmarks/train/everyday_text.py [--data ../shared/data] [--out runs/everyday/text.txt]

Writes one line per text: WinoGrande train_l sentences with the blank filled by the answer
option, then the INLI train premises (HellaSwag is left out: its validation items are the SWAG
pipeline's evaluation data). Prints the lines per source, the WinoGrande sentences holding a
cue word (the regex below; a rough count, the miner decides what is a pair) and the COPA-dev
sentences of 4+ words that occur in the text (a leakage check).
``dpc mine OUT --out runs/everyday/bank`` then makes the bank.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

from tasks.copa import read_copa
from tasks.copa.dataset import as_clause

CUE = re.compile(r"\b(because|so|since|therefore|as a result|due to)\b")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--out", default="runs/everyday/text.txt")
    args = ap.parse_args()
    data = Path(args.data)
    winogrande = []
    with open(data / "winogrande/train_l.jsonl", encoding="utf-8") as f:
        for d in map(json.loads, f):
            winogrande.append(d["sentence"].replace("_", d["option" + d["answer"]]))
    with open(data / "inli/train.csv", encoding="utf-8", newline="") as f:
        inli = [" ".join(r["premise"].split()) for r in csv.DictReader(f)]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("".join(line + "\n" for line in winogrande + inli), encoding="utf-8")
    cued = sum(bool(CUE.search(s)) for s in winogrande)
    text = "\n".join(winogrande + inli).lower()
    copa = [s for it in read_copa(data / "copa/copa-dev.xml")
            for s in (it.premise, it.alternative1, it.alternative2)]
    found = [s for s in copa if len(s.split()) >= 4 and as_clause(s).lower() in text]
    print(f"{args.out}: WinoGrande {len(winogrande)} lines ({cued} with a cue word), "
          f"INLI {len(inli)} premises")
    print(f"COPA-dev sentences of 4+ words in the text: {len(found)} {found}")


if __name__ == "__main__":
    main()
