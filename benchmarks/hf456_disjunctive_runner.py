#!/usr/bin/env python
"""Reference constrained beam search with transformers 4.56.2 (benchmark (c)).

transformers <= 4.56 shipped ``DisjunctiveConstraint`` and constrained beam search
(``model.generate(..., constraints=[...], num_beams=N)``); transformers 5 removed
both.  This script runs that *reference* implementation on a model saved by
transformers 5.x so the dpc engine can be compared with it on the same weights
and the same constraints.

It is meant to run under the side venv made by ``benchmarks/hf_baseline_env.sh``
(``benchmarks/.venv-hf456/bin/python``) and is deliberately standalone: it does
not import the dpc project.

Usage::

    python hf456_disjunctive_runner.py --model DIR --job JOB.json --out RESULT.json

``JOB.json`` is one job object or a JSON array of job objects (the model is loaded
once).  ``RESULT.json`` is then one result object or an array of them, in order.
The schemas are documented in ``benchmarks/HF456_NOTES.md`` and in
:func:`parse_job` / :func:`run_job` below.

Loading fix-ups for checkpoints written by transformers 5.x (see
:func:`load_model`):

* T5: transformers 5 always ties ``lm_head`` to ``shared`` and stores only
  ``shared.weight``; whether decoder outputs are scaled by ``d_model**-0.5``
  moved from ``tie_word_embeddings`` to a new ``scale_decoder_outputs`` key (the
  saved ``tie_word_embeddings`` is then always ``true``).  4.56 ignores the new
  key and scales iff ``tie_word_embeddings``.  When ``scale_decoder_outputs`` is
  ``false`` (T5 v1.1 / flan-style configs) we load with
  ``tie_word_embeddings=False`` and copy ``shared.weight`` into the (then
  untied, missing) ``lm_head.weight``.  With the default (``true``) nothing is
  changed.
* Any other missing or unexpected weight aborts the run: silently
  random-initialised weights would make the comparison meaningless.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import torch
import transformers
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    DisjunctiveConstraint,
    PreTrainedModel,
)

RUNNER_VERSION = 1

TokenSeq = list[int]
ConstraintSet = list[TokenSeq]  # alternatives; one of them must appear
RowConstraints = list[ConstraintSet]  # all sets must be satisfied


# --------------------------------------------------------------------------- model


@dataclass
class LoadedModel:
    """A model ready for ``generate`` plus what was done to load it."""

    model: PreTrainedModel
    is_encoder_decoder: bool
    pad_token_id: int
    eos_token_ids: list[int]
    decoder_start_token_id: int | None
    fixups: list[str] = field(default_factory=list)


def _as_id_list(value: int | list[int] | None) -> list[int]:
    if value is None:
        return []
    return [value] if isinstance(value, int) else list(value)


def load_model(model_dir: str) -> LoadedModel:
    """Load a transformers-5.x ``save_pretrained`` checkpoint into transformers 4.56.

    Returns the model in eval mode (float32, CPU) and the list of config/weight
    fix-ups applied.  Raises ``RuntimeError`` if weights are missing or unexpected
    in a way we do not know how to repair.
    """
    config = AutoConfig.from_pretrained(model_dir)
    fixups: list[str] = []
    copy_shared_to_lm_head = False

    if config.model_type == "t5":
        scale = getattr(config, "scale_decoder_outputs", None)
        if scale is False:
            config.tie_word_embeddings = False
            copy_shared_to_lm_head = True
            fixups.append(
                "t5: scale_decoder_outputs=false -> tie_word_embeddings=False "
                "(no d_model**-0.5 output scaling) and lm_head.weight := shared.weight"
            )
        elif scale is True and not config.tie_word_embeddings:
            config.tie_word_embeddings = True
            fixups.append("t5: scale_decoder_outputs=true -> tie_word_embeddings=True")

    auto_cls = AutoModelForSeq2SeqLM if config.is_encoder_decoder else AutoModelForCausalLM
    loaded: Any = auto_cls.from_pretrained(
        model_dir, config=config, dtype=torch.float32, output_loading_info=True,
        use_safetensors=True,  # never a pickle
    )
    model, info = loaded
    missing = set(info.get("missing_keys", []))
    unexpected = set(info.get("unexpected_keys", []))
    if copy_shared_to_lm_head:
        with torch.no_grad():
            model.lm_head.weight.copy_(model.shared.weight)
        missing.discard("lm_head.weight")
    # Keys 4.56 itself declares ignorable (e.g. T5's EncDecAttention bias).
    ignorable = list(getattr(model, "_keys_to_ignore_on_load_unexpected", None) or [])
    unexpected = {k for k in unexpected if not any(pat in k for pat in ignorable)}
    if missing or unexpected or info.get("mismatched_keys"):
        raise RuntimeError(
            f"weights do not load cleanly: missing={sorted(missing)} "
            f"unexpected={sorted(unexpected)} mismatched={info.get('mismatched_keys')}"
        )
    model.eval()

    gen = model.generation_config
    pad = gen.pad_token_id if gen.pad_token_id is not None else config.pad_token_id
    eos = _as_id_list(gen.eos_token_id if gen.eos_token_id is not None else config.eos_token_id)
    if pad is None:
        if not eos:
            raise RuntimeError("model has neither pad_token_id nor eos_token_id")
        pad = eos[0]
        fixups.append(f"pad_token_id unset -> using eos {pad}")
    start = None
    if config.is_encoder_decoder:
        start = gen.decoder_start_token_id
        if start is None:
            start = config.decoder_start_token_id
    return LoadedModel(model, bool(config.is_encoder_decoder), int(pad), eos, start, fixups)


# --------------------------------------------------------------------------- job


@dataclass
class Job:
    """One benchmark job; see ``HF456_NOTES.md`` for the JSON schema."""

    name: str
    input_ids: list[TokenSeq]
    attention_mask: list[list[int]]
    constraints: list[RowConstraints]
    num_beams: int
    max_new_tokens: int
    min_new_tokens: int | None
    length_penalty: float
    num_return_sequences: int
    early_stopping: bool | str | None
    repeats: int
    warmup: int
    threads: int | None
    time_with_scores: bool


def parse_job(raw: dict[str, Any], index: int) -> Job:
    """Validate one job object and fill defaults.

    Required: ``input_ids``, ``constraints``, ``num_beams``, ``max_new_tokens``.
    ``attention_mask`` defaults to all ones (rows must then be equal length).
    ``constraints`` may also be a single row's list of sets (shared by all rows)
    if given under ``shared_constraints`` instead.
    """
    input_ids = [[int(t) for t in row] for row in raw["input_ids"]]
    if not input_ids:
        raise ValueError("input_ids is empty")
    mask = raw.get("attention_mask")
    if mask is None:
        if len({len(r) for r in input_ids}) != 1:
            raise ValueError("rows differ in length: give attention_mask")
        mask = [[1] * len(r) for r in input_ids]
    mask = [[int(m) for m in row] for row in mask]
    if [len(r) for r in mask] != [len(r) for r in input_ids]:
        raise ValueError("attention_mask shape differs from input_ids")

    if "shared_constraints" in raw:
        constraints = [raw["shared_constraints"]] * len(input_ids)
    else:
        constraints = raw["constraints"]
    if len(constraints) != len(input_ids):
        raise ValueError(f"constraints has {len(constraints)} rows, input_ids {len(input_ids)}")
    constraints = [[[[int(t) for t in alt] for alt in cset] for cset in row] for row in constraints]

    return Job(
        name=str(raw.get("name", f"job{index}")),
        input_ids=input_ids,
        attention_mask=mask,
        constraints=constraints,
        num_beams=int(raw["num_beams"]),
        max_new_tokens=int(raw["max_new_tokens"]),
        min_new_tokens=None if raw.get("min_new_tokens") is None else int(raw["min_new_tokens"]),
        length_penalty=float(raw.get("length_penalty", 1.0)),
        num_return_sequences=int(raw.get("num_return_sequences", 1)),
        early_stopping=raw.get("early_stopping"),
        repeats=int(raw.get("repeats", 3)),
        warmup=int(raw.get("warmup", 1)),
        threads=None if raw.get("threads") is None else int(raw["threads"]),
        time_with_scores=bool(raw.get("time_with_scores", False)),
    )


# --------------------------------------------------------------------------- helpers


#: Where the model and the batches live (``--device``).
DEVICE = torch.device("cpu")


def contains(seq: TokenSeq, sub: TokenSeq) -> bool:
    """True iff ``sub`` occurs contiguously in ``seq`` (plain token-id substring)."""
    n, m = len(seq), len(sub)
    return m == 0 or any(seq[i : i + m] == sub for i in range(n - m + 1))


def sets_satisfied(seq: TokenSeq, row: RowConstraints) -> list[bool]:
    """Per constraint set: does ``seq`` contain at least one of its alternatives?"""
    return [any(contains(seq, alt) for alt in cset) for cset in row]


def build_constraints(row: RowConstraints) -> list[DisjunctiveConstraint]:
    """One ``DisjunctiveConstraint`` per set (raises ValueError as HF does)."""
    return [DisjunctiveConstraint([list(a) for a in cset]) for cset in row]


def make_batch(rows: list[int], job: Job, lm: LoadedModel) -> tuple[torch.Tensor, torch.Tensor]:
    """Tensors for the given job rows: right padding kept for encoder-decoder
    models, rows re-packed to left padding for decoder-only models."""
    seqs = [[t for t, m in zip(job.input_ids[r], job.attention_mask[r]) if m] for r in rows]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), lm.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        if lm.is_encoder_decoder:
            ids[i, : len(s)] = torch.tensor(s)
            mask[i, : len(s)] = 1
        else:
            ids[i, width - len(s) :] = torch.tensor(s)
            mask[i, width - len(s) :] = 1
    return ids.to(DEVICE), mask.to(DEVICE)


def _synchronize() -> None:
    """Wait for queued GPU work, so a wall-clock time covers it."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)


