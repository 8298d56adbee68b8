"""Issue 39, item 4: the bundled generator (SmolLM2-135M + e-CARE LoRA) against un-tuned bases
(SmolLM2-135M, Gemma 3 270M): quality as a judge, CPU seconds per input, LoRA training cost.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/guided/generator_compare.py judge --model M
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/guided/generator_compare.py speed --model M \\
        [--plain-inputs 20] [--pipeline-inputs 5]
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/guided/generator_compare.py lora --base B \\
        [--max-minutes 3]
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/guided/generator_compare.py step-cost --base B \\
        [--steps 5]
    .venv/bin/python benchmarks/guided/generator_compare.py nbest --model M --frontier FILE

Each part adds its record under ``generators[M][part]`` of ``--json`` (default
``benchmarks/guided/generator_compare.json``), leaving the other records as they are. One torch
thread throughout (``torch.set_num_threads(1)``).

``judge`` (``--bos``: every prompt after the tokenizer's BOS, as decoding adds it; matters for
Gemma, whose tokenizer adds ``<bos>``; SmolLM2's adds nothing. Since
``train.tokenizer.prompt_start_ids`` the scorers put it there themselves, so every run is a
``--bos`` run and the flag only names the record; the rows without ``<bos>`` were measured at
commit faae1ad): COPA-dev pairwise accuracy, per half (items 1-250, 251-500), of the generator's
``log P(alt | premise prompt)`` and its PMI (minus ``log P(alt | empty prompt)``), sums and
per-token means, exactly as ``judge_copa.py`` computes them (its :func:`generator_scores`), the
model asked in its own input format (a pretrained base: worked examples first; the e-CARE model:
zero-shot).

``speed``: process CPU seconds (and wall seconds) per input, warm (one untimed input first), of
(a) the plain 10-beam N-best the pipeline's plain row and ``frontier.py --n 0`` decode
(:meth:`GuidedGenerator.unconstrained` with ``GuidedOptions().beam_options(10)``: 10 beams, 10
returned, 16 new tokens, no repeated 3-grams) on the first ``--plain-inputs`` premises of items
251-500, and (b) the default guided pipeline (``GuidedGenerator.load(model)``, the bundled
verifier, default options; its cache cleared before each input) on the first
``--pipeline-inputs`` of them. The warm-up input is item 271 (outside both sets).

``step-cost`` (``--base B --steps 5``): the same recipe's training step through the Python API,
timed by process CPU time (see :func:`step_cost`), as the machine's other jobs inflate the
trainer's wall seconds.

``nbest`` (``--model M --frontier FILE``): COPA by generation of the plain 10-beam N-best,
read from ``frontier.py --model M --n 0 --num-beams 10 --start 0 --limit 250 --out FILE``.

``lora``: runs the real trainer, ``dpc train lm-generator`` with the bundled model's recipe
(``--drop-new-names --swap-genders --epochs 0.5``, e-CARE explanation-generation train) and
``--base B``, stopped by ``--max-minutes``, into ``runs/generator_compare/lora_B`` (removed first,
so it never resumes), and reads its summary: seconds per step (training time only, the dev loss
passes excluded) and the projected minutes of the recipe's total steps.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "guided"))

COPA = ROOT.parent / "shared/data/copa/copa-dev.xml"
ECARE = ROOT.parent / "shared/data/ecare/explanation_generation_train.jsonl"
HALVES = {"1-250": slice(0, 250), "251-500": slice(250, 500)}


def merge(path: Path, model: str, part: str, record: dict) -> None:
    """Add ``record`` as ``generators[model][part]`` of the JSON file at ``path``."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.setdefault("generators", {}).setdefault(model, {})[part] = record
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({model: {part: record}}, indent=1))


def judge(args: argparse.Namespace) -> dict:
    import numpy as np
    from judge_copa import generator_scores

    from guided_generation import GuidedGenerator
    from tasks.copa.dataset import read_copa
    from train.tokenizer import prompt_start_ids

    items = read_copa(args.copa)
    started, cpu = time.perf_counter(), time.process_time()
    g = GuidedGenerator.load(args.model, verifier=None)
    if args.format is not None:
        from train.prompts import NAMED_FORMATS

        g.input_format = NAMED_FORMATS[args.format]
    # the scorers put the tokenizer's BOS first themselves (train.tokenizer.prompt_start_ids)
    prefix = g.tokenizer.bos_token if args.bos and prompt_start_ids(g.tokenizer) else ""
    lp, prior, n = generator_scores(g, items)
    first = np.array([i.answer == 1 for i in items])

    def accuracy(score, half):
        return round(float(np.mean((score[0::2] > score[1::2])[half] == first[half])), 3)

    scores = {"log P(y|x)": lp, "log P(y|x) per token": lp / n,
              "PMI": lp - prior, "PMI per token": (lp - prior) / n}
    from train.prompts import NAMED_FORMATS

    named = [k for k, v in NAMED_FORMATS.items() if v == g.input_format]
    return {"bos_prefix": prefix, "input_format": named[0] if named else repr(g.input_format)[:80],
            "pairwise_accuracy": {k: {h: accuracy(s, sl) for h, sl in HALVES.items()}
                                  for k, s in scores.items()},
            "wall_seconds": round(time.perf_counter() - started, 1),
            "cpu_seconds": round(time.process_time() - cpu, 1)}


