"""The small measurements behind the engine's set-up and tight-step choices (issue 24), on the
CPU with 1 thread, each the best of R runs:

* ``masked_fill_ms`` / ``add_row_ms``: forbidding whole rows of (1,500 x 1,000) log-probs with a
  broadcast ``masked_fill_`` against adding a row of -inf/0 (``dpc_decode.masks``);
* ``isin_us`` / ``eq_us``: ``torch.isin`` against ``==`` for one EOS id over (300, 40) tokens
  (``dpc_decode.masks.is_eos_token``);
* ``index_2d_ms`` / ``rows_at_2d_ms`` and ``index_1d_ms`` / ``rows_at_1d_ms``: a (27, 5) node table
  read at (512, 152) nodes (the 512-row shape's candidates) by indexing, against
  ``dpc_decode.tensor_automaton.rows_at`` (a row gather; ``take`` for a 1-D table of 2,700);
  ``index_pair_ms`` / ``rows_at_pair_ms``: the parents' sets met, ``met[input, parent]`` of
  (512, 8, 5) at (512, 152) parents, against a row gather of its (4,096, 5) rows (the search's
  ``states``, the flat row's add included);
* ``lexsort_ms`` / ``descending_order_ms``: (bank desc, score desc) of (512, 152) candidates,
  banks 0-10, 55% of scores -inf (as a step's dropped letters), by two stable sorts against
  one of a packed key (``dpc_decode.beam.descending_order``);
* ``argsort_ms`` / ``topk_ms``: the first 8 of (512, 152) distinct int64 keys in allocation order
  by a stable sort of all of them against ``topk`` (``dpc_decode.beam.Allocation.first``);
* ``topk_rows_ms`` / ``topk_flat_ms``: the best 50 totals of 16 inputs x 8 beams over a
  vocabulary of 1,000 (the engine proxy's shape), as the top 50 of each of the 128 rows and then
  of their 16 x 400, against one ``topk`` of (16, 8,000) (``dpc_decode.search``'s
  ``_neurologic_candidates``; torch's CPU ``topk`` picks a slower algorithm when ``k`` is large
  against the row);
* ``walk_states_ms`` / ``scan_ms``: 300 outputs of 20 tokens walked by ``Automaton.advance`` (a
  ``State`` a token, as ``scan`` and ``run`` walked before) and by ``Automaton.scan`` (what
  reporting the outputs does; the matches too), one set of 4 alternatives each (the per-row
  shape's);
* ``need_python_ms`` / ``need_compile_ms``: the exact need tables of 300 new one-set automata
  (4 alternatives of 1-3 tokens, as ``engine_gpu.py``'s per-row shape) by each automaton's own
  search, against compiling them (``TensorAutomaton.compile``, which solves them all at once)
  minus compiling automata whose tables are already there.

Usage: python benchmarks/engine_micro.py [REPEATS]
"""

from __future__ import annotations

import functools
import gc
import json
import random
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_gpu import random_sets  # noqa: E402

from dpc_decode.automaton import Automaton  # noqa: E402
from dpc_decode.beam import descending_order, lexsort  # noqa: E402
from dpc_decode.tensor_automaton import TensorAutomaton, rows_at  # noqa: E402


def best(fn, repeats: int, inner: int = 1) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return min(times)


