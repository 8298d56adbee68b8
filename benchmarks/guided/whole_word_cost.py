"""What whole-word keyword matching and the constraints cost the engine, on the guided rows.

    .venv/bin/python benchmarks/guided/whole_word_cost.py [--rows 100] [--threads 2]

The graph's top ``--rows`` causes of "babies cry" are decoded as constrained rows with the bundled
seq2seq generator (5 beams, top 5, 16 new tokens), with and without
``TokenizeOptions(whole_word=True)``, twice each alternating, then the same rows without
constraints; wall seconds are printed (benchmarks/guided/RESULTS.md, speed section).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from dpc_decode.constraints import TokenizeOptions
    from dpc_decode.generation import generate
    from guided_generation import GuidedGenerator, GuidedOptions
    from guided_generation.keywords import keyword_rows

    g = GuidedGenerator.load("bundled")
    options = GuidedOptions(n=args.rows, m=5, num_beams=5, max_new_tokens=16)
    keywords, _ = g.graph_keywords("babies cry", "cause", options)
    rows = keyword_rows(keywords, (), "combine", args.rows, False)
    prompts = [g.prompt("babies cry", "cause")] * len(rows)
    sets = [r.sets for r in rows]
    for whole_word in (True, False, True, False):
        started = time.perf_counter()
        generate(g.model, g.tokenizer, prompts, sets, options=options.beam_options(5),
                 eos_token_id=g.eos_token_id, tokenize=TokenizeOptions(whole_word=whole_word))
        print(f"whole_word={whole_word}: {len(rows)} rows {time.perf_counter() - started:.2f} s",
              flush=True)
    started = time.perf_counter()
    generate(g.model, g.tokenizer, prompts, None, options=options.beam_options(5),
             eos_token_id=g.eos_token_id)
    print(f"unconstrained: {len(rows)} rows {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
