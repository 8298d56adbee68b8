"""The lookahead's work on CommonGen dev, counted rather than timed: the model rows each
setting steps (a forward pre-hook adds up each forward's batch rows, the prompt's included),
and, with a lookahead, how many of the candidates that take its first step continue a kept
rollout (``Lookahead._continued``). One JSON line a setting (``grid.py``'s specs).

    .venv/bin/python benchmarks/commongen/lookahead_work.py --limit 32 plain:8:0:lp0.5 \\
        dpc:8:5:neurologic:lp0.5:la3
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "commongen"))

from grid import DATA, setting_from_spec  # noqa: E402

from dpc_decode.lookahead import Lookahead  # noqa: E402
from tasks.commongen.dataset import distinct, read_concept_sets  # noqa: E402
from tasks.commongen.decoding import SentenceGenerator  # noqa: E402
from tasks.commongen.generator import BUNDLED_SENTENCE_LM  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("settings", nargs="+")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--limit", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    sets = distinct(read_concept_sets(DATA / "commongen.dev.jsonl"))[args.start:][:args.limit]
    generator = SentenceGenerator.load(str(BUNDLED_SENTENCE_LM))
    counts = {"rows": 0, "stepped": 0, "continued": 0}

    def count_rows(_module, inputs, kwargs) -> None:
        ids = kwargs.get("input_ids", inputs[0] if inputs else None)
        counts["rows"] += int(ids.shape[0]) if ids is not None else 0

    original = Lookahead._continued

    def count_continued(self, at_input, parent, token):
        result = original(self, at_input, parent, token)
        counts["stepped"] += int(token.numel())
        counts["continued"] += int((result >= 0).sum())
        return result

    Lookahead._continued = count_continued  # type: ignore[method-assign]
    hook = generator.model.register_forward_pre_hook(count_rows, with_kwargs=True)
    try:
        for spec in args.settings:
            settings = setting_from_spec(spec, early_stopping=True)
            counts.update(rows=0, stepped=0, continued=0)
            for at in range(0, len(sets), settings.batch_size):
                generator.generate(sets[at:at + settings.batch_size], settings)
            print(json.dumps({"setting": spec, "sets": len(sets), **counts}), flush=True)
    finally:
        hook.remove()
        Lookahead._continued = original  # type: ignore[method-assign]


if __name__ == "__main__":
    main()
