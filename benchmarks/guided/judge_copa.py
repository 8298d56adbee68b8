"""How well each judge tells COPA-dev's right alternative from the wrong one, per half: the
verifier's cross-encoder, the generator's log-probability (sum, mean per token), its PMI with the
input (sum, mean), and the cross-encoder plus a weight times a generator score, the weight
chosen on items 1-250 only (ties: the larger weight, as when the pipeline's
``verifier_pmi_weight`` was chosen) and then scored on 251-500.

    .venv/bin/python benchmarks/guided/judge_copa.py [--model NAME] --out benchmarks/guided/judge_copa.json

``--model``: the generator whose log-probabilities are read (default: dpc's default generator),
asked in its own input format (:func:`generator_scores`).

Every alternative is scored as the generator's continuation of the premise's prompt
(:func:`train.metrics.sequence_log_probs`, end token included) and of the empty input's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

WEIGHTS = (0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10)


def generator_scores(g, items, prefix=""):
    """``(log P(y | x), log P(y | empty input), tokens)`` of every COPA alternative under the
    generator of ``g`` (a :class:`~guided_generation.GuidedGenerator`), asked in its input format:
    numpy arrays in the order item 1 alternative 1, item 1 alternative 2, item 2 ...
    ``prefix`` goes before every prompt's text (the tokenizer's BOS, where it adds one, is put
    before that by :func:`train.metrics.sequence_log_probs` itself)."""
    from tasks.copa.dataset import as_clause
    from train.metrics import sequence_log_probs

    prompts, texts, empty = [], [], []
    for item in items:
        for alternative in (item.alternative1, item.alternative2):
            prompts.append(prefix + g.prompt(as_clause(item.premise), item.asks_for))
            texts.append(as_clause(alternative))
            empty.append(prefix + g.prompt("", item.asks_for))
    end = g.input_format.end_id(g.tokenizer)
    lp = np.array(sequence_log_probs(g.model, g.tokenizer, prompts, texts, end_id=end))
    prior = np.array(sequence_log_probs(g.model, g.tokenizer, empty, texts, end_id=end))
    n = np.array([len(t) + 1 for t in g.tokenizer([" " + t for t in texts],
                                                  add_special_tokens=False)["input_ids"]])
    return lp, prior, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verifier", default=None, help="verifier folder (default: the bundled one)")
    ap.add_argument("--model", default=None, help="generator (default: dpc's default)")
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    from guided_generation import GuidedGenerator
    from guided_generation.verifier import Verifier
    from tasks.copa.dataset import as_clause, read_copa

    items = read_copa(args.copa)
    g = GuidedGenerator.load(args.model, verifier=None)
    verifier = Verifier.load(args.verifier)
    lp, prior, n = generator_scores(g, items)
    ce = np.concatenate([verifier.scores(as_clause(i.premise), i.asks_for,
                                         [as_clause(i.alternative1), as_clause(i.alternative2)])
                         for i in items])
    first = np.array([i.answer == 1 for i in items])
    halves = {"1-250": slice(0, 250), "251-500": slice(250, 500)}

    def accuracy(score: np.ndarray, half: slice) -> float:
        return round(float(np.mean((score[0::2] > score[1::2])[half] == first[half])), 3)

    scores = {"cross-encoder": ce, "log P(y|x)": lp, "log P(y|x) per token": lp / n,
              "PMI": lp - prior, "PMI per token": (lp - prior) / n}
    rows = {name: {h: accuracy(s, sl) for h, sl in halves.items()} for name, s in scores.items()}
    for name in ("PMI", "PMI per token", "log P(y|x) per token"):
        best = max(WEIGHTS, key=lambda w: (accuracy(ce + w * scores[name], halves["1-250"]), w))
        rows[f"cross-encoder + w x {name} (w = {best}, chosen on 1-250)"] = {
            h: accuracy(ce + best * scores[name], sl) for h, sl in halves.items()}
    record = {"command": " ".join(["benchmarks/guided/judge_copa.py", *sys.argv[1:]]),
              "model": args.model or "default", "items": len(items), "pairwise_accuracy": rows}
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
