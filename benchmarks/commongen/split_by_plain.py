"""Where does `dpc` lose BLEU-4 to `plain`? The sets split by whether plain's sentence already uses
every concept (read by forms, :func:`tasks.commongen.evaluation.used_concepts`): per part, how
many sets, how many sentences the two modes share, and each mode's BLEU-4.

    .venv/bin/python benchmarks/commongen/split_by_plain.py --outputs benchmarks/commongen/outputs --start 497
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import sacrebleu  # noqa: E402

from cause_effect_graph.lemmas import default_lemmatizer  # noqa: E402
from tasks.commongen.dataset import (  # noqa: E402
    distinct,
    read_concept_sets,
    read_references,
    reference_key,
)
from tasks.commongen.evaluation import used_concepts  # noqa: E402

DATA = ROOT.parent / "shared/data/commongen"


def bleu(texts: list[str], references: list[list[str]]) -> float:
    """sacrebleu's corpus BLEU-4, lower-cased, against every reference (as the evaluation)."""
    depth = max(len(r) for r in references)
    streams = [[r[k] if k < len(r) else None for r in references] for k in range(depth)]
    return float(sacrebleu.corpus_bleu(texts, streams, lowercase=True).score)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outputs", required=True, help="modes.py --outputs folder")
    ap.add_argument("--start", type=int, default=0, help="the --start the outputs were made with")
    ap.add_argument("--mode", default="dpc", help="the mode compared with plain")
    args = ap.parse_args()
    sets = distinct(read_concept_sets(DATA / "commongen.dev.jsonl"))[args.start:]
    found = read_references(DATA / "commongen.dev.cs_str.txt", DATA / "commongen.dev.tgt.txt")
    texts = {mode: [json.loads(line)["text"] for line in
                    (Path(args.outputs) / f"{mode}.jsonl").open(encoding="utf-8")]
             for mode in ("plain", args.mode)}
    sets = sets[:len(texts["plain"])]
    refs = [found[reference_key(s)] for s in sets]
    nlp = default_lemmatizer().nlp
    full = [used_concepts(doc, s, forms=True)[0] == len(s)
            for doc, s in zip(nlp.pipe(texts["plain"]), sets, strict=True)]
    for name, want in (("plain uses every concept", True), ("plain misses one", False)):
        part = [i for i, f in enumerate(full) if f == want]
        same = sum(texts["plain"][i].strip() == texts[args.mode][i].strip() for i in part)
        print(json.dumps({"part": name, "sets": len(part), "same_sentence": same,
                          **{f"bleu4_{m}": round(bleu([texts[m][i] for i in part],
                                                      [refs[i] for i in part]), 1)
                             for m in texts}}))


if __name__ == "__main__":
    main()
