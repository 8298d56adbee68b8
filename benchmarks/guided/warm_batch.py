"""Issue 39's warm time: seconds per input of the default ``dpc generate`` pipeline over a batch of
inputs, the model, graph, spaCy and verifier already loaded, with where the time goes.

    .venv/bin/python benchmarks/guided/warm_batch.py [--limit 100] [--threads 2]
        [--set NAME=VALUE ...] --out benchmarks/guided/warm_batch.json

The inputs are the first ``--limit`` COPA-dev premises in the direction each asks for (one
untimed warm-up input first). Wall seconds per input (median and mean) and the pipeline's own
phase seconds (keywords with sampling and the verifier's choice, decoding, rerank with the
verifier) are reported. ``--set`` changes an option of the default (``--set n=12``), for
side-by-side rows of the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import fields, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from guided_generation import GuidedGenerator, GuidedOptions
    from tasks.copa.dataset import as_clause, read_copa

    types = {f.name: f.type for f in fields(GuidedOptions)}
    changes = {}
    for item in args.set:
        name, _, value = item.partition("=")
        if name not in types:
            raise SystemExit(f"--set {item!r}: no option {name!r}")
        changes[name] = None if value == "none" else json.loads(value)
    options = replace(GuidedOptions(), **changes)
    items = read_copa(args.copa)[: args.limit + 1]
    generator = GuidedGenerator.load()
    generator.generate(as_clause(items[0].premise), items[0].asks_for, options)  # warm-up
    walls, phases = [], {"keyword_seconds": 0.0, "decode_seconds": 0.0, "rerank_seconds": 0.0}
    for item in items[1:]:
        started = time.perf_counter()
        result = generator.generate(as_clause(item.premise), item.asks_for, options)
        walls.append(time.perf_counter() - started)
        for name in phases:
            phases[name] += float(result.stats.get(name, 0.0))
    record = {"command": " ".join(["benchmarks/guided/warm_batch.py", *sys.argv[1:]]),
              "inputs": len(walls), "threads": args.threads, "changes": changes,
              "seconds_per_input_median": round(statistics.median(walls), 3),
              "seconds_per_input_mean": round(statistics.fmean(walls), 3),
              "phase_seconds_per_input": {k: round(v / len(walls), 3) for k, v in phases.items()}}
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
