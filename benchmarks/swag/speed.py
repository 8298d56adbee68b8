"""Sampling speed of SWAG endings: the dpc engine vs transformers' ``generate(do_sample=True)``.

Same model, same contexts, same settings (temperature 1, top-p 0.95, N samples per context, at
most MAX_NEW new tokens, the ending model's prompt and end tokens), one run each, contexts in
batches of 8:

* ``transformers``: ``model.generate(do_sample=True, num_return_sequences=N)`` (no uniqueness).
* ``engine``: :func:`dpc_decode.sample` with ``unique=False`` (the same work).
* ``engine, full batch``: the same with finished rows kept in the model's batch to the end (as
  before :meth:`dpc_decode.model_runner.ModelRunner.select`): what dropping them saves.
* ``engine unique``: ``unique=True`` (rounds until N distinct endings per context); the draws
  are counted by wrapping the engine's batch sampler, so "samples drawn per unique ending kept"
  is the oversampling overhead (kept = distinct, finished, not the gold, as in the pool).

Usage: python benchmarks/swag/speed.py MODEL HELLASWAG.jsonl [N] [CONTEXTS] [MAX_NEW]
"""

from __future__ import annotations

import json
import sys
import time

import torch

import dpc_decode
import dpc_decode.sampling as sampling_module
from dpc_decode.model_runner import ModelRunner
from tasks.datasets import read_multiple_choice
from tasks.swag.ending_model import (
    context_split,
    end_token_ids,
    ending_prompt,
    load_ending_model,
    normalise_ending,
)


def main(model_path: str, data: str, n: int = 32, contexts: int = 20, max_new: int = 32) -> None:
    model, tok = load_ending_model(model_path)
    model = model.eval()
    ends = end_token_ids(model, tok)
    eos = ends if ends is not None else "model"
    tok.padding_side = "left"  # transformers' generate on a causal LM
    items = [it for it in read_multiple_choice(data) if context_split(it.ctx) == "pool"][:contexts]
    inputs = [ending_prompt(model, it.ctx) for it in items]
    golds = normalise_ending(tok, [it.gold for it in items])
    batches = [list(range(i, min(i + 8, len(inputs)))) for i in range(0, len(inputs), 8)]
    results = {"model": model_path, "contexts": len(inputs), "per_context": n,
               "max_new_tokens": max_new, "threads": torch.get_num_threads()}

    torch.manual_seed(0)
    start, count = time.perf_counter(), 0
    for b in batches:
        enc = tok([inputs[i] for i in b], return_tensors="pt", padding=True)
        with torch.no_grad():
            out = model.generate(**enc, do_sample=True, num_return_sequences=n, top_p=0.95,
                                 temperature=1.0, top_k=0, max_new_tokens=max_new,
                                 **({"eos_token_id": ends} if ends else {}))
        count += out.shape[0]
    seconds = time.perf_counter() - start
    results["transformers"] = {"samples": count, "seconds": round(seconds, 2),
                               "samples_per_s": round(count / seconds, 1)}

    options = dpc_decode.SamplingOptions(num_samples=n, temperature=1.0, top_p=0.95,
                                         max_new_tokens=max_new, seed=0)
    for name in ("engine", "engine_full_batch"):
        select = ModelRunner.select
        if name == "engine_full_batch":
            ModelRunner.select = lambda self, index: False  # type: ignore[method-assign]
        start, count = time.perf_counter(), 0
        for b in batches:
            outs = dpc_decode.sample(model, tok, [inputs[i] for i in b], options=options,
                                     eos_token_id=eos)
            count += sum(len(o) for o in outs)
        seconds = time.perf_counter() - start
        ModelRunner.select = select  # type: ignore[method-assign]
        results[name] = {"samples": count, "seconds": round(seconds, 2),
                         "samples_per_s": round(count / seconds, 1)}

    drawn = [0]
    original = sampling_module._sample_batch

    def counting(runner, input_ids, *args, **kwargs):
        draws = original(runner, input_ids, *args, **kwargs)
        drawn[0] += len(draws.tokens)
        return draws

    sampling_module._sample_batch = counting
    unique = dpc_decode.SamplingOptions(num_samples=n, temperature=1.0, top_p=0.95,
                                        max_new_tokens=max_new, seed=0, unique=True,
                                        max_rounds=4)
    start, returned, kept = time.perf_counter(), 0, 0
    for b in batches:
        outs = dpc_decode.sample(model, tok, [inputs[i] for i in b], options=unique,
                                 eos_token_id=eos)
        for i, found in zip(b, outs):
            returned += len(found)
            texts = normalise_ending(tok, [o.text or "" for o in found])
            kept += len({t for o, t in zip(found, texts) if o.finished and t and t != golds[i]})
    seconds = time.perf_counter() - start
    sampling_module._sample_batch = original
    results["engine_unique"] = {
        "drawn": drawn[0], "returned_distinct": returned, "kept": kept,
        "seconds": round(seconds, 2), "kept_per_s": round(kept / seconds, 1),
        "drawn_per_kept": round(drawn[0] / max(kept, 1), 2)}
    results["engine_vs_transformers"] = round(
        results["engine"]["samples_per_s"] / results["transformers"]["samples_per_s"], 2)
    results["dropping_finished_rows_speedup"] = round(
        results["engine"]["samples_per_s"] / results["engine_full_batch"]["samples_per_s"], 2)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:6]))
