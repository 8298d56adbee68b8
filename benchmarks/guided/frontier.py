"""The plausibility/time frontier of guided generation: model x N x beams, on COPA by generation.

    python benchmarks/guided/frontier.py --model M --n N [--num-beams B] [--limit 100]
        [--threads 1] --out FILE.json

For each of the first ``--limit`` COPA-dev items, the premise (as :mod:`tasks.copa.generation`
gives it) is decoded once, in the direction the item asks for, with ``N`` graph keywords, and the same
decode is reranked every way the pipeline offers (``nll``, ``mmr``, ``pmi``; the template limit
on, as by default). ``--n 0``: no keywords, the plain ``max(K, B)``-beam N-best in beam order,
as ``dpc eval generation --methods nbest``. Each rerank's top K = 10 is scored by COPA by generation
(:func:`tasks.copa.plausibility.copa_by_generation`), next to the seconds the decode and each
rerank took per item (process CPU time with ``--threads`` torch threads, so other work on the
machine moves it little). The record keeps every top K, so a row can be re-scored.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

RERANKS = ("nll", "mmr", "pmi")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="generator (default: dpc's default)")
    ap.add_argument("--format", default=None, choices=("seq2seq", "causal", "causal-zero-shot"),
                    help="input format (default: the model's own; causal-zero-shot: a pretrained "
                    "LM asked without worked examples)")
    ap.add_argument("--n", type=int, default=20, help="graph keywords (0: plain N-best)")
    ap.add_argument("--m", type=int, default=2)
    ap.add_argument("--num-beams", type=int, default=None)
    ap.add_argument("--plain-row", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--start", type=int, default=0, help="skip the first items (a second sample)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from guided_generation import GuidedGenerator, GuidedOptions
    from tasks.copa.dataset import as_clause, read_copa
    from tasks.copa.plausibility import copa_by_generation

    items = read_copa(args.copa)[args.start: args.start + args.limit]
    generator = GuidedGenerator.load(args.model)
    if args.format is not None:
        from train.prompts import NAMED_FORMATS

        generator.input_format = NAMED_FORMATS[args.format]
    options = GuidedOptions(n=max(args.n, 1), m=args.m, num_beams=args.num_beams,
                            plain_row=args.plain_row)
    reranks = RERANKS if args.n else ("nll",)  # N-best: beam order, no rerank
    tops: dict[str, list[list[str]]] = {r: [] for r in reranks}
    keywords: dict[str, list[list[str | None]]] = {r: [] for r in reranks}
    seconds: dict[str, float] = {"decode": 0.0, **{r: 0.0 for r in reranks}}
    for number, item in enumerate(items, 1):
        text = as_clause(item.premise)
        for rerank in reranks:
            started = time.process_time()
            if args.n == 0:  # no keywords: the model's own N-best (dpc eval generation's nbest)
                prompt = generator.prompt(text, item.asks_for)
                outputs = generator.unconstrained(prompt, max(options.k, args.num_beams or 1),
                                                  options)
                seconds["decode"] += time.process_time() - started
            else:
                result = generator.generate(text, item.asks_for, replace(options, rerank=rerank))
                outputs = result.outputs
                spent = time.process_time() - started
                if rerank == "nll":  # the first call decodes; the others reuse the decode
                    seconds["nll"] += float(result.stats["rerank_seconds"])
                    seconds["decode"] += spent - float(result.stats["rerank_seconds"])
                else:
                    seconds[rerank] += spent
            tops[rerank].append([o.text for o in outputs])
            keywords[rerank].append([o.keyword for o in outputs])
        print(f"{number}/{len(items)} {item.asks_for} of {text!r}: {tops[reranks[-1]][-1][:3]}",
              file=sys.stderr, flush=True)
    scores = {}
    for rerank in reranks:
        s = copa_by_generation(items, tops[rerank], keywords[rerank])
        scores[rerank] = {"accuracy": s.accuracy, "ties": s.ties,
                          "distinct_keywords": round(s.distinct_keywords, 2),
                          "template_share": round(s.template_share, 3)}
    record = {"command": " ".join(sys.argv), "model": args.model or "default",
              "format": args.format or "the model's own", "n": args.n,
              "m": args.m, "num_beams": args.num_beams, "plain_row": args.plain_row,
              "start": args.start, "items": len(items), "threads": args.threads,
              "cpu_seconds_per_item": {k: round(v / len(items), 3) for k, v in seconds.items()},
              "scores": scores, "tops": tops}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in record.items() if k != "tops"}, indent=1))


if __name__ == "__main__":
    main()
