"""Time Python's cyclic garbage collector spends inside DPC decodes (issue 24, CPU proxy).

The 300-row shape of ``benchmarks/engine_gpu.py --proxy`` (tiny T5, vocab 1,000, 1 thread, 5
beams, 20 steps, EOS off, each row its own set of 4 alternatives): 5 decodes after a warm-up,
with a ``gc.callbacks`` hook summing the time of every collection and counting them by
generation. Run it on two checkouts to compare (the engine is imported from ROOT)::

    .venv/bin/python benchmarks/engine_gc.py OLD_CHECKOUT
    .venv/bin/python benchmarks/engine_gc.py .

Minimum-of-N wall times hide this cost (a full collection lands on one decode in five), a mean
does not.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path


def main(root: str = ".") -> None:
    root_path = Path(root).resolve()
    sys.path.insert(0, str(root_path))
    import dpc_decode  # ROOT's engine, imported before engine_gpu.py puts this checkout first

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from engine_gpu import per_row_shape

    from dpc_decode import BeamSearchOptions, generate

    model, inputs, sets = per_row_shape(300)
    options = BeamSearchOptions(num_beams=5, max_new_tokens=20)
    spent = {"counts": [0, 0, 0], "seconds": 0.0, "start": 0.0}

    def hook(phase: str, info: dict) -> None:
        if phase == "start":
            spent["start"] = time.perf_counter()
        else:
            spent["seconds"] += time.perf_counter() - spent["start"]
            spent["counts"][info["generation"]] += 1

    generate(model, None, inputs, sets, options=options, eos_token_id=None)
    calls, walls = 10, []
    gc.callbacks.append(hook)
    for _ in range(calls):
        start = time.perf_counter()
        generate(model, None, inputs, sets, options=options, eos_token_id=None)
        walls.append(time.perf_counter() - start)
    gc.callbacks.remove(hook)
    print(json.dumps({
        "engine": str(Path(dpc_decode.__file__).parent), "tracked_objects": len(gc.get_objects()),
        "collections_per_decode_by_generation": [n / calls for n in spent["counts"]],
        "gc_ms_per_decode": round(spent["seconds"] / calls * 1000, 1),
        "mean_decode_ms": round(sum(walls) / calls * 1000, 1),
    }))


if __name__ == "__main__":
    main(*sys.argv[1:2])
