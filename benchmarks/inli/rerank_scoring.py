"""Cost of the label rerank's scoring: every candidate read under the three label prompts.

Side by side on the same candidates (the 4 beams of the constrained search for each label of the
first N val premises, bundled generator): ``flat`` scores every (prompt, candidate) pair as its
own row (prompt re-read for each candidate, as the first version did); ``grouped`` is
:func:`tasks.inli.hypotheses.label_log_posteriors` (each label's prompt read once for all the
candidates of a premise). Prints both times, their ratio and the largest difference of the
posteriors.

Usage: python benchmarks/inli/rerank_scoring.py [N]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.datasets import read_inli  # noqa: E402
from tasks.inli.hypotheses import (  # noqa: E402
    DEFAULT_GENERATOR,
    GENERATED_LABELS,
    VariantGenerator,
    label_log_posteriors,
    prompt,
)
from train.metrics import causal_log_probs  # noqa: E402


def flat(gen: VariantGenerator, items: list[tuple[str, str, str, str]]) -> list[float]:
    requests = [(prompt(p, h, lab), t) for p, h, _, t in items for lab in GENERATED_LABELS]
    lp = torch.tensor(causal_log_probs(gen.model, gen.tokenizer, [r[0] for r in requests],
                                       [r[1] for r in requests], end_id=gen.eos[-1],
                                       batch_size=16)).view(len(items), -1).log_softmax(-1)
    return [float(lp[i, GENERATED_LABELS.index(it[2])]) for i, it in enumerate(items)]


def main(n: int = 10) -> None:
    torch.set_num_threads(2)
    gen = VariantGenerator.load(DEFAULT_GENERATOR)
    rows = read_inli(ROOT / ".." / "shared" / "data" / "inli" / "val.csv").rows[:n]
    import dpc_decode

    items = []
    for r in rows:
        for lab in GENERATED_LABELS:
            outs = dpc_decode.generate(gen.model, gen.tokenizer, [prompt(r.premise,
                                       r.implied_entailment, lab)], None, num_beams=4,
                                       num_return_sequences=4, max_new_tokens=32,
                                       eos_token_id=gen.eos + gen.sentence_end,
                                       generation_config=None)[0]
            items += [(r.premise, r.implied_entailment, lab, o.text.strip()) for o in outs
                      if o.text.strip()]
    times = {}
    for name, fn in (("flat", flat), ("grouped", label_log_posteriors)):
        fn(gen, items[:6])  # warm-up
        start = time.perf_counter()
        scores = fn(gen, items)
        times[name] = (time.perf_counter() - start, scores)
    diff = max(abs(a - b) for a, b in zip(times["flat"][1], times["grouped"][1]))
    print(json.dumps({"premises": n, "candidates": len(items),
                      "flat_s": round(times["flat"][0], 2),
                      "grouped_s": round(times["grouped"][0], 2),
                      "speedup": round(times["flat"][0] / times["grouped"][0], 2),
                      "max_abs_difference": float(f"{diff:.2e}")}))


if __name__ == "__main__":
    main(*map(int, sys.argv[1:2]))
