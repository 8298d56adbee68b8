"""Measure a Cause Effect Graph file: size, load time, query latency, COPA-dev accuracy.

Usage (run under the shared CPU lock, as every timing on this machine)::

    flock /tmp/dpc-cpu.lock .venv/bin/python benchmarks/graph/measure.py \
        [--graph cause_effect_graph/data/default.ceg] [--out benchmarks/graph/measure.json]

Prints one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SENTENCES = [
    "babies cry", "The baby cried all night.", "It rained heavily.", "The man lost his job.",
    "She was very tired after the long journey.", "The house burned down.",
    "He drank too much wine.", "The soldiers won the battle.", "I forgot my umbrella.",
    "The children laughed at the clown.",
]


def main() -> int:
    from cause_effect_graph.lemmas import default_lemmatizer
    from cause_effect_graph.query import RANKS, candidates
    from cause_effect_graph.store import DEFAULT_GRAPH, graph_info, load_graph

    p = argparse.ArgumentParser()
    p.add_argument("--graph", default=str(DEFAULT_GRAPH))
    p.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    p.add_argument("--out", default=None)
    args = p.parse_args()

    result: dict[str, object] = {"graph": args.graph, "file_bytes": Path(args.graph).stat().st_size}
    loads = []
    for _ in range(3):
        t = time.perf_counter()
        G = load_graph(args.graph)
        loads.append(time.perf_counter() - t)
    result["load_s_min"] = min(loads)
    result["load_s_all"] = loads
    result["nodes"], result["edges"] = G.number_of_nodes(), G.number_of_edges()
    result["header_graph"] = graph_info(args.graph)["graph"]
    default_lemmatizer()("warm up")
    for rank in RANKS:
        for n in (10, 300):
            times = []
            for s in SENTENCES:
                candidates(G, s, "cause", n, rank)  # warm
                runs = []
                for _ in range(5):
                    t = time.perf_counter()
                    candidates(G, s, "cause", n, rank)
                    candidates(G, s, "effect", n, rank)
                    runs.append((time.perf_counter() - t) / 2)
                times.append(min(runs))
            result[f"query_ms_{rank}_n{n}_median"] = 1000 * statistics.median(times)
            result[f"query_ms_{rank}_n{n}_max"] = 1000 * max(times)
    result["example_babies_cry_cause"] = candidates(G, "babies cry", "cause", 15).keywords
    result["example_babies_cry_cause_strength"] = candidates(
        G, "babies cry", "cause", 15, rank="strength").keywords
    result["example_babies_cry_cause_mix"] = candidates(
        G, "babies cry", "cause", 15, rank="mix").keywords
    if Path(args.copa).is_file():
        from tasks.copa import accuracy, read_copa
        from tasks.copa.graph import CausalStrengthScorer, PmiScorer

        items = read_copa(args.copa)
        strength = CausalStrengthScorer(G)
        result["copa_dev_graph"] = accuracy(strength, items)
        result["copa_dev_pmi"] = accuracy(PmiScorer(G), items)
        result["copa_dev_no_evidence"] = sum(
            1 for it in items
            if strength.score(it.premise, it.asks_for, it.alternative1) == 0
            and strength.score(it.premise, it.asks_for, it.alternative2) == 0)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
