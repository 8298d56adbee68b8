"""Which top-level operations DPC adds to a plain search step (issue 24), by name: the CPU
proxy's 16 rows sharing 5 sets (tiny T5, vocab 1,000, 8 beams, EOS off), ``aten::`` ops of a
20-step minus a 10-step decode over 10 steps (the steps that are not tight), DPC minus plain.
``engine_gpu.py`` counts the same ops (``extra_step_ops``); this names them.

Usage: python benchmarks/engine_op_names.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_gpu import BEAMS, shared_shape, top_level_op_names  # noqa: E402

from dpc_decode import generate  # noqa: E402


def main() -> None:
    model, inputs, sets, _ = shared_shape(16)
    per_step = {}
    for label, constraints in [("dpc", sets), ("plain", None)]:
        runs = {steps: top_level_op_names(lambda c=constraints, s=steps: generate(
            model, None, inputs, c, num_beams=BEAMS, max_new_tokens=s, eos_token_id=None))
            for steps in (10, 20)}
        per_step[label] = {n: (runs[20][n] - runs[10][n]) / 10 for n in runs[20] | runs[10]}
    names = per_step["dpc"].keys() | per_step["plain"].keys()
    extra = {n: per_step["dpc"].get(n, 0) - per_step["plain"].get(n, 0) for n in sorted(names)}
    extra = {n: v for n, v in extra.items() if v}
    print(json.dumps({"extra_step_ops": sum(extra.values()), "by_name": extra}))


if __name__ == "__main__":
    main()
