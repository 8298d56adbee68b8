"""Which operations DPC's extra time is spent in, on a CPU proxy shape (issue 24; the 300-row one
by default, ``--shared`` for 512 rows sharing the proxy's 5 sets, 8 beams; its prompts drawn
right after the sets, as ``engine_gpu.shared_shape`` does):
torch.profiler's self CPU time per (operation, input shapes), DPC minus the same engine without
constraints, averaged over R alternating profiled decodes of 20 steps (after a warm-up each).

A shape that only DPC has is all extra; one both have is the difference. Comparing two commits:
copy this file into the other's ``benchmarks/`` and run it there too.

Usage: python benchmarks/engine_step_profile.py [REPEATS] [TOP] [--shared]
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_gpu import BEAMS, per_row_shape, shared_shape  # noqa: E402

from dpc_decode import BeamSearchOptions, generate  # noqa: E402


def main(repeats: int = 4, top: int = 12, shared: bool = False) -> None:
    model, inputs, sets = shared_shape(512)[:3] if shared else per_row_shape(300)
    options = BeamSearchOptions(num_beams=BEAMS if shared else 5, max_new_tokens=20)
    spent = {True: collections.Counter(), False: collections.Counter()}
    calls = {True: collections.Counter(), False: collections.Counter()}
    for _ in range(repeats):
        for constraints in (sets, None):
            generate(model, None, inputs, constraints, options=options, eos_token_id=None)
            with torch.profiler.profile(record_shapes=True) as prof:
                generate(model, None, inputs, constraints, options=options, eos_token_id=None)
            for e in prof.key_averages(group_by_input_shape=True):
                key = (e.key, str(e.input_shapes)[:60])
                spent[constraints is not None][key] += e.self_cpu_time_total / repeats
                calls[constraints is not None][key] += e.count / repeats
    keys = set(spent[True]) | set(spent[False])
    diff = {k: spent[True][k] - spent[False].get(k, 0) for k in keys}
    print(f"extra self CPU a decode: {sum(diff.values()) / 1e3:.1f} ms (model ops included: noisy)")
    for k, v in sorted(diff.items(), key=lambda x: -x[1])[:top]:
        print(f"{v / 1e3:7.2f} ms  calls {calls[True][k]:4.0f} / {calls[False].get(k, 0):4.0f}  "
              f"{k[0]} {k[1]}")


if __name__ == "__main__":
    shared = "--shared" in sys.argv
    main(*map(int, [a for a in sys.argv[1:3] if a != "--shared"]), shared=shared)
