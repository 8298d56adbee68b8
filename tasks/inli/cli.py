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

from dpc_decode.options import add_search_arguments, search_options_from
from dpc_device import add_device_arguments, check_arguments
from dpc_errors import DpcError, check_float, check_int, check_length, check_seed
from dpc_inputs import check_input_file, parse_json, read_input_lines
from dpc_spark import add_spark_arguments, check_spark_arguments

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

    v = cmds.add_parser("variants", help="explicit/neutral/contradiction variants of an implied "
                                         "entailment, decoded through the engine")
    add_variants_arguments(v)
    return p


def _error(err: Exception) -> int:
    print(f"dpc inli: error: {err}", file=sys.stderr)
    return 2


def _limit(limit: int | None) -> int | None:
    """``--limit``, checked: ``None`` (all) or a count >= 1 (a slice's ``-1`` would drop the
    last row, ``0`` would read all)."""
    from tasks.errors import TaskError

    if limit is not None:
        check_int("--limit", limit, 1, error=TaskError, quote=False)
    return limit


def _read(path: str, limit: int | None) -> Any:
    from tasks.datasets import read_inli

    _limit(limit)  # before the file is read
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
        options = CrossEncoderOptions(
            encoder=args.encoder, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
            max_length=args.max_length, seed=args.seed, max_minutes=args.max_minutes,
            eval_every=args.eval_every, init_from=args.init_from)
        options.check()
        check_float("--dev-fraction", args.dev_fraction, 0, 1, open_min=True, open_max=True,
                    error=TaskError, quote=False)
        check_seed("--split-seed", args.split_seed, error=TaskError, quote=False)
        out = check_output_folder(args.out, "--out", command="dpc inli train")
        check_input_file(args.train, "--train")  # a directory said as one, a missing file too
        rows = _read(args.train, args.limit)
        claim_output_folder(out, "dpc inli train")  # every value checked: nothing left behind
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
        if args.input == "-":
            text = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
            try:
                text = text.decode("utf-8-sig") if isinstance(text, bytes) else text
            except UnicodeDecodeError as err:
                raise DatasetError(f"<stdin> is not UTF-8 text (byte {err.start + 1} is "
                                   f"0x{err.object[err.start]:02x})") from None
            lines = text.split("\n")
        else:
            lines = read_input_lines(args.input, "--input", skip_blank=False)
        records, skipped = [], []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            record = parse_json(line, f"{name}:{number}")
            if not isinstance(record, dict) or not {"premise", "hypothesis"} <= set(record):
                raise DatasetError(f"{name}:{number}: needs the keys premise and hypothesis")
            if not str(record["premise"]).strip() or not str(record["hypothesis"]).strip():
                skipped.append(number)
                continue
            records.append(record)
        if not records and not skipped:
            raise DatasetError(f"{name} holds no record to label")
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


