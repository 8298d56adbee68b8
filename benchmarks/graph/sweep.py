"""Prune one set of counts several ways; report size, load time and COPA-dev accuracy of each.

Usage, after ``dpc graph build`` has written its lemma files to WORK::

    flock /tmp/dpc-cpu.lock .venv/bin/python benchmarks/graph/sweep.py WORK \
        --config 1 --config 2 --config 3 --config 6 --config 2:50 --out benchmarks/graph/sweep.json

A config is ``MIN_COUNT`` or ``MIN_COUNT:TOP_K``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from cause_effect_graph.build import count_lemma_files, counts_to_graph
    from cause_effect_graph.store import load_graph, save_graph
    from tasks.copa import accuracy, read_copa
    from tasks.copa.graph import CausalStrengthScorer, PmiScorer

    p = argparse.ArgumentParser()
    p.add_argument("work")
    p.add_argument("--config", action="append", required=True)
    p.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    p.add_argument("--out", default=None)
    args = p.parse_args()
    t = time.perf_counter()
    counts = count_lemma_files(args.work)
    count_s = time.perf_counter() - t
    items = read_copa(args.copa)
    rows = []
    lemmatizer = None
    for config in args.config:
        min_count, _, top = config.partition(":")
        G = counts_to_graph(counts, int(min_count), int(top) if top else None)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "g.ceg"
            t = time.perf_counter()
            save_graph(G, path)
            save_s = time.perf_counter() - t
            t = time.perf_counter()
            G = load_graph(path)
            load_s = time.perf_counter() - t
            size = path.stat().st_size
        s = CausalStrengthScorer(G, lemmatizer)
        lemmatizer = s._lemmatize
        row = {"config": config, "nodes": G.number_of_nodes(), "edges": G.number_of_edges(),
               "nodes_before": G.graph["nodes_before"], "edges_before": G.graph["edges_before"],
               "file_bytes": size, "save_s": save_s, "load_s": load_s,
               "copa_dev_graph": accuracy(s, items),
               "copa_dev_pmi": accuracy(PmiScorer(G, lemmatizer), items)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    out = {"count_s": count_s, "pairs": counts.pairs, "total": counts.total, "rows": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