def main(repeats: int = 7) -> None:
    torch.set_num_threads(1)
    out: dict[str, float] = {}
    log_probs = torch.randn(1500, 1000)
    blocked = torch.rand(1500) < 0.1
    out["masked_fill_ms"] = best(
        lambda: log_probs.clone().masked_fill_(blocked.unsqueeze(1), float("-inf")), repeats, 20)
    out["add_row_ms"] = best(
        lambda: log_probs.clone().add_(torch.where(blocked, float("-inf"), 0.0).unsqueeze(1)),
        repeats, 20)
    out["clone_ms"] = best(lambda: log_probs.clone(), repeats, 20)  # in both of the above
    out = {k: v * 1e3 for k, v in out.items()}
    tokens = torch.randint(0, 1000, (300, 40))
    eos = torch.tensor([5])
    out["isin_us"] = best(lambda: torch.isin(tokens, eos), repeats, 200) * 1e6
    out["eq_us"] = best(lambda: tokens == eos, repeats, 200) * 1e6

    gen = torch.Generator().manual_seed(0)
    nodes = torch.randint(0, 27, (512, 152), generator=gen)
    table_2d = torch.randint(0, 2, (27, 5), generator=gen).bool()
    table_1d = torch.randint(0, 100, (2700,), generator=gen)
    nodes_1d = torch.randint(0, 2700, (512, 152), generator=gen)
    out["index_2d_ms"] = best(lambda: table_2d[nodes], repeats, 50) * 1e3
    out["rows_at_2d_ms"] = best(lambda: rows_at(table_2d, nodes), repeats, 50) * 1e3
    met = torch.randint(0, 2, (512, 8, 5), generator=gen).bool()  # the beams' sets met
    parents = torch.randint(0, 8, (512, 152), generator=gen)
    inputs, first_beam = torch.arange(512).unsqueeze(1), torch.arange(512).unsqueeze(1) * 8
    out["index_pair_ms"] = best(lambda: met[inputs, parents], repeats, 50) * 1e3
    out["rows_at_pair_ms"] = best(
        lambda: rows_at(met.view(512 * 8, 5), parents + first_beam), repeats, 50) * 1e3
    out["index_1d_ms"] = best(lambda: table_1d[nodes_1d], repeats, 50) * 1e3
    out["rows_at_1d_ms"] = best(lambda: rows_at(table_1d, nodes_1d), repeats, 50) * 1e3
    bank = torch.randint(0, 11, (512, 152), generator=gen)
    score = torch.randn(512, 152, generator=gen) * 5 - 10
    score[torch.rand(512, 152, generator=gen) < 0.55] = float("-inf")
    out["lexsort_ms"] = best(lambda: lexsort(-bank, -score), repeats, 20) * 1e3
    out["descending_order_ms"] = best(lambda: descending_order(bank, score), repeats, 20) * 1e3
    keys = torch.stack([torch.randperm(152 * 153, generator=gen)[:152] for _ in range(512)])
    out["argsort_ms"] = best(lambda: torch.argsort(keys, dim=-1, stable=True)[:, :8], repeats,
                             20) * 1e3
    out["topk_ms"] = best(lambda: keys.topk(8, dim=-1, largest=False).indices, repeats, 20) * 1e3
    log_probs = torch.randn(128, 1000, generator=gen).log_softmax(-1)
    beam_scores = torch.randn(128, 1, generator=gen) - 5

    def rows_then_inputs() -> torch.Tensor:
        row_scores = log_probs.topk(50, dim=1).values + beam_scores  # (128, 50)
        return row_scores.view(16, 400).topk(50, dim=1).values

    out["topk_rows_ms"] = best(rows_then_inputs, repeats, 20) * 1e3
    out["topk_flat_ms"] = best(
        lambda: (log_probs + beam_scores).view(16, 8000).topk(50, dim=1).values, repeats, 20) * 1e3

    walk_rng = random.Random(3)
    walks = [(Automaton(random_sets(walk_rng, 1000, 1, 4)),
              [walk_rng.randrange(2, 1000) for _ in range(20)]) for _ in range(300)]
    out["walk_states_ms"] = best(
        lambda: [functools.reduce(a.advance, x, a.start()) for a, x in walks], repeats, 5) * 1e3
    out["scan_ms"] = best(lambda: [a.scan(x) for a, x in walks], repeats, 5) * 1e3

    rng = random.Random(5)
    python, compiled, tables_there = [], [], []
    gc.disable()  # as in decoding (dpc_decode.batch.gc_paused)
    try:
        for _ in range(repeats):
            sets = [random_sets(rng, 1000, 1, 4) for _ in range(300)]
            fresh = [Automaton(s) for s in sets]
            start = time.perf_counter()
            TensorAutomaton.compile(fresh, "cpu", 1000)
            compiled.append(time.perf_counter() - start)
            searched = [Automaton(s) for s in sets]
            start = time.perf_counter()
            for a in searched:
                a.exact_need_table  # noqa: B018
            python.append(time.perf_counter() - start)
            start = time.perf_counter()
            TensorAutomaton.compile(searched, "cpu", 1000)
            tables_there.append(time.perf_counter() - start)
            gc.collect()
    finally:
        gc.enable()
    out["need_python_ms"] = min(python) * 1e3
    out["need_compile_ms"] = (min(compiled) - min(tables_there)) * 1e3
    print(json.dumps({k: round(v, 3) for k, v in out.items()}))


if __name__ == "__main__":
    main(*map(int, sys.argv[1:2]))
