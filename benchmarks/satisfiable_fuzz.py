"""Random satisfiable constraints: does every decode end satisfied, and does strict mode accept them?

Each case draws a tiny random model (T5 or GPT-2, vocabulary 12, EOS = 1), a prompt, 1-3 sets of
1-3 alternatives of 1-3 tokens over only five token ids (2-6), so alternatives often overlap (one's
suffix is another's prefix, or one contains another), and in a third of the cases a banned
phrase. The fewest tokens that satisfy the sets is found here by a breadth-first search over
token strings (the alphabet and one token outside it, never completing a ban), independent of
``Automaton.need``; cases with no satisfying output are skipped. The budget ``max_new_tokens`` is
that minimum plus 0, 0, 1 or 2 tokens, and the beam 1, 2 or 4 wide.

Counted: cases, cases whose best output is unsatisfied (want 0), cases where ``strict=True``
raised (want 0: every case is satisfiable), and of the cases the ones where overlaps matter (the
minimum is below the shortest alternatives added up).

    flock /tmp/dpc-cpu.lock .venv/bin/python benchmarks/satisfiable_fuzz.py --out benchmarks/results/satisfiable_fuzz.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import deque
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpc_decode import UnsatisfiableConstraintsError, generate
from dpc_decode.automaton import Automaton

VOCAB, EOS, PAD = 12, 1, 0
LETTERS = range(2, 7)  # constraint tokens: few, so alternatives overlap
OUTSIDE = 9  # a token in no phrase


def build(kind: str, seed: int):
    torch.manual_seed(seed)
    if kind == "t5":
        return T5ForConditionalGeneration(T5Config(
            vocab_size=VOCAB, d_model=32, d_ff=64, d_kv=8, num_heads=4, num_layers=2,
            decoder_start_token_id=PAD, pad_token_id=PAD, eos_token_id=EOS)).eval()
    return GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4,
                                      bos_token_id=EOS, eos_token_id=EOS, pad_token_id=PAD)).eval()


def fewest_tokens(sets: list, banned: list, limit: int = 12) -> int | None:
    """Shortest token string meeting every set without a ban, by breadth-first search over the
    automaton's states (a string's state decides everything that follows), or None."""
    a = Automaton(sets, banned)
    tokens = sorted({t for alts in sets for alt in alts for t in alt} | {t for p in banned for t in p})
    start = a.start()
    seen, queue = {start}, deque([(start, 0)])
    while queue:
        state, n = queue.popleft()
        if a.is_satisfied(state):
            return n
        if n == limit:
            continue
        for t in [*tokens, OUTSIDE]:
            nxt = a.advance(state, t)
            if not nxt.violated and nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, n + 1))
    return None


def draw_case(rng: random.Random) -> tuple[list, list]:
    sets = [[[rng.choice(LETTERS) for _ in range(rng.randint(1, 3))]
             for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 3))]
    banned = ([[rng.choice([*LETTERS, 7]) for _ in range(rng.randint(1, 2))]]
              if rng.random() < 1 / 3 else [])
    return sets, banned


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=1500, help="cases drawn (unsatisfiable ones skipped)")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    torch.set_num_threads(2)
    models = {(kind, seed): build(kind, seed) for kind in ("t5", "gpt2") for seed in range(4)}
    tally = {"cases": 0, "skipped_unsatisfiable": 0, "overlap_cases": 0, "unsatisfied": 0,
             "strict_raised": 0}
    failures: list[dict] = []
    began = time.perf_counter()
    for case in range(args.cases):
        rng = random.Random(case)
        sets, banned = draw_case(rng)
        fewest = fewest_tokens(sets, banned)
        if fewest is None:
            tally["skipped_unsatisfiable"] += 1
            continue
        kind, seed = rng.choice(sorted(models))
        prompt = [rng.randrange(2, VOCAB) for _ in range(3)]
        budget = max(1, fewest + rng.choice([0, 0, 1, 2]))
        beams = rng.choice([1, 2, 4])
        kw = {"banned": banned or None, "num_beams": beams, "max_new_tokens": budget,
              "eos_token_id": EOS}
        tally["cases"] += 1
        shortest_sum = sum(min(len(alt) for alt in alts) for alts in sets)
        tally["overlap_cases"] += fewest < shortest_sum
        best = generate(models[kind, seed], None, [prompt], sets, **kw)[0][0]
        raised = False
        try:
            generate(models[kind, seed], None, [prompt], sets, strict=True, **kw)
        except UnsatisfiableConstraintsError:
            raised = True
        tally["unsatisfied"] += not best.satisfied
        tally["strict_raised"] += raised
        if not best.satisfied or raised:
            failures.append({"case": case, "model": f"{kind}/{seed}", "sets": sets,
                             "banned": banned, "fewest": fewest, "budget": budget,
                             "beams": beams, "output": list(best.token_ids),
                             "satisfied": best.satisfied, "strict_raised": raised})
    report = {"command": " ".join(["benchmarks/satisfiable_fuzz.py", *sys.argv[1:]]),
              **tally, "seconds": round(time.perf_counter() - began, 1), "failures": failures}
    print(json.dumps({k: v for k, v in report.items() if k != "failures"}))
    for f in failures[:20]:
        print(json.dumps(f))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
