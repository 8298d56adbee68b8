"""Measure INLI variant generation, constrained vs unconstrained, on the first N val premises.

For each premise and each label (explicit entailment, neutral, contradiction) one variant is
decoded with the trained generator, with the keep-constraints (+ no negation in contradictions)
and without. Reported per mode and label: the classifier's agreement with the intended label,
word edit distance to the implied entailment (next to the gold variants'), constraint
satisfaction (text check of the same sets, both modes), and the negation rate of contradictions.

Generation is cached per mode in ``RUN/variants_<mode>.jsonl`` (rerun to resume a mode that was
not finished: run the modes in separate lock-held chunks with ``--modes``). The engine's search
flags (``--search neurologic`` ...) apply to the constrained modes; a run folder keeps the ones it
was generated with (``RUN/search.json``) and refuses others.

    flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2 .venv/bin/python \
        benchmarks/inli/measure_variants.py --modes constrained
    flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2 .venv/bin/python \
        benchmarks/inli/measure_variants.py --modes unconstrained
    flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2 .venv/bin/python \
        benchmarks/inli/measure_variants.py --score
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dpc_decode.options import add_search_arguments, search_options_from
from tasks.datasets import read_inli
from tasks.inli.hypotheses import (
    GENERATED_LABELS,
    VariantGenerator,
    keep_constraints,
    negated,
    satisfied,
    word_edit_distance,
)

#: constrained: keep-sets, no copy of the implied entailment, no negation in contradictions;
#: keep-only: keep-sets and no copy, negation allowed; "-rerank": the same search, the output
#: chosen among its beams by the generator's label posterior (``rerank="label"``).
MODES = ("constrained", "unconstrained", "keep-only", "constrained-rerank",
         "unconstrained-rerank", "keep-only-rerank")


def generate(args: argparse.Namespace, rows: list, modes: list[str]) -> None:
    """Generate ``modes`` chunk by chunk (both modes of a chunk before the next chunk, so a run
    stopped by ``--max-minutes`` leaves the same premises in every mode); cached, resumable."""
    paths = {m: Path(args.run) / f"variants_{m}.jsonl" for m in modes}
    done = {m: len(paths[m].read_text().splitlines()) if paths[m].exists() else 0 for m in modes}
    if all(done[m] >= len(rows) for m in modes):
        print(f"cached: {done}")
        return
    gen = VariantGenerator.load(args.generator)
    start = time.monotonic()
    for k in range(0, len(rows), args.chunk):
        if time.monotonic() - start > args.max_minutes * 60:
            print(f"stopped by --max-minutes {args.max_minutes} at {k} premises", flush=True)
            break
        part = rows[k:k + args.chunk]
        flat = [(r, lab) for r in part for lab in GENERATED_LABELS]
        for mode in modes:
            if done[mode] > k:
                continue
            t = time.monotonic()
            base = mode.removesuffix("-rerank")
            vs = gen.generate([r.premise for r, _ in flat], [r.implied_entailment for r, _ in flat],
                              [lab for _, lab in flat], constrained=base != "unconstrained",
                              ban_negation=base == "constrained",
                              rerank="label" if mode.endswith("-rerank") else "none",
                              num_beams=args.num_beams, max_new_tokens=args.max_new_tokens,
                              search=search_options_from(args))
            with open(paths[mode], "a", encoding="utf-8") as out:
                for i, r in enumerate(part):
                    mine = vs[3 * i:3 * i + 3]
                    out.write(json.dumps({
                        "index": r.index, "seconds": round((time.monotonic() - t) / len(part), 2),
                        **{v.label: v.text for v in mine},
                        "engine_satisfied": {v.label: v.satisfied for v in mine}}) + "\n")
            done[mode] = k + len(part)
        print(f"{min(k + args.chunk, len(rows))}/{len(rows)} premises, "
              f"{time.monotonic() - start:.0f} s", flush=True)


def score(args: argparse.Namespace, rows: list) -> dict:
    from tasks.inli.classifier import InliClassifier

    clf = InliClassifier.load(args.classifier)
    by_index = {r.index: r for r in rows}
    present = [{json.loads(x)["index"] for x in (Path(args.run) / f"variants_{m}.jsonl")
                .read_text().splitlines()} for m in MODES
               if (Path(args.run) / f"variants_{m}.jsonl").exists()]
    if present:
        common = set.intersection(*present)
        rows = [r for r in rows if r.index in common]
        by_index = {r.index: r for r in rows}
    results: dict = {"n_premises": len(rows), "modes": {}}
    gold_pairs = [(r.premise, r.hypothesis(lab)) for r in rows for lab in GENERATED_LABELS]
    gold_pred = clf.predict([p for p, _ in gold_pairs], [h for _, h in gold_pairs])
    gold = {}
    for j, lab in enumerate(GENERATED_LABELS):
        preds = gold_pred[j::3]
        texts = [r.hypothesis(lab) for r in rows]
        gold[lab] = {
            "classifier_agreement": sum(p == lab for p in preds) / len(preds),
            "edit_distance": statistics.mean(word_edit_distance(t, r.implied_entailment)
                                             for t, r in zip(texts, rows)),
            "satisfaction": sum(satisfied(t, keep_constraints(r.implied_entailment).sets())
                                for t, r in zip(texts, rows)) / len(rows),
            "negation_rate": sum(negated(t) for t in texts) / len(texts)}
    results["gold"] = gold
    sets = {r.index: keep_constraints(r.implied_entailment).sets() for r in rows}
    for mode in MODES:
        path = Path(args.run) / f"variants_{mode}.jsonl"
        if not path.exists():
            continue
        recs = [rec for rec in map(json.loads, path.read_text().splitlines())
                if rec["index"] in by_index]
        pairs = [(by_index[rec["index"]].premise, rec[lab]) for rec in recs
                 for lab in GENERATED_LABELS]
        pred = clf.predict([p for p, _ in pairs], [h for _, h in pairs])
        per = {}
        for j, lab in enumerate(GENERATED_LABELS):
            preds = pred[j::3]
            texts = [rec[lab] for rec in recs]
            implied = [by_index[rec["index"]].implied_entailment for rec in recs]
            constrained_rows = [rec for rec in recs if sets[rec["index"]]]
            per[lab] = {
                "classifier_agreement": sum(p == lab for p in preds) / len(preds),
                "predicted": {p: preds.count(p) for p in sorted(set(preds))},
                "edit_distance": statistics.mean(word_edit_distance(t, h)
                                                 for t, h in zip(texts, implied)),
                "satisfaction": sum(satisfied(rec[lab], sets[rec["index"]])
                                    for rec in constrained_rows) / max(1, len(constrained_rows)),
                "negation_rate": sum(negated(t) for t in texts) / len(texts),
                "copies_implied": sum(" ".join(t.lower().split()) ==
                                      " ".join(h.lower().split())
                                      for t, h in zip(texts, implied)) / len(texts),
                "empty": sum(not t.strip() for t in texts),
                "engine_satisfied": sum(rec["engine_satisfied"][lab] is True
                                        for rec in constrained_rows)
                / max(1, len(constrained_rows))}
        agree = [per[lab]["classifier_agreement"] for lab in GENERATED_LABELS]
        results["modes"][mode] = {"per_label": per, "mean_agreement": statistics.mean(agree),
                                  "seconds_per_premise": statistics.mean(
                                      rec["seconds"] for rec in recs),
                                  "premises_with_sets": sum(bool(sets[r["index"]]) for r in recs)}
    results["examples"] = []
    cached = {m: {json.loads(x)["index"]: json.loads(x)
                  for x in (Path(args.run) / f"variants_{m}.jsonl").read_text().splitlines()}
              for m in MODES if (Path(args.run) / f"variants_{m}.jsonl").exists()}
    for r in rows[:args.examples]:
        results["examples"].append({
            "premise": r.premise, "implied": r.implied_entailment,
            **{lab: {"gold": r.hypothesis(lab),
                     **{m: cached[m][r.index][lab] for m in cached if r.index in cached[m]}}
               for lab in GENERATED_LABELS}})
    return results


def markdown(res: dict) -> str:
    lines = [("| mode | label | classifier agrees | word edit dist. to implied (gold) | "
              "constraints met (gold) | negation rate (gold) | copies implied |"),
             "|---|---|---|---|---|---|---|"]
    for mode, r in res["modes"].items():
        for lab, m in r["per_label"].items():
            g = res["gold"][lab]
            lines.append(f"| {mode} | {lab} | {m['classifier_agreement']:.2f} | "
                         f"{m['edit_distance']:.2f} ({g['edit_distance']:.2f}) | "
                         f"{m['satisfaction']:.2f} ({g['satisfaction']:.2f}) | "
                         f"{m['negation_rate']:.2f} ({g['negation_rate']:.2f}) | "
                         f"{m['copies_implied']:.2f} |")
        lines.append(f"| {mode} | **mean** | **{r['mean_agreement']:.2f}** | | | | |")
    lines.append("")
    lines.append("gold variants, classifier agreement: " + ", ".join(
        f"{lab} {g['classifier_agreement']:.2f}" for lab, g in res["gold"].items()))
    return "\n".join(lines)


def examples_markdown(res: dict) -> str:
    """The example premises: gold and each mode's variant, a table per premise."""
    short = {"explicit_entailment": "explicit", "neutral": "neutral",
             "contradiction": "contradiction"}
    lines = []
    for n, ex in enumerate(res["examples"], 1):
        modes = [k for k in ex[GENERATED_LABELS[0]] if k != "gold"]
        lines += [f"{n}. **Premise:** {ex['premise']}  ", f"   **Implied:** {ex['implied']}", "",
                  "   | label | gold | " + " | ".join(modes) + " |",
                  "   |---|---|" + "---|" * len(modes)]
        for lab in GENERATED_LABELS:
            cells = [ex[lab]["gold"], *(ex[lab][m] for m in modes)]
            lines.append(f"   | {short[lab]} | " + " | ".join(c.replace("|", "/") for c in cells)
                         + " |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--val", default=str(ROOT / ".." / "shared" / "data" / "inli" / "val.csv"))
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--generator", default="runs/inli/generator")
    p.add_argument("--classifier", default="runs/inli/full")
    p.add_argument("--run", default="runs/inli/measure")
    p.add_argument("--modes", default="", help="comma-separated modes to generate")
    p.add_argument("--score", action="store_true", help="score what is generated")
    p.add_argument("--chunk", type=int, default=10)
    p.add_argument("--num-beams", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--examples", type=int, default=10)
    p.add_argument("--max-minutes", type=float, default=11.0,
                   help="stop generating new chunks after this many minutes")
    p.add_argument("--out", default="benchmarks/inli/variants_results.json")
    add_search_arguments(p)
    args = p.parse_args()
    Path(args.run).mkdir(parents=True, exist_ok=True)
    search = Path(args.run) / "search.json"
    chosen = json.dumps(asdict(search_options_from(args)), sort_keys=True)
    if not search.exists():
        search.write_text(chosen + "\n", encoding="utf-8")
    elif json.loads(search.read_text("utf-8")) != json.loads(chosen):
        p.error(f"{args.run} was generated with {search.read_text('utf-8').strip()}: "
                "give the same search flags or another --run")
    rows = read_inli(args.val).rows[:args.n]
    modes = [m for m in args.modes.split(",") if m]
    if modes:
        generate(args, rows, modes)
    if args.score:
        res = score(args, rows)
        Path(args.out).write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n")
        print(markdown(res))
        print()
        print(examples_markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
