"""How much of a warm ``dpc generate`` is the model's own forward passes (issue 58).

    .venv/bin/python benchmarks/guided/model_share.py "the kettle whistled" "babies cry" ...

Loads the default generator and graph once, then runs the pipeline on each input (default
options, direction cause), timing every engine forward (``ModelRunner.start`` for prompts and
``ModelRunner.step`` for one token of every live row) beside the input's total. Prints one JSON
line per input: ``total``, ``start`` and ``step`` seconds, prompt tokens, step rows and calls.
The rest of the total is the PMI priors' forward, the verifier, spaCy and the bookkeeping.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cause_effect_graph.store import default_graph  # noqa: E402
from dpc_decode.model_runner import ModelRunner  # noqa: E402
from guided_generation.options import GuidedOptions  # noqa: E402
from guided_generation.pipeline import GuidedGenerator  # noqa: E402
from train.models import resolve_generator  # noqa: E402

SPENT = {"start": 0.0, "step": 0.0, "start_tokens": 0, "step_rows": 0, "nstart": 0, "nstep": 0}


def _timed(method, seconds: str, size: str, calls: str, rows):
    def timed(self, *args):
        started = time.perf_counter()
        try:
            return method(self, *args)
        finally:
            SPENT[seconds] += time.perf_counter() - started
            SPENT[size] += rows(args[0])
            SPENT[calls] += 1
    return timed


def main(inputs: list[str]) -> None:
    ModelRunner.start = _timed(ModelRunner.start, "start", "start_tokens", "nstart",
                               lambda ids: ids.numel())
    ModelRunner.step = _timed(ModelRunner.step, "step", "step_rows", "nstep",
                              lambda tokens: tokens.shape[0])
    loaded = resolve_generator(None)
    generator = GuidedGenerator(loaded.model, loaded.tokenizer, default_graph())
    for text in inputs:
        SPENT.update(dict.fromkeys(SPENT, 0))
        started = time.perf_counter()
        generator.generate(text, "cause", GuidedOptions())
        total = time.perf_counter() - started
        print(json.dumps({"input": text, "total": round(total, 2),
                          **{k: round(v, 2) for k, v in SPENT.items()}}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["the kettle whistled", "babies cry", "the man lost his keys"])
