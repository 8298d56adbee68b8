"""Where the CPU proxy's 300-row shape spends DPC's extra time (issue 24): set-up vs steps,
with the constraints seen before (warm) and new (cold).

The proxy of ``benchmarks/engine_gpu.py --proxy`` (tiny T5, vocab 1,000, 1 thread, 5 beams, EOS
off), 300 rows each with its own set of 4 alternatives.

* warm: the same sets every run, so the automata come from the cache of
  :func:`dpc_decode.batch._automaton` (as in ``engine_gpu.py``, which repeats one call): the best
  of R runs of DPC and of the same engine without constraints, at 1 step (almost only set-up) and
  at 20 steps; then, over R DPC runs at 20 steps, the time inside
  ``TensorAutomaton.compile`` (the automata laid out as tensors), of which ``_Tables.build``,
  and ``generation._report`` (the outputs: the reference automaton walked once per output).
* cold: new sets every run (drawn the same way, other seeds), as the N x M pipeline meets
  them: the median of R paired runs, DPC then plain, at 20 steps, and the set-up phases of R
  fresh batches outside the decode: ``prepare_constraints`` (checks), building the automata
  (``Automaton``) and ``TensorAutomaton.compile`` (with the exact need tables it reads, which
  it solves for all automata at once where it can, as in decoding).

Usage: python benchmarks/engine_setup_split.py [REPEATS]
       [--device cuda --model t5-small --dtype bfloat16]

On a GPU (``PYTHONPATH=.``), the same split for the issue's 300-row row on a model of t5-small
size: where the host time DPC adds goes there.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import torch  # noqa: E402
from engine_gpu import per_row_shape, random_sets, synchronize, vocab_of  # noqa: E402

import dpc_decode.generation as generation  # noqa: E402
import dpc_decode.tensor_automaton as tensor_automaton  # noqa: E402
from dpc_decode import BeamSearchOptions, generate  # noqa: E402
from dpc_decode.automaton import Automaton  # noqa: E402
from dpc_decode.constraints import prepare_constraints  # noqa: E402


def warm(model, inputs, sets, repeats: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for steps in (1, 20):
        options = BeamSearchOptions(num_beams=5, max_new_tokens=steps)
        for name, constraints in (("dpc", sets), ("plain", None)):
            times = []
            for _ in range(repeats):
                synchronize(model.device)
                start = time.perf_counter()
                generate(model, None, inputs, constraints, options=options, eos_token_id=None)
                synchronize(model.device)
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
    compile_ = tensor_automaton.TensorAutomaton.compile.__func__
    report = generation._report
    tensor_automaton._Tables.build = classmethod(timed(build, "build"))
    tensor_automaton.TensorAutomaton.compile = classmethod(timed(compile_, "compile"))
    generation._report = timed(report, "report")
    try:
        options = BeamSearchOptions(num_beams=5, max_new_tokens=20)
        for _ in range(repeats):
            generate(model, None, inputs, sets, options=options, eos_token_id=None)
    finally:
        tensor_automaton._Tables.build = classmethod(build)
        tensor_automaton.TensorAutomaton.compile = classmethod(compile_)
        generation._report = report
    out.update({f"{k}_ms_per_call": round(v / repeats * 1000, 1) for k, v in spent.items()})
    return out


def cold(model, inputs, repeats: int) -> dict[str, float]:
    rows, vocab = len(inputs), vocab_of(model)
    rng = random.Random(1)

    def fresh() -> list:
        return [random_sets(rng, vocab, 1, 4) for _ in range(rows)]

    options = BeamSearchOptions(num_beams=5, max_new_tokens=20)
    pairs = []
    for _ in range(repeats):
        sets = fresh()
        start = time.perf_counter()
        generate(model, None, inputs, sets, options=options, eos_token_id=None)
        middle = time.perf_counter()
        generate(model, None, inputs, None, options=options, eos_token_id=None)
        pairs.append((middle - start, time.perf_counter() - middle))
    phases: dict[str, list[float]] = {"prepare": [], "automata": [], "compile": []}
    gc.disable()  # as in decoding (dpc_decode.batch.gc_paused)
    try:
        for _ in range(repeats):
            sets = fresh()
            t0 = time.perf_counter()
            prepared = prepare_constraints(sets, None, rows, None, vocab)
            t1 = time.perf_counter()
            automata = [Automaton(c.sets, c.banned) for c in prepared]
            t2 = time.perf_counter()
            tensor_automaton.TensorAutomaton.compile(automata, model.device, vocab)
            synchronize(model.device)
            t3 = time.perf_counter()
            for key, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2)):
                phases[key].append(seconds)
            gc.collect()
    finally:
        gc.enable()
    out = {
        "cold_dpc_20_steps_ms": round(statistics.median(d for d, _ in pairs) * 1000, 1),
        "cold_plain_20_steps_ms": round(statistics.median(p for _, p in pairs) * 1000, 1),
        "cold_ratio": round(statistics.median(d / p for d, p in pairs), 3),
    }
    out.update({f"cold_{k}_ms": round(statistics.median(v) * 1000, 1) for k, v in phases.items()})
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("repeats", nargs="?", type=int, default=5)
    p.add_argument("--device", default="cpu")
    p.add_argument("--model", default="tiny-t5", help="tiny-t5 (the CPU proxy), t5-small, t5-base")
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    args = p.parse_args()
    model, inputs, sets = per_row_shape(300, args.model, torch.device(args.device),
                                        getattr(torch, args.dtype))
    out = {**warm(model, inputs, sets, args.repeats), **cold(model, inputs, args.repeats)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
