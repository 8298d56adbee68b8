"""Closing the loop (issue 17, item 4): do generated variants help the classifier?

Train premises the bundled variant generator never saw (it trained on a seeded sample of 1,300;
:func:`generator_premises` redraws it) are split into a base part A and a held-back part B. For
B only the implied entailment is taken from the gold data; its explicit entailment, neutral and
contradiction are written by the generator (``dpc inli variants``' decoding, ``--mode``, through
``measure_variants.py``'s cached generation). The
classifier is then fine-tuned, per seed, on

- ``base``: A (its four gold hypotheses a premise),
- ``generated``: A + B with the generated variants (and B's gold implied entailment),
- ``gold``: A + B with its gold variants (what human-written ones would give: the ceiling),
- ``implied``: A + B's gold implied entailments alone (the control: how much of a gain over
  ``base`` the 300 extra premises and their implied entailments give without any variant),
- ``verified``: A + B with variants chosen by ``--rerank classifier`` (the default of ``dpc
  inli variants``): B's candidates are the two searches' outputs (``pool``), and the judge that
  chooses among them is *the same seed's base classifier* (trained on A, so it has not read
  B's gold variants; the bundled classifier has: it trained on all of train). This is
  self-training: the base run of a seed must exist before its ``verified`` run.
- ``verified-bundled``: the same with the bundled classifier as the judge: it has read B's gold
  variants (and is far stronger than a base run), so this is a leaky upper bound, not a result.

with the same options and no model selection (fixed epochs, the final weights), and reported on
all of ``val.csv``: overall and implied-entailment accuracy, mean ± std over seeds. A classifier
trained on a subset of train is weaker than the bundled one (all of train): the question is the
difference between the conditions, not the level.

Every stage is cached in RUN and resumable (rerun the same command):

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/inli/close_loop.py generate --run runs/inli/loop
    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/inli/close_loop.py train --run runs/inli/loop
    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/inli/close_loop.py pool --run runs/inli/loop
    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/inli/close_loop.py train --run runs/inli/loop \
        --conditions base verified
    .venv/bin/python benchmarks/inli/close_loop.py report --run runs/inli/loop
    .venv/bin/python benchmarks/inli/close_loop.py agree --run runs/inli/loop [--judge NAME=DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure_variants  # noqa: E402
import verified_variants  # noqa: E402

from tasks.datasets import InliRow, read_inli  # noqa: E402
from tasks.inli.hypotheses import (  # noqa: E402
    DEFAULT_GENERATOR,
    GENERATED_LABELS,
    RUN_FILE,
    Candidate,
    ChoiceRule,
    choose_variant,
    training_premises,
)

DATA = ROOT.parent / "shared" / "data" / "inli"
CONDITIONS = ("base", "generated", "gold", "implied", "verified", "verified-bundled")
#: The run folders whose mode is not ``--mode`` (their variants are chosen by a classifier).
VERIFIED_MODE = "classifier-rerank"


def generator_premises(rows: list[InliRow], generator: Path) -> set[str]:
    """The premises the generator in ``generator`` was trained on (its seeded sample)."""
    run = json.loads((generator / RUN_FILE).read_text())
    sample = training_premises(rows, run["max_premises"], run["seed"])
    if len(sample) * len(run["labels"]) != run["examples"]:
        sys.exit(f"redrawn sample ({len(sample)} premises) does not match {generator}'s run")
    return {r.premise for r in sample}


def split(args: argparse.Namespace) -> tuple[list[InliRow], list[InliRow]]:
    """``(A, B)``: disjoint premise texts, none of them seen by the generator."""
    rows = read_inli(DATA / "train.csv").rows
    seen = generator_premises(rows, Path(args.generator))
    premises = sorted({r.premise for r in rows} - seen)
    random.Random(args.seed).shuffle(premises)
    # B from the end of the shuffled list, A from its start: B does not depend on --a
    if args.a + args.b > len(premises):
        sys.exit(f"--a {args.a} + --b {args.b} is more than the {len(premises)} premises left")
    a, b = set(premises[:args.a]), set(premises[len(premises) - args.b:])
    return [r for r in rows if r.premise in a], [r for r in rows if r.premise in b]


def generate(args: argparse.Namespace) -> None:
    """B's variants in ``RUN/variants_<mode>.jsonl`` (cached, resumable)."""
    Path(args.run).mkdir(parents=True, exist_ok=True)
    measure_variants.generate(args, split(args)[1], [args.mode])


def pool(args: argparse.Namespace) -> None:
    """B's candidates for ``--rerank classifier`` in ``RUN/pool.jsonl`` (cached, resumable)."""
    verified_variants.write_pool(split(args)[1], Path(args.run) / "pool.jsonl", args.generator,
                                 args.num_beams)


def condition_mode(args: argparse.Namespace, condition: str) -> str:
    """How a condition's variants were chosen (its run folder and val.json say so)."""
    return VERIFIED_MODE if condition.startswith("verified") else args.mode


def run_folder(args: argparse.Namespace, condition: str, seed: int) -> Path:
    return Path(args.run) / f"{condition}_{condition_mode(args, condition)}_seed{seed}"


