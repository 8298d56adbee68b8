"""Weight-average two INLI classifiers fine-tuned from the same MiniLM ("model soup",
Wortsman et al. 2022) and choose the mixing weight on their shared dev split, never on val.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/inli/soup.py runs/inli/full3 \
        runs/inli/full_bundled --out runs/inli/soup

Both models must have been trained with the same ``--dev-fraction`` and split seed (their
``inli_classifier.json`` says), so that the dev premises were held out of both. For each weight
``w`` in ``--weights`` the soup ``w * A + (1 - w) * B`` is scored on those dev premises (and,
for reference, the probability ensemble of A and B, which is twice the size and cannot be
bundled); the soup with the best dev accuracy is saved to ``--out`` as an ordinary classifier
folder (``dpc inli eval FILE --model OUT``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.datasets import read_inli  # noqa: E402
from tasks.inli.classifier import (  # noqa: E402
    CLASSIFIER_FILE,
    InliClassifier,
    evaluate,
    examples,
    split_by_premise,
)


def _meta(folder: str) -> dict:
    return json.loads((Path(folder) / CLASSIFIER_FILE).read_text(encoding="utf-8"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--out", required=True)
    p.add_argument("--train", default=str(ROOT.parent / "shared/data/inli/train.csv"))
    p.add_argument("--weights", default="0,0.25,0.4,0.5,0.6,0.75,1")
    args = p.parse_args()
    meta_a, meta_b = _meta(args.a), _meta(args.b)
    keys = ("dev_fraction", "split_seed", "hypothesis_only")
    if any(meta_a[k] != meta_b[k] for k in keys):
        sys.exit(f"the two classifiers were not trained on the same split: {meta_a} vs {meta_b}")
    _, dev = split_by_premise(read_inli(args.train).rows, meta_a["dev_fraction"],
                              meta_a["split_seed"])
    torch.manual_seed(0)
    a, b = InliClassifier.load(args.a), InliClassifier.load(args.b)
    premises, hypotheses, _ = examples(dev)
    pa, pb = a.probabilities(premises, hypotheses), b.probabilities(premises, hypotheses)
    gold = np.array([i for _ in dev for i in range(4)])
    print(f"dev: {len(dev)} premises ({meta_a['dev_fraction']} of train, seed "
          f"{meta_a['split_seed']})")
    print(f"  A {args.a}: {(pa.argmax(1) == gold).mean():.3f}   B {args.b}: "
          f"{(pb.argmax(1) == gold).mean():.3f}   ensemble (mean probability): "
          f"{((pa + pb).argmax(1) == gold).mean():.3f}")
    original = {k: v.clone() for k, v in a.model.state_dict().items()}
    best = (-1.0, None)
    for w in (float(x) for x in args.weights.split(",")):
        a.model.load_state_dict(_mix_state(original, b.model.state_dict(), w))
        r = evaluate(a, dev)
        print(f"  soup w={w:.2f}: dev overall {r.overall:.3f} implied {r.implied:.3f}")
        if r.overall > best[0]:
            best = (r.overall, w)
    acc, w = best
    print(f"best by dev: w={w:.2f} ({acc:.3f}); saved to {args.out}")
    a.model.load_state_dict(_mix_state(original, b.model.state_dict(), w))
    a.model.save(args.out)
    shutil.copyfile(Path(args.a) / CLASSIFIER_FILE, Path(args.out) / CLASSIFIER_FILE)
    (Path(args.out) / "soup.json").write_text(json.dumps(
        {"a": args.a, "b": args.b, "weight_of_a": w, "dev_accuracy": acc}, indent=1) + "\n",
        encoding="utf-8")


def _mix_state(sa: dict[str, torch.Tensor], sb: dict[str, torch.Tensor], w: float
               ) -> dict[str, torch.Tensor]:
    return {k: (w * v + (1 - w) * sb[k]) if v.is_floating_point() else v for k, v in sa.items()}


if __name__ == "__main__":
    main()