def speed(args: argparse.Namespace) -> dict:
    from guided_generation import GuidedGenerator, GuidedOptions
    from tasks.copa.dataset import as_clause, read_copa

    items = read_copa(args.copa)
    timed = items[250: 250 + max(args.plain_inputs, args.pipeline_inputs)]
    warm = items[270]
    g = GuidedGenerator.load(args.model)
    options = GuidedOptions()
    record: dict = {"threads": 1, "items": "COPA-dev 251-", "warm_up_item": 271}

    def plain(item):
        return g.unconstrained(g.prompt(as_clause(item.premise), item.asks_for), options.plain_m,
                               options)

    def pipeline(item):
        g.clear_cache()
        return g.generate(as_clause(item.premise), item.asks_for, options)

    for name, run, count in (("plain_10_beam", plain, args.plain_inputs),
                             ("pipeline", pipeline, args.pipeline_inputs)):
        if count == 0:
            continue
        run(warm)  # warm-up
        cpus, walls, example = [], [], None
        for item in timed[:count]:
            c, w = time.process_time(), time.perf_counter()
            out = run(item)
            cpus.append(time.process_time() - c)
            walls.append(time.perf_counter() - w)
            if example is None:
                texts = [o.text for o in (out.outputs if hasattr(out, "outputs") else out)]
                example = {"input": as_clause(item.premise), "direction": item.asks_for,
                           "top3": texts[:3]}
        record[name] = {"inputs": count,
                        "cpu_seconds_per_input_mean": round(statistics.fmean(cpus), 3),
                        "cpu_seconds_per_input_median": round(statistics.median(cpus), 3),
                        "wall_seconds_per_input_mean": round(statistics.fmean(walls), 3),
                        "example": example}
        print(name, record[name], file=sys.stderr, flush=True)
    return record


def lora(args: argparse.Namespace) -> dict:
    out = ROOT / "runs" / "generator_compare" / f"lora_{args.base}"
    shutil.rmtree(out, ignore_errors=True)
    command = [str(ROOT / ".venv/bin/dpc"), "train", "lm-generator", "--pairs", str(ECARE),
               "--out", str(out), "--drop-new-names", "--swap-genders", "--epochs", "0.5",
               "--base", args.base, "--max-minutes", str(args.max_minutes), "--no-progress"]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"trainer failed ({done.returncode}):\n{done.stderr[-3000:]}")
    text = done.stdout
    summary = json.loads(text[text.index("{"): text.rindex("}") + 1])
    per_step = summary["train_minutes"] * 60 / max(1, summary["steps"])
    return {"command": " ".join(["dpc", *command[1:]]).replace(str(ROOT) + "/", ""),
            "summary": summary, "seconds_per_step": round(per_step, 2),
            "projected_minutes_total_steps": round(per_step * summary["total_steps"] / 60, 1),
            "process_wall_seconds": round(wall, 1)}


