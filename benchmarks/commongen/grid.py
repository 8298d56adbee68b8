"""CommonGen dev: a grid of decoding settings on the choice half, one setting after another.

Each argument is ``MODE:BEAMS:SCORE_SLOTS`` (``:first`` after it: ``plain_first``); every
setting decodes the same distinct dev sets (``--start``, ``--limit``) in batches of 16 with
:class:`tasks.commongen.decoding.DecodeSettings` (the other fields at their defaults,
``--early-stopping`` or not) and prints its seconds and scores as one JSON line (appended to
``--out`` too). Settings run one after another, not
interleaved batch by batch as ``modes.py`` does: compare seconds within one run on a quiet
machine only.

    .venv/bin/python benchmarks/commongen/grid.py --limit 160 --early-stopping \\
        plain:5:0 dpc:5:2 dpc:5:5 dpc:8:5 --out benchmarks/commongen/choice/grid.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.commongen.dataset import (  # noqa: E402
    distinct,
    read_concept_sets,
    read_references,
    reference_key,
)
from tasks.commongen.decoding import DecodeSettings, SentenceGenerator  # noqa: E402
from tasks.commongen.evaluation import evaluate  # noqa: E402
from tasks.commongen.generator import BUNDLED_SENTENCE_LM  # noqa: E402

DATA = ROOT.parent / "shared/data/commongen"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("settings", nargs="+", help="MODE:BEAMS:SCORE_SLOTS[:first], e.g. dpc:8:5")
    ap.add_argument("--model", default=str(BUNDLED_SENTENCE_LM))
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--limit", type=int, default=160)
    ap.add_argument("--early-stopping", action=argparse.BooleanOptionalAction, default=False)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None, help="JSON lines file the results are appended to")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    sets = distinct(read_concept_sets(DATA / "commongen.dev.jsonl"))[args.start:]
    sets = sets[:args.limit]
    references = read_references(DATA / "commongen.dev.cs_str.txt", DATA / "commongen.dev.tgt.txt")
    refs = [references[reference_key(s)] for s in sets]
    generator = SentenceGenerator.load(args.model)
    for setting in args.settings:
        mode, beams, slots, *first = setting.split(":")
        if first not in ([], ["first"]):
            ap.error(f"{setting!r}: MODE:BEAMS:SCORE_SLOTS or MODE:BEAMS:SCORE_SLOTS:first")
        settings = DecodeSettings(mode=mode, num_beams=int(beams), score_slots=int(slots),
                                  early_stopping=args.early_stopping, plain_first=bool(first))
        texts: list[str] = []
        started = time.perf_counter()
        for at in range(0, len(sets), settings.batch_size):
            texts += [s.text for s in generator.generate(sets[at:at + settings.batch_size],
                                                         settings)]
        seconds = time.perf_counter() - started
        scores = evaluate(list(zip(texts, sets, strict=True)), refs).as_dict()
        row = {"setting": setting, "early_stopping": args.early_stopping, "start": args.start,
               "sets": len(sets), "seconds": round(seconds, 1),
               **{k: round(scores[k], 4) for k in ("coverage", "pos", "bleu4", "cider",
                                                   "coverage_forms", "pos_forms")}}
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
