"""CommonGen dev: a grid of decoding settings on the choice half, one setting after another.

Each argument is ``MODE:BEAMS:SCORE_SLOTS`` and optional ``:``-separated extras (``first``:
``plain_first``; ``neurologic``: that search; ``p50``, ``t2``, ``lp0.2``, ``la5``, ``lw0.25``: its prune
factor, sat tolerance, length penalty, lookahead steps and weight; ``_extras``), e.g. ``dpc:8:0:neurologic:lp0.2``; every
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

from dpc_errors import DpcError  # noqa: E402
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


def _extras(extra: list[str]) -> dict[str, object]:
    """The ``DecodeSettings`` fields of a setting's tail: ``first`` (plain first),
    ``neurologic`` or ``dba`` (the search), ``pN`` (prune factor), ``tN`` (sat tolerance),
    ``lpX`` (length penalty), ``laN`` (lookahead steps), ``lwX`` (lookahead weight)."""
    fields: dict[str, object] = {"plain_first": False}
    for item in extra:
        if item == "first":
            fields["plain_first"] = True
        elif item in ("dba", "neurologic"):
            fields["search"] = item
        elif item.startswith("lp"):
            fields["length_penalty"] = float(item[2:])
        elif item.startswith("la") and item[2:].isdigit():
            fields["lookahead"] = int(item[2:])
        elif item.startswith("lw"):
            fields["lookahead_weight"] = float(item[2:])
        elif item[:1] in ("p", "t") and item[1:].isdigit():
            fields["prune_factor" if item[0] == "p" else "sat_tolerance"] = int(item[1:])
        else:
            raise ValueError(f"{item!r} is not first, dba, neurologic, pN, tN, lpX, laN or lwX")
    return fields


def setting_from_spec(spec: str, **fields: object) -> DecodeSettings:
    """``MODE:BEAMS:SCORE_SLOTS[:extra...]`` (see the module notes) as ``DecodeSettings``,
    with ``fields`` (``early_stopping=...``) besides."""
    mode, beams, slots, *extra = spec.split(":")
    return DecodeSettings(mode=mode, num_beams=int(beams), score_slots=int(slots),
                          **{**fields, **_extras(extra)})  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("settings", nargs="+",
                    help="MODE:BEAMS:SCORE_SLOTS[:first][:neurologic][:pN][:tN][:lpX][:laN][:lwX], "
                    "e.g. dpc:8:5")
    ap.add_argument("--model", default=str(BUNDLED_SENTENCE_LM))
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--limit", type=int, default=160)
    ap.add_argument("--early-stopping", action=argparse.BooleanOptionalAction, default=False)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None, help="JSON lines file the results are appended to")
    ap.add_argument("--texts", default=None,
                    help="folder: each setting's sentences go to SETTING.jsonl in it, a set a line")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    sets = distinct(read_concept_sets(DATA / "commongen.dev.jsonl"))[args.start:]
    sets = sets[:args.limit]
    references = read_references(DATA / "commongen.dev.cs_str.txt", DATA / "commongen.dev.tgt.txt")
    refs = [references[reference_key(s)] for s in sets]
    generator = SentenceGenerator.load(args.model)
    for setting in args.settings:
        try:
            settings = setting_from_spec(setting, early_stopping=args.early_stopping)
        except (ValueError, DpcError) as err:
            ap.error(f"{setting!r}: {err}")
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
        if args.texts:
            Path(args.texts).mkdir(parents=True, exist_ok=True)
            with open(Path(args.texts) / f"{setting.replace(':', '_')}.jsonl", "w",
                      encoding="utf-8") as handle:
                for text, concepts in zip(texts, sets, strict=True):
                    handle.write(json.dumps({"concepts": [c.lemma for c in concepts],
                                             "text": text}) + "\n")
        if args.out:
            with open(args.out, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