def step_cost(args: argparse.Namespace) -> dict:
    """CPU seconds per LoRA training step of the recipe on ``--base``, through the Python API:
    the trainer's own model (``train.lora.load_base`` + ``attach_lora``, r 16, alpha 32), its
    examples (e-CARE, names dropped, genders swapped), batch 16, AdamW lr 3e-4, and its
    tokenisation and collation (as ``train.lora.train_lora``), one untimed step first, then
    ``--steps`` steps timed by process CPU time (robust to other jobs on the machine; the
    trainer's own seconds per step are wall time)."""
    import math
    import random

    import torch

    from causal_mining.curated_pairs import read_ecare
    from train.cause_effect_lm import (
        LmGeneratorOptions,
        cause_effect_examples,
        proper_nouns,
        split_pairs,
    )
    from train.lora import attach_lora, load_base

    options = LmGeneratorOptions(base=args.base, epochs=0.5, drop_new_names=True, swap_genders=True)
    pairs = list(read_ecare(str(ECARE)))
    train, _, _ = split_pairs(pairs)
    proper = proper_nouns(s for pair in pairs for s in pair)
    examples = cause_effect_examples(train, proper, drop_new_names=True, swap_genders=True)
    total = math.ceil(math.ceil(len(examples) / options.batch_size) * options.epochs)
    torch.manual_seed(0)
    model, tokenizer = load_base(args.base)
    model = attach_lora(model, options.r, options.alpha)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=options.lr, weight_decay=0.0)
    newline = tokenizer(".", add_special_tokens=False).input_ids
    pad = tokenizer.pad_token_id

    def encode(pair):
        p = tokenizer(pair[0], add_special_tokens=False).input_ids
        t = tokenizer(" " + " ".join(pair[1].split()), add_special_tokens=False).input_ids + newline
        return p + t, [-100] * len(p) + t

    def collate(batch):
        encoded = [encode(x) for x in batch]
        width = max(len(ids) for ids, _ in encoded)
        return {"input_ids": torch.tensor([x + [pad] * (width - len(x)) for x, _ in encoded]),
                "labels": torch.tensor([y + [-100] * (width - len(y)) for _, y in encoded]),
                "attention_mask": torch.tensor([[1] * len(x) + [0] * (width - len(x))
                                                for x, _ in encoded])}

    order = random.Random(0).sample(range(len(examples)), options.batch_size * (args.steps + 1))
    model.train()
    cpus, walls, tokens = [], [], 0
    for step in range(args.steps + 1):
        batch = collate([examples[i] for i in order[step * 16:(step + 1) * 16]])
        c, w = time.process_time(), time.perf_counter()
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step:  # the first step is the warm-up
            cpus.append(time.process_time() - c)
            walls.append(time.perf_counter() - w)
            tokens += int(batch["attention_mask"].sum())
    per_step = statistics.fmean(cpus)
    return {"examples": len(examples), "total_steps": total, "steps_timed": args.steps,
            "cpu_seconds_per_step": round(per_step, 2),
            "wall_seconds_per_step": round(statistics.fmean(walls), 2),
            "tokens_per_step": round(tokens / args.steps, 1),
            "projected_minutes_total_steps_cpu": round(per_step * total / 60, 1)}


def nbest(args: argparse.Namespace) -> dict:
    """COPA by generation of the plain 10-beam N-best, read from a ``frontier.py --n 0`` record
    (``--frontier FILE``): its command, items, score and CPU seconds per item."""
    record = json.loads(Path(args.frontier).read_text(encoding="utf-8"))
    return {"frontier_command": record["command"], "frontier_file": args.frontier,
            "start": record["start"], "items": record["items"], "format": record["format"],
            "scores": record["scores"], "cpu_seconds_per_item": record["cpu_seconds_per_item"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=("judge", "speed", "lora", "step-cost", "nbest"))
    ap.add_argument("--model", default=None,
                    help="generator: smollm2-ecare (the bundled default), smollm2-135m, "
                    "gemma3-270m, or a model folder")
    ap.add_argument("--base", default="gemma3-270m", help="lora: the base to adapt")
    ap.add_argument("--bos", action="store_true",
                    help="judge: put the tokenizer's BOS before every prompt, as the decoder's "
                    "tokenisation does (Gemma); the record goes under 'judge_bos'")
    ap.add_argument("--format", default=None, choices=("causal", "causal-zero-shot"),
                    help="judge: ask the model in this input format (default: its own); the "
                    "record goes under 'judge[_bos]_FORMAT'")
    ap.add_argument("--plain-inputs", type=int, default=20)
    ap.add_argument("--pipeline-inputs", type=int, default=5)
    ap.add_argument("--max-minutes", type=float, default=3.0)
    ap.add_argument("--frontier", default=None, help="nbest: a frontier.py --n 0 record")
    ap.add_argument("--steps", type=int, default=5, help="step-cost: steps timed")
    ap.add_argument("--copa", default=str(COPA))
    ap.add_argument("--json", default=str(ROOT / "benchmarks/guided/generator_compare.json"))
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    if args.part in ("lora", "step-cost"):
        name, record = args.base, (lora if args.part == "lora" else step_cost)(args)
    else:
        if args.model is None:
            raise SystemExit("--model is required for judge and speed")
        name, record = args.model, {"judge": judge, "speed": speed, "nbest": nbest}[args.part](args)
    record = {"command": " ".join(["benchmarks/guided/generator_compare.py", *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **record}
    part = args.part
    if args.part == "judge":
        part += "_bos" * args.bos + ("_" + args.format if args.format else "")
    merge(Path(args.json), name, part, record)


if __name__ == "__main__":
    main()
