"""The engine on a GPU (and its CPU proxy): what constraints add to plain beam search.

Per configuration (random-weight model, 8 beams, 20 new tokens, EOS off so every side does the
same work, random prompts of 12 tokens, 5 sets x 3 alternatives shared by every row unless said):

* ``dpc_s`` / ``plain_s``: dpc constrained / the same engine unconstrained, median of
  ``--repeats`` runs timed alternately (after a warm-up of each); ``ratio`` = dpc / plain;
* ``hf5_s``: transformers 5 ``generate(num_beams=8)`` on the same model and inputs;
* ``floor_s``: the model work any beam search must do (prompt pass, 20 decoder steps over every
  beam, a cache reorder per step), with no search at all;
* ``hf456_s``: transformers 4.56.2 ``DisjunctiveConstraint`` beam search (batch 128, where
  ``--hf456-site`` points at a folder holding transformers 4.56.2: see
  ``benchmarks/hf456_disjunctive_runner.py``);
* ``syncs``: host synchronisations of one decode (CUDA: ``torch.cuda.set_sync_debug_mode``);
* ``kernels`` / ``gpu_busy_ms`` (CUDA): kernels launched and their summed time in one decode,
  from torch.profiler; on CPU, ``ops``: top-level aten operations of one decode;
* ``extra_setup_ops`` / ``extra_step_ops``: top-level aten ops dpc adds to the plain search, set-up
  and per step, from two decodes of 10 and 20 steps (so the per-step figure excludes set-up; the
  steps where the budget is tight, whose masks add work, fall into the set-up figure).

Models: ``t5-small``, ``t5-base`` and ``gpt2`` (their sizes; vocabularies 32,128 and 50,257), and
``tiny-t5`` (d_model 32, vocab 1,000) for the CPU proxy. Besides the main grid: the sets sweep
(1-16 sets, the first model, batch 128) and the N x M pipeline's shape (300 rows, each its own set of
4 alternatives, 5 beams).

Run on a GPU machine (transformers 5 and torch there; the project on ``PYTHONPATH``)::

    PYTHONPATH=. python benchmarks/engine_gpu.py --device cuda --out benchmarks/results/engine_gpu_h100.json

and within a device session's short budget (the rows in the acceptance's order, the baselines at
batch 128 only, no new measurement after 480 s; the skipped ones listed)::

    PYTHONPATH=. python benchmarks/engine_gpu.py --device cuda --lean --budget-s 480 \
        --models t5-small gpt2 t5-base --out $OUT/engine_gpu.json

The CPU proxy of the issue's acceptance (tiny T5, vocab 1,000, 1 thread)::

    PYTHONPATH=. .venv/bin/python benchmarks/engine_gpu.py --proxy --out benchmarks/results/engine_gpu_cpu_proxy.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import transformers
from torch.profiler import ProfilerActivity, profile
from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpc_decode import BeamSearchOptions, generate
from dpc_decode.model_runner import ModelRunner

BEAMS, STEPS, PROMPT = 8, 20, 12
T5_SMALL = {"vocab_size": 32128, "d_model": 512, "d_ff": 2048, "d_kv": 64, "num_heads": 8, "num_layers": 6}
T5_BASE = {"vocab_size": 32128, "d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12,
           "num_layers": 12}
TINY_T5 = {"vocab_size": 1000, "d_model": 32, "d_ff": 64, "d_kv": 8, "num_heads": 2, "num_layers": 2}


def build_model(name: str, device: torch.device, dtype: torch.dtype) -> Any:
    torch.manual_seed(0)
    if name == "gpt2":
        cfg = GPT2Config(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024,
                         bos_token_id=50256, eos_token_id=50256, pad_token_id=50256)
        model = GPT2LMHeadModel(cfg)
    else:
        dims = {"t5-small": T5_SMALL, "t5-base": T5_BASE, "tiny-t5": TINY_T5}[name]
        cfg = T5Config(**dims, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
        model = T5ForConditionalGeneration(cfg)
    return model.to(device=device, dtype=dtype).eval()


def vocab_of(model: Any) -> int:
    return int(model.config.vocab_size)


def random_sets(rng: random.Random, vocab: int, n_sets: int, n_alts: int = 3) -> list[list[list[int]]]:
    """Sets of alternatives of 1-3 tokens, no alternative a prefix of another in its set (which
    transformers 4.56 refuses)."""
    sets = []
    for _ in range(n_sets):
        alts: list[list[int]] = []
        while len(alts) < n_alts:
            alt = [rng.randrange(2, vocab) for _ in range(rng.randint(1, 3))]
            if not any(a[: len(alt)] == alt or alt[: len(a)] == a for a in alts):
                alts.append(alt)
        sets.append(alts)
    return sets


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def paired(repeats: int, device: torch.device, *fns: Callable[[], Any]) -> list[list[float]]:
    """Seconds of each function, timed in turn ``repeats`` times after one warm-up each."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            synchronize(device)
            t = time.perf_counter()
            fn()
            synchronize(device)
            times[k].append(time.perf_counter() - t)
    return times


