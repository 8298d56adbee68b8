"""``dpc swag``: SWAG-style datasets made with the dpc engine.

``dpc swag train-endings DATA.jsonl --out DIR``
    Fine-tune the ending model on the gold endings of a HellaSwag file (:mod:`.ending_model`).
``dpc swag oversample CONTEXTS.jsonl --out DIR [--per-context N] [--constrain-context] [--model PATH]``
    Sample N distinct endings per context into ``DIR/pool.jsonl`` (:mod:`.oversample`).
``dpc swag filter DIR --out FILE.jsonl|FILE.csv [--k 9] [--choices 4] [--iterations I]``
    Adversarial Filtering over the pool (restatements of the gold dropped first, k negatives
    per context while filtering, then the choices - 1 hardest); writes HellaSwag-format JSON
    lines (or, for ``--out`` ending in ``.csv``, the official SWAG CSV, whose rows all have
    ``choices`` endings: a context whose pool had fewer is left out of it, and counted on
    stderr), ``DIR/report.json`` and the AF curve ``DIR/af_curve.png``
    (:mod:`.adversarial_filter`).

A data or contexts file whose name ends in ``.csv`` is read as the official SWAG CSV
(:func:`tasks.datasets.read_swag_csv`), any other as HellaSwag/SWAG JSON lines
(:func:`tasks.datasets.read_multiple_choice`).

All three resume an interrupted run when started again with the same ``--out``/``DIR``.

All three take ``--device`` and ``--dtype`` (:mod:`dpc_device`), checked before anything is read:
``train-endings`` trains under autocast (training rules: weights float32, default bfloat16 on
CUDA, float32 on the CPU); ``oversample`` casts the ending model's weights (default float32);
``filter`` trains the committee's CNN, BiLSTM and joint ensemble under autocast (its MLP and bag-of-words
members are scikit-learn, always on the CPU).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dpc_device import add_device_arguments, check_arguments
from dpc_errors import DpcError
from dpc_spark import add_spark_arguments, check_spark_arguments

__all__ = ["add_swag_parser"]


def add_swag_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpc swag`` and its commands (their defaults are the options dataclasses'; the
    modules holding them import no torch)."""
    from tasks.swag.adversarial_filter import FilterOptions
    from tasks.swag.committee import ENSEMBLES
    from tasks.swag.oversample import OversampleOptions

    od, fd = OversampleOptions(), FilterOptions()
    swag = sub.add_parser("swag", help="SWAG endings: oversampling and Adversarial Filtering")
    cmds = swag.add_subparsers(dest="swag_command", required=True)

    t = cmds.add_parser("train-endings", help="fine-tune the ending model on gold endings")
    t.add_argument("data", help="HellaSwag JSON lines (e.g. ../shared/data/hellaswag/val_part1.jsonl) "
                   "or a SWAG CSV (*.csv)")
    t.add_argument("--out", required=True, help="folder (resumes a run there)")
    t.add_argument("--base", default="smollm2-135m",
                   help="pretrained causal LM to adapt with LoRA (default smollm2-135m), or "
                        "'bundled' for the bert2bert fine-tuned by the trainer")
    t.add_argument("--minutes", type=float, default=12.0,
                   help="training budget (default 12; run again with more to continue)")
    t.add_argument("--epochs", type=float, default=1.0, help="LoRA: passes over the data")
    t.add_argument("--init-from", default=None,
                   help="--base bundled: generator to start from (default: the bundled one)")
    add_device_arguments(t, training=True)
    t.set_defaults(func=train_endings_command,
                   interrupted=lambda a: f"checkpoints kept in {a.out}; run it again to resume")

    o = cmds.add_parser("oversample", help="sample distinct endings per context")
    o.add_argument("contexts", help="HellaSwag-format JSON lines (ctx, endings, label) or a "
                   "SWAG CSV (*.csv: sent1, sent2, ending0..3, label)")
    o.add_argument("--out", required=True, help="pool folder (resumes a run there)")
    o.add_argument("--per-context", type=int, default=od.per_context,
                   help=f"distinct endings per context (default {od.per_context})")
    o.add_argument("--constrain-context", action="store_true", default=od.constrain_context,
                   help="every ending names a content word of its context (or an inflection)")
    o.add_argument("--model", default=None,
                   help="ending model: a `dpc swag train-endings` folder (default: the bundled "
                        "one, SmolLM2-135M + LoRA on HellaSwag val_part1's 'lm' contexts), a "
                        "model folder or a pretrained name")
    o.add_argument("--split", choices=("all", "pool", "lm"), default="all",
                   help="contexts to use: all, or the ending model's held-out 'pool' contexts")
    o.add_argument("--limit", type=int, default=od.limit, help="at most this many contexts")
    o.add_argument("--temperature", type=float, default=od.temperature)
    o.add_argument("--top-p", type=float, default=od.top_p)
    o.add_argument("--max-new-tokens", type=int, default=od.max_new_tokens,
                   help="longest ending in tokens; longer ones are dropped "
                        f"(default {od.max_new_tokens})")
    o.add_argument("--max-rounds", type=int, default=od.max_rounds)
    o.add_argument("--contexts-per-batch", type=int, default=od.contexts_per_batch)
    o.add_argument("--seed", type=int, default=od.seed)
    add_spark_arguments(o, what="sample", units="batches of contexts",
                        parts="OUT/pool.parts/")
    add_device_arguments(o)
    o.set_defaults(func=oversample_command,
                   interrupted=lambda a: (f"finished partitions kept in {a.out}/pool.parts"
                                          if a.spark is not None else
                                          f"finished contexts kept in {a.out}/pool.jsonl")
                   + "; run it again to resume")

    f = cmds.add_parser("filter", help="Adversarial Filtering of an oversampled pool")
    f.add_argument("folder", help="pool folder of `dpc swag oversample`")
    f.add_argument("--out", required=True,
                   help="file to write: HellaSwag-format JSON lines, or the official SWAG CSV "
                   "(sent1, sent2, ending0..3, label) when the name ends in .csv")
    f.add_argument("--k", type=int, default=fd.k,
                   help=f"negatives per context while filtering (default {fd.k}, as SWAG)")
    f.add_argument("--choices", type=int, default=fd.choices,
                   help="endings per question in the written set: the gold and the choices - 1 "
                        "negatives (of the k) a cross-fitted committee scores highest "
                        f"(default {fd.choices})")
    f.add_argument("--max-replaced", type=int, default=fd.max_replaced,
                   help="at most this many negatives of a context replaced per iteration, the "
                        f"easiest first (default {fd.max_replaced}, as SWAG; 0: no limit)")
    f.add_argument("--ensemble", choices=ENSEMBLES, default=fd.ensemble,
                   help="how the committee answers as one: joint (one model trained over the "
                        "members' features, as SWAG) or sum (of the members' logits) "
                        f"(default {fd.ensemble})")
    f.add_argument("--max-gold-similarity", type=float, default=fd.max_gold_similarity,
                   help="drop pool endings whose all-MiniLM-L6-v2 cosine similarity to the gold "
                        "ending reaches this (restatements of the gold; default "
                        f"{fd.max_gold_similarity}, chosen on a hand-checked sample)")
    f.add_argument("--keep-restatements", action="store_true",
                   help="keep every pool ending, restatements of the gold included")
    f.add_argument("--iterations", type=int, default=fd.iterations,
                   help=f"maximum AF iterations, the cheap ones included (default {fd.iterations})")
    f.add_argument("--cheap-iterations", type=int, default=fd.cheap_iterations,
                   help="first iterations with the MLP on LM features alone, as SWAG (ended "
                        f"early when they converge; default {fd.cheap_iterations})")
    f.add_argument("--stop-at-chance", action=argparse.BooleanOptionalAction,
                   default=fd.stop_at_chance,
                   help="also stop once the whole committee's held-out accuracy has been at or "
                        "below chance (1/(k+1)) for 2 full-committee iterations in a row (default: yes; not in "
                        "the paper, whose rules alone are --no-stop-at-chance)")
    f.add_argument("--seed", type=int, default=fd.seed)
    f.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    add_device_arguments(f, training=True, dtype_help=(
        "precision of the committee's CNN, BiLSTM and joint ensemble (torch.autocast, weights float32; the MLP "
        "and bag-of-words members are scikit-learn, on the CPU); default: bfloat16 on CUDA, "
        "float32 on the CPU; float16 is refused (it needs loss scaling)"))
    f.set_defaults(func=filter_command,
                   interrupted=lambda a: f"iterations done kept in {a.folder}/af_state.json; "
                                         "run it again to resume")
    return swag


