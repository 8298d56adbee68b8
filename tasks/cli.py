"""``dpc eval``: the tasks' evaluations. ``dpc eval copa FILE --scorer NAME`` is the COPA accuracy
of a scorer of :data:`tasks.copa.scorers.SCORERS` (the accuracy is the last line printed);
``dpc eval generation FILE`` is the paper's Table 3 on COPA premises
(:mod:`tasks.copa.generation`).

The ``eval`` group itself is made by the ``dpc`` command (:mod:`cli`); :func:`add_eval_commands`
adds this package's commands to it, and :func:`add_task_parsers` the pipelines' own groups
(``dpc swag``, ``dpc aflite``, ``dpc inli``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dpc_device import add_device_arguments, resolve_device
from dpc_errors import DpcError, check_int, check_seed
from dpc_files import atomic_open, check_output_file, check_output_folder
from guided_generation.cli import generator_run, verifier_run
from guided_generation.errors import GuidedGenerationError
from guided_generation.options import METHODS, GuidedOptions, method_names
from tasks.aflite.cli import add_aflite_parser
from tasks.commongen.cli import add_commongen_parser
from tasks.copa.dataset import read_copa
from tasks.copa.scorers import available_scorers, make_scorer
from tasks.copa.scoring import decide_all
from tasks.inli.cli import add_inli_parser
from tasks.swag.cli import add_swag_parser

__all__ = ["add_eval_commands", "add_eval_copa_parser", "add_eval_generation_parser",
           "add_task_parsers", "eval_copa_command", "eval_generation_command"]


def add_task_parsers(sub: Any) -> None:
    """Add the task pipelines' command groups: ``dpc swag``, ``dpc aflite``, ``dpc inli``,
    ``dpc commongen``."""
    add_swag_parser(sub)
    add_aflite_parser(sub)
    add_inli_parser(sub)
    add_commongen_parser(sub)


def add_eval_commands(evals: Any) -> None:
    """Add ``copa`` and ``generation`` to the ``dpc eval`` group."""
    add_eval_copa_parser(evals)
    add_eval_generation_parser(evals)


def add_eval_copa_parser(evals: Any) -> argparse.ArgumentParser:
    """Register ``dpc eval copa``."""
    c = evals.add_parser("copa", help="COPA accuracy of a scorer on a COPA XML file")
    c.add_argument("file", help="COPA XML file (e.g. ../shared/data/copa/copa-dev.xml)")
    c.add_argument("--scorer", required=True,
                   help=f"scorer name: {', '.join(available_scorers())}")
    c.add_argument("--graph", default=None, help="Cause Effect Graph path (graph scorers)")
    c.add_argument("--counts", default=None,
                   help="co-occurrence counts (window-pmi, graph-window; dpc graph cooccur)")
    c.add_argument("--model", default=None, help="model folder (generator scorers)")
    c.add_argument("--train", default=None, help="COPA XML to train on (trained scorers)")
    c.add_argument("--seed", type=int, default=0)
    add_device_arguments(c, dtype_help=(  # read by the scorers with a model
        "precision: of the generator scorers' weights (default float32); of causal-bert's "
        "COPA fine-tuning and scoring under torch.autocast, its weights float32 (default "
        "bfloat16 on CUDA, float32 on the CPU)"))
    c.add_argument("--predictions", default=None, help="write per-item predictions (JSON lines)")
    c.add_argument("--overwrite", action="store_true",
                   help="replace an existing --predictions file")
    c.set_defaults(func=eval_copa_command)
    return c


def eval_copa_command(args: argparse.Namespace) -> int:
    """Score every item; print counts, then the accuracy alone on the last line."""
    try:
        check_seed("--seed", args.seed, quote=False)
        if args.predictions:  # before the (long) scoring: a bad path fails at once
            check_output_file(args.predictions, "--predictions", overwrite=args.overwrite)
        items = read_copa(args.file)
        options = {k: getattr(args, k) for k in ("graph", "counts", "model", "train", "seed",
                                                  "device", "dtype")}
        scorer = make_scorer(args.scorer, **{k: v for k, v in options.items() if v is not None})
        decisions = decide_all(scorer, items)  # (predicted, tie) per item, once
        if args.predictions:
            with atomic_open(Path(args.predictions)) as out:
                for it, (predicted, _) in zip(items, decisions):
                    out.write(json.dumps({"id": it.id, "predicted": predicted,
                                          "answer": it.answer}) + "\n")
    except DpcError as err:
        print(f"dpc eval: error: {err}", file=sys.stderr)
        return 2
    correct = sum(p == it.answer for it, (p, _) in zip(items, decisions))
    ties = sum(tie for _, tie in decisions)
    print(f"scorer {args.scorer} on {args.file}: {correct}/{len(items)} correct, {ties} ties "
          f"(first alternative taken) (scorers available: {', '.join(available_scorers())})")
    print(f"{correct / len(items):.4f}")
    return 0


def add_eval_generation_parser(evals: Any) -> argparse.ArgumentParser:
    """Register ``dpc eval generation``."""
    d = GuidedOptions()
    p = evals.add_parser(
        "generation",
        help="Table 3 of the paper: guided generation and its baselines on COPA premises",
        description="Every method generates causes/effects of the premises of a COPA file; the "
        "table gives Div (BLEU-1 of the top 3 against the correct alternative, no brevity "
        "penalty), distinct-1/2, keyword coverage and gold-lemma hits.",
    )
    p.add_argument("file", help="COPA XML file (e.g. ../shared/data/copa/copa-dev.xml)")
    p.add_argument("--methods", default=",".join(METHODS),
                   help=f"comma-separated, from {', '.join(METHODS)} (default: all)")
    p.add_argument("--bank", default=None, help="CausalBank folder for knn (e.g. runs/gutenberg/causalbank)")
    p.add_argument("--limit", type=int, default=None, help="the first N items only")
    p.add_argument("--n", type=int, default=d.n)
    p.add_argument("--m", type=int, default=d.m)
    p.add_argument("--k", type=int, default=d.k)
    p.add_argument("--num-beams", type=int, default=None, help="beams per row (default: --m)")
    p.add_argument("--rank", default=d.rank, help="how the graph ranks keywords")
    p.add_argument("--plain-row", action=argparse.BooleanOptionalAction, default=d.plain_row,
                   help="also decode one row without a keyword (its outputs join the pool)")
    p.add_argument("--max-new-tokens", type=int, default=d.max_new_tokens)
    p.add_argument("--template-limit", type=int, default=d.template_limit,
                   help="at most this many of the top K share a word trigram (default "
                   f"{d.template_limit}; 0: no limit)")
    p.add_argument("--model", default=None,
                   help="model folder, or a model's name (smollm2-ecare, smollm2-135m, gemma3-270m)")
    p.add_argument("--graph", default=None)
    p.add_argument("--seed", type=int, default=0)
    add_device_arguments(p)
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write outputs.jsonl (resumable) and scores.json here")
    p.set_defaults(func=eval_generation_command, interrupted=_generation_interrupted)
    return p


def _generation_interrupted(args: argparse.Namespace) -> str:
    """What an interrupted ``dpc eval generation`` kept (``dpc`` prints it)."""
    if not args.out:
        return "nothing was kept (with --out DIR, a re-run resumes where it stopped)"
    return (f"the outputs made are kept in {args.out}/outputs.jsonl; run the same command "
            "again to resume")


def eval_generation_command(args: argparse.Namespace) -> int:
    """``dpc eval generation``: run, print the Markdown table, optionally save it."""
    try:
        # Lazy: these import torch and transformers (2.5 s), which `dpc --help` must not pay.
        from guided_generation.pipeline import GuidedGenerator
        from guided_generation.retrieval import KnnRetriever
        from tasks.copa.generation import (
            evaluate_generation,
            format_table,
            model_prefers_correct,
            scores_json,
        )
        from train.models import DEFAULT_GENERATOR

        check_seed("--seed", args.seed, error=GuidedGenerationError, quote=False)
        if args.limit is not None:
            check_int("--limit", args.limit, 1, error=GuidedGenerationError, quote=False)
        if args.out:  # before the model is read: a bad folder fails at once
            check_output_folder(args.out, "--out", command="dpc eval generation")
        names = [m.strip() for m in args.methods.split(",") if m.strip()]
        if not names:
            raise GuidedGenerationError(f"--methods (={args.methods!r}) names no method: give "
                                        f"one or more of {', '.join(METHODS)}")
        methods = method_names(names)
        if "knn" in methods and not args.bank:
            raise GuidedGenerationError("method knn needs --bank (a CausalBank folder)")
        options = GuidedOptions(n=args.n, m=args.m, k=args.k, max_new_tokens=args.max_new_tokens,
                                num_beams=args.num_beams, rank=args.rank, plain_row=args.plain_row,
                                template_limit=args.template_limit or None)
        items = read_copa(args.file)
        if args.limit is not None:
            items = items[: args.limit]
        device = resolve_device(args.device)  # before the bank and the model are read
        run = ({**generator_run(args.model, args.graph), "verifier": verifier_run("bundled"),
                "bank": args.bank, "dtype": args.dtype}
               if args.out else None)  # what the outputs.jsonl records of the run
        retriever = KnnRetriever.from_bank(args.bank) if "knn" in methods else None
        generator = GuidedGenerator.load(args.model, args.graph, device=device, dtype=args.dtype)
        scores = evaluate_generation(items, generator, methods, options, retriever=retriever,
                                     out=args.out, seed=args.seed, run=run)
        prefers = model_prefers_correct(generator, items)
    except DpcError as err:
        print(f"dpc eval: error: {err}", file=sys.stderr)
        return 2
    table = format_table(scores, prefers)
    print(table)
    if args.out:
        Path(args.out, "scores.json").write_text(json.dumps(
            {"file": args.file, "items": len(items), "options": {
                "n": options.n, "m": options.m, "k": options.k, "num_beams": options.num_beams,
                "max_new_tokens": options.max_new_tokens, "rank": options.rank,
                "plain_row": options.plain_row, "template_limit": options.template_limit,
                "model": args.model or DEFAULT_GENERATOR, "graph": args.graph or "bundled"},
             "methods": scores_json(scores), "model_prefers_correct": prefers}, indent=2) + "\n",
            encoding="utf-8")
        Path(args.out, "table.md").write_text(table + "\n", encoding="utf-8")
    return 0