def top_level_op_names(fn: Callable[[], Any]) -> collections.Counter:
    """Top-level aten operations of one call (CPU profiler), counted by name: each is a launch
    or a copy on a GPU."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    counts: collections.Counter = collections.Counter()
    for event in prof.events():
        parent = event.cpu_parent
        while parent is not None and not parent.name.startswith("aten::"):
            parent = parent.cpu_parent
        if event.name.startswith("aten::") and parent is None:
            counts[event.name] += 1
    return counts


def top_level_ops(fn: Callable[[], Any]) -> int:
    """How many top-level aten operations one call runs (:func:`top_level_op_names`)."""
    return sum(top_level_op_names(fn).values())


def gpu_kernels(fn: Callable[[], Any], device: torch.device) -> tuple[int, float]:
    """Kernels launched by one call and their summed device time (ms)."""
    synchronize(device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        synchronize(device)
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    busy = sum(getattr(e, "device_time", 0.0) or 0.0 for e in kernels) / 1000
    return len(kernels), round(busy, 2)


def host_syncs(fn: Callable[[], Any], device: torch.device) -> int | None:
    """Host synchronisations of one call, as ``torch.cuda.set_sync_debug_mode('warn')`` reports."""
    if device.type != "cuda":
        return None
    synchronize(device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    return sum("synchroniz" in str(w.message) for w in caught)


def model_floor(model: Any, inputs: list[list[int]], beams: int, steps: int, device: torch.device) -> None:
    """The model work of a beam search with no search: prompt, ``steps`` decoder steps over every
    beam, one cache reorder per step (a fixed permutation within each input)."""
    ids = torch.tensor(inputs, device=device)
    rows = len(inputs) * beams
    gen = torch.Generator().manual_seed(0)
    perm = torch.cat([torch.randperm(beams, generator=gen) + i * beams for i in range(len(inputs))])
    tokens = torch.randint(2, vocab_of(model), (steps, rows), generator=gen)
    perm, tokens = perm.to(device), tokens.to(device)
    with torch.inference_mode():
        runner = ModelRunner(model)
        runner.start(ids, torch.ones_like(ids))
        runner.expand(beams)
        for t in range(steps):
            runner.step(tokens[t])
            runner.reorder(perm)


def hf5_generate(model: Any, inputs: list[list[int]], beams: int, steps: int, device: torch.device) -> Any:
    ids = torch.tensor(inputs, device=device)
    with torch.inference_mode():
        return model.generate(ids, attention_mask=torch.ones_like(ids), num_beams=beams,
                              max_new_tokens=steps, min_new_tokens=steps, do_sample=False)


def extra_ops(model: Any, inputs: list[list[int]], constraints: Any, beams: int) -> dict[str, float]:
    """Top-level aten ops dpc adds to the plain search: set-up, and per step."""
    counts = {}
    for label, c in [("dpc", constraints), ("plain", None)]:
        for steps in (10, 20):
            counts[label, steps] = top_level_ops(
                lambda c=c, steps=steps: generate(model, None, inputs, c, num_beams=beams,
                                                  max_new_tokens=steps, eos_token_id=None))
    per_step = {k: (counts[k, 20] - counts[k, 10]) / 10 for k in ("dpc", "plain")}
    setup = {k: counts[k, 10] - 10 * per_step[k] for k in ("dpc", "plain")}
    return {"extra_setup_ops": setup["dpc"] - setup["plain"],
            "extra_step_ops": per_step["dpc"] - per_step["plain"],
            "plain_step_ops": per_step["plain"]}


def measure(model: Any, inputs: list[list[int]], constraints: Any, *, beams: int, repeats: int,
            device: torch.device, baselines: bool, ops: bool, profile_gpu: bool = True,
            search: dict[str, Any] | None = None) -> dict[str, Any]:
    """One configuration: DPC vs the same engine plain, plus transformers 5 and the floor.
    ``search``: the constrained side's search options (``{"search": "neurologic"}``)."""
    opts = BeamSearchOptions(num_beams=beams, max_new_tokens=STEPS)
    con_opts = BeamSearchOptions(num_beams=beams, max_new_tokens=STEPS, **(search or {}))
    out: dict[str, Any] = {}

    def dpc() -> None:
        out["dpc"] = generate(model, None, inputs, constraints, options=con_opts,
                              eos_token_id=None)

    def plain() -> None:
        generate(model, None, inputs, None, options=opts, eos_token_id=None)

    fns: list[Callable[[], Any]] = [dpc, plain]
    if baselines:
        fns += [lambda: hf5_generate(model, inputs, beams, STEPS, device),
                lambda: model_floor(model, inputs, beams, STEPS, device)]
    runs = paired(repeats, device, *fns)
    times = [statistics.median(ts) for ts in runs]
    row: dict[str, Any] = {
        "dpc_s": round(times[0], 4), "plain_s": round(times[1], 4),
        # Each dpc run over the plain run timed right after it: drift in the machine's load
        # hits both sides of a pair, so the median of the pairs is steadier than a ratio of medians.
        "ratio": round(statistics.median(a / b for a, b in zip(runs[0], runs[1])), 3),
        "ratio_of_minima": round(min(runs[0]) / min(runs[1]), 3),
        "satisfied": sum(o[0].satisfied for o in out["dpc"]) / len(inputs),
    }
    if baselines:
        row.update(hf5_s=round(times[2], 4), floor_s=round(times[3], 4),
                   plain_over_hf5=round(times[1] / times[2], 3))
    if device.type == "cuda" and profile_gpu:
        row["syncs_dpc"], row["syncs_plain"] = host_syncs(dpc, device), host_syncs(plain, device)
        (row["kernels_dpc"], row["gpu_busy_ms_dpc"]) = gpu_kernels(dpc, device)
        (row["kernels_plain"], row["gpu_busy_ms_plain"]) = gpu_kernels(plain, device)
    if ops:
        row.update(extra_ops(model, inputs, constraints, beams))
    return row


