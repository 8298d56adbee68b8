"""Time of one ``candidates(G, sentence, direction, n=300, rank=R)`` call on the bundled graph
(lemmas given, so spaCy is not timed): the mean over 3 inputs x 2 directions x 5 rounds, for
every rank of ``cause_effect_graph.query.RANKS`` (``weight`` and ``strength`` on a checkout
older than that tuple).

    python benchmarks/graph/candidates_speed.py

Run it with ``PYTHONPATH`` set to another checkout to compare two versions side by side.
"""

from __future__ import annotations

import time

from cause_effect_graph import query
from cause_effect_graph.query import candidates
from cause_effect_graph.store import default_graph

INPUTS = {"babies cry": ["baby", "cry"], "the car broke down": ["car", "break"],
          "she missed the bus": ["miss", "bus"]}


def main(rounds: int = 5) -> None:
    G = default_graph()
    calls = [(s, d, lemmas) for s, lemmas in INPUTS.items() for d in ("cause", "effect")]
    for rank in getattr(query, "RANKS", ("weight", "strength")):
        for s, d, lemmas in calls:  # warm the graph's adjacency caches
            candidates(G, s, d, 300, rank, lemmatizer=lambda _, x=lemmas: x)  # type: ignore[arg-type]
        started = time.perf_counter()
        for _ in range(rounds):
            for s, d, lemmas in calls:
                result = candidates(G, s, d, 300, rank,  # type: ignore[arg-type]
                                    lemmatizer=lambda _, x=lemmas: x)
        per_call = (time.perf_counter() - started) / (rounds * len(calls))
        print(f"{rank:8s} {per_call * 1000:.2f} ms per call; last: {result.keywords[:5]} "
              f"{[round(x, 6) for x in result.scores[:3]]}")


if __name__ == "__main__":
    main()
