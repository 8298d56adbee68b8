"""The Cause Effect Graph's query on the bundled graph: how long ``candidates`` takes for the
paper's example, the row that replaced a timed assertion in
``tests/cause_effect_graph/test_query.py``. Prints one JSON line (appended to ``--out`` too).

    .venv/bin/python benchmarks/graph_query.py --repeats 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cause_effect_graph.query import candidates  # noqa: E402
from cause_effect_graph.store import default_graph  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", default="babies cry")
    ap.add_argument("--direction", choices=("cause", "effect"), default="cause")
    ap.add_argument("--n", type=int, default=300, help="keywords asked for")
    ap.add_argument("--rank", default="strength")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--out", default=None, help="JSON lines file the row is appended to")
    args = ap.parse_args()
    graph = default_graph()
    candidates(graph, args.input, args.direction, args.n, rank=args.rank)  # warm up
    timings = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        candidates(graph, args.input, args.direction, args.n, rank=args.rank)
        timings.append(time.perf_counter() - started)
    row = {"input": args.input, "direction": args.direction, "n": args.n, "rank": args.rank,
           "nodes": graph.number_of_nodes(), "edges": graph.number_of_edges(),
           "min_ms": round(min(timings) * 1000, 2),
           "median_ms": round(statistics.median(timings) * 1000, 2),
           "max_ms": round(max(timings) * 1000, 2)}
    print(json.dumps(row))
    if args.out:
        with open(args.out, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