def add_variants_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``dpc inli variants``."""
    from tasks.inli.hypotheses import RERANKS, ChoiceRule

    p.add_argument("--premise", default=None)
    p.add_argument("--implied", default=None, help="the implied entailment to edit")
    p.add_argument("--labels", default="explicit,neutral,contradiction",
                   help="comma-separated: explicit, neutral, contradiction")
    p.add_argument("--file", default=None,
                   help="INLI CSV (only premise and implied_entailment are read) ...")
    p.add_argument("--out", default=None,
                   help="... and the file written for it: an INLI CSV (the input's columns, "
                   "which `dpc inli train` reads) when it ends in .csv, else JSON lines")
    p.add_argument("--limit", type=int, default=None, help="first N premises of --file")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.add_argument("--generator", default=None,
                   help="generator folder (default: the bundled one, tasks/inli/generator)")
    p.add_argument("--unconstrained", action="store_true",
                   help="decode without constraints (with --rerank classifier: the "
                   "unconstrained search's outputs only, as --pool unconstrained)")
    p.add_argument("--allow-negation", action="store_true",
                   help="do not ban negation words in contradictions")
    p.add_argument("--allow-copy", action="store_true",
                   help="do not ban a word-for-word copy of the implied entailment")
    p.add_argument("--num-beams", type=int, default=4)
    add_search_arguments(p)
    p.add_argument("--rerank", choices=RERANKS, default="classifier",
                   help="classifier (default): the outputs of a constrained and an "
                   "unconstrained search (--pool), filtered (no copy of the implied "
                   "entailment, no negated contradiction) and ranked by the INLI classifier's "
                   "probability of the label less --edit-penalty; label: of the constrained "
                   "beams' outputs, the one whose label the generator is surest of; none: the "
                   "constrained beam's best output (fastest, least often of its label)")
    p.add_argument("--classifier", default=None, metavar="DIR",
                   help="(--rerank classifier) the INLI classifier (default: the bundled one)")
    p.add_argument("--pool", choices=("both", "constrained", "unconstrained"), default=None,
                   help="(--rerank classifier) which searches' outputs are candidates "
                   "(default: both; unconstrained with --unconstrained)")
    p.add_argument("--edit-penalty", type=float, default=ChoiceRule.edit_penalty,
                   help="(--rerank classifier) log-probability taken off per word that the "
                   "edit to the implied entailment lies from the label's typical edit (train's "
                   "median: 10 words explicit, 8 neutral, 7 contradiction; default: "
                   "%(default)s)")
    p.add_argument("--max-new-tokens", type=int, default=40)
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p.add_argument("--train", default=None, metavar="CSV",
                   help="train the generator on this INLI CSV into --out (resumable)")
    p.add_argument("--max-minutes", type=float, default=None, help="(--train) time budget")
    p.add_argument("--max-premises", type=int, default=None, help="(--train) sample N premises")
    p.add_argument("--batch-size", type=int, default=8, help="(--train)")
    p.add_argument("--seed", type=int, default=0)
    add_spark_arguments(p, what="decode --file", units="chunks of 16 premises",
                        parts="OUT.parts/")
    add_device_arguments(p, dtype_help=(
        "precision: decoding, the generator's weights (default float32); --train, the forward "
        "passes under torch.autocast, weights float32 (default bfloat16 on CUDA, float32 on "
        "the CPU; float16 is refused)"))
    p.set_defaults(func=variants_command, interrupted=_interrupted)


def _interrupted(args: argparse.Namespace) -> str:
    """What an interrupted ``dpc inli variants`` kept."""
    if args.train:
        return f"the training state is kept in {args.out}; run it again to resume"
    if args.file and args.out:
        return (f"the finished partitions are kept in {args.out}.parts; run the same command "
                "again to resume")
    return "nothing was written"


def _check_values(args: argparse.Namespace) -> None:
    """The values of ``dpc inli variants``, before a file or model is read: the decoding ones
    (the engine would check them only once the generator is loaded) and ``--train``'s."""
    from tasks.errors import TaskError
    from tasks.inli.hypotheses import MAX_TEXT_CHARS

    _limit(args.limit)
    check_int("--num-beams", args.num_beams, 1, error=TaskError, quote=False)
    check_int("--max-new-tokens", args.max_new_tokens, 1, error=TaskError, quote=False)
    check_seed("--seed", args.seed, error=TaskError, quote=False)
    check_int("--batch-size", args.batch_size, 1, error=TaskError, quote=False)  # (--train)
    if args.max_premises is not None:
        check_int("--max-premises", args.max_premises, 1, error=TaskError, quote=False)
    if args.max_minutes is not None:
        check_float("--max-minutes", args.max_minutes, 0, open_min=True, error=TaskError,
                    quote=False)
    search_options_from(args)  # --search, --prune-factor, ... (checked as the engine does)
    for flag, text in (("--premise", args.premise), ("--implied", args.implied)):
        if text is not None:
            check_length(flag, text, MAX_TEXT_CHARS, error=TaskError)


