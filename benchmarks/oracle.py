"""How often DPC beam search finds the best constrained output, against exhaustive search.

Tiny random models (T5 and GPT-2, vocabulary 6, EOS = 1), random constraint sets, every output
of up to ``max_new_tokens`` scored by teacher forcing; ``length_penalty=0`` so both rank by total
log-probability. For each beam size and with the feasibility mask on and off, reports the share of
cases where beam search returned the optimum, and the mean log-probability gap when it did not.

Two case mixes: the default (1-2 sets of 1-2 alternatives of 1-2 tokens, 5 new tokens: the
budget is rarely tight) and ``--tight``: 2-3 sets of 1-2 alternatives of 1-3 tokens over the four
ids 2-5, so alternatives often overlap, and a budget of the fewest tokens that meet the sets
(found by a breadth-first search here, not by the engine), plus 0 or 1; cases needing more than
5 tokens are redrawn. Where beam search is hardest: most outputs of the budget's length fail.

    flock /tmp/dpc-cpu.lock .venv/bin/python benchmarks/oracle.py --out benchmarks/results/oracle.json
    flock /tmp/dpc-cpu.lock .venv/bin/python benchmarks/oracle.py --tight --beams 2 4 8 16 32 \
        --out benchmarks/results/oracle_tight.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections import deque
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpc_decode import generate
from dpc_decode.automaton import Automaton
from dpc_decode.exhaustive import exhaustive_best

VOCAB, EOS = 6, 1


def build(kind: str, seed: int):
    torch.manual_seed(seed)
    if kind == "t5":
        return T5ForConditionalGeneration(T5Config(
            vocab_size=VOCAB, d_model=32, d_ff=64, d_kv=8, num_heads=4, num_layers=2,
            decoder_start_token_id=0, pad_token_id=0, eos_token_id=EOS)).eval()
    return GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4,
                                      bos_token_id=EOS, eos_token_id=EOS, pad_token_id=0)).eval()


def fewest_tokens(sets: list) -> int:
    """Fewest tokens whose string meets every set: breadth-first over the automaton's states
    (letters and token 0, outside every alternative)."""
    a = Automaton(sets)
    letters = sorted({t for alts in sets for alt in alts for t in alt} | {0})
    seen, queue = {a.start()}, deque([(a.start(), 0)])
    while queue:
        state, n = queue.popleft()
        if a.is_satisfied(state):
            return n
        for t in letters:
            nxt = a.advance(state, t)
            if nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, n + 1))
    raise AssertionError("every set of positive phrases can be met")


def draw(rng: random.Random, tight: bool, max_new_tokens: int) -> tuple[list, int]:
    """Constraint sets and the budget of one case."""
    if not tight:
        sets = [[[rng.randrange(2, VOCAB) for _ in range(rng.randint(1, 2))]
                 for _ in range(rng.randint(1, 2))] for _ in range(rng.randint(1, 2))]
        return sets, max_new_tokens
    while True:
        sets = [[[rng.randrange(2, VOCAB) for _ in range(rng.randint(1, 3))]
                 for _ in range(rng.randint(1, 2))] for _ in range(rng.randint(2, 3))]
        budget = fewest_tokens(sets) + rng.randint(0, 1)
        if budget <= max_new_tokens:
            return sets, budget


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=30)
    p.add_argument("--max-new-tokens", type=int, default=5)
    p.add_argument("--tight", action="store_true",
                   help="overlapping alternatives, budget = fewest tokens (+0 or 1)")
    p.add_argument("--beams", type=int, nargs="+", default=[2, 4, 8, 16])
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    torch.set_num_threads(2)
    beams_list = args.beams
    tally: dict[str, dict[str, list[float]]] = {}
    for kind in ("t5", "gpt2"):
        for case in range(args.cases):
            rng = random.Random(case)
            model = build(kind, case)
            sets, budget = draw(rng, args.tight, args.max_new_tokens)
            prompt = [rng.randrange(2, VOCAB) for _ in range(3)]
            best, _ = exhaustive_best(model, prompt, sets, VOCAB, budget, EOS)
            for beams in beams_list:
                for feasible in (True, False):
                    out = generate(model, None, [prompt], sets, num_beams=beams,
                                   max_new_tokens=budget, length_penalty=0.0,
                                   feasible=feasible)[0][0]
                    key = f"{kind} beams={beams} feasible={feasible}"
                    row = tally.setdefault(key, {"gap": [], "sat": []})
                    row["gap"].append(best - out.log_prob if out.satisfied else float("inf"))
                    row["sat"].append(float(out.satisfied))
    report = {"command": " ".join(sys.argv), "vocab": VOCAB, "tight": args.tight,
              "max_new_tokens": args.max_new_tokens, "cases_per_model": args.cases, "rows": []}
    for key, row in tally.items():
        gaps = row["gap"]
        misses = [g for g in gaps if 1e-4 < g < float("inf")]  # satisfied, below the optimum
        report["rows"].append({
            "setting": key,
            "found_optimum": f"{sum(g <= 1e-4 for g in gaps)}/{len(gaps)}",
            "satisfied": f"{int(sum(row['sat']))}/{len(gaps)}",
            "mean_gap_when_missed": round(statistics.mean(misses), 3) if misses else 0.0,
        })
        print(json.dumps(report["rows"][-1]), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
