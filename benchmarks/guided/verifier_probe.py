"""A first measure for issue 39's plausibility verifier: how well a cross-encoder fine-tuned on
e-CARE's causal questions (never on COPA) tells the right cause or effect from the wrong one.

The model reads ``("<premise> because" | "<premise>, so", candidate)`` and scores it; it is
trained as a two-way multiple choice on e-CARE ``causal_reasoning_train`` (the wrong hypothesis
is the hard negative), less a held-back tenth, with :func:`train.cross_encoder.
train_multiple_choice`. Reported: pairwise accuracy on the held-back e-CARE tenth and on COPA-dev
items 1-250 and 251-500 (the two halves issue 39's protocol fixes), with the training time.

    .venv/bin/python benchmarks/guided/verifier_probe.py --out runs/verifier_probe \\
        --json benchmarks/guided/verifier_probe.json

This is a probe, not the verifier the pipeline will use: the training data is e-CARE only (no
CausalBank pairs, no ConceptNet edges, no cheap negatives), and nothing reads the model yet.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.copa.dataset import read_copa  # noqa: E402
from train.cross_encoder import CrossEncoderOptions, train_multiple_choice  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def question(premise: str, asks_for: str) -> str:
    """The verifier's first text: the premise, asking for its cause or its effect."""
    text = premise.strip().rstrip(".")
    return f"{text} because" if asks_for == "cause" else f"{text}, so"


def read_ecare(path: Path) -> list[tuple[str, list[str], int]]:
    items = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            items.append((question(row["premise"], row["ask-for"]),
                          [row["hypothesis1"], row["hypothesis2"]], int(row["label"])))
    return items


def accuracy(model, items) -> float:
    scores = model.choice_scores([c for c, _, _ in items], [h for _, h, _ in items])
    return float((scores.argmax(1) == [y for _, _, y in items]).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="model folder (resumable)")
    ap.add_argument("--json", default=None, help="write the numbers here")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--max-minutes", type=float, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    items = read_ecare(DATA / "ecare" / "causal_reasoning_train.jsonl")
    random.Random(args.seed).shuffle(items)
    held = items[: len(items) // 10]
    train = items[len(items) // 10:]
    copa = [(question(i.premise, i.asks_for), [i.alternative1, i.alternative2], i.answer - 1)
            for i in read_copa(DATA / "copa" / "copa-dev.xml")]
    started = time.perf_counter()
    model = train_multiple_choice(
        [c for c, _, _ in train], [h for _, h, _ in train], [y for _, _, y in train],
        CrossEncoderOptions(epochs=args.epochs, batch_size=16, max_length=64, seed=args.seed,
                            max_minutes=args.max_minutes, lr=3e-5),
        out=args.out)
    seconds = time.perf_counter() - started
    result = {"train_items": len(train), "held_back_items": len(held), "epochs": args.epochs,
              "train_seconds": round(seconds, 1),
              "ecare_held_back": round(accuracy(model, held), 4),
              "copa_dev_1_250": round(accuracy(model, copa[:250]), 4),
              "copa_dev_251_500": round(accuracy(model, copa[250:]), 4),
              "command": " ".join(["benchmarks/guided/verifier_probe.py", *sys.argv[1:]])}
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
