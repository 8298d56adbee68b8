"""The sampler's top-p filter on a CPU: the values-only nucleus (``_nucleus_by_threshold``)
against the full-vocabulary sort it replaced, side by side in one process, on the default
generator (SmolLM2-135M + LoRA, vocabulary 49,152), with the draws checked identical.

    .venv/bin/python benchmarks/sampling_top_p.py [--repeats 3] [--threads 1] \\
        --out benchmarks/results/sampling_top_p.json

Each input samples 8 answers (temperature 0.7, top-p 0.9, seed 0, 16 new tokens), as
``dpc generate`` does for its sampled keywords; the two paths alternate, best of ``--repeats``
process-CPU seconds each.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

INPUTS = ("babies cry", "the woman tolerated her friend's difficult behavior",
          "my body cast a shadow over the grass", "the car broke down")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from dpc_decode import sampling
    from dpc_decode.options import SamplingOptions
    from guided_generation import GuidedGenerator

    g = GuidedGenerator.load(verifier=None)
    options = SamplingOptions(num_samples=8, temperature=0.7, top_p=0.9, seed=0,
                              max_new_tokens=16, no_repeat_ngram_size=3)
    fast_path = sampling._nucleus_by_threshold

    def run(prompt: str, fast: bool) -> tuple[float, list]:
        sampling._nucleus_by_threshold = fast_path if fast else (lambda scores, top_p: None)
        started = time.process_time()
        found = sampling.sample(g.model, g.tokenizer, [prompt], None, options=options,
                                eos_token_id=g.eos_token_id)[0]
        return time.process_time() - started, [(o.token_ids, o.score) for o in found]

    rows = []
    for text in INPUTS:
        prompt = g.prompt(text, "cause")
        run(prompt, True)  # warm-up
        best = {True: float("inf"), False: float("inf")}
        draws = {}
        for _ in range(args.repeats):
            for fast in (False, True):
                seconds, draws[fast] = run(prompt, fast)
                best[fast] = min(best[fast], seconds)
        rows.append({"input": text, "full_sort_s": round(best[False], 3),
                     "values_only_s": round(best[True], 3),
                     "ratio": round(best[False] / best[True], 2),
                     "same_draws": draws[True] == draws[False]})
    sampling._nucleus_by_threshold = fast_path
    record = {"command": " ".join(["benchmarks/sampling_top_p.py", *sys.argv[1:]]),
              "threads": args.threads, "rows": rows}
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
