"""Issue 6 speed target: N = 300, M = 5 guided generation for "babies cry", warm, batched vs
the paper's way (the N constrained decodes one after another), side by side in one run.

    python benchmarks/guided/speed.py [--n 300] [--m 5] [--model bundled] [--repeats 3] [--threads 2]
        [--input "babies cry"] [--direction cause] [--out benchmarks/guided/speed.json]

Both sides decode the same keyword rows with the same options on the bundled graph and the
bundled seq2seq generator (or ``--model``);
the sequential side calls the same engine once per keyword (batch of one row). Both are timed
warm (the model, graph and spaCy are loaded and one untimed run is made first), the best of
``--repeats`` is reported, and the outputs are checked to be the same.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch

from dpc_decode.constraints import TokenizeOptions
from dpc_decode.generation import generate
from guided_generation.keywords import keyword_rows
from guided_generation.options import GuidedOptions
from guided_generation.pipeline import GuidedGenerator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default="babies cry")
    ap.add_argument("--direction", default="cause")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--m", type=int, default=5)
    ap.add_argument("--num-beams", type=int, default=None)
    ap.add_argument("--model", default="bundled",
                    help="generator (default: the bundled seq2seq one; 'smollm2-135m', ...)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    gen = GuidedGenerator.load(args.model)
    options = GuidedOptions(n=args.n, m=args.m, num_beams=args.num_beams)
    gen.generate(args.input, args.direction, options)  # warm: spaCy, graph, model

    pipeline_times = []
    for _ in range(args.repeats):
        gen.clear_cache()  # time a real decode, not the kept one
        t = time.perf_counter()
        result = gen.generate(args.input, args.direction, options)
        pipeline_times.append(time.perf_counter() - t)

    keywords, _ = gen.graph_keywords(args.input, args.direction, options)
    rows = keyword_rows(keywords, [], "combine", options.n)
    prompt = gen.prompt(args.input, args.direction)
    beam = options.beam_options(options.m)
    batched = sequential = None
    batched_times, sequential_times = [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        batched = gen.decode_rows(prompt, rows, options)
        batched_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        sequential = [generate(gen.model, gen.tokenizer, [prompt], [row.sets], options=beam,
                               eos_token_id=gen.eos_token_id,
                               tokenize=TokenizeOptions(whole_word=True))[0]
                      for row in rows]
        sequential_times.append(time.perf_counter() - t)
    same = sum(
        [o.text for o in a] == [o.text for o in b] for a, b in zip(batched or [], sequential or []))
    record = {
        "model": args.model, "input": args.input, "direction": args.direction,
        "n_rows": len(rows), "m": args.m,
        "num_beams": options.num_beams, "max_new_tokens": options.max_new_tokens,
        "threads": args.threads, "repeats": args.repeats,
        "pipeline_seconds_best": round(min(pipeline_times), 3),
        "pipeline_seconds_all": [round(x, 3) for x in pipeline_times],
        "batched_decode_seconds_best": round(min(batched_times), 3),
        "sequential_decode_seconds_best": round(min(sequential_times), 3),
        "speedup_batched_vs_sequential": round(min(sequential_times) / min(batched_times), 2),
        "rows_with_identical_outputs": f"{same}/{len(rows)}",
        "pipeline_stats": result.stats,
        "machine": f"{platform.machine()}, {torch.get_num_threads()} torch threads, torch {torch.__version__}",
    }
    print(json.dumps(record, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
