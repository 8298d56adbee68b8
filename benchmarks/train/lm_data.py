"""The e-CARE training data of the cause/effect LM, counted: the figures benchmarks/train/RESULTS.md
section 7 and the docs quote.

    python benchmarks/train/lm_data.py [--ecare FILE] [--copa FILE]

Prints, as JSON: e-CARE rows, the train/dev/skipped split (:func:`train.cause_effect_lm.split_pairs`),
the share of e-CARE sentences with the placeholder name "Tom", the sentences e-CARE shares with
COPA-dev (words compared, case and punctuation ignored), and for the examples built with and
without ``--drop-new-names --swap-genders``: how many there are and how many answers say "he" and
"she" (whole words, any case).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z']+", text.lower()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ecare", default=str(
        ROOT.parent / "shared/data/ecare/explanation_generation_train.jsonl"))
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    args = ap.parse_args()

    from causal_mining.curated_pairs import read_ecare
    from train.cause_effect_lm import cause_effect_examples, proper_nouns, split_pairs

    pairs = list(read_ecare(args.ecare))
    train, dev, skipped = split_pairs(pairs)
    proper = proper_nouns(s for pair in pairs for s in pair)
    sentences = [s for pair in pairs for s in pair]
    copa = {_words(e.text or "") for item in ET.parse(args.copa).getroot() for e in item}
    shared = sorted({s for s in sentences if _words(s) in copa})
    record: dict[str, object] = {
        "rows": len(pairs), "train_pairs": len(train), "dev_pairs": len(dev),
        "skipped_pairs": skipped,
        "sentences_with_tom": round(sum(bool(re.search(r"\bTom\b", s)) for s in sentences)
                                    / len(sentences), 3),
        "sentences_shared_with_copa_dev": shared}
    for name, shaping in (("plain", {}), ("drop_new_names+swap_genders",
                                         {"drop_new_names": True, "swap_genders": True})):
        examples = cause_effect_examples(train, proper, **shaping)
        record[name] = {
            "examples": len(examples),
            "answers_with_he": sum(bool(re.search(r"\bhe\b", a, re.I)) for _, a in examples),
            "answers_with_she": sum(bool(re.search(r"\bshe\b", a, re.I)) for _, a in examples)}
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
