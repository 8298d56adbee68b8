"""CommonGen dev: the three decoding modes side by side, and transformers 4.56.2's constraints.

One generator (``dpc commongen train``'s folder), every distinct dev concept set (tagged, from
``commongen.dev.jsonl``), 5 beams, 32 new tokens, batches of 16 sets. The modes are decoded
batch by batch in turn (plain, conjunctive, dpc, then the next batch), so a slow minute of the
machine falls on all three alike; each mode's seconds are the sum over its batches. Every mode's
sentences are scored with :func:`tasks.commongen.evaluation.evaluate` against all references.

``--hf456 N``: the first N sets also go through transformers 4.56.2's ``DisjunctiveConstraint``
beam search (``benchmarks/hf456_disjunctive_runner.py`` in the baseline venv,
``benchmarks/hf_baseline_env.sh``) on the same merged weights: each concept one
``DisjunctiveConstraint`` of the token forms dpc's ``dpc`` mode uses (word-initial, lower and
capitalised), minus any form that has another form of its set as a prefix (4.56 refuses such a
set, and the shorter form is met whenever the longer is). 4.56 takes one constraint list per
``generate`` call, so it decodes set by set; dpc is timed on the same sets one by one too, with
what 4.56 has: n-grams may repeat and the top beam is the sentence (no candidates read).

    .venv/bin/python benchmarks/commongen/modes.py --model runs/commongen/smollm2 \\
        --hf456 100 --out benchmarks/commongen/modes.json --outputs runs/commongen/outputs
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dpc_decode import TokenizeOptions  # noqa: E402
from dpc_decode.constraints import tokenize_phrase  # noqa: E402
from tasks.commongen.dataset import (  # noqa: E402
    distinct,
    lemmas,
    read_concept_sets,
    read_references,
    reference_key,
)
from tasks.commongen.decoding import (  # noqa: E402
    MODES,
    DecodeSettings,
    SentenceGenerator,
    constraint_sets,
)
from tasks.commongen.evaluation import evaluate  # noqa: E402
from tasks.commongen.generator import prompt  # noqa: E402
from train.lora import LoraFiles, merged_lora_folder  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grid import setting_from_spec  # noqa: E402

DATA = ROOT.parent / "shared/data/commongen"


def hf456_forms(tokenizer: Any, concepts: Any) -> list[list[list[int]]]:
    """The token forms of each concept's ``dpc``-mode set, prefix-free (see the module doc)."""
    sets = []
    for forms in constraint_sets(concepts, "dpc"):
        ids = []
        for form in forms:
            for tokens in tokenize_phrase(tokenizer, form, TokenizeOptions(capitalized=True)):
                if tokens not in ids:
                    ids.append(tokens)
        sets.append([a for a in ids
                     if not any(b != a and a[:len(b)] == b for b in ids)])
    return sets


