"""Where the time of one cold ``dpc generate`` goes, and its wall time from process start.

    python benchmarks/guided/cold_start.py [--model smollm2-135m|bundled] [--repeats 3]
        [--out benchmarks/guided/cold_start.json] [-- extra dpc generate options]

Each repeat runs, in a fresh Python process: the imports, the model load, the graph load, the
first ``generate`` (which loads spaCy inside its keyword step, then decodes), and reports each
phase's seconds; then it times the real command, ``dpc generate --input "babies cry"
--direction cause`` (plus ``--fast`` for the bundled model), from process start to exit. The
pretrained model's one-time conversion (:mod:`train.pretrained`) is done before the first repeat.
Median of the repeats.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

PHASES = r'''
import json, sys, time
t0 = time.perf_counter()
import torch, transformers
from guided_generation.pipeline import GuidedGenerator
from guided_generation.options import GuidedOptions
from cause_effect_graph.store import default_graph
from train.models import resolve_generator
t1 = time.perf_counter()
loaded = resolve_generator(None if sys.argv[1] == "default" else sys.argv[1])
t2 = time.perf_counter()
G = default_graph()
t3 = time.perf_counter()
gen = GuidedGenerator(loaded.model, loaded.tokenizer, G)
r = gen.generate("babies cry", "cause", GuidedOptions())
t4 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "model": t2 - t1, "graph": t3 - t2,
                  "keywords_and_spacy": r.stats["keyword_seconds"],
                  "decode": r.stats["decode_seconds"], "rerank": r.stats["rerank_seconds"],
                  "generate_total": t4 - t3}))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("extra", nargs="*", help="more dpc generate options (after --)")
    args = ap.parse_args()
    root = Path(__file__).resolve().parents[2]
    dpc = str(Path(sys.executable).with_name("dpc"))
    command = [dpc, "generate", "--input", "babies cry", "--direction", "cause", *args.extra]
    if args.model == "bundled":
        command.append("--fast")
    elif args.model != "default":
        command += ["--model", args.model]
    subprocess.run(command, cwd=root, check=True, capture_output=True)  # conversion, disk cache
    phases, walls = [], []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, "-c", PHASES, args.model], cwd=root, check=True,
                             capture_output=True, text=True).stdout
        phases.append(json.loads(out.strip().splitlines()[-1]))
        t = time.perf_counter()
        subprocess.run(command, cwd=root, check=True, capture_output=True)
        walls.append(time.perf_counter() - t)
    record = {"model": args.model, "command": " ".join(command[1:]), "repeats": args.repeats,
              "wall_seconds_median": round(statistics.median(walls), 2),
              "wall_seconds_all": [round(w, 2) for w in walls],
              "phases_median": {k: round(statistics.median(p[k] for p in phases), 2)
                                for k in phases[0]}}
    print(json.dumps(record, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
