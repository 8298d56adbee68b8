"""What issue 38's checks cost: the run signature of a resumable output, and the engine's checks
at every ``generate()`` / ``sample()`` call.

- ``generator_identity``: the digest of the files a generator is read from, computed once per
  ``dpc generate --out`` / ``dpc eval generation --out`` run, before the model loads.
- ``file_digest`` of the bundled graph, likewise.
- ``position_limit``: the model's position table, read at every engine call (a walk over every
  submodule the first time, then a cache by model); ``check_model_fits``: the memory estimate,
  also at every call.

    .venv/bin/python benchmarks/run_checks_cost.py --out benchmarks/results/run_checks_cost.json

Each figure is the median of ``--repeats`` timings, in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cause_effect_graph.store import DEFAULT_GRAPH  # noqa: E402
from dpc_decode import batch  # noqa: E402
from dpc_decode.memory import check_model_fits  # noqa: E402
from dpc_files import file_digest  # noqa: E402
from train.identity import generator_identity  # noqa: E402
from train.models import resolve_generator  # noqa: E402


def median_ms(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    result: dict[str, float] = {}
    for name in ("bundled", "smollm2-ecare"):
        generator_identity(name)  # the default's first call may assemble its GGUF into the cache
        result[f"generator_identity_{name}_ms"] = median_ms(lambda n=name: generator_identity(n),
                                                            args.repeats)
    result["graph_digest_ms"] = median_ms(lambda: file_digest(DEFAULT_GRAPH), args.repeats)
    for name in ("bundled", "smollm2-ecare"):
        model = resolve_generator(name).model

        def walk(model=model) -> None:  # the uncached walk: what every call paid before the cache
            batch._POSITION_LIMITS.pop(model, None)
            batch.position_limit(model)

        result[f"position_limit_walk_{name}_ms"] = median_ms(walk, args.repeats * 20)
        result[f"position_limit_cached_{name}_ms"] = median_ms(
            lambda model=model: batch.position_limit(model), args.repeats * 200)
        result[f"check_model_fits_{name}_ms"] = median_ms(
            lambda model=model: check_model_fits(model, 4, 80), args.repeats * 20)
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
