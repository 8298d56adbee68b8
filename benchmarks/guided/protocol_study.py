"""Issue 39's protocol: every configuration scored from the decoded pools, chosen on one half of
COPA-dev and confirmed on the other.

    .venv/bin/python benchmarks/guided/protocol_study.py runs/protocol/pool_*.jsonl \\
        --verifier runs/verifier --scores runs/protocol/scores.json \\
        [--half choose|confirm] [--configs NAME ...] --json FILE

The pools (:mod:`benchmarks.guided.protocol_pool`) hold, per item, the plain N-best, the sampled
keywords, the graph's keywords and every keyword row's outputs. The verifier scores each
keyword and each output once (kept in ``--scores``). Each configuration picks keyword rows,
merges their outputs with the plain N-best's best, orders and filters them as the pipeline
does (:mod:`guided_generation.verifier`), and its top K = 10 is scored by COPA by generation
(:func:`tasks.copa.plausibility.copa_by_generation`) beside the template share, the distinct
keywords and where the top K came from. ``--half choose`` scores items 1-250 (indices 0-249),
``confirm`` items 251-500: choose on the first, then run the chosen rows once on the second.
Beside the rows, ``fluency`` (issue 57): the verifier's median score and the mean NLL of the
keyword rows' outputs against the plain N-best's, in the pool and in the default's top K.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dpc_decode.rerank import limit_templates, mmr  # noqa: E402
from guided_generation.pipeline import GuidedOutput, merge_duplicates  # noqa: E402
from guided_generation.restatement import demote_restatements  # noqa: E402
from guided_generation.verifier import order_by_verifier  # noqa: E402

K = 10


@dataclass(frozen=True)
class Config:
    """One way to choose keyword rows and the top K."""

    name: str
    keywords: str = "graph"        # graph | verified (graph + sampled, best by verifier) | none
    n: int = 20                    # keyword rows kept
    plain: int = 4                 # the plain N-best's best outputs joining the pool
    order: str = "mmr"             # mmr | verifier | nbest
    reject: float | None = None    # verifier threshold (None: keep all)
    pmi_weight: float = 0.75       # verifier score = cross-encoder + weight * PMI (sum)
    nll_weight: float = 0.0        # verifier order: score - weight * nll
    sources: tuple[str, ...] = ("graph", "sampled")
    template_limit: int = 2        # at most this many of the top K share a word trigram


def outputs_of(record: dict, config: Config, stored: dict) -> list[GuidedOutput]:
    """The pool the configuration reranks: its keyword rows' outputs and the plain best, each
    with the verifier's score (the cross-encoder's plus ``pmi_weight`` times its PMI)."""
    kscores = stored["keywords"]

    def judge(o: dict) -> float:
        return stored["texts"][o["text"]] + config.pmi_weight * (o["log_prob"]
                                                                 - stored["prior"][o["text"]])

    if config.keywords == "none":
        chosen: set[str] = set()
    elif config.keywords == "graph":
        chosen = set(record["graph"][: config.n])
    else:
        pool = [k for k in dict.fromkeys(record["graph"] + record["own"])
                if ("graph" in config.sources and k in record["graph"])
                or ("sampled" in config.sources and k in record["own"])]
        pool.sort(key=lambda k: -kscores.get(k, -1e9))
        chosen = set(pool[: config.n])
    outs = [GuidedOutput(o["text"], o["keyword"], o["source"], None, o["nll"], o["log_prob"],
                         (o["keyword"],), verifier=judge(o))
            for o in record["rows"] if o["keyword"] in chosen]
    outs += [GuidedOutput(o["text"], None, "none", None, o["nll"], o["log_prob"],
                          verifier=judge(o))
             for o in record["nbest"][: config.plain]]
    return merge_duplicates(outs)


def top_k(record: dict, config: Config, stored: dict) -> list[GuidedOutput]:
    if config.order == "nbest":
        return [GuidedOutput(o["text"], None, "none", None, o["nll"], o["log_prob"])
                for o in record["nbest"][:K]]
    merged = outputs_of(record, config, stored)
    if config.order == "mmr":
        ranked = mmr(merged, K * 4, 0.7)
    else:
        ranked = order_by_verifier(merged, config.nll_weight)
    if config.reject is not None:
        ranked = [o for o in ranked if o.verifier is not None and o.verifier >= config.reject]
    ranked = demote_restatements(ranked, record["input"])
    return limit_templates(ranked, K, config.template_limit)


def configs(thresholds: tuple[float, ...], ce_thresholds: tuple[float, ...]) -> list[Config]:
    """The grid: the baseline, the previous default, and keyword choice x plain outputs x
    order x PMI weight x rejection."""
    rows = [Config("plain N-best (10 beams)", order="nbest"),
            Config("previous default: graph 20, plain 4, mmr")]
    for kw, n in (("graph", 20), ("verified", 20), ("verified", 12), ("verified", 8)):
        for plain in (4, 10):
            for order in ("verifier", "mmr"):
                for weight in (0.0, 0.75):
                    for reject in (None, *(thresholds if weight else ce_thresholds)):
                        rows.append(Config(
                            f"{kw} {n}, plain {plain}, {order}, pmi {weight}"
                            + (f", reject<{reject:g}" if reject is not None else ""),
                            keywords=kw, n=n, plain=plain, order=order, reject=reject,
                            pmi_weight=weight))
    for kw, n in (("graph", 20), ("verified", 20), ("verified", 12)):
        for order in ("verifier", "mmr"):
            for reject in (None, thresholds[0]):
                rows.append(Config(f"{kw} {n}, plain 10, {order}, pmi 0.75, template limit 1"
                                   + (f", reject<{reject:g}" if reject is not None else ""),
                                   keywords=kw, n=n, plain=10, order=order, reject=reject,
                                   template_limit=1))
    rows.append(Config("no keywords: plain 10 by verifier", keywords="none", plain=10,
                       order="verifier"))
    rows.append(Config("sampled keywords only (8), plain 4, verifier", keywords="verified", n=8,
                       sources=("sampled",), order="verifier"))
    return rows


def score_pools(records: list[dict], verifier_path: str, cache: Path) -> dict:
    """Per item: the cross-encoder's score of every output text and keyword, and each output's
    log-probability after the empty input under the generator (its PMI prior), cached in
    ``cache``."""
    stored = json.loads(cache.read_text("utf-8")) if cache.exists() else {}
    from guided_generation import GuidedGenerator
    from guided_generation.verifier import Verifier
    from train.metrics import causal_log_probs

    verifier = generator = None
    for number, record in enumerate(records):
        key = str(record["index"])
        if key in stored:
            continue
        verifier = verifier or Verifier.load(verifier_path)
        generator = generator or GuidedGenerator.load(verifier=None)
        texts = list(dict.fromkeys([o["text"] for o in record["nbest"]] +
                                   [o["text"] for o in record["rows"]]))
        words = list(dict.fromkeys(record["graph"] + record["own"]))
        t = verifier.scores(record["input"], record["direction"], texts)
        w = verifier.scores(record["input"], record["direction"], words)
        prior = causal_log_probs(generator.model, generator.tokenizer,
                                 [generator.prompt("", record["direction"])] * len(texts), texts,
                                 end_id=generator.input_format.end_id(generator.tokenizer))
        stored[key] = {"texts": dict(zip(texts, map(float, t))),
                       "keywords": dict(zip(words, map(float, w))),
                       "prior": dict(zip(texts, map(float, prior)))}
        if number % 50 == 49:
            cache.write_text(json.dumps(stored), encoding="utf-8")
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(stored), encoding="utf-8")
    return stored


def evaluate(records: list[dict], config: Config, stored: dict, score: Callable) -> dict:
    from tasks.copa.dataset import read_copa

    items = read_copa(ROOT.parent / "shared/data/copa/copa-dev.xml")
    chosen = [items[r["index"]] for r in records]
    tops = [top_k(r, config, stored[str(r["index"])]) for r in records]
    result = score(chosen, [[o.text for o in t] for t in tops], [[o.keyword for o in t] for t in tops])
    sources = Counter(o.source for t in tops for o in t)
    total = sum(sources.values()) or 1
    return {"config": config.name, "accuracy": round(result.accuracy, 4),
            "template_share": round(result.template_share, 3),
            "distinct_keywords": round(result.distinct_keywords, 2),
            "returned": round(total / len(records), 2),
            "sources": {k: round(v / total, 3) for k, v in sorted(sources.items())}}


def fluency(records: list[dict], stored: dict, config: Config) -> dict:
    """Issue 57's measure of what the keywords cost: the verifier's median score (the
    cross-encoder's plus ``config.pmi_weight`` times the PMI) and the mean NLL of every decoded
    keyword row's outputs against the plain N-best's, and the same inside ``config``'s top K
    (keyword rows against the plain rows there); the share of keyword rows that end on their
    keyword, and the CPU seconds of each part of the decode an item."""
    import statistics

    def judge(record: dict, o: dict) -> float:
        scores = stored[str(record["index"])]
        return scores["texts"][o["text"]] + config.pmi_weight * (o["log_prob"]
                                                                 - scores["prior"][o["text"]])

    decoded = {"keyword rows": [(r, o) for r in records for o in r["rows"]],
               "plain N-best": [(r, o) for r in records for o in r["nbest"]]}
    result: dict = {}
    for name, outs in decoded.items():
        result[name] = {"outputs": len(outs),
                        "median verifier": round(statistics.median(judge(r, o) for r, o in outs), 3),
                        "mean nll": round(statistics.mean(o["nll"] for _, o in outs), 3)}
    # the share of keyword rows whose last word starts as their keyword does (tacked on at the end)
    rows = decoded["keyword rows"]
    result["keyword rows"]["end on their keyword"] = round(sum(
        o["text"].split()[-1].lower().startswith(o["keyword"][:4].lower())
        for _, o in rows if o["text"].split()) / max(1, len(rows)), 3)
    result["cpu seconds an item"] = {part: round(statistics.mean(r["cpu_seconds"][part]
                                                                 for r in records), 2)
                                     for part in records[0]["cpu_seconds"]}
    tops = [o for r in records for o in top_k(r, config, stored[str(r["index"])])]
    for name, keep in (("top K keyword rows", lambda o: o.keyword is not None),
                       ("top K plain rows", lambda o: o.keyword is None)):
        kept = [o.verifier for o in tops if keep(o) and o.verifier is not None]
        result[name] = {"outputs": len(kept),
                        "median verifier": round(statistics.median(kept), 3) if kept else None}
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pools", nargs="+")
    ap.add_argument("--verifier", required=True)
    ap.add_argument("--scores", required=True, help="cache of verifier scores")
    ap.add_argument("--thresholds", type=float, nargs="*", default=[10.0, 12.5],
                    help="rejection thresholds tried on the verifier's score with PMI")
    ap.add_argument("--ce-thresholds", type=float, nargs="*", default=[1.0, 2.0],
                    help="rejection thresholds tried on the cross-encoder's score alone")
    ap.add_argument("--half", choices=("choose", "confirm", "all"), default="choose")
    ap.add_argument("--configs", nargs="*", default=None, help="only these configuration names")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    from tasks.copa.plausibility import copa_by_generation

    records = [json.loads(line) for p in args.pools
               for line in Path(p).read_text("utf-8").splitlines() if line.strip()]
    records = sorted({r["index"]: r for r in records}.values(), key=lambda r: r["index"])
    if args.half == "choose":
        records = [r for r in records if r["index"] < 250]
    elif args.half == "confirm":
        records = [r for r in records if r["index"] >= 250]
    stored = score_pools(records, args.verifier, Path(args.scores))
    rows = []
    for config in configs(tuple(args.thresholds), tuple(args.ce_thresholds)):
        if args.configs and config.name not in args.configs:
            continue
        row = evaluate(records, config, stored, copa_by_generation)
        rows.append(row)
        print(json.dumps(row), flush=True)
    default = Config("verified 20, plain 10, verifier, pmi 0.75, reject<5", keywords="verified",
                     n=20, plain=10, order="verifier", reject=5.0)
    cost = fluency(records, stored, default)
    print(json.dumps({"fluency": cost}), flush=True)
    record = {"command": " ".join(["benchmarks/guided/protocol_study.py", *sys.argv[1:]]),
              "half": args.half, "items": len(records), "rows": rows, "fluency": cost}
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