def clean_output(seq: TokenSeq, lm: LoadedModel, prompt_width: int) -> TokenSeq:
    """Generated tokens only: drop the T5 decoder start token (or the decoder-only
    prompt) and cut after the first EOS (EOS kept, trailing pad dropped)."""
    out = seq[1:] if lm.is_encoder_decoder else seq[prompt_width:]
    for i, t in enumerate(out):
        if t in lm.eos_token_ids:
            return out[: i + 1]
    return out


# --------------------------------------------------------------------------- run


def _generate(
    lm: LoadedModel,
    job: Job,
    groups: list[list[int]],
    with_scores: bool,
) -> list[tuple[list[int], Any, int]]:
    """One full pass over the job: one ``generate`` call per row group.

    Constraint objects are built fresh for each call (they are cheap and HF
    copies them per beam anyway)."""
    outs = []
    for rows in groups:
        ids, mask = make_batch(rows, job, lm)
        row_c = job.constraints[rows[0]]
        kwargs: dict[str, Any] = {
            "input_ids": ids,
            "attention_mask": mask,
            "num_beams": job.num_beams,
            "max_new_tokens": job.max_new_tokens,
            "length_penalty": job.length_penalty,
            "num_return_sequences": job.num_return_sequences,
            "do_sample": False,
            "pad_token_id": lm.pad_token_id,
            "return_dict_in_generate": True,
            "output_scores": with_scores,
        }
        if row_c:
            kwargs["constraints"] = build_constraints(row_c)
        if job.min_new_tokens is not None:
            kwargs["min_new_tokens"] = job.min_new_tokens
        if job.early_stopping is not None:
            kwargs["early_stopping"] = job.early_stopping
        with torch.inference_mode():
            out = cast(Any, lm.model).generate(**kwargs)
        outs.append((rows, out, ids.shape[1]))
    return outs


