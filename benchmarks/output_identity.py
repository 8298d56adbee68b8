"""Outputs of the engine on 144 small configurations, to check that a change keeps them.

Three tiny random models (T5 vocab 1,000, T5 vocab 50, GPT-2 vocab 300), 24 random prompts,
constraint shapes (5 / 1 / 16 shared sets, a set or none per row, banned phrases, overlapping
alternatives), EOS on and off, no-repeat n-grams with a minimum length or not, 4 and 8 beams,
2 outputs each; ``--search neurologic`` decodes them under NeuroLogic (where the engine has it).
Run it on two checkouts and compare::

    .venv/bin/python benchmarks/output_identity.py --root OLD_CHECKOUT --out old.json
    .venv/bin/python benchmarks/output_identity.py --root . --out new.json
    .venv/bin/python benchmarks/output_identity.py --compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import torch


def configurations(root: Path, search: dict | None = None) -> dict[str, list]:
    sys.path.insert(0, str(root.resolve()))
    from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

    from dpc_decode import generate

    def t5(vocab: int) -> T5ForConditionalGeneration:
        torch.manual_seed(0)
        return T5ForConditionalGeneration(T5Config(
            vocab_size=vocab, d_model=32, d_ff=64, d_kv=8, num_heads=2, num_layers=2,
            decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)).eval()

    def gpt(vocab: int) -> GPT2LMHeadModel:
        torch.manual_seed(0)
        return GPT2LMHeadModel(GPT2Config(vocab_size=vocab, n_embd=32, n_layer=2, n_head=2,
                                          bos_token_id=0, eos_token_id=1)).eval()

    def sets(rng: random.Random, vocab: int, n: int, alts: int = 3) -> list:
        return [[[rng.randrange(2, vocab) for _ in range(rng.randint(1, 3))] for _ in range(alts)]
                for _ in range(n)]

    out: dict[str, list] = {}
    for name, model, vocab in [("t5", t5(1000), 1000), ("t5small_vocab", t5(50), 50),
                               ("gpt", gpt(300), 300)]:
        rng = random.Random(1)
        inputs = [[rng.randrange(2, vocab) for _ in range(rng.randint(2, 6))] for _ in range(24)]
        cases = {
            "shared5": {"constraints": sets(rng, vocab, 5)},
            "shared1": {"constraints": sets(rng, vocab, 1)},
            "shared16": {"constraints": sets(rng, vocab, 16)},
            "own": {"constraints": [sets(rng, vocab, rng.randint(0, 3), alts=4) for _ in inputs]},
            "banned": {"constraints": sets(rng, vocab, 3),
                       "banned": [[rng.randrange(2, vocab)] for _ in range(20)]},
            "overlap": {"constraints": [[[5, 6, 7], [6]], [[7, 8]], [[8, 5]]]},
        }
        for case, kw in cases.items():
            for eos in (None, "model"):
                for extra in ({}, {"no_repeat_ngram_size": 2, "min_new_tokens": 3}):
                    for beams in (4, 8):
                        res = generate(model, None, inputs, num_beams=beams, max_new_tokens=12,
                                       eos_token_id=eos, num_return_sequences=2, **extra, **kw,
                                       **(search or {}))
                        key = f"{name}/{case}/{eos}/{sorted(extra)}/{beams}"
                        out[key] = [[(list(o.token_ids), round(o.log_prob, 4), o.satisfied)
                                     for o in r] for r in res]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=Path("."), help="the checkout whose engine runs")
    p.add_argument("--out", type=Path)
    p.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    p.add_argument("--search", choices=["dba", "neurologic"],
                   help="the search to decode with (default: the engine's own default)")
    args = p.parse_args()
    if args.compare:
        old, new = (json.loads(f.read_text()) for f in args.compare)
        differ = [k for k in old if old[k] != new.get(k)]
        print(f"{len(old) - len(differ)}/{len(old)} configurations identical; differ: {differ}")
        return
    torch.set_num_threads(2)
    result = configurations(args.root, {"search": args.search} if args.search else None)
    if args.out:
        args.out.write_text(json.dumps(result))
    print(f"{len(result)} configurations")


if __name__ == "__main__":
    main()
