"""``dpc inli``: the Implied NLI classifier and hypothesis-variant generator.

- ``dpc inli train --out DIR``: fine-tune the 4-way classifier (:mod:`tasks.inli.classifier`)
- ``dpc inli eval FILE.csv [--model DIR]``: its accuracy table; last line
  ``overall 0.xxx implied 0.xxx``
- ``dpc inli predict [--model DIR]``: JSON lines ``{"premise", "hypothesis"}`` in, each with
  ``label`` and ``probabilities`` added out
- ``dpc inli variants --premise P --implied H``: explicit/neutral/contradiction variants of an
  implied entailment (:mod:`tasks.inli.hypotheses`); ``--file CSV --out JSONL`` for a file

Each takes ``--device`` and ``--dtype`` (:mod:`dpc_device`), checked before anything is read:
``train`` (and ``variants --train``) trains under autocast (training rules: weights float32,
default bfloat16 on CUDA, float32 on the CPU); ``eval``, ``predict`` and decoding ``variants``
cast the model's weights (default float32).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dpc_device import add_device_arguments, check_arguments
from dpc_errors import DpcError

__all__ = ["add_inli_parser"]

DEFAULT_TRAIN = "../shared/data/inli/train.csv"


def add_inli_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpc inli`` and its commands."""
    p = sub.add_parser("inli", help="Implied NLI: 4-way classifier and hypothesis variants")
    cmds = p.add_subparsers(dest="inli_command", required=True)

    t = cmds.add_parser("train", help="fine-tune the 4-way cross-encoder (resumable --out)")
    t.add_argument("--out", required=True, help="model folder (a rerun with it resumes)")
    t.add_argument("--train", default=DEFAULT_TRAIN, help=f"INLI CSV (default {DEFAULT_TRAIN})")
    t.add_argument("--hypothesis-only", action="store_true",
                   help="the hypothesis-only baseline: the premise is not read")
    t.add_argument("--encoder", default=None,
                   help="local HF encoder folder (default: all-MiniLM-L6-v2)")
    t.add_argument("--init-from", default=None,
                   help="a trained classifier folder to continue training from")
    t.add_argument("--epochs", type=float, default=1.0)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--lr", type=float, default=5e-5)
    t.add_argument("--max-length", type=int, default=128)
    t.add_argument("--max-minutes", type=float, default=None,
                   help="stop training after this many minutes (the best dev model is kept)")
    t.add_argument("--eval-every", type=int, default=0,
                   help="steps between dev evaluations (0: each epoch and at the end)")
    t.add_argument("--dev-fraction", type=float, default=0.1,
                   help="premises of --train held out for model selection")
    t.add_argument("--limit", type=int, default=None, help="use the first N premises only")
    t.add_argument("--seed", type=int, default=0, help="seed of the weights and batch order")
    t.add_argument("--split-seed", type=int, default=0,
                   help="seed of the dev split (keep it when continuing with --init-from)")
    add_device_arguments(t, training=True)
    t.set_defaults(func=train_command)

    e = cmds.add_parser("eval", help="accuracy table of a classifier on an INLI CSV")
    e.add_argument("file", help="INLI CSV (e.g. ../shared/data/inli/val.csv)")
    e.add_argument("--model", default=None, help="classifier folder (default: the bundled one)")
    e.add_argument("--limit", type=int, default=None, help="the first N premises only")
    e.add_argument("--assign", action="store_true",
                   help="also report the per-premise assignment (the four hypotheses of a "
                        "premise get four different labels; not comparable with per-pair "
                        "accuracy); the last line stays the per-pair one")
    add_device_arguments(e)
    e.set_defaults(func=eval_command)

    r = cmds.add_parser("predict", help="label JSON lines {premise, hypothesis}")
    r.add_argument("--model", default=None, help="classifier folder (default: the bundled one)")
    r.add_argument("--input", default="-", help="JSON lines file (default: stdin)")
    r.add_argument("--out", default=None, help="output JSON lines file (default: stdout)")
    r.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    add_device_arguments(r)
    r.set_defaults(func=predict_command)

    from tasks.inli.hypotheses import add_variants_arguments

    v = cmds.add_parser("variants", help="explicit/neutral/contradiction variants of an implied "
                                         "entailment, decoded through the engine")
    add_variants_arguments(v)
    return p


def _error(err: Exception) -> int:
    print(f"dpc inli: error: {err}", file=sys.stderr)
    return 2


def _read(path: str, limit: int | None) -> Any:
    from tasks.datasets import read_inli

    data = read_inli(path)
    if data.skipped:
        print(f"skipped {len(data.skipped)} row(s) with an empty premise or hypothesis "
              f"(lines {', '.join(map(str, data.skipped[:10]))}"
              f"{', ...' if len(data.skipped) > 10 else ''})")
    rows = data.rows[:limit] if limit else data.rows
    return rows


