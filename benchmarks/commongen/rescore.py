"""Score sentences already written (``grid.py --texts`` or ``modes.py --outputs`` files, a set a
line) on a slice of their sets, so that settings decoded on different numbers of sets compare
on the same ones; plus the share of sentences ending with . ! ? and the share ending on a
concept's form.

    .venv/bin/python benchmarks/commongen/rescore.py --start 0 --limit 160 \\
        benchmarks/commongen/choice/neurologic_texts/*.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.commongen.dataset import (  # noqa: E402
    distinct,
    read_concept_sets,
    read_references,
    reference_key,
)
from tasks.commongen.decoding import concept_forms  # noqa: E402
from tasks.commongen.evaluation import evaluate  # noqa: E402

DATA = ROOT.parent / "shared/data/commongen"


def ending_shares(texts: list[str], sets: list) -> dict[str, float]:
    """The share of sentences ending with . ! ? and of those whose last word is a form of one
    of their concepts (cut off on a concept: "... with a frisbee and a ball")."""
    punct = sum(t.rstrip().endswith((".", "!", "?")) for t in texts)
    on_concept = 0
    for text, concepts in zip(texts, sets, strict=True):
        words = text.rstrip(" .!?").split()
        forms = {f for c in concepts for f in concept_forms(c, "dpc")}
        on_concept += bool(words) and words[-1].lower() in forms
    return {"ends_with_punct": round(punct / len(texts), 4),
            "ends_on_concept": round(on_concept / len(texts), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--start", type=int, default=0, help="the files' first line is this set")
    ap.add_argument("--from", dest="first", type=int, default=None,
                    help="score from this set (default: --start)")
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    sets = distinct(read_concept_sets(DATA / "commongen.dev.jsonl"))
    references = read_references(DATA / "commongen.dev.cs_str.txt", DATA / "commongen.dev.tgt.txt")
    first = args.start if args.first is None else args.first
    for path in args.files:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        texts = [line["text"] for line in lines][first - args.start:]
        texts = texts[:args.limit] if args.limit else texts
        mine = sets[first:first + len(texts)]
        scores = evaluate(list(zip(texts, mine, strict=True)),
                          [references[reference_key(s)] for s in mine]).as_dict()
        row = {"file": str(path), "from": first, "sets": len(texts),
               **{k: round(scores[k], 4) for k in ("coverage", "pos", "bleu4", "cider",
                                                   "coverage_forms", "pos_forms")},
               **ending_shares(texts, mine)}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
