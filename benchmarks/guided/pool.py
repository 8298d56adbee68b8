"""Decode COPA-dev premises once and keep every candidate, for reranks studied offline.

    OMP_NUM_THREADS=1 python benchmarks/guided/pool.py [--model M] [--n 20] [--start 0]
        [--limit 100] --out runs/pool/ecare2_0.jsonl

One JSON line per item: its index, premise (as :func:`tasks.copa.dataset.as_clause` gives it),
direction, and every merged output of the default pipeline's decode (``n`` keyword rows plus the
plain row, ``m`` outputs each, duplicates merged): text, keywords, mean NLL, total log-prob
and the decode's token ids. :mod:`benchmarks.guided.rerank_study` reranks them every way without
decoding again. Interrupted runs resume: items already in ``--out`` are skipped.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="generator (default: dpc's default)")
    ap.add_argument("--n", type=int, default=20, help="graph keywords")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    ap.add_argument("--gendered-only", action="store_true",
                    help="decode only the inputs pronoun agreement bans pronouns for (a pool "
                    "decoded without it is brought up to date by these records)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    import torch
    from tqdm import tqdm

    torch.set_num_threads(args.threads)
    from guided_generation import GuidedGenerator, GuidedOptions
    from guided_generation.agreement import pronoun_bans
    from tasks.copa.dataset import as_clause, read_copa

    items = read_copa(args.copa)[args.start: args.start + args.limit]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {json.loads(line)["index"] for line in out.read_text(encoding="utf-8").splitlines()
                if line.strip()}
    generator = GuidedGenerator.load(args.model)
    options = replace(GuidedOptions(n=args.n), rerank="nll", k=10_000, template_limit=None)
    with out.open("a", encoding="utf-8") as sink:
        for offset, item in enumerate(tqdm(items, desc="decoding", unit="item")):
            index = args.start + offset
            if index in done:
                continue
            text = as_clause(item.premise)
            if args.gendered_only and not pronoun_bans(text):
                continue
            started = time.process_time()
            result = generator.generate(text, item.asks_for, options)
            record = {"index": index, "input": text, "direction": item.asks_for,
                      "cpu_seconds": round(time.process_time() - started, 3),
                      "outputs": [{"text": o.text, "keyword": o.keyword,
                                   "keywords": list(o.keywords), "nll": o.nll,
                                   "log_prob": o.log_prob, "token_ids": list(o.token_ids)}
                                  for o in result.outputs]}
            sink.write(json.dumps(record) + "\n")
            sink.flush()


if __name__ == "__main__":
    main()
