"""Coverage by spaCy's lemmas (the leaderboard's reading) beside the reading by forms too, for each
mode's sentences and for dev's human references, with the concepts the lemmas miss most.

The human row scores every reference sentence of the sets as if it were an output: the ceiling
the lemma reading allows (en_core_web_sm 3.8 lemmatises "riding"/"rides" as *rid*).

    .venv/bin/python benchmarks/commongen/lemma_misses.py --outputs benchmarks/commongen/outputs --start 497
    .venv/bin/python benchmarks/commongen/lemma_misses.py --limit 497   # the references of the first half
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cause_effect_graph.lemmas import default_lemmatizer  # noqa: E402
from tasks.commongen.dataset import ConceptSet, distinct, read_concept_sets  # noqa: E402
from tasks.commongen.evaluation import used_concepts  # noqa: E402


def readings(nlp: Any, texts: Sequence[str], sets: Sequence[ConceptSet]) -> dict[str, Any]:
    """Every-concept coverage and PoS-correct coverage by lemmas and by forms, and the misses."""
    missed: Counter[str] = Counter()
    counts = Counter[str]()
    for doc, concepts in zip(nlp.pipe(texts, batch_size=256), sets, strict=True):
        for forms, name in ((False, "lemmas"), (True, "forms")):
            used, right = used_concepts(doc, concepts, forms=forms)
            counts[f"coverage_{name}"] += used == len(concepts)
            counts[f"pos_{name}"] += right == len(concepts)
        lemmas = {t.lemma_.lower() for t in doc}
        missed.update(c.lemma for c in concepts if c.lemma not in lemmas)
    return {"sentences": len(texts),
            **{key: round(counts[key] / len(texts), 3)
               for key in ("coverage_lemmas", "pos_lemmas", "coverage_forms", "pos_forms")},
            "missed_by_lemma": sum(missed.values()), "most_missed": missed.most_common(6)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outputs", default=None,
                    help="modes.py --outputs folder (default: the human references only)")
    ap.add_argument("--src", default=str(ROOT.parent / "shared/data/commongen/commongen.dev.jsonl"))
    ap.add_argument("--start", type=int, default=0, help="the --start the outputs were made with")
    ap.add_argument("--limit", type=int, default=None, help="sets from --start (default: all)")
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.src).open(encoding="utf-8") if line.strip()]
    scenes: dict[str, list[str]] = {}
    for row in rows:
        scenes.setdefault(row["concept_set"], []).extend(row["scene"])
    sets = distinct(read_concept_sets(args.src))
    keys = list(scenes)  # first-appearance order, as the distinct sets
    stop = None if args.limit is None else args.start + args.limit
    sets, keys = sets[args.start:stop], keys[args.start:stop]
    nlp = default_lemmatizer().nlp
    for file in sorted(Path(args.outputs).glob("*.jsonl")) if args.outputs else ():
        texts = [json.loads(line)["text"] for line in file.open(encoding="utf-8")]
        print(json.dumps({"mode": file.stem, **readings(nlp, texts, sets[:len(texts)])}))
    refs = [(text, concepts) for key, concepts in zip(keys, sets, strict=True)
            for text in scenes[key]]
    print(json.dumps({"mode": "human references",
                      **readings(nlp, [t for t, _ in refs], [c for _, c in refs])}))


if __name__ == "__main__":
    main()