def hf456(site: Path, model: Any, name: str, inputs: list[list[int]], sets: Any, device: torch.device,
          dtype: str, repeats: int) -> dict[str, Any]:
    """transformers 4.56.2 constrained beam search, in a subprocess that sees ``site`` first."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        model.save_pretrained(folder)
        job = {"name": name, "input_ids": inputs, "shared_constraints": sets, "num_beams": BEAMS,
               "max_new_tokens": STEPS, "min_new_tokens": STEPS, "warmup": 1, "repeats": repeats}
        (Path(tmp) / "job.json").write_text(json.dumps(job))
        proc = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "hf456_disjunctive_runner.py"), "--model",
             str(folder), "--job", str(Path(tmp) / "job.json"), "--out", str(Path(tmp) / "out.json"),
             "--device", str(device), "--dtype", dtype],
            env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True, check=False,
        )
        if proc.returncode:
            return {"error": proc.stderr[-2000:]}
        res = json.loads((Path(tmp) / "out.json").read_text())
        return {"hf456_s": res.get("median_seconds"), "hf456_satisfied": res.get("satisfaction_rate"),
                "hf456_error": res.get("error"), "transformers": res.get("transformers_version")}


def prompts(rng: random.Random, vocab: int, rows: int) -> list[list[int]]:
    return [[rng.randrange(2, vocab) for _ in range(PROMPT)] for _ in range(rows)]


def save(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """Write the report so far (a long run that is cut keeps what it measured)."""
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")


def per_row_shape(rows: int = 300, name: str = "tiny-t5", device: torch.device | None = None,
                  dtype: torch.dtype = torch.float32) -> tuple[Any, list[list[int]], list[Any]]:
    """The N x M shape: ``rows`` prompts, each with its own set of 4 alternatives, on the
    proxy's model by default (tiny T5, vocab 1,000; on the CPU, torch set to 1 thread). What
    ``engine_setup_split.py`` and ``engine_gc.py`` decode (seeded; the sets drawn after the
    proxy's shared ones)."""
    device = device or torch.device("cpu")
    if device.type == "cpu":
        torch.set_num_threads(1)
    model = build_model(name, device, dtype)
    vocab = vocab_of(model)
    rng = random.Random(0)
    random_sets(rng, vocab, 5), random_sets(rng, vocab, 16)  # the proxy's shared sets come first
    inputs = prompts(rng, vocab, rows)
    return model, inputs, [random_sets(rng, vocab, 1, 4) for _ in range(rows)]


def shared_shape(rows: int = 16, device: torch.device | None = None
                 ) -> tuple[Any, list[list[int]], list[Any], list[Any]]:
    """The proxy's model (tiny T5, vocab 1,000; on the CPU, torch set to 1 thread), ``rows``
    prompts and its two shared constraints, 5 and 16 sets, seeded as :func:`run_proxy` draws
    them: for 16 rows its own prompts (it draws its 512-row ones after them)."""
    device = device or torch.device("cpu")
    if device.type == "cpu":
        torch.set_num_threads(1)
    model = build_model("tiny-t5", device, torch.float32)
    rng = random.Random(0)
    shared5, shared16 = random_sets(rng, 1000, 5), random_sets(rng, 1000, 16)
    return model, prompts(rng, 1000, rows), shared5, shared16


def run_proxy(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """The CPU proxy of the acceptance: tiny T5, vocab 1,000, 1 thread."""
    torch.set_num_threads(1)
    device = torch.device("cpu")
    model = build_model("tiny-t5", device, torch.float32)
    rng = random.Random(0)
    shared5, shared16 = random_sets(rng, 1000, 5), random_sets(rng, 1000, 16)
    shapes = [("16 rows, 5 shared sets", 16, shared5, BEAMS),
              ("512 rows, 5 shared sets", 512, shared5, BEAMS),
              ("300 rows, one own set of 4 each", 300, None, 5),
              ("16 rows, 16 shared sets", 16, shared16, BEAMS),
              # The shape above needs ~23 tokens, more than 20: no row can meet every set, and the
              # masks can force nothing. Sixteen sets of one-token alternatives fit (16 tokens).
              ("16 rows, 16 shared one-token sets", 16, "one-token", BEAMS)]
    for label, rows, sets, beams in shapes:
        inputs = prompts(rng, 1000, rows)
        if sets is None:
            cons = [random_sets(rng, 1000, 1, 4) for _ in range(rows)]
        elif sets == "one-token":  # drawn last: the shapes above keep their draws
            cons = [[[t] for t in rng.sample(range(2, 1000), 3)] for _ in range(16)]
        else:
            cons = sets
        if args.shape and not any(part in label for part in args.shape):
            continue  # drawn all the same: the other shapes keep their inputs
        search = {"search": args.search, "lookahead": args.lookahead}
        row = {"shape": label, **search,
               **measure(model, inputs, cons, beams=beams, repeats=args.repeats, device=device,
                         baselines=False, ops=args.search == "dba", search=search)}
        report["proxy"].append(row)
        print(json.dumps(row), flush=True)
        save(args, report)


class Budget:
    """``--budget-s``: no new measurement starts once the seconds are spent (a device session's
    time is short; the rows come in the acceptance's order, so a cut run keeps the main ones).
    What was not measured is listed in the report's ``skipped``."""

    def __init__(self, seconds: float | None, report: dict[str, Any]) -> None:
        self.end = None if seconds is None else time.monotonic() + seconds
        self.report = report

    def allows(self, what: str) -> bool:
        if self.end is None or time.monotonic() < self.end:
            return True
        self.report["skipped"].append(what)
        print(json.dumps({"skipped": what}), flush=True)
        return False


def run_gpu(args: argparse.Namespace, report: dict[str, Any], device: torch.device) -> None:
    """The model grid, then (for the first model) the sets sweep and the 300-row shape, model by
    model and dtype by dtype. ``--lean``: transformers 5, the model floor and the GPU profiles
    only at batch 128 (dpc and plain everywhere)."""
    dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16}
    budget = Budget(args.budget_s, report)
    for name in args.models:
        for dname in args.dtypes:
            label = f"{name} {dname}"
            if not budget.allows(f"{label}: every row"):
                continue
            model = build_model(name, device, dtypes[dname])
            vocab = vocab_of(model)
            rng = random.Random(0)
            sets = random_sets(rng, vocab, 5)
            for batch in args.batches:
                inputs = prompts(rng, vocab, batch)
                if "grid" not in args.parts or not budget.allows(f"{label} batch {batch}"):
                    continue
                full = not args.lean or batch == 128
                row = {"model": name, "dtype": dname, "batch": batch,
                       **measure(model, inputs, sets, beams=BEAMS, repeats=args.repeats,
                                 device=device, baselines=full, ops=False,
                                 profile_gpu=batch == 128)}
                if args.hf456_site and batch == 128 and dname in args.hf456_dtypes:
                    if budget.allows(f"{label} batch {batch}: transformers 4.56.2"):
                        row.update(hf456(args.hf456_site, model, name, inputs, sets, device,
                                         dname, args.hf456_repeats))
                        if row.get("hf456_s"):
                            row["dpc_speedup_over_hf456"] = round(row["hf456_s"] / row["dpc_s"], 1)
                report["grid"].append(row)
                print(json.dumps(row), flush=True)
                save(args, report)
            if name == args.models[0]:  # t5-small by default
                for n_sets in args.sets_sweep:
                    inputs = prompts(rng, vocab, 128)
                    sweep_sets = random_sets(rng, vocab, n_sets)
                    if "sweep" not in args.parts or not budget.allows(f"{label} {n_sets} sets"):
                        continue
                    row = {"model": name, "dtype": dname, "batch": 128, "sets": n_sets,
                           **measure(model, inputs, sweep_sets, beams=BEAMS,
                                     repeats=args.repeats, device=device, baselines=False,
                                     ops=False, profile_gpu=n_sets in (1, 16))}
                    report["sets_sweep"].append(row)
                    print(json.dumps(row), flush=True)
                    save(args, report)
                inputs = prompts(rng, vocab, 300)
                own = [random_sets(rng, vocab, 1, 4) for _ in inputs]
                if "per-row" in args.parts and budget.allows(f"{label} 300 rows"):
                    row = {"model": name, "dtype": dname,
                           "shape": "300 rows, own set of 4, 5 beams",
                           **measure(model, inputs, own, beams=5, repeats=args.repeats,
                                     device=device, baselines=False, ops=False)}
                    report["per_row"].append(row)
                    print(json.dumps(row), flush=True)
                    save(args, report)
            del model
            if device.type == "cuda":
                torch.cuda.empty_cache()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument("--proxy", action="store_true", help="the CPU proxy (tiny T5, 1 thread) only")
    p.add_argument("--grid", action="store_true", help="the model grid even on a CPU (smoke test)")
    p.add_argument("--models", nargs="+", default=["t5-small", "t5-base", "gpt2"])
    p.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    p.add_argument("--batches", nargs="+", type=int, default=[16, 128, 512])
    p.add_argument("--sets-sweep", nargs="*", type=int, default=[1, 2, 4, 8, 16])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--hf456-site", type=Path, default=None,
                   help="folder with transformers 4.56.2 importable (pip install --target)")
    p.add_argument("--hf456-repeats", type=int, default=1)
    p.add_argument("--hf456-dtypes", nargs="+", default=["float32"])
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--shape", action="append", default=[],
                   help="--proxy: only the shapes whose label contains this (repeatable)")
    p.add_argument("--parts", nargs="+", default=["grid", "sweep", "per-row"],
                   choices=["grid", "sweep", "per-row"], help="which parts of the GPU run")
    p.add_argument("--lean", action="store_true",
                   help="transformers 5, the floor and the GPU profiles at batch 128 only")
    p.add_argument("--search", choices=["dba", "neurologic"], default="dba",
                   help="--proxy: the constrained side's search (BeamSearchOptions.search)")
    p.add_argument("--lookahead", type=int, default=0,
                   help="--proxy, --search neurologic: the lookahead's rollout steps")
    p.add_argument("--budget-s", type=float, default=None,
                   help="start no new measurement after this many seconds (listed as skipped)")
    args = p.parse_args()
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(args.device)
    report: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else
        f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads",
        "torch": torch.__version__, "transformers": transformers.__version__,
        "beams": BEAMS, "new_tokens": STEPS, "eos": "off",
        "proxy": [], "grid": [], "sets_sweep": [], "per_row": [], "skipped": [],
    }
    if args.proxy or (device.type == "cpu" and not args.grid):
        run_proxy(args, report)
    else:
        run_gpu(args, report, device)
    save(args, report)


if __name__ == "__main__":
    main()
