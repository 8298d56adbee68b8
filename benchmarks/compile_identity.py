"""The tensors ``TensorAutomaton.compile`` lays out for 300 random batches, to check that a change
to compiling keeps them value for value. Batches of 1-8 rows over 1-6 automata: 0-4 sets of 1-4
alternatives of 1-4 tokens, 0-2 banned phrases, whole-word alternatives in some, vocabularies of
6, 12 and 40 tokens, the model's vocabulary given or not. Run it on two checkouts and compare::

    .venv/bin/python benchmarks/compile_identity.py --root OLD_CHECKOUT --out old.json
    .venv/bin/python benchmarks/compile_identity.py --root . --out new.json
    .venv/bin/python benchmarks/compile_identity.py --compare old.json new.json

Values are compared; dtypes are reported beside them (the symbol table's narrowed on purpose).
Before 2026-11-27's third session ``leaving`` held the letters' symbols, now their tokens:
``--leaving-as-tokens`` maps the first file's symbols through each node's alphabet first.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path


def batches(root: Path) -> list[dict]:
    sys.path.insert(0, str(root.resolve()))
    import torch

    from dpc_decode.automaton import Automaton
    from dpc_decode.errors import ConstraintError
    from dpc_decode.tensor_automaton import TensorAutomaton

    rng = random.Random(1)

    def phrase(vocab: int) -> list[int]:
        return [rng.randrange(1, vocab) for _ in range(rng.randint(1, 4))]

    continues = [rng.random() < 0.3 for _ in range(40)]  # one tokenizer's word pieces
    out = []
    for _ in range(300):
        vocab = rng.choice([6, 12, 40])
        automata = []
        for _ in range(rng.randint(1, 6)):
            n = rng.randint(0, 4)
            sets = [[phrase(vocab) for _ in range(rng.randint(1, 4))] for _ in range(n)]
            banned = [phrase(vocab) for _ in range(rng.choice([0, 0, 1, 2]))]
            whole = None
            if n and rng.random() < 0.3:
                whole = [[rng.random() < 0.5 for _ in s] for s in sets]
            try:
                automata.append(Automaton(sets, banned, whole, continues if whole else None))
            except ConstraintError:
                continue
        if not automata:
            continue
        rows = [rng.choice(automata) for _ in range(rng.randint(1, 8))]
        ta = TensorAutomaton.compile(rows, "cpu", rng.choice([None, 41, 60]))
        fields = [k for k in ta.__dataclass_fields__ if k != "automata"]
        out.append({
            "values": {k: getattr(ta, k).tolist() if isinstance(getattr(ta, k), torch.Tensor)
                       else getattr(ta, k) for k in fields},
            "dtypes": {k: str(getattr(ta, k).dtype) for k in fields
                       if isinstance(getattr(ta, k), torch.Tensor)},
        })
    return out


def leaving_as_tokens(values: dict) -> dict:
    """``values`` with ``leaving`` (symbols, each node's in its automaton's alphabet) as tokens.
    A distinct automaton's nodes run from its root to the next root; any row using it has its
    alphabet."""
    roots = values["root"]
    starts = sorted(set(roots)) + [len(values["leaving"])]
    owner: list = []
    for k in range(len(starts) - 1):
        owner += [values["alphabet"][roots.index(starts[k])]] * (starts[k + 1] - starts[k])
    return {**values, "leaving": [[owner[n][s] for s in row]
                                  for n, row in enumerate(values["leaving"])]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=Path("."))
    p.add_argument("--out", type=Path)
    p.add_argument("--compare", nargs=2, type=Path)
    p.add_argument("--leaving-as-tokens", action="store_true",
                   help="the first file's leaving holds symbols (before 2026-11-27's third "
                        "session)")
    args = p.parse_args()
    if args.compare:
        old, new = (json.loads(f.read_text()) for f in args.compare)
        if args.leaving_as_tokens:
            old = [{**a, "values": leaving_as_tokens(a["values"])} for a in old]
        differ = [i for i, (a, b) in enumerate(zip(old, new)) if a["values"] != b["values"]]
        fields = sorted({k for a, b in zip(old, new) for k in a["values"]
                         if a["values"][k] != b["values"].get(k)})
        dtypes = sorted({f"{k}: {a['dtypes'][k]} -> {b['dtypes'][k]}" for a, b in zip(old, new)
                         for k in a["dtypes"] if a["dtypes"][k] != b["dtypes"].get(k)})
        same = len(old) == len(new)
        print(f"{len(old) - len(differ) if same else 0}/{len(old)} batches' values identical; "
              f"differ: {differ}; fields that differ: {fields}; dtypes changed: {dtypes}")
        return
    result = batches(args.root)
    args.out.write_text(json.dumps(result))
    print(f"{len(result)} batches")


if __name__ == "__main__":
    main()
