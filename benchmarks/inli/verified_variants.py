"""Variants chosen by the classifier (``--rerank classifier``): generate under constraints, then
verify. One rule is chosen on half A of some val premises and confirmed on half B, once.

Steps (each cached in ``RUN``; ``pool`` resumes where it stopped):

    python benchmarks/inli/verified_variants.py targets
        train.csv's gold edit distance to the implied entailment per label (EDIT_TARGETS)
    python benchmarks/inli/verified_variants.py pool --run RUN --rows 200:400
        per premise and label, the outputs of the constrained and of the unconstrained search
        (4 beams each, the bundled generator): RUN/pool.jsonl
    python benchmarks/inli/verified_variants.py score --run RUN --judge full3=DIR
        every candidate and the gold variants read by the bundled classifier (the one that
        ranks), by each judge, and by the generator's label posterior (the old rerank):
        RUN/scored.json
    python benchmarks/inli/verified_variants.py choose --run RUN --choose-on 200:300 \\
        --confirm-on 300:400 --select-by full3 --out RESULTS.json
        the grid of ChoiceRule on A (kept: the rules whose mean edit per label is within 2
        words of the gold's; best: the highest lowest-label agreement of --select-by), then
        that rule and the baselines on A and B

Agreement is measured by two classifiers: ``bundled`` (the one that ranks: circular, an upper
bound) and each ``--judge`` (a classifier the rule did not rank with).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.datasets import INLI_LABELS, read_inli
from tasks.inli.hypotheses import (
    DEFAULT_GENERATOR,
    GENERATED_LABELS,
    SOURCES,
    ChoiceRule,
    VariantGenerator,
    choose_variant,
    keep_constraints,
    label_log_posteriors,
    negated,
    satisfied,
    word_edit_distance,
)

DATA = ROOT.parent / "shared" / "data" / "inli"
GRID = [ChoiceRule(sources, penalty, band, keep)
        for sources in (("constrained",), ("unconstrained",), SOURCES)
        for penalty in (0.0, 0.05, 0.1, 0.2, 0.4, 1.0) for band in (0.0, 2.0)
        for keep in (True, False)]


def span(text: str) -> list[str]:
    """The val indices ``START:END`` (as the CSV's index column spells them)."""
    start, end = (int(x) for x in text.split(":"))
    return [str(i) for i in range(start, end)]


def targets(args: argparse.Namespace) -> None:
    rows = read_inli(DATA / "train.csv").rows
    for label in GENERATED_LABELS:
        edits = [word_edit_distance(r.hypothesis(label), r.implied_entailment) for r in rows]
        print(f"{label}: {len(edits)} premises, median {statistics.median(edits)}, quartiles "
              f"{statistics.quantiles(edits, n=4)}, mean {statistics.mean(edits):.2f}, negated "
              f"{statistics.mean(negated(r.hypothesis(label)) for r in rows):.3f}")


def pool(args: argparse.Namespace) -> None:
    wanted = set(span(args.rows))
    rows = [r for r in read_inli(DATA / "val.csv").rows if str(r.index) in wanted]
    write_pool(rows, Path(args.run) / "pool.jsonl", args.generator, args.num_beams)


def write_pool(rows: list, out: Path, generator: str | Path, num_beams: int = 4,
               labels: tuple[str, ...] = GENERATED_LABELS) -> None:
    """Per row of ``rows`` and label of ``labels``, the outputs of the constrained and of the
    unconstrained search (``num_beams`` each), one JSON line a premise appended to ``out``;
    the premises already there are skipped (resumable)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(line)["index"] for line in out.read_text().splitlines()} \
        if out.exists() else set()
    todo = [r for r in rows if r.index not in done]
    if not todo:
        print(f"cached: {len(rows)} premises in {out}")
        return
    gen = VariantGenerator.load(generator)
    for k in range(0, len(todo), 4):
        part = todo[k:k + 4]
        t = time.monotonic()
        flat = [(r, label) for r in part for label in labels]
        texts = ([r.premise for r, _ in flat], [r.implied_entailment for r, _ in flat],
                 [label for _, label in flat])
        pools = {source: gen.candidates(*texts, constrained=source == "constrained",
                                        num_beams=num_beams, max_new_tokens=40)
                 for source in SOURCES}
        with open(out, "a", encoding="utf-8") as handle:
            for i, r in enumerate(part):
                record = {"index": r.index,
                          "seconds": round((time.monotonic() - t) / len(part), 2)}
                for j, label in enumerate(labels):
                    record[label] = {s: [asdict(c) for c in pools[s][len(labels) * i + j]]
                                     for s in pools}
                handle.write(json.dumps(record) + "\n")
        print(f"{len(done) + k + len(part)}/{len(rows)} premises", flush=True)


def distinct(by_source: dict[str, list[dict]], sources: tuple[str, ...] = SOURCES
             ) -> list[tuple[str, dict]]:
    """``(source, candidate)`` of one pool record's label (:func:`write_pool`), in ``sources``'
    order, a text both searches wrote counted once (the first search's), as
    ``VariantGenerator`` pools them."""
    out: dict[str, tuple[str, dict]] = {}
    for source in sources:
        for c in by_source[source]:
            out.setdefault(c["text"], (source, c))
    return list(out.values())


def score(args: argparse.Namespace) -> None:
    from tasks.inli.classifier import MODEL_DIR, InliClassifier

    run = Path(args.run)
    rows = {r.index: r for r in read_inli(DATA / "val.csv").rows}
    items = []  # (index, label, source, text, extra)
    for line in (run / "pool.jsonl").read_text().splitlines():
        record = json.loads(line)
        r = rows[record["index"]]
        for label in GENERATED_LABELS:
            items.append((r.index, label, "gold", r.hypothesis(label), {}))
            for source, candidates in record[label].items():
                items += [(r.index, label, source, c["text"],
                           {"beam": j, "score": c["score"], "finished": c["finished"]})
                          for j, c in enumerate(candidates)]
    classifiers = {"bundled": str(MODEL_DIR),
                   **dict(judge.split("=", 1) for judge in args.judge)}
    probs = {}
    for name, folder in classifiers.items():
        probs[name] = InliClassifier.load(folder).probabilities(
            [rows[i].premise for i, *_ in items], [t for _, _, _, t, _ in items], progress=True)
    gen = VariantGenerator.load(args.generator)
    posterior = label_log_posteriors(gen, [(rows[i].premise, rows[i].implied_entailment, lab, t)
                                           for i, lab, _, t, _ in items])
    scored = []
    for k, (i, label, source, text, extra) in enumerate(items):
        implied = rows[i].implied_entailment
        li = INLI_LABELS.index(label)
        scored.append({"index": i, "label": label, "source": source, "text": text, **extra,
                       **{f"p_{n}": float(p[k, li]) for n, p in probs.items()},
                       **{f"pred_{n}": INLI_LABELS[int(p[k].argmax())] for n, p in probs.items()},
                       "gen_post": posterior[k], "edit": word_edit_distance(text, implied),
                       "keeps": satisfied(text, keep_constraints(implied).sets())})
    (run / "scored.json").write_text(json.dumps(scored))
    print(f"{len(scored)} texts scored by {', '.join(classifiers)} and the generator")


class Choices:
    """The scored candidates, and what each rule chooses from them."""

    def __init__(self, scored: list[dict], rows: dict) -> None:
        self.rows = rows
        self.by: dict[tuple[int, str], list[dict]] = defaultdict(list)
        for s in scored:
            self.by[(str(s["index"]), s["label"])].append(s)
        self.judges = sorted(k[5:] for k in scored[0] if k.startswith("pred_"))

    def pick(self, i: str, label: str, rule: ChoiceRule | str) -> dict:
        candidates = self.by[(i, label)]
        if rule == "beam":  # the constrained search's best output (--rerank none)
            return next(x for x in candidates if x["source"] == "constrained")
        if rule in ("label", "unconstrained-label"):  # --rerank label (generator posterior)
            source = "constrained" if rule == "label" else "unconstrained"
            mine = [x for x in candidates if x["source"] == source]
            return max(mine, key=lambda x: (x["gen_post"], -x["beam"]))
        assert isinstance(rule, ChoiceRule)
        mine, seen = [], set()
        for x in candidates:  # as VariantGenerator: a text both searches wrote counts once
            if x["source"] in rule.sources and x["text"] not in seen:
                seen.add(x["text"])
                mine.append(x)
        j = choose_variant(label, self.rows[i].implied_entailment, [x["text"] for x in mine],
                           [x["p_bundled"] for x in mine], rule)
        return mine[j]

    def measure(self, rule: ChoiceRule | str, premises: list[str]) -> dict:
        out = {}
        for label in GENERATED_LABELS:
            keys = [i for i in premises if (i, label) in self.by]
            chosen = [self.pick(i, label, rule) for i in keys]
            gold = [next(x for x in self.by[(i, label)] if x["source"] == "gold") for i in keys]
            mean = statistics.mean
            out[label] = {
                "n": len(chosen),
                **{f"agree_{j}": mean(x[f"pred_{j}"] == label for x in chosen)
                   for j in self.judges},
                **{f"gold_agree_{j}": mean(x[f"pred_{j}"] == label for x in gold)
                   for j in self.judges},
                "edit": mean(x["edit"] for x in chosen),
                "gold_edit": mean(x["edit"] for x in gold),
                "negated": mean(negated(x["text"]) for x in chosen),
                "gold_negated": mean(negated(x["text"]) for x in gold),
                "keeps": mean(x["keeps"] for x in chosen),
                "unconstrained": mean(x["source"] == "unconstrained" for x in chosen),
                "texts": {str(x["index"]): x["text"] for x in chosen}}
        return out


def within_edit(result: dict) -> bool:
    return all(abs(result[lab]["edit"] - result[lab]["gold_edit"]) <= 2
               for lab in GENERATED_LABELS)


def choose(args: argparse.Namespace) -> None:
    run = Path(args.run)
    rows = {str(r.index): r for r in read_inli(DATA / "val.csv").rows}
    choices = Choices(json.loads((run / "scored.json").read_text()), rows)
    a, b = span(args.choose_on), span(args.confirm_on)
    judge = args.select_by

    def key(result: dict) -> tuple:
        agree = [result[lab][f"agree_{judge}"] for lab in GENERATED_LABELS]
        return within_edit(result), min(agree), statistics.mean(agree)

    grid = sorted(((key(res), rule, res) for rule in GRID
                   for res in [choices.measure(rule, a)]), key=lambda g: g[0], reverse=True)
    print(f"grid on {args.choose_on} ({len(GRID)} rules), best 8 by lowest-label agreement of "
          f"{judge} among the rules within 2 words of the gold's edit:")
    for (ok, low, mean), rule, _ in grid[:8]:
        print(f"  {ok!s:5} lowest {low:.3f} mean {mean:.3f}  {rule}")
    chosen = grid[0][1]
    report = {"chosen": asdict(chosen), "select_by": judge, "choose_on": args.choose_on,
              "confirm_on": args.confirm_on, "judges": choices.judges, "rows": {}}
    print(f"chosen: {chosen}\n")
    header = ("| rule | half | label | " + " | ".join(f"agrees ({j})" for j in choices.judges)
              + " | words edited (gold) | negated (gold) | keeps | from unconstrained |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name, rule in (("constrained, beam's best (--rerank none)", "beam"),
                       ("constrained + label rerank (the old default)", "label"),
                       ("unconstrained + label rerank", "unconstrained-label"),
                       ("classifier rerank (chosen on A)", chosen)):
        for half, premises in (("A", a), ("B", b)):
            result = choices.measure(rule, premises)
            report["rows"][f"{name} / {half}"] = result
            for label in GENERATED_LABELS:
                r = result[label]
                print(f"| {name} | {half} | {label} | "
                      + " | ".join(f"{r[f'agree_{j}']:.2f}" for j in choices.judges)
                      + f" | {r['edit']:.2f} ({r['gold_edit']:.2f}) | {r['negated']:.2f} "
                      f"({r['gold_negated']:.2f}) | {r['keeps']:.2f} | {r['unconstrained']:.2f} |")
    for half, premises in (("A", a), ("B", b)):
        gold = choices.measure("beam", premises)
        print(f"gold variants, {half}: " + "; ".join(
            f"{lab} " + "/".join(f"{gold[lab][f'gold_agree_{j}']:.2f}" for j in choices.judges)
            for lab in GENERATED_LABELS) + f"  ({'/'.join(choices.judges)})")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    if args.show:
        print()
        result = report["rows"]["classifier rerank (chosen on A) / B"]
        for i in b[:args.show]:
            r = rows[i]
            print(f"{i}. premise: {r.premise}\n   implied: {r.implied_entailment}")
            for label in GENERATED_LABELS:
                print(f"   {label}: {result[label]['texts'][str(i)]}   [gold: "
                      f"{r.hypothesis(label)}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("targets")
    for name in ("pool", "score", "choose"):
        p = sub.add_parser(name)
        p.add_argument("--run", required=True)
        p.add_argument("--generator", default=str(DEFAULT_GENERATOR))
    sub.choices["pool"].add_argument("--rows", default="200:400")
    sub.choices["pool"].add_argument("--num-beams", type=int, default=4)
    sub.choices["score"].add_argument("--judge", action="append", default=[],
                                      metavar="NAME=DIR")
    c = sub.choices["choose"]
    c.add_argument("--choose-on", default="200:300")
    c.add_argument("--confirm-on", default="300:400")
    c.add_argument("--select-by", default="full3")
    c.add_argument("--out", default=None)
    c.add_argument("--show", type=int, default=0, help="print N premises of B")
    args = parser.parse_args()
    {"targets": targets, "pool": pool, "score": score, "choose": choose}[args.step](args)


if __name__ == "__main__":
    main()