def _choice(args: argparse.Namespace) -> tuple[Any, str | None]:
    """``--rerank classifier``'s rule and classifier folder (else ``(None, None)``); the
    flags that only it reads are refused without it."""
    from tasks.errors import TaskError
    from tasks.inli.classifier import CLASSIFIER_FILE, MODEL_DIR
    from tasks.inli.hypotheses import SOURCES, ChoiceRule

    if args.rerank != "classifier":
        given = [flag for flag, value, default in (
            ("--classifier", args.classifier, None), ("--pool", args.pool, None),
            ("--edit-penalty", args.edit_penalty, ChoiceRule.edit_penalty)) if value != default]
        if given:
            raise TaskError(f"{', '.join(given)} only apply with --rerank classifier (not "
                            f"--rerank {args.rerank})")
        return None, None
    if args.unconstrained and args.pool not in (None, "unconstrained"):
        raise TaskError(f"--unconstrained with --pool {args.pool}: the unconstrained search is "
                        "the only one (drop one of the two)")
    pool = args.pool or ("unconstrained" if args.unconstrained else "both")
    folder = Path(args.classifier) if args.classifier else MODEL_DIR
    if not (folder / CLASSIFIER_FILE).is_file():
        raise TaskError(f"--classifier {str(folder)!r} is not an INLI classifier (no "
                        f"{CLASSIFIER_FILE}); train one with `dpc inli train --out DIR`")
    rule = ChoiceRule(sources=SOURCES if pool == "both" else (pool,),
                      edit_penalty=args.edit_penalty)
    rule.check()
    return rule, str(folder.resolve())


def variants_command(args: argparse.Namespace) -> int:
    """Generate variants for one premise (printed) or a file (JSON lines), or train."""
    from dpc_files import check_output_folder, claim_output_folder
    from tasks.datasets import read_inli
    from tasks.errors import TaskError
    from tasks.inli.hypotheses import (
        DEFAULT_GENERATOR,
        GENERATED_LABELS,
        GeneratorTrainOptions,
        VariantGenerator,
        parse_labels,
        train_generator,
    )

    try:
        # the mode decides the dtype's meaning; checked before anything is read
        device = check_arguments(args, training=bool(args.train))
        _check_values(args)  # every value, whichever mode reads it
        if args.train:
            if not args.out:
                raise TaskError("--train needs --out (the generator folder)")
            options = GeneratorTrainOptions(
                max_minutes=args.max_minutes, max_premises=args.max_premises,
                batch_size=args.batch_size, seed=args.seed)
            out = check_output_folder(args.out, "--out", command="dpc inli variants --train")
            data = read_inli(args.train)
            if data.skipped:
                print(f"skipped {len(data.skipped)} row(s) with an empty premise or hypothesis")
            claim_output_folder(out, "dpc inli variants --train")
            summary = train_generator(data.rows, out, options, device=device, dtype=args.dtype)
            print(f"saved {out}: {json.dumps(summary)}")
            return 0
        labels = parse_labels(args.labels)
        as_csv = bool(args.out) and Path(args.out).suffix.lower() == ".csv"
        if as_csv and sorted(labels) != sorted(GENERATED_LABELS):
            raise TaskError(f"--out {args.out!r} is an INLI CSV, which has every label: "
                            f"--labels must be {','.join(GENERATED_LABELS)} (got "
                            f"{','.join(labels)}); write JSON lines for fewer")
        check_spark_arguments(args)
        if args.spark is not None and not args.file:
            raise TaskError("--spark needs --file and --out")
        choice, classifier_folder = _choice(args)
        if args.file:
            return _variants_file(args, labels, as_csv, choice, classifier_folder)
        if not args.premise or not args.implied or not args.premise.strip() \
                or not args.implied.strip():
            raise TaskError("give --premise and --implied (non-empty), or --file and --out")
        generator = VariantGenerator.load(args.generator or DEFAULT_GENERATOR, device=device,
                                          dtype=args.dtype)
        classifier = None
        if classifier_folder is not None:
            from tasks.inli.classifier import InliClassifier

            classifier = InliClassifier.load(classifier_folder, device=device)
        variants = generator.generate(
            [args.premise.strip()] * len(labels), [args.implied.strip()] * len(labels), labels,
            constrained=not args.unconstrained, ban_negation=not args.allow_negation,
            ban_copy=not args.allow_copy, num_beams=args.num_beams,
            max_new_tokens=args.max_new_tokens, rerank=args.rerank, classifier=classifier,
            choice=choice, search=search_options_from(args))
    except DpcError as err:
        return _error(err)
    if args.json:
        print(json.dumps({"index": "0", "premise": args.premise.strip(),
                          "implied_entailment": args.implied.strip(),
                          **{v.label: v.text for v in variants},
                          "satisfied": {v.label: v.satisfied for v in variants},
                          "constrained": not args.unconstrained,
                          **({"label_probability": {v.label: v.label_probability
                                                    for v in variants}}
                             if args.rerank == "classifier" else {})}, ensure_ascii=False))
    else:
        for v in variants:
            print(f"{v.label:<20} {v.text}")
    return 0


