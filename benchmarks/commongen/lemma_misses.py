"""Which concepts spaCy's lemmas miss in each mode's sentences, and the coverage with its
*rid* lemma of "riding"/"rides" read as *ride* (a diagnostic of the metric, not the metric).

    .venv/bin/python benchmarks/commongen/lemma_misses.py --outputs benchmarks/commongen/outputs --start 497
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cause_effect_graph.lemmas import default_lemmatizer  # noqa: E402
from tasks.commongen.dataset import distinct, read_concept_sets  # noqa: E402
from tasks.commongen.evaluation import POS_TAGS  # noqa: E402

RIDE = {"ride", "rides", "riding", "rode", "ridden"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outputs", required=True, help="modes.py --outputs folder")
    ap.add_argument("--src", default=str(ROOT.parent / "shared/data/commongen/commongen.dev.jsonl"))
    ap.add_argument("--start", type=int, default=0, help="the --start the outputs were made with")
    args = ap.parse_args()
    sets = distinct(read_concept_sets(args.src))[args.start:]
    nlp = default_lemmatizer().nlp
    for file in sorted(Path(args.outputs).glob("*.jsonl")):
        texts = [json.loads(line)["text"] for line in file.open(encoding="utf-8")]
        missed: Counter[str] = Counter()
        covered = right = 0
        for doc, concepts in zip(nlp.pipe(texts), sets, strict=False):
            found: dict[str, set[str]] = {}
            for token in doc:
                lemma = token.lemma_.lower()
                if lemma == "rid" and token.text.lower() in RIDE:
                    lemma = "ride"
                found.setdefault(lemma, set()).add(token.pos_)
            missed.update(c.lemma for c in concepts
                          if c.lemma not in {t.lemma_.lower() for t in doc})
            used = [c for c in concepts if c.lemma in found]
            covered += len(used) == len(concepts)
            right += sum(bool(found[c.lemma] & POS_TAGS.get(c.pos or "", set())) or c.pos is None
                         for c in used) == len(concepts)
        print(json.dumps({"mode": file.stem, "sets": len(texts),
                          "missed_concepts": sum(missed.values()),
                          "most_missed": missed.most_common(6),
                          "coverage_ride_read": round(covered / len(texts), 3),
                          "pos_ride_read": round(right / len(texts), 3)}))


if __name__ == "__main__":
    main()