def run_hf456(model_dir: Path, generator: SentenceGenerator, sets: list[Any],
              settings: DecodeSettings) -> dict[str, Any]:
    venv = subprocess.run(["bash", str(ROOT / "benchmarks/hf_baseline_env.sh")], check=True,
                          capture_output=True, text=True).stdout.strip().splitlines()[-1]
    tok = generator.tokenizer
    job = {"name": "commongen", "num_beams": settings.num_beams,
           "max_new_tokens": settings.max_new_tokens, "threads": torch.get_num_threads(),
           "warmup": 0, "repeats": 1,
           "input_ids": [tok(prompt(s), add_special_tokens=False).input_ids for s in sets],
           "constraints": [hf456_forms(tok, s) for s in sets]}
    lengths = {len(r) for r in job["input_ids"]}
    if len(lengths) > 1:  # per-row mode runs each row unpadded; the mask only keeps shapes
        width = max(lengths)
        job["attention_mask"] = [[1] * len(r) + [0] * (width - len(r)) for r in job["input_ids"]]
        job["input_ids"] = [r + [0] * (width - len(r)) for r in job["input_ids"]]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "job.json").write_text(json.dumps(job))
        subprocess.run([venv, str(ROOT / "benchmarks/hf456_disjunctive_runner.py"), "--model",
                        str(model_dir), "--job", f"{tmp}/job.json", "--out",
                        f"{tmp}/result.json"], check=True)
        result = json.loads((Path(tmp) / "result.json").read_text())
    texts = [tok.decode(seq[0], skip_special_tokens=True).split("\n")[0].strip()
             for seq in result.get("sequences") or []]
    return {"seconds": result.get("median_seconds"), "satisfied": result.get("satisfaction_rate"),
            "error": result.get("error"), "mode": result.get("mode"),
            "transformers": result.get("transformers_version"), "texts": texts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="dpc commongen train folder")
    ap.add_argument("--src", default=str(DATA / "commongen.dev.jsonl"))
    ap.add_argument("--refs", default=str(DATA / "commongen.dev.tgt.txt"))
    ap.add_argument("--sets", default=str(DATA / "commongen.dev.cs_str.txt"))
    ap.add_argument("--start", type=int, default=0, help="skip the first N distinct sets")
    ap.add_argument("--limit", type=int, default=None, help="then take N distinct sets")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="comma-separated, plain first; MODE+first: that mode with plain_first")
    defaults = DecodeSettings()
    ap.add_argument("--num-beams", type=int, default=defaults.num_beams)
    ap.add_argument("--plain-num-beams", type=int, default=None,
                    help="plain mode's beams (default: --num-beams)")
    ap.add_argument("--no-repeat-ngram-size", type=int, default=defaults.no_repeat_ngram_size)
    ap.add_argument("--candidates", type=int, default=defaults.candidates,
                    help="default: all beams")
    ap.add_argument("--score-slots", type=int, default=defaults.score_slots)
    ap.add_argument("--early-stopping", action=argparse.BooleanOptionalAction,
                    default=defaults.early_stopping)
    ap.add_argument("--max-new-tokens", type=int, default=defaults.max_new_tokens)
    ap.add_argument("--search", choices=("dba", "neurologic"), default=defaults.search,
                    help="the engine's search in --modes (default: DecodeSettings')")
    ap.add_argument("--length-penalty", type=float, default=defaults.length_penalty,
                    help="--modes' length penalty, plain included (default: DecodeSettings')")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--hf456", type=int, default=0, help="sets also decoded by 4.56.2")
    ap.add_argument("--setting", action="append", default=[], metavar="NAME=SPEC",
                    help="one more mode, named NAME, decoded with grid.py's setting SPEC "
                    "(MODE:BEAMS:SCORE_SLOTS[:extras], e.g. nl=dpc:8:5:neurologic:lp0.5); "
                    "repeatable")
    ap.add_argument("--out", required=True, help="JSON report")
    ap.add_argument("--outputs", default=None, help="folder for each mode's sentences")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    sets = distinct(read_concept_sets(args.src))[args.start:]
    sets = sets[:args.limit]
    modes = args.modes.split(",")
    if modes[0] != "plain" or any(m.removesuffix("+first") not in MODES[1:] for m in modes[1:]):
        ap.error(f"--modes {args.modes!r}: plain first, then any of {MODES[1:]} (+first)")
    references = read_references(args.sets, args.refs)
    refs = [references[reference_key(s)] for s in sets]
    generator = SentenceGenerator.load(args.model)
    common = {"no_repeat_ngram_size": args.no_repeat_ngram_size, "candidates": args.candidates,
              "max_new_tokens": args.max_new_tokens, "early_stopping": args.early_stopping}
    settings = {m: DecodeSettings(mode=m.removesuffix("+first"), num_beams=args.num_beams,
                                  score_slots=args.score_slots, plain_first=m.endswith("+first"),
                                  search=args.search, length_penalty=args.length_penalty,
                                  **common) for m in modes}
    for item in args.setting:
        name, _, spec = item.partition("=")
        if not spec or name in settings:
            ap.error(f"--setting {item!r}: NAME=SPEC with a NAME of its own")
        settings[name] = setting_from_spec(spec, **common)
        modes.append(name)
    if args.plain_num_beams:  # no score slot: they mean nothing without constraints
        settings["plain"] = DecodeSettings(mode="plain", num_beams=args.plain_num_beams,
                                           score_slots=0, length_penalty=args.length_penalty,
                                           **common)
    generator.generate(sets[:2], settings[modes[-1]])  # warm-up
    texts: dict[str, list[str]] = {m: [] for m in modes}
    seconds = dict.fromkeys(modes, 0.0)
    satisfied = dict.fromkeys(modes, 0)
    batch = settings["plain"].batch_size
    for at in range(0, len(sets), batch):
        for mode in modes:
            started = time.perf_counter()
            out = generator.generate(sets[at:at + batch], settings[mode])
            seconds[mode] += time.perf_counter() - started
            texts[mode] += [s.text for s in out]
            satisfied[mode] += sum(bool(s.satisfied) for s in out)
        print(json.dumps({"sets": min(at + batch, len(sets)),
                          **{m: round(s, 1) for m, s in seconds.items()}}), flush=True)
    report: dict[str, Any] = {
        "command": " ".join(sys.argv), "sets": len(sets), "threads": args.threads,
        "torch": torch.__version__, "model": os.fspath(args.model), "start": args.start,
        "settings": {m: {k: v for k, v in vars(settings[m]).items() if k != "mode"}
                     for m in modes},
        "modes": {}}
    for mode in modes:
        scores = evaluate(list(zip(texts[mode], sets, strict=True)), refs)
        report["modes"][mode] = {
            **scores.as_dict(), "seconds": round(seconds[mode], 2),
            "seconds_per_set": round(seconds[mode] / len(sets), 4),
            "relative_to_plain": round(seconds[mode] / seconds["plain"], 3),
            "engine_satisfied": None if mode == "plain" else satisfied[mode] / len(sets)}
        print(mode, json.dumps(report["modes"][mode]), flush=True)
    if args.outputs:
        folder = Path(args.outputs)
        folder.mkdir(parents=True, exist_ok=True)
        for mode in modes:
            with open(folder / f"{mode}.jsonl", "w", encoding="utf-8") as handle:
                for concepts, text in zip(sets, texts[mode], strict=True):
                    handle.write(json.dumps({"concepts": list(lemmas(concepts)), "text": text})
                                 + "\n")
    if args.hf456:
        few = sets[:args.hf456]
        # like for like: 4.56's beam search repeats n-grams and returns its top beam
        one = DecodeSettings(**{**vars(settings[modes[-1]]), "mode": "dpc", "batch_size": 1,
                                "no_repeat_ngram_size": 0, "candidates": 1, "score_slots": 0,
                                "early_stopping": False, "plain_first": False})
        started = time.perf_counter()
        mine = generator.generate(few, one)
        dpc_one = time.perf_counter() - started
        config = json.loads((Path(args.model) / "commongen_generator.json").read_text())
        merged = merged_lora_folder(config["base"], Path(args.model) / LoraFiles().adapter,
                                    config["r"], config["alpha"])
        theirs = run_hf456(merged, generator, few, one)
        hf_texts = theirs.pop("texts")
        theirs_scores = (evaluate(list(zip(hf_texts, few, strict=True)), refs[:len(few)])
                         if len(hf_texts) == len(few) else None)
        mine_scores = evaluate([(s.text, c) for s, c in zip(mine, few, strict=True)],
                               refs[:len(few)])
        report["hf456"] = {
            "sets": len(few), "dpc_seconds_one_by_one": round(dpc_one, 2),
            "dpc": mine_scores.as_dict(), **theirs,
            "hf456": theirs_scores.as_dict() if theirs_scores else None,
            "hf456_over_dpc": round(theirs["seconds"] / dpc_one, 2) if theirs["seconds"] else None}
        print("hf456", json.dumps(report["hf456"]), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
