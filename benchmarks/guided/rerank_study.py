"""Rerank the candidates :mod:`pool` kept, every way, and score each by COPA by generation.

    OMP_NUM_THREADS=1 python benchmarks/guided/rerank_study.py runs/pool/ecare2_a.jsonl
        runs/pool/ecare2_b.jsonl [--update runs/pool/ecare2_gendered.jsonl] [--grid]
        [--model M] --features runs/pool/features.jsonl --out FILE.json

Per candidate ``y`` of an input ``x`` (a causal LM's decode), up to three log-likelihoods:

* ``fwd``: ``log P(y | x)`` per token (the decode's own, ``-nll``);
* ``prior``: ``log P(y | empty input)`` per token (PMI's prior);
* ``rev`` (``--grid`` only): ``log P(x | y)`` per token of ``x``, asked the other way round
  (``"y, so x"`` for a cause, ``"y because x"`` for an effect): how well the output explains
  (or follows from) this very input, the MMI-bidi score of Li et al. (2016).

The pipeline's reranks are scored as it runs them (``nll``, ``mmr``, ``pmi``: outputs that
restate the input moved to the end, the template limit on, top K = 10); ``--grid`` adds
``fwd - a * prior + b * rev`` for a grid of (a, b) and ``rev`` alone, each with and without
the restatement demotion. Scores are given per 100 items and over all of them. ``--update``
pools replace the records of the same items (e.g. the inputs pronoun agreement decodes
differently). Features are computed once and kept in ``--features`` (resumable; ``rev`` is
computed only with ``--grid``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

A_VALUES = (0.0, 0.5, 1.0)
B_VALUES = (0.0, 0.5, 1.0, 2.0, 4.0)


def read_pools(paths: list[str], updates: list[str]) -> list[dict]:
    records: dict[int, dict] = {}
    for path in [*paths, *updates]:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                records[rec["index"]] = rec
    return [records[i] for i in sorted(records)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pools", nargs="+")
    ap.add_argument("--update", action="append", default=[])
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--model", default=None)
    ap.add_argument("--features", required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    import torch
    from tqdm import tqdm

    torch.set_num_threads(args.threads)
    from dpc_decode.rerank import limit_templates, mmr, rank_by_nll
    from guided_generation import GuidedGenerator
    from guided_generation.pipeline import GuidedOutput
    from guided_generation.restatement import demote_restatements
    from tasks.copa.dataset import read_copa
    from tasks.copa.plausibility import copa_by_generation
    from train.metrics import causal_log_probs, continuation_log_probs

    items = read_copa(args.copa)
    records = read_pools(args.pools, args.update)
    features_path = Path(args.features)
    features: dict[tuple[int, str], dict[str, list[float]]] = {}  # (index, first text) -> values
    if features_path.exists():
        for line in features_path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            features[(row["index"], row.get("first", ""))] = row

    def key(rec: dict) -> tuple[int, str]:
        return rec["index"], rec["outputs"][0]["text"] if rec["outputs"] else ""

    todo = [rec for rec in records if key(rec) not in features
            or (args.grid and "rev" not in features[key(rec)])]
    if todo:
        generator = GuidedGenerator.load(args.model)
        model, tok, fmt = generator.model, generator.tokenizer, generator.input_format
        with features_path.open("a", encoding="utf-8") as sink:
            for rec in tqdm(todo, desc="features", unit="item"):
                outs = rec["outputs"]
                row = features.get(key(rec)) or {"index": rec["index"], "first": key(rec)[1]}
                if "prior" not in row:
                    row["prior"] = continuation_log_probs(
                        model, tok, fmt.prompt("", rec["direction"]), [o["token_ids"] for o in outs])
                if args.grid and "rev" not in row:
                    other = "effect" if rec["direction"] == "cause" else "cause"
                    rev = causal_log_probs(model, tok, [fmt.prompt(o["text"], other) for o in outs],
                                           [rec["input"]] * len(outs), end_id=fmt.end_id(tok))
                    x_len = len(tok([" " + rec["input"]], add_special_tokens=False)["input_ids"][0]) + 1
                    row["rev"] = [r / x_len for r in rev]
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                features[key(rec)] = row

    def candidates(rec: dict) -> list[GuidedOutput]:
        return [GuidedOutput(o["text"], o["keyword"], "graph", None, o["nll"], o["log_prob"],
                             tuple(o["keywords"])) for o in rec["outputs"]]

    def scored(rec: dict, score) -> list[GuidedOutput]:
        f = features[key(rec)]
        rows = []
        for i, (o, c) in enumerate(zip(rec["outputs"], candidates(rec))):
            n = max(len(o["token_ids"]), 1)
            rows.append((-score(o["log_prob"] / n, f["prior"][i] / n, f.get("rev", [0.0] * (i + 1))[i]),
                         c.nll, c.text, c))
        rows.sort(key=lambda r: r[:3])
        return [r[-1] for r in rows]

    def pipeline_rerank(rec: dict, name: str) -> list[GuidedOutput]:
        if name == "nll":
            return rank_by_nll(candidates(rec))
        if name == "mmr":
            return mmr(candidates(rec), args.k * 4, 0.7)
        return scored(rec, lambda fwd, prior, rev: fwd - prior)  # pmi

    settings: list[tuple[str, object, bool]] = [(n, n, True) for n in ("nll", "mmr", "pmi")]
    if args.grid:
        settings += [(f"a={a} b={b}{' demote' if d else ''}", (a, b), d)
                     for d in (False, True) for a in A_VALUES for b in B_VALUES]
        settings += [(f"rev only{' demote' if d else ''}", "rev", d) for d in (False, True)]
    slices = {f"{lo + 1}-{lo + 100}": [r for r in records if lo <= r["index"] < lo + 100]
              for lo in range(0, max(r["index"] for r in records) + 1, 100)}
    slices["all"] = records
    table = []
    tops_kept = {}
    for name, how, demote in settings:
        tops = {}
        for rec in records:
            if isinstance(how, str) and how in ("nll", "mmr", "pmi"):
                ranked = pipeline_rerank(rec, how)
            elif how == "rev":
                ranked = scored(rec, lambda fwd, prior, rev: rev)
            else:
                a, b = how  # type: ignore[misc]
                ranked = scored(rec, lambda fwd, prior, rev, a=a, b=b: fwd - a * prior + b * rev)
            if demote:
                ranked = demote_restatements(ranked, rec["input"])
            tops[rec["index"]] = limit_templates(ranked, args.k, 2)
        row = {"rerank": name}
        for label, recs in slices.items():
            s = copa_by_generation([items[r["index"]] for r in recs],
                                   [[o.text for o in tops[r["index"]]] for r in recs],
                                   [[o.keyword for o in tops[r["index"]]] for r in recs])
            row[label] = {"accuracy": round(s.accuracy, 3), "items": s.items,
                          "template_share": round(s.template_share, 3),
                          "distinct_keywords": round(s.distinct_keywords, 2)}
        table.append(row)
        tops_kept[name] = {r["index"]: [o.text for o in tops[r["index"]]] for r in records}
        print(name, {k: v["accuracy"] for k, v in row.items() if isinstance(v, dict)}, flush=True)
    Path(args.out).write_text(json.dumps({"command": " ".join(sys.argv), "table": table,
                                          "tops": tops_kept}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