def train_command(args: argparse.Namespace) -> int:
    """Train and save; print the dev accuracy and the training time."""
    from dpc_files import check_output_folder, claim_output_folder
    from tasks.errors import TaskError
    from tasks.inli.classifier import train_classifier
    from train.cross_encoder import CrossEncoderOptions

    try:
        device = check_arguments(args, training=True)  # before anything is read or written
        out = check_output_folder(args.out, "--out", command="dpc inli train")
        if not Path(args.train).is_file():
            raise TaskError(f"--train {args.train!r} does not exist")
        rows = _read(args.train, args.limit)
        options = CrossEncoderOptions(
            encoder=args.encoder, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
            max_length=args.max_length, seed=args.seed, max_minutes=args.max_minutes,
            eval_every=args.eval_every, init_from=args.init_from)
        claim_output_folder(out, "dpc inli train")
        clf = train_classifier(rows, out, options, hypothesis_only=args.hypothesis_only,
                               dev_fraction=args.dev_fraction, split_seed=args.split_seed,
                               device=device, dtype=args.dtype)
    except DpcError as err:
        return _error(err)
    summary = getattr(clf.model, "training_summary", {})
    print(f"saved {out} ({'hypothesis-only' if args.hypothesis_only else 'premise+hypothesis'})")
    if summary:
        print(f"steps {summary['steps']}, training minutes {summary['train_minutes']:.1f}, "
              f"best dev accuracy {summary['best_dev_accuracy']:.3f}")
    return 0


def eval_command(args: argparse.Namespace) -> int:
    """Print the accuracy table; the last line is ``overall 0.xxx implied 0.xxx``."""
    from tasks.inli.classifier import InliClassifier, assign_labels, examples, format_report, report

    try:
        device = check_arguments(args)  # before the file is read
        rows = _read(args.file, args.limit)
        clf = InliClassifier.load(args.model, device=device, dtype=args.dtype)
        if not rows:
            raise DpcError(f"{args.file}: no INLI rows to evaluate")
        premises, hypotheses, gold = examples(rows)
        probs = clf.probabilities(premises, hypotheses, progress=True)
    except DpcError as err:
        return _error(err)
    if clf.hypothesis_only:
        print("model: hypothesis-only")
    if args.assign:
        assigned = report(rows, gold, assign_labels(probs).tolist())
        print("per-premise assignment (four different labels a premise):")
        print("\n".join("  " + line for line in format_report(assigned).splitlines()[:-1]))
        print(f"  assigned: overall {assigned.overall:.3f} implied {assigned.implied:.3f}\n")
    print(format_report(report(rows, gold, probs.argmax(1).tolist())))
    return 0


def predict_command(args: argparse.Namespace) -> int:
    """Read JSON lines, write them back with ``label`` and ``probabilities``."""
    from dpc_files import atomic_open, check_output_file
    from tasks.datasets import INLI_LABELS
    from tasks.errors import DatasetError
    from tasks.inli.classifier import InliClassifier

    try:
        device = check_arguments(args)  # before the input is read
        if args.out:
            check_output_file(args.out, "--out", overwrite=args.overwrite)
        name = "<stdin>" if args.input == "-" else args.input
        if args.input != "-" and not Path(args.input).is_file():
            raise DatasetError(f"--input {args.input!r} does not exist")
        handle = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")  # noqa: SIM115
        records, skipped = [], []
        with handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError as err:
                    raise DatasetError(f"{name}:{number}: not JSON ({err})") from None
                if not isinstance(record, dict) or not {"premise", "hypothesis"} <= set(record):
                    raise DatasetError(f"{name}:{number}: needs the keys premise and hypothesis")
                if not str(record["premise"]).strip() or not str(record["hypothesis"]).strip():
                    skipped.append(number)
                    continue
                records.append(record)
        clf = InliClassifier.load(args.model, device=device, dtype=args.dtype)
        probs = clf.probabilities([str(r["premise"]) for r in records],
                                  [str(r["hypothesis"]) for r in records])
    except DpcError as err:
        return _error(err)
    lines = []
    for record, p in zip(records, probs):
        record = dict(record)
        record["label"] = INLI_LABELS[int(p.argmax())]
        record["probabilities"] = {lab: round(float(x), 4) for lab, x in zip(INLI_LABELS, p)}
        lines.append(json.dumps(record, ensure_ascii=False))
    if args.out:
        with atomic_open(Path(args.out)) as out:
            out.write("".join(line + "\n" for line in lines))
    else:
        print("\n".join(lines)) if lines else None
    if skipped:
        print(f"skipped {len(skipped)} record(s) with an empty premise or hypothesis (lines "
              f"{', '.join(map(str, skipped[:10]))})", file=sys.stderr)
    return 0