def verified(args: argparse.Namespace, seed: int, bundled: bool = False
             ) -> dict[str, dict[str, str]]:
    """B's variants chosen by :class:`ChoiceRule` (the defaults) with the probabilities of
    ``seed``'s base classifier (``bundled``: of the bundled classifier), cached in
    ``RUN/variants_verified_seed<seed>.jsonl`` (``RUN/variants_verified-bundled.jsonl``)."""
    from tasks.datasets import INLI_LABELS
    from tasks.inli.classifier import MODEL_DIR, InliClassifier
    from train.cross_encoder import CrossEncoder

    path = Path(args.run) / ("variants_verified-bundled.jsonl" if bundled
                             else f"variants_verified_seed{seed}.jsonl")
    b = split(args)[1]
    if path.exists():
        return {rec["index"]: rec for rec in map(json.loads, path.read_text().splitlines())}
    pools = {rec["index"]: rec for rec in map(json.loads,
                                              (Path(args.run) / "pool.jsonl").read_text()
                                              .splitlines())} \
        if (Path(args.run) / "pool.jsonl").exists() else {}
    missing = [r.index for r in b if r.index not in pools]
    if missing:
        sys.exit(f"{len(missing)} held-back premises have no candidates yet: run `pool`")
    judge = MODEL_DIR if bundled else run_folder(args, "base", seed)
    if not bundled and not (judge / "val.json").exists():
        sys.exit(f"the judge {judge} is not trained yet: train `base` for seed {seed} first")
    rule = ChoiceRule()
    items = [(r, label, [Candidate(**c) for _, c in
                         verified_variants.distinct(pools[r.index][label], rule.sources)])
             for r in b for label in GENERATED_LABELS]
    flat = [(r, c) for r, _, cands in items for c in cands]
    # a close_loop run folder is a bare cross-encoder (train() wraps it the same way)
    classifier = InliClassifier(CrossEncoder.load(judge), False)
    probs = classifier.probabilities([r.premise for r, _ in flat], [c.text for _, c in flat],
                                     progress=True)
    chosen: dict[str, dict[str, str]] = {}
    at = 0
    for r, label, cands in items:
        mine = [float(p[INLI_LABELS.index(label)]) for p in probs[at:at + len(cands)]]
        at += len(cands)
        j = choose_variant(label, r.implied_entailment, [c.text for c in cands], mine, rule)
        chosen.setdefault(r.index, {"index": r.index})[label] = cands[j].text
    path.write_text("".join(json.dumps(rec) + "\n" for rec in chosen.values()))
    return chosen


def training_pairs(args: argparse.Namespace, condition: str, seed: int = 0
                   ) -> tuple[int, list[tuple[str, str, int]]]:
    """``(premises, pairs)`` a ``condition`` trains on; a variant decoded to nothing is left
    out (not trained on as an empty hypothesis)."""
    from tasks.datasets import INLI_LABELS
    from tasks.inli.classifier import examples

    if condition == "implied":
        a, b = split(args)
        implied = INLI_LABELS.index("implied_entailment")
        extra = [(r.premise, r.implied_entailment, implied) for r in b]
        return len(a) + len(b), [*zip(*examples(a)), *extra]
    rows = training_rows(args, condition, seed)
    return len(rows), [x for x in zip(*examples(rows)) if x[1].strip()]


def training_rows(args: argparse.Namespace, condition: str, seed: int = 0) -> list[InliRow]:
    a, b = split(args)
    if condition == "base":
        return a
    if condition == "gold":
        return a + b
    if condition.startswith("verified"):
        made = verified(args, seed, bundled=condition == "verified-bundled")
    else:
        path = Path(args.run) / f"variants_{args.mode}.jsonl"
        made = {rec["index"]: rec for rec in map(json.loads, path.read_text().splitlines())}
    missing = [r.index for r in b if r.index not in made]
    if missing:
        sys.exit(f"{len(missing)} held-back premises have no variants yet: run `generate`")
    return a + [dataclasses.replace(r, **{lab: made[r.index][lab] for lab in GENERATED_LABELS})
                for r in b]


def train(args: argparse.Namespace) -> None:
    import torch

    from tasks.datasets import INLI_LABELS
    from tasks.inli.classifier import InliClassifier, evaluate
    from train.cross_encoder import CrossEncoderOptions, train_pair_classifier

    val = read_inli(DATA / "val.csv").rows
    for seed in args.seeds:
        for condition in args.conditions:
            out = run_folder(args, condition, seed)
            result = out / "val.json"
            if result.exists():
                continue
            n_premises, pairs = training_pairs(args, condition, seed)
            torch.manual_seed(seed)
            options = CrossEncoderOptions(epochs=args.epochs, batch_size=32, lr=5e-5, seed=seed)
            premises, hypotheses, labels = map(list, zip(*pairs))
            model = train_pair_classifier(premises, hypotheses, labels, len(INLI_LABELS), options,
                                          out=out, label_names=list(INLI_LABELS))
            rep = evaluate(InliClassifier(model, False), val)
            result.write_text(json.dumps({
                "condition": condition, "seed": seed, "mode": condition_mode(args, condition),
                "pairs": len(pairs),
                "premises": n_premises, "overall": rep.overall, "implied": rep.implied,
                "per_label": rep.per_label,
                "train_minutes": getattr(model, "training_summary", {}).get("train_minutes")},
                indent=1))
            print(f"{condition} seed {seed}: overall {rep.overall:.3f} implied {rep.implied:.3f}",
                  flush=True)


