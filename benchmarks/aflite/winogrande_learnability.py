"""Which local model has learned WinoGrande? (AFLite's step 1 needs one: issue 41, item 1.)

Both measures use the same held-out split of ``train_l``: the problems of 500 twin pairs
(1,000 problems, twins never split; seed 0), the other 9,234 to train on.

    python benchmarks/aflite/winogrande_learnability.py finetune --out runs/wg/minilm \\
        [--lr 3e-5] [--epochs 3]
        all-MiniLM-L6-v2 fine-tuned as a multiple-choice cross-encoder in WinoGrande's
        substituted form (the standard one of the WinoGrande code: the sentence up to the blank,
        then each option followed by the rest), held-out accuracy every 300 steps
    python benchmarks/aflite/winogrande_learnability.py zero-shot --model smollm2-135m
        a pretrained causal LM, no training: the option whose sentence continues more likely
        (log p(rest | start + option), "partial scoring", Trinh & Le 2018)
    python benchmarks/aflite/winogrande_learnability.py probe --model smollm2-135m --pairs 1500
        AFLite's measures on a pretrained LM's embeddings, no training: each problem's two
        substituted sentences, mean-pooled last hidden states, option1 minus option2 (as
        `dpc aflite` embeds a problem), on the problems of N random twin pairs (seed 1): the
        twin-grouped 5-fold linear probe and PC1 KL of tasks.aflite.measures
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

from tasks.datasets import WinograndeItem, read_winogrande

DATA = ROOT.parent / "shared" / "data" / "winogrande" / "train_l.jsonl"


def split(seed: int = 0, pairs: int = 500) -> tuple[list[WinograndeItem], list[WinograndeItem]]:
    """(train, held-out): the held-out problems are those of ``pairs`` random twin pairs."""
    items = read_winogrande(DATA)
    groups = sorted({it.qid.rsplit("-", 1)[0] for it in items})
    random.Random(seed).shuffle(groups)
    held = set(groups[:pairs])
    return ([it for it in items if it.qid.rsplit("-", 1)[0] not in held],
            [it for it in items if it.qid.rsplit("-", 1)[0] in held])


def substituted(item: WinograndeItem) -> tuple[str, list[str]]:
    """The sentence up to the blank, and each option followed by the rest."""
    at = item.sentence.index("_")
    rest = item.sentence[at + 1:]
    return item.sentence[:at].strip(), [(o + rest).strip() for o in (item.option1, item.option2)]


def finetune(args: argparse.Namespace) -> None:
    from train.cross_encoder import CrossEncoderOptions, train_multiple_choice

    train, held = split()

    def arrays(items: list[WinograndeItem]) -> tuple[list[str], list[list[str]], list[int]]:
        views = [substituted(it) for it in items]
        return [c for c, _ in views], [o for _, o in views], [it.answer - 1 for it in items]

    a, b, y = arrays(train)
    options = CrossEncoderOptions(epochs=args.epochs, batch_size=16, lr=args.lr,
                                  eval_every=300, max_length=96)
    model = train_multiple_choice(a, b, y, options, out=args.out, dev=arrays(held))
    print(json.dumps(model.training_summary, default=float))


def zero_shot(args: argparse.Namespace) -> None:
    import torch

    from train.metrics import causal_log_probs
    from train.models import load_pretrained

    _, held = split()
    loaded = load_pretrained(args.model, progress=False)
    start = time.monotonic()
    prompts, targets = [], []
    for it in held:
        at = it.sentence.index("_")
        for option in (it.option1, it.option2):
            prompts.append((it.sentence[:at] + option).strip())
            targets.append(it.sentence[at + 1:].strip())
    with torch.no_grad():
        scores = causal_log_probs(loaded.model, loaded.tokenizer, prompts, targets,
                                  batch_size=32)
    right = sum((scores[2 * k] > scores[2 * k + 1]) == (it.answer == 1)
                for k, it in enumerate(held))
    print(f"{args.model}: {right}/{len(held)} = {right / len(held):.3f} held-out accuracy "
          f"({time.monotonic() - start:.0f} s)")


def probe(args: argparse.Namespace) -> None:
    import numpy as np
    import torch

    from tasks.aflite.measures import pc1_kl, probe_accuracy
    from train.models import load_pretrained

    items = read_winogrande(DATA)
    groups = sorted({it.qid.rsplit("-", 1)[0] for it in items})
    random.Random(1).shuffle(groups)
    chosen = set(groups[:args.pairs])
    items = [it for it in items if it.qid.rsplit("-", 1)[0] in chosen]
    loaded = load_pretrained(args.model, progress=False)
    model, tokenizer = loaded.model.eval(), loaded.tokenizer
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    start = time.monotonic()
    sentences = [it.sentence.replace("_", o) for it in items for o in (it.option1, it.option2)]
    pooled = []
    with torch.no_grad():
        for k in range(0, len(sentences), 32):
            batch = tokenizer(sentences[k:k + 32], return_tensors="pt", padding=True)
            hidden = model(**batch, output_hidden_states=True).hidden_states[-1]
            mask = batch["attention_mask"].unsqueeze(-1).float()
            pooled.append(((hidden * mask).sum(1) / mask.sum(1)).float().numpy())
    e = np.concatenate(pooled).reshape(len(items), 2, -1)
    x, y = e[:, 0] - e[:, 1], np.array([it.answer - 1 for it in items])
    twins = [it.qid.rsplit("-", 1)[0] for it in items]
    print(f"{args.model}: {len(items)} problems, probe {probe_accuracy(x, y, groups=twins):.3f}, "
          f"PC1 KL {pc1_kl(x, y):.4f}, chance {max(y.mean(), 1 - y.mean()):.3f} "
          f"({time.monotonic() - start:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    f = sub.add_parser("finetune")
    f.add_argument("--out", required=True)
    f.add_argument("--lr", type=float, default=3e-5)
    f.add_argument("--epochs", type=float, default=3)
    z = sub.add_parser("zero-shot")
    z.add_argument("--model", default="smollm2-135m")
    q = sub.add_parser("probe")
    q.add_argument("--model", default="smollm2-135m")
    q.add_argument("--pairs", type=int, default=1500)
    args = parser.parse_args()
    {"finetune": finetune, "zero-shot": zero_shot, "probe": probe}[args.step](args)


if __name__ == "__main__":
    main()