def _fail(err: Exception) -> int:
    print(f"dpc swag: error: {err}", file=sys.stderr)
    return 2


def _is_csv(path: str) -> bool:
    """Whether ``path`` names a SWAG CSV (by its extension) rather than JSON lines."""
    return path.lower().endswith(".csv")


def _read_items(path: str) -> list[Any]:
    """The multiple-choice items of a SWAG CSV (``*.csv``) or of HellaSwag/SWAG JSON lines."""
    from tasks.datasets import read_multiple_choice, read_swag_csv

    return read_swag_csv(path) if _is_csv(path) else read_multiple_choice(path)


def train_endings_command(args: argparse.Namespace) -> int:
    """Fine-tune the ending model; print its result."""
    try:
        from tasks.swag.ending_model import train_ending_model

        device = check_arguments(args, training=True)  # before the data is read
        items = _read_items(args.data)
        result = train_ending_model(items, args.out, base=args.base, init_from=args.init_from,
                                    max_minutes=args.minutes, epochs=args.epochs,
                                    device=device, dtype=args.dtype)
    except DpcError as err:
        return _fail(err)
    result.pop("history", None)
    print(json.dumps(result, indent=1))
    return 0


def _spark_ending_model(model: str, device: str, dtype: str | None) -> tuple[Any, Any]:
    """The ending model on a Spark executor (:func:`dpc_spark.task_device`)."""
    from dpc_device import resolve_device
    from dpc_spark import task_device
    from tasks.swag.ending_model import load_ending_model

    return load_ending_model(model, device=resolve_device(task_device(device)), dtype=dtype)


