"""Rerank the candidates :mod:`pool` kept, every way, and score each by COPA by generation.

    OMP_NUM_THREADS=1 python benchmarks/guided/rerank_study.py runs/pool/ecare2_a.jsonl
        [more pools] [--model M] --features runs/pool/features.jsonl --out FILE.json

Per candidate ``y`` of an input ``x`` (a causal LM's decode), three log-likelihoods:

* ``fwd``: ``log P(y | x)`` per token (the decode's own, ``-nll``);
* ``prior``: ``log P(y | empty input)`` per token (PMI's prior);
* ``rev``: ``log P(x | y)`` per token of ``x``, asked the other way round (``"y, so x"`` for a
  cause, ``"y because x"`` for an effect): how well the output explains (or follows from) this
  very input, the "channel" or MMI-bidi score of Li et al. (2016).

A rerank is ``fwd - a * prior + b * rev`` (``a = 1, b = 0`` is PMI; ``a = b = 0`` NLL), or
``rev`` alone, or the MMR default, each with and without outputs that restate the input moved
to the end (:mod:`guided_generation.restatement`), with the template limit on, top K = 10. Each (a, b) is scored on every pool file given, so a
setting chosen on one sample can be read on another. Features are computed once and kept in
``--features`` (resumable).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

A_VALUES = (0.0, 0.5, 0.75, 1.0)
B_VALUES = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pools", nargs="+")
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
    from dpc_decode.rerank import limit_templates, mmr
    from guided_generation import GuidedGenerator
    from guided_generation.pipeline import GuidedOutput
    from guided_generation.restatement import demote_restatements
    from tasks.copa.dataset import read_copa
    from tasks.copa.plausibility import copa_by_generation
    from train.metrics import causal_log_probs, continuation_log_probs

    items = read_copa(args.copa)
    pools = {path: [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()
                    if line.strip()] for path in args.pools}
    features_path = Path(args.features)
    features: dict[int, dict[str, list[float]]] = {}
    if features_path.exists():
        for line in features_path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            features[row["index"]] = row
    todo = [rec for recs in pools.values() for rec in recs if rec["index"] not in features]
    if todo:
        generator = GuidedGenerator.load(args.model)
        model, tok, fmt = generator.model, generator.tokenizer, generator.input_format
        with features_path.open("a", encoding="utf-8") as sink:
            for rec in tqdm(todo, desc="features", unit="item"):
                outs = rec["outputs"]
                other = "effect" if rec["direction"] == "cause" else "cause"
                prior = continuation_log_probs(model, tok, fmt.prompt("", rec["direction"]),
                                               [o["token_ids"] for o in outs])
                rev = causal_log_probs(model, tok, [fmt.prompt(o["text"], other) for o in outs],
                                       [rec["input"]] * len(outs), end_id=fmt.end_id(tok))
                x_len = len(tok([" " + rec["input"]], add_special_tokens=False)["input_ids"][0]) + 1
                row = {"index": rec["index"], "prior": prior, "rev": [r / x_len for r in rev]}
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                features[rec["index"]] = row

    def rerank(rec: dict, a: float, b: float | None, demote: bool) -> list[GuidedOutput]:
        f = features[rec["index"]]
        scored = []
        for o, p, r in zip(rec["outputs"], f["prior"], f["rev"]):
            n = max(len(o["token_ids"]), 1)
            score = (r if b is None else o["log_prob"] / n if b == "mmr"
                     else o["log_prob"] / n - a * p / n + b * r)
            scored.append((-score, o["nll"], o["text"], o))
        scored.sort(key=lambda s: s[:3])
        ranked = [GuidedOutput(o["text"], o["keyword"], "graph", None, o["nll"], o["log_prob"],
                               tuple(o["keywords"])) for *_, o in scored]
        if b == "mmr":
            ranked = mmr(ranked, args.k * 4, 0.7)
        if demote:
            ranked = demote_restatements(ranked, rec["input"])
        return limit_templates(ranked, args.k, 2)

    settings = [(a, b, d) for d in (False, True)
                for a, b in [(0.0, "mmr"), (0.0, None)] + [(a, b) for a in A_VALUES for b in B_VALUES]]
    table = []
    tops_kept: dict[str, dict[str, list[list[str]]]] = {}
    for a, b, demote in settings:
        name = f"a={a} b={'rev only' if b is None else b}{' demote' if demote else ''}"
        row = {"a": a, "b": b, "demote_restatements": demote}
        for path, recs in pools.items():
            sample = [items[r["index"]] for r in recs]
            tops = [rerank(r, a, b, demote) for r in recs]
            s = copa_by_generation(sample, [[o.text for o in t] for t in tops],
                                   [[o.keyword for o in t] for t in tops])
            row[Path(path).name] = {"accuracy": round(s.accuracy, 3), "items": s.items,
                                    "template_share": round(s.template_share, 3),
                                    "distinct_keywords": round(s.distinct_keywords, 2)}
            tops_kept.setdefault(name, {})[Path(path).name] = [[o.text for o in t] for t in tops]
        table.append(row)
        print(name, {k: v["accuracy"] for k, v in row.items() if isinstance(v, dict)}, flush=True)
    Path(args.out).write_text(json.dumps({"command": " ".join(sys.argv), "table": table,
                                          "tops": tops_kept}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