def run_job(lm: LoadedModel, job: Job) -> dict[str, Any]:
    """Run one job and return its result object (never raises for job errors)."""
    batch = len(job.input_ids)
    shared = all(c == job.constraints[0] for c in job.constraints)
    groups = [list(range(batch))] if shared else [[r] for r in range(batch)]
    result: dict[str, Any] = {
        "name": job.name,
        "mode": "batched" if shared else "per_row",
        "batch_size": batch,
        "num_generate_calls_per_run": len(groups),
        "num_beams": job.num_beams,
        "max_new_tokens": job.max_new_tokens,
        "min_new_tokens": job.min_new_tokens,
        "length_penalty": job.length_penalty,
        "num_return_sequences": job.num_return_sequences,
        "early_stopping": job.early_stopping,
        "threads": torch.get_num_threads(),
        "warmup": job.warmup,
        "repeats": job.repeats,
        "timed_with_scores": job.time_with_scores,
        "error": None,
        "error_stage": None,
        "run_seconds": [],
        "run_cpu_seconds": [],  # process CPU time; >> wall*threads or << it hints at contention
        "median_seconds": None,
        "min_seconds": None,
        "sequences": None,
        "sequences_scores": None,
        "sets_satisfied": None,
        "all_satisfied": None,
        "satisfaction_rate": None,
        "timed_output_matches_scored": None,
        "scores_error": None,
    }

    # Constraint validation first, so a rejected job costs no model time.
    try:
        for row in job.constraints:
            build_constraints(row)
    except Exception as exc:  # noqa: BLE001  (HF raises ValueError; record any rejection)
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["error_stage"] = "constraints"
        return result

    try:
        for _ in range(job.warmup):
            _generate(lm, job, groups, job.time_with_scores)
        timed_out = None
        for _ in range(job.repeats):
            _synchronize()
            c0, t0 = time.process_time(), time.perf_counter()
            timed_out = _generate(lm, job, groups, job.time_with_scores)
            _synchronize()
            result["run_seconds"].append(time.perf_counter() - t0)
            result["run_cpu_seconds"].append(time.process_time() - c0)
        if timed_out is None:  # repeats == 0: still produce outputs
            timed_out = _generate(lm, job, groups, job.time_with_scores)
    except Exception:  # noqa: BLE001  (a per-job error must not abort the other jobs)
        result["error"] = traceback.format_exc()
        result["error_stage"] = "generate"
        return result

    scored = timed_out
    if not job.time_with_scores:
        # Untimed pass with output_scores=True for sequences_scores.  HF 4.56's
        # ConstrainedBeamSearchScorer.finalize crashes here ("Could not infer dtype
        # of NoneType") when a row falls back to constraint-violating hypotheses
        # (they carry no beam_indices) after a row that did not; keep the timed
        # sequences then and report the crash as scores_error.
        try:
            scored = _generate(lm, job, groups, True)
        except Exception:  # noqa: BLE001
            result["scores_error"] = traceback.format_exc(limit=-3)

    if result["run_seconds"]:
        result["median_seconds"] = statistics.median(result["run_seconds"])
        result["min_seconds"] = min(result["run_seconds"])

    k = job.num_return_sequences
    sequences: list[list[TokenSeq]] = [[] for _ in range(batch)]
    scores: list[list[float | None]] = [[] for _ in range(batch)]
    for rows, out, width in scored:
        seq_rows = out.sequences.tolist()
        sc = (
            out.sequences_scores.tolist()
            if out.sequences_scores is not None
            else [None] * len(seq_rows)
        )
        for j, r in enumerate(rows):
            for i in range(j * k, (j + 1) * k):
                sequences[r].append(clean_output(seq_rows[i], lm, width))
                scores[r].append(sc[i])
    if scored is not timed_out:
        timed_seqs = [s for _, out, _ in timed_out for s in out.sequences.tolist()]
        scored_seqs = [s for _, out, _ in scored for s in out.sequences.tolist()]
        result["timed_output_matches_scored"] = timed_seqs == scored_seqs

    per_set = [[sets_satisfied(s, job.constraints[r]) for s in sequences[r]] for r in range(batch)]
    flat = [all(ss) for row in per_set for ss in row]
    result.update(
        sequences=sequences,
        sequences_scores=scores,
        sets_satisfied=per_set,
        all_satisfied=[[all(ss) for ss in row] for row in per_set],
        satisfaction_rate=sum(flat) / len(flat) if flat else None,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="save_pretrained directory")
    ap.add_argument("--job", required=True, help="job JSON (object or array of objects)")
    ap.add_argument("--out", required=True, help="result JSON path")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: cpu)")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    args = ap.parse_args(argv)
    global DEVICE
    DEVICE = torch.device(args.device)

    raw = json.loads(Path(args.job).read_text())
    raw_jobs = raw if isinstance(raw, list) else [raw]
    common = {
        "runner": "hf456_disjunctive_runner",
        "runner_version": RUNNER_VERSION,
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "model_dir": str(args.model),
        "device": args.device,
        "dtype": args.dtype,
    }

    load_t0 = time.perf_counter()
    lm = load_model(args.model)
    lm.model.to(DEVICE, getattr(torch, args.dtype))
    common.update(
        model_type=lm.model.config.model_type,
        is_encoder_decoder=lm.is_encoder_decoder,
        model_load_seconds=time.perf_counter() - load_t0,
        config_fixups=lm.fixups,
        sequence_format=(
            "generated tokens only: "
            + ("decoder start token removed" if lm.is_encoder_decoder else "prompt removed")
            + f"; cut after the first EOS {lm.eos_token_ids} (EOS kept, padding dropped)"
        ),
    )

    results: list[dict[str, Any]] = []
    for i, rj in enumerate(raw_jobs):
        try:
            job = parse_job(rj, i)
        except Exception as exc:  # noqa: BLE001  (malformed job: report it, go on)
            results.append(
                {
                    **common,
                    "name": rj.get("name", f"job{i}"),
                    "error_stage": "job",
                    "error": f"{type(exc).__name__}: {exc}",
                }
            )
            continue
        if job.threads is not None:
            torch.set_num_threads(job.threads)
        res = run_job(lm, job)
        results.append({**common, **res})
        status = (
            res["error_stage"]
            or f"median {res['median_seconds']:.3f}s, sat {res['satisfaction_rate']}"
        )
        print(f"[hf456] {job.name}: {status}", file=sys.stderr)

    Path(args.out).write_text(
        json.dumps(results if isinstance(raw, list) else results[0], indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