def oversample_command(args: argparse.Namespace) -> int:
    """Sample the pool; print the summary."""
    try:
        from dpc_files import check_output_folder
        from tasks.swag.ending_model import BUNDLED_ENDING_MODEL, context_split, load_ending_model
        from tasks.swag.oversample import OversampleOptions, oversample

        options = OversampleOptions(
            per_context=args.per_context, temperature=args.temperature, top_p=args.top_p,
            max_new_tokens=args.max_new_tokens, max_rounds=args.max_rounds,
            contexts_per_batch=args.contexts_per_batch,
            constrain_context=args.constrain_context, seed=args.seed, limit=args.limit)
        device = check_arguments(args)
        check_spark_arguments(args)
        check_output_folder(args.out, "--out", command="dpc swag oversample")  # before reading or loading
        items = _read_items(args.contexts)
        if args.split != "all":
            items = [it for it in items if context_split(it.ctx) == args.split]
        name = str(args.model or "bundled SWAG ending model")
        if args.spark is not None:
            from functools import partial

            from tasks.swag.oversample import oversample_spark

            model = str(args.model or BUNDLED_ENDING_MODEL)
            if Path(model).exists():  # a folder: the same one from an executor's working folder
                model = str(Path(model).resolve())
            load = partial(_spark_ending_model, model, args.device, args.dtype)
            summary = oversample_spark(items, args.out, load, options, model_name=name,
                                       master=args.spark, partitions=args.partitions,
                                       key=(name, args.device, args.dtype))
        else:
            model, tokenizer = load_ending_model(args.model or BUNDLED_ENDING_MODEL,
                                                 device=device, dtype=args.dtype)
            summary = oversample(items, args.out, model, tokenizer, options, model_name=name)
    except DpcError as err:
        return _fail(err)
    print(json.dumps(summary, indent=1))
    if summary["skipped_short_context"]:
        print(f"skipped {summary['skipped_short_context']} context(s) under 2 words",
              file=sys.stderr)
    return 0


def filter_command(args: argparse.Namespace) -> int:
    """Run AF; write the dataset, the report and the curve; print the accuracies."""
    try:
        from pathlib import Path

        from dpc_files import check_output_file
        from tasks.datasets import write_multiple_choice, write_swag_csv
        from tasks.swag.adversarial_filter import FilterOptions, adversarial_filter, filtered_items
        from tasks.swag.plot import plot_af_curve

        device = check_arguments(args, training=True)
        check_output_file(args.out, "--out", overwrite=args.overwrite)
        options = FilterOptions(
            k=args.k, iterations=args.iterations, cheap_iterations=args.cheap_iterations,
            max_replaced=args.max_replaced or None, choices=args.choices,
            ensemble=args.ensemble,
            max_gold_similarity=None if args.keep_restatements else args.max_gold_similarity,
            stop_at_chance=args.stop_at_chance, seed=args.seed)
        report = adversarial_filter(args.folder, options, device=device, dtype=args.dtype)
        items = filtered_items(args.folder, seed=args.seed)
        short = []
        if _is_csv(args.out):  # a CSV row has `choices` ending columns: short contexts stay out
            short = [it for it in items if len(it.endings) != args.choices]
            items = [it for it in items if len(it.endings) == args.choices]
            write_swag_csv(items, args.out, overwrite=args.overwrite)
        else:
            write_multiple_choice(items, args.out, overwrite=args.overwrite)
        png = plot_af_curve(report, Path(args.folder) / "af_curve.png")
    except DpcError as err:
        return _fail(err)
    rows = report["iterations"]
    if report["short_pool"]:
        print(f"{len(report['short_pool'])} context(s) have fewer than k={args.k} distinct "
              "endings: kept with the endings they have, left out of the 4-way accuracy",
              file=sys.stderr)
    if report["no_sampled_ending"]:
        print(f"{len(report['no_sampled_ending'])} context(s) have no sampled ending: left out",
              file=sys.stderr)
    if report.get("restatements_dropped"):
        print(f"{report['restatements_dropped']} pool ending(s) restating their gold dropped "
              f"(similarity >= {options.max_gold_similarity})", file=sys.stderr)
    if short:
        print(f"{len(short)} context(s) with fewer than {args.choices} endings left out of the CSV "
              "(its rows all have the same ending columns; a .jsonl --out keeps them)",
              file=sys.stderr)
    print(f"contexts: {len(items)} written to {args.out}; AF curve: {png}")
    print(f"iterations: {len(rows)} ({report['stopped']})")
    print("ensemble held-out accuracy: iteration 0 "
          f"{rows[0]['accuracy']['ensemble']:.3f}, last {rows[-1]['accuracy']['ensemble']:.3f} "
          f"({args.k + 1}-way); fresh committee on the {args.choices}-way result: "
          f"{report['final']['accuracy']}")
    return 0
