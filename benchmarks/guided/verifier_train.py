"""Train the plausibility verifier (issue 39) and measure it: pairwise accuracy on held-back
e-CARE questions and on COPA-dev items 1-250 and 251-500 (never trained on).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/guided/verifier_train.py --out runs/verifier \\
        [--encoder runs/verifier_probe/encoder] [--max-minutes 45] --json benchmarks/guided/verifier.json

Data: :func:`train.verifier.verifier_items` (e-CARE questions with their hard negatives, e-CARE
pairs and ConceptNet edges with cheap negatives). The run is resumable (``--out``).
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

from collections import Counter  # noqa: E402

from guided_generation.verifier import THRESHOLD_FILE, best_threshold  # noqa: E402
from tasks.copa.dataset import read_copa  # noqa: E402
from train.cross_encoder import CrossEncoderOptions, train_multiple_choice  # noqa: E402
from train.verifier import question, verifier_items  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def accuracy(model, items) -> float:
    scores = model.choice_scores([q for q, _ in items], [[r, w] for _, (r, w) in items])
    return float((scores[:, 0] > scores[:, 1]).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--encoder", default=None, help="start from this encoder folder")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--max-minutes", type=float, default=None)
    ap.add_argument("--pairs", type=int, default=6000)
    ap.add_argument("--conceptnet", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--bundle", default=None, metavar="DIR",
                    help="also save the model here in float16 with its threshold (the bundled "
                    "verifier: guided_generation/verifier_model)")
    args = ap.parse_args()
    items, held = verifier_items(DATA, seed=args.seed, pairs=args.pairs, conceptnet=args.conceptnet)
    rng = random.Random(args.seed + 1)
    labels = [rng.randrange(2) for _ in items]
    choices = [[i.right, i.wrong] if y == 0 else [i.wrong, i.right] for i, y in zip(items, labels)]
    print(json.dumps(Counter(i.source for i in items)), file=sys.stderr)
    started = time.perf_counter()
    model = train_multiple_choice(
        [i.question for i in items], choices, labels,
        CrossEncoderOptions(encoder=args.encoder, epochs=args.epochs, batch_size=16,
                            max_length=64, seed=args.seed, max_minutes=args.max_minutes,
                            lr=3e-5),
        out=args.out)
    seconds = time.perf_counter() - started
    copa = [(question(i.premise, i.asks_for),
             ((i.alternative1, i.alternative2) if i.answer == 1 else (i.alternative2, i.alternative1)))
            for i in read_copa(DATA / "copa" / "copa-dev.xml")]
    result = {"items": dict(Counter(i.source for i in items)), "held_back": len(held),
              "encoder": args.encoder or "all-MiniLM-L6-v2", "epochs": args.epochs,
              "train_seconds": round(seconds, 1),
              "ecare_held_back": round(accuracy(model, [(i.question, (i.right, i.wrong)) for i in held]), 4),
              "copa_dev_1_250": round(accuracy(model, copa[:250]), 4),
              "copa_dev_251_500": round(accuracy(model, copa[250:]), 4),
              "command": " ".join(["benchmarks/guided/verifier_train.py", *sys.argv[1:]])}
    held_scores = model.choice_scores([i.question for i in held], [[i.right, i.wrong] for i in held])
    threshold = best_threshold(held_scores[:, 0].tolist(), held_scores[:, 1].tolist())
    result["threshold"] = round(threshold, 4)
    result["held_back_right_accepted"] = round(float((held_scores[:, 0] >= threshold).mean()), 4)
    result["held_back_wrong_rejected"] = round(float((held_scores[:, 1] < threshold).mean()), 4)
    if args.bundle:
        model.save(args.bundle, half=True)
        Path(args.bundle, THRESHOLD_FILE).write_text(json.dumps(
            {"threshold": result["threshold"], "measured": {k: v for k, v in result.items()
                                                             if k != "threshold"}}, indent=1)
            + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
