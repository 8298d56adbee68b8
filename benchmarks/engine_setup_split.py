"""Where the CPU proxy's 300-row shape spends DPC's extra time (issue 24): set-up vs steps.

The proxy of ``benchmarks/engine_gpu.py --proxy`` (tiny T5, vocab 1,000, 1 thread, 5 beams, EOS
off), 300 rows each with its own set of 4 alternatives: the best of R runs of DPC and of the
same engine without constraints, at 1 step (almost only set-up) and at 20 steps; then, over R
DPC runs at 20 steps, the time inside ``TensorAutomaton.compile`` (the automata laid out as
tensors), of which ``_Tables.build`` (the per-automaton tables), and ``generation._report`` (the
outputs: the reference automaton walked once per output).

Usage: python benchmarks/engine_setup_split.py [REPEATS]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_gpu import per_row_shape  # noqa: E402

import dpc_decode.generation as generation  # noqa: E402
import dpc_decode.tensor_automaton as tensor_automaton  # noqa: E402
from dpc_decode import BeamSearchOptions, generate  # noqa: E402


def main(repeats: int = 5) -> None:
    model, inputs, sets = per_row_shape(300)
    out: dict[str, float] = {}
    for steps in (1, 20):
        options = BeamSearchOptions(num_beams=5, max_new_tokens=steps)
        for name, constraints in (("dpc", sets), ("plain", None)):
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                generate(model, None, inputs, constraints, options=options, eos_token_id=None)
                times.append(time.perf_counter() - start)
            out[f"{name}_{steps}_steps_ms"] = round(min(times) * 1000, 1)
    spent = {"compile": 0.0, "build": 0.0, "report": 0.0}

    def timed(fn, key):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - start
        return wrapper

    build = tensor_automaton._Tables.build.__func__
    tensor_automaton._Tables.build = classmethod(timed(build, "build"))
    compile_ = tensor_automaton.TensorAutomaton.compile.__func__
    tensor_automaton.TensorAutomaton.compile = classmethod(timed(compile_, "compile"))
    generation._report = timed(generation._report, "report")
    options = BeamSearchOptions(num_beams=5, max_new_tokens=20)
    for _ in range(repeats):
        generate(model, None, inputs, sets, options=options, eos_token_id=None)
    out.update({f"{k}_ms_per_call": round(v / repeats * 1000, 1) for k, v in spent.items()})
    print(json.dumps(out))


if __name__ == "__main__":
    main(*map(int, sys.argv[1:2]))
