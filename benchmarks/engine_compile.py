"""Would a compiled constrained step pay for its compile time? (issue 24, "fewer, fused step ops")

The tight steps' feasibility mask (:func:`dpc_decode.masks.mask_constraints`) is the constrained
step's largest run of small tensor operations (about 30 with 16 sets). This swaps it for
``torch.compile(mask_constraints, dynamic=True)`` (dynamic: one compile for every
``tokens_left``; with static shapes it recompiled at every step and hit dynamo's limit) and
decodes the proxy shapes of ``engine_gpu.py`` (tiny T5, vocab 1,000, 8 beams, 20 new tokens,
EOS off, 16 rows) with 5 and 16 shared sets: the eager decode, the plain decode, the first
compiled decode (the compile included) and the best of R compiled ones after it.

On a GPU, ``--mode reduce-overhead`` asks for CUDA graphs. Nothing here changes the library: the
eager path stays the default unless a compiled one wins with its compile time counted.

Usage: python benchmarks/engine_compile.py [--device cpu|cuda] [--repeats R] [--mode MODE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_gpu import shared_shape, synchronize  # noqa: E402

import dpc_decode.masks as masks  # noqa: E402
from dpc_decode import BeamSearchOptions, generate  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--mode", default=None, help="torch.compile mode (e.g. reduce-overhead)")
    args = p.parse_args()
    device = torch.device(args.device)
    model, inputs, shared5, shared16 = shared_shape(16, device)
    options = BeamSearchOptions(num_beams=8, max_new_tokens=20)

    def decode(constraints) -> float:
        synchronize(device)
        start = time.perf_counter()
        generate(model, None, inputs, constraints, options=options, eos_token_id=None)
        synchronize(device)
        return time.perf_counter() - start

    eager = masks.mask_constraints
    for label, sets in (("5 shared sets", shared5), ("16 shared sets", shared16)):
        masks.mask_constraints = eager
        decode(sets)
        row = {"shape": label,
               "eager_ms": min(decode(sets) for _ in range(args.repeats)) * 1000,
               "plain_ms": min(decode(None) for _ in range(args.repeats)) * 1000}
        torch._dynamo.reset()
        masks.mask_constraints = torch.compile(eager, dynamic=True, mode=args.mode)
        try:
            row["compiled_first_call_s"] = decode(sets)
            row["compiled_ms"] = min(decode(sets) for _ in range(args.repeats)) * 1000
        finally:
            masks.mask_constraints = eager
        row["calls_to_repay_compile"] = (
            round((row["compiled_first_call_s"] * 1000 - row["compiled_ms"])
                  / (row["eager_ms"] - row["compiled_ms"]))
            if row["compiled_ms"] < row["eager_ms"] else None)
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}),
              flush=True)


if __name__ == "__main__":
    main()
