"""Top keywords per rank for the issue-18 inputs, as a Markdown table (and JSON).

Usage::

    python benchmarks/graph/keywords.py [--graph FILE] [--rank R ...] [-n 15] [--json OUT]

Without ``--rank`` every name of ``cause_effect_graph.query.RANKS`` is printed (``weight`` and
``strength`` where that tuple does not exist yet, i.e. on an older checkout). Lemmatising the inputs
uses spaCy, as ``dpc generate`` does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

INPUTS: list[tuple[str, str]] = [
    ("the car broke down", "cause"),
    ("she missed the bus", "effect"),
    ("babies cry", "cause"),
    ("babies cry", "effect"),
    ("the man fell asleep", "effect"),
    ("it rained", "effect"),
]


def main() -> int:
    from cause_effect_graph import query
    from cause_effect_graph.store import DEFAULT_GRAPH, load_graph

    p = argparse.ArgumentParser()
    p.add_argument("--graph", default=str(DEFAULT_GRAPH))
    p.add_argument("--rank", action="append", default=None)
    p.add_argument("-n", type=int, default=15)
    p.add_argument("--json", default=None, help="also write {input|direction|rank: keywords}")
    args = p.parse_args()
    ranks = args.rank or list(getattr(query, "RANKS", ("weight", "strength")))
    G = load_graph(args.graph)
    table: dict[str, list[str]] = {}
    print(f"graph: {args.graph}\n")
    print("| input | direction | rank | top keywords |")
    print("|---|---|---|---|")
    for sentence, direction in INPUTS:
        for rank in ranks:
            found = query.candidates(G, sentence, direction, args.n, rank)  # type: ignore[arg-type]
            table[f"{sentence}|{direction}|{rank}"] = found.keywords
            print(f"| {sentence} | {direction} | {rank} | {', '.join(found.keywords)} |")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