def _variants_file(args: argparse.Namespace, labels: list[str], as_csv: bool, choice: Any,
                   classifier: str | None) -> int:
    """``--file F --out O``: every premise's variants in committed chunks (here or on Spark,
    :mod:`tasks.inli.variants_file`), then ``O`` written whole."""
    from dpc_files import atomic_open, check_output_file
    from tasks.datasets import InliRow, read_inli, write_inli
    from tasks.errors import TaskError
    from tasks.inli.hypotheses import DEFAULT_GENERATOR, GENERATED_LABELS
    from tasks.inli.variants_file import VariantRun, remove_parts, variants_for_file

    if not args.out:
        raise TaskError("--file needs --out (an INLI CSV or a JSON lines file)")
    check_output_file(args.out, "--out", overwrite=args.overwrite)
    data = read_inli(args.file, partial=True)
    if data.skipped:
        print(f"skipped {len(data.skipped)} row(s) with an empty premise")
    rows = [r for r in data.rows if r.implied_entailment]
    if len(rows) < len(data.rows):
        print(f"skipped {len(data.rows) - len(rows)} row(s) with an empty implied_entailment")
    rows = rows[:args.limit] if args.limit else rows
    items = [(r.index, r.premise, r.implied_entailment) for r in rows]
    run = VariantRun(str(Path(args.generator or DEFAULT_GENERATOR).resolve()), args.device,
                     args.dtype, tuple(labels), not args.unconstrained, not args.allow_negation,
                     not args.allow_copy, args.num_beams, args.max_new_tokens, args.rerank,
                     classifier, choice, search_options_from(args))
    records, summary = variants_for_file(items, args.out, run, spark=args.spark,
                                         partitions=args.partitions, overwrite=args.overwrite)
    if as_csv:
        write_inli([InliRow(r["index"], row.dataset, r["premise"], r["implied_entailment"],
                            **{lab: r[lab] for lab in GENERATED_LABELS})
                    for r, row in zip(records, rows, strict=True)],
                   args.out, overwrite=args.overwrite, index_column=data.index_column or "")
        unmet = sum(any(v is False for v in r["satisfied"].values()) for r in records)
        empty = sum(any(not r[lab].strip() for lab in GENERATED_LABELS) for r in records)
        print(f"wrote {len(records)} premise(s) to {args.out} (INLI CSV"
              + (f"; {unmet} with a variant that misses its constraints" if unmet else "")
              + (f"; {empty} with an empty variant, which `dpc inli train` skips" if empty
                 else "") + ")")
    else:
        with atomic_open(Path(args.out)) as handle:
            handle.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        print(f"wrote {len(records)} premise(s) to {args.out}")
    if summary["skipped"]:
        print(f"note: {summary['skipped']} of {summary['partitions']} partitions were done "
              "before; resumed")
    remove_parts(args.out)
    return 0