def report(args: argparse.Namespace) -> None:
    results = [json.loads(p.read_text()) for p in sorted(Path(args.run).glob("*/val.json"))]
    print("| condition | training premises (pairs) | seeds | val overall | val implied |")
    print("|---|---|---|---|---|")
    for condition in CONDITIONS:
        mine = [r for r in results if r["condition"] == condition
                and r["mode"] in (args.mode, VERIFIED_MODE)]
        if not mine:
            continue

        def ms(key: str, mine: list = mine) -> str:
            xs = [r[key] for r in mine]
            sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
            return f"{statistics.mean(xs):.3f} ± {sd:.3f}"

        print(f"| {condition} | {mine[0]['premises']} ({mine[0]['pairs']}) | "
              f"{', '.join(str(r['seed']) for r in mine)} | {ms('overall')} | {ms('implied')} |")
    print()
    by = {(r["condition"], r["seed"]): r for r in results
          if r["mode"] in (args.mode, VERIFIED_MODE)}
    for condition in CONDITIONS:
        mine = [r for (c, _), r in sorted(by.items()) if c == condition]
        if not mine:
            continue
        labels = {lab: round(statistics.mean(r["per_label"][lab] for r in mine), 3)
                  for lab in mine[0]["per_label"]}
        gain = [round(r["overall"] - by[("base", r["seed"])]["overall"], 3) for r in mine
                if ("base", r["seed"]) in by]
        print(f"{condition}: per-label means {labels}; overall minus the same seed's base {gain}")


def agree(args: argparse.Namespace) -> None:
    """How often the bundled classifier (and each ``--judge``) agrees with the intended label
    of each variants file of B in RUN, per label: what each judge chose, read by one reader."""
    from tasks.datasets import INLI_LABELS
    from tasks.inli.classifier import MODEL_DIR, InliClassifier
    from train.cross_encoder import CrossEncoder

    b = {r.index: r for r in split(args)[1]}
    files = {p.stem[len("variants_"):]: p for p in sorted(Path(args.run).glob("variants_*.jsonl"))}
    readers = {"bundled": MODEL_DIR, **{k: Path(v) for k, v in
                                        (j.split("=", 1) for j in args.judge)}}
    print("| variants | reader | " + " | ".join(GENERATED_LABELS) + " |")
    print("|---|---|" + "---|" * len(GENERATED_LABELS))
    sets = {"gold": {i: {lab: r.hypothesis(lab) for lab in GENERATED_LABELS}
                     for i, r in b.items()},
            **{k: {rec["index"]: rec for rec in map(json.loads, p.read_text().splitlines())}
               for k, p in files.items()}}
    for name, folder in readers.items():
        clf = InliClassifier(CrossEncoder.load(folder), False)
        for key, made in sets.items():
            pairs = [(b[i].premise, made[i][lab], lab) for i in b for lab in GENERATED_LABELS]
            probs = clf.probabilities([p for p, _, _ in pairs], [h for _, h, _ in pairs])
            hits = {lab: [] for lab in GENERATED_LABELS}
            for (_, _, lab), row in zip(pairs, probs):
                hits[lab].append(INLI_LABELS[int(row.argmax())] == lab)
            print(f"| {key} | {name} | " + " | ".join(
                f"{statistics.mean(hits[lab]):.2f}" for lab in GENERATED_LABELS) + " |",
                flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("stage", choices=("generate", "pool", "train", "report", "agree"))
    p.add_argument("--run", required=True)
    p.add_argument("--generator", default=str(DEFAULT_GENERATOR),
                   help="a generator folder with its generator_run.json (default: the bundled "
                        "generator)")
    p.add_argument("--mode", choices=measure_variants.MODES, default="constrained-rerank")
    p.add_argument("--a", type=int, default=600, help="base premises")
    p.add_argument("--b", type=int, default=300, help="held-back premises")
    p.add_argument("--seed", type=int, default=0, help="seed of the A/B split")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(CONDITIONS))
    p.add_argument("--epochs", type=float, default=2.0)
    p.add_argument("--chunk", type=int, default=8)
    p.add_argument("--num-beams", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=40)
    p.add_argument("--max-minutes", type=float, default=float("inf"),
                   help="stop generating new chunks after this many minutes")
    p.add_argument("--judge", action="append", default=[], metavar="NAME=DIR",
                   help="agree: another classifier that reads the variants")
    args = p.parse_args()
    stages = {"generate": generate, "pool": pool, "train": train, "report": report,
              "agree": agree}
    stages[args.stage](args)


if __name__ == "__main__":
    main()
