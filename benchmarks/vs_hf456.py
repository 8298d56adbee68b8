"""Benchmark (c): dpc against transformers 4.56.2's DisjunctiveConstraint, same weights, same
constraints, in one run.

The baseline runs in a side virtualenv (``benchmarks/hf_baseline_env.sh`` builds it) through
``benchmarks/hf456_disjunctive_runner.py``; dpc runs here. Both decode the same random T5 models
(saved once with ``save_pretrained``; dpc loads them with eager attention, the only kind 4.56's
T5 has, so the two see bit-identical logits), the same 16 inputs, 8 beams, 20 new tokens and the
same 5 sets x 3 alternatives (1-3 tokens, no alternative a prefix of another, since 4.56 rejects
those). Reported: median seconds of each, the speed-up, the satisfaction rate, and the mean total
log-probability of the best output of each input, both rescored here by teacher forcing; and
the *model floor* (:func:`model_floor`: the forward passes and cache reorders alone, no search),
whose ratio to 4.56's time bounds the speed-up any engine could reach with the same model.

Run::

    flock /tmp/dpc-cpu.lock .venv/bin/python benchmarks/vs_hf456.py --out benchmarks/results/vs_hf456.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from transformers import T5Config, T5ForConditionalGeneration

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from engine_gpu import model_floor as run_model_floor

from dpc_decode import BeamSearchOptions, generate, satisfies

MODELS = {
    "tiny (vocab 1,000)": dict(vocab_size=1000, d_model=64, d_ff=128, d_kv=16, num_heads=4,
                               num_layers=2),
    "t5-small size (vocab 32,128)": dict(vocab_size=32128, d_model=512, d_ff=2048, d_kv=64,
                                         num_heads=8, num_layers=6),
}


def prefix_free_sets(rng: random.Random, vocab: int, n_sets: int = 5, n_alts: int = 3) -> list:
    sets = []
    for _ in range(n_sets):
        alts: list[list[int]] = []
        while len(alts) < n_alts:
            alt = [rng.randrange(2, vocab) for _ in range(rng.randint(1, 3))]
            if all(alt[: len(o)] != o and o[: len(alt)] != alt for o in alts):
                alts.append(alt)
        sets.append(alts)
    return sets


def rescore(model, inputs: list[list[int]], outputs: list[list[int]]) -> list[float]:
    """Total log-probability of each output (EOS-terminated or not) given its input."""
    totals = []
    with torch.inference_mode():
        for src, out in zip(inputs, outputs):
            dec = torch.tensor([[0] + out])
            logits = model(input_ids=torch.tensor([src]), decoder_input_ids=dec[:, :-1]).logits
            lp = torch.log_softmax(logits.float(), -1).gather(2, dec[:, 1:, None])
            totals.append(float(lp.sum()))
    return totals


def model_floor(model, inputs: list[list[int]], beams: int, steps: int) -> float:
    """Seconds of the model work any beam search of these inputs must do, with no search at all.

    The encoder once, the first decoder step on one row per input, the cache copied to every
    beam, then ``steps`` decoder steps of ``len(inputs) * beams`` rows, each followed by a cache
    reorder within its input (a fixed random permutation): what transformers 4.56 and dpc both
    pay. No top-k, no constraint state, no finished pool. Its ratio to a baseline's time is the
    largest speed-up any engine can reach over that baseline with the same model.
    """
    start = time.perf_counter()
    run_model_floor(model, inputs, beams, steps, torch.device("cpu"))
    return time.perf_counter() - start


def run_baseline(python: str, model_dir: Path, job: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        job_path, out_path = Path(tmp) / "job.json", Path(tmp) / "out.json"
        job_path.write_text(json.dumps(job))
        subprocess.run(
            [python, str(HERE / "hf456_disjunctive_runner.py"), "--model", str(model_dir),
             "--job", str(job_path), "--out", str(out_path)],
            check=True,
        )
        return json.loads(out_path.read_text())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    python = subprocess.run(["bash", str(HERE / "hf_baseline_env.sh")], check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    report: dict[str, Any] = {"command": " ".join(sys.argv), "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name, dims in MODELS.items():
            rng = random.Random(0)
            torch.manual_seed(0)
            cfg = T5Config(**dims, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
            folder = Path(tmp) / name.split()[0]
            T5ForConditionalGeneration(cfg).save_pretrained(folder)
            model = T5ForConditionalGeneration.from_pretrained(
                folder, attn_implementation="eager", use_safetensors=True).eval()
            vocab = dims["vocab_size"]
            inputs = [[rng.randrange(2, vocab) for _ in range(12)] for _ in range(16)]
            sets = prefix_free_sets(rng, vocab)
            job = {"name": name, "input_ids": inputs, "shared_constraints": sets, "num_beams": 8,
                   "max_new_tokens": 20, "threads": args.threads, "warmup": 1,
                   "repeats": args.repeats}
            base = run_baseline(python, folder, job)
            opts = BeamSearchOptions(num_beams=8, max_new_tokens=20)
            generate(model, None, inputs, sets, options=opts)  # warm-up
            times, ours = [], None
            for _ in range(args.repeats):
                t = time.perf_counter()
                ours = generate(model, None, inputs, sets, options=opts)
                times.append(time.perf_counter() - t)
            assert ours is not None
            model_floor(model, inputs, 8, 20)  # warm-up
            floor = statistics.median(model_floor(model, inputs, 8, 20)
                                      for _ in range(args.repeats))
            ours_best = [list(o[0].token_ids) + ([1] if o[0].finished else []) for o in ours]
            hf_best = [row[0] for row in base["sequences"]] if base.get("sequences") else []
            row = {
                "model": name,
                "hf456_median_s": base.get("median_seconds"),
                "dpc_median_s": round(statistics.median(times), 3),
                "speedup": round(base["median_seconds"] / statistics.median(times), 1)
                if base.get("median_seconds") else None,
                "model_floor_s": round(floor, 3),
                "max_speedup_any_engine": round(base["median_seconds"] / floor, 2)
                if base.get("median_seconds") else None,
                "dpc_over_floor": round(statistics.median(times) / floor, 3),
                "hf456_satisfied": base.get("satisfaction_rate"),
                "dpc_satisfied": sum(satisfies(o[0].token_ids, sets) for o in ours) / len(ours),
                "hf456_mean_best_logprob": round(statistics.mean(rescore(model, inputs, hf_best)), 3)
                if hf_best else None,
                "dpc_mean_best_logprob": round(statistics.mean(rescore(model, inputs, ours_best)), 3),
                "hf456_error": base.get("error"),
            }
            report["rows"].append(row)
            print(json.dumps(row), flush=True)
        # The case 4.56 cannot take at all: alternatives that are token-prefixes of each other.
        folder = Path(tmp) / "tiny"
        prefix_job = {"name": "prefix alternatives", "input_ids": [[5, 6, 7]],
                      "shared_constraints": [[[100], [100, 7], [100, 8]]], "num_beams": 4,
                      "max_new_tokens": 10, "warmup": 0, "repeats": 1}
        base = run_baseline(python, folder, prefix_job)
        model = T5ForConditionalGeneration.from_pretrained(folder, attn_implementation="eager",
                                                           use_safetensors=True)
        ours = generate(model, None, [[5, 6, 7]], [[[100], [100, 7], [100, 8]]], num_beams=4,
                        max_new_tokens=10)[0][0]
        report["prefix_alternatives"] = {"hf456_error": base.get("error"),
                                         "dpc_satisfied": ours.satisfied,
                                         "dpc_output": list(ours.token_ids)}
        print(json.dumps(report["prefix_alternatives"]), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
