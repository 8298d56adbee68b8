"""``dpc commongen``: CommonGen (Lin et al. 2020) with the engine's constraints.

- ``dpc commongen train --out DIR``: fine-tune the concept-to-sentence generator (LoRA over a
  pretrained LM; :mod:`tasks.commongen.generator`), resumable
- ``dpc commongen generate SRC --out FILE [--mode plain|conjunctive|dpc] [--model DIR]``: one
  sentence per distinct concept set of SRC (``src_alpha.txt``, ``cs_str.txt`` or the ``.jsonl``
  with tags), JSON lines ``{"index", "concepts", "text", "satisfied"}`` in first-appearance
  order; a re-run of the same command resumes (:class:`dpc_files.ResultsFile`)
- ``dpc commongen eval FILE --refs TGT --sets CS_STR``: the metrics of
  :mod:`tasks.commongen.evaluation`; the last line is ``coverage 0.xxx pos 0.xxx bleu4 xx.x``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from dpc_decode.options import add_search_arguments
from dpc_device import add_device_arguments, check_arguments
from dpc_errors import DpcError

__all__ = ["add_commongen_parser"]

DATA = "../shared/data/commongen/commongen."


def add_commongen_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpc commongen`` and its commands."""
    p = sub.add_parser("commongen", help="CommonGen: a sentence from a concept set")
    cmds = p.add_subparsers(dest="commongen_command", required=True)

    t = cmds.add_parser("train", help="fine-tune the concept-to-sentence generator (resumable)")
    t.add_argument("--out", required=True, help="generator folder (a rerun with it resumes)")
    t.add_argument("--src", default=DATA + "train.src_alpha.txt", help="training concept sets")
    t.add_argument("--tgt", default=DATA + "train.tgt.txt", help="their sentences, line by line")
    t.add_argument("--dev-src", default=DATA + "dev.src_alpha.txt")
    t.add_argument("--dev-tgt", default=DATA + "dev.tgt.txt")
    t.add_argument("--base", default="smollm2-135m",
                   help="pretrained name (smollm2-135m, gemma3-270m) or model folder")
    t.add_argument("--epochs", type=float, default=0.15)
    t.add_argument("--batch-size", type=int, default=16)
    t.add_argument("--lr", type=float, default=3e-4)
    t.add_argument("--max-minutes", type=float, default=None,
                   help="stop after this many minutes (the same command continues)")
    t.add_argument("--seed", type=int, default=0)
    add_device_arguments(t, training=True)
    t.set_defaults(func=train_command, interrupted=lambda a: f"the state is in {a.out}: the "
                   "same command continues")

    g = cmds.add_parser("generate", help="one sentence per distinct concept set")
    g.add_argument("src", help="src_alpha.txt, cs_str.txt or .jsonl (concept_set) file")
    g.add_argument("--out", required=True, help="JSON lines results file (a rerun resumes)")
    g.add_argument("--mode", choices=("plain", "conjunctive", "dpc"), default="dpc")
    g.add_argument("--model", default=None,
                   help="generator folder (dpc commongen train; default: the bundled one, "
                   "SmolLM2-135M + a CommonGen LoRA)")
    g.add_argument("--num-beams", type=int, default=None, help="beams (default: 8)")
    g.add_argument("--max-new-tokens", type=int, default=None, help="default: 32")
    g.add_argument("--no-repeat-ngram-size", type=int, default=None,
                   help="n-grams that may not repeat (default: 3; 0: off)")
    g.add_argument("--candidates", type=int, default=None,
                   help="final beams read: the first whose spaCy tags use every concept in its "
                   "part of speech is kept (default: all beams; 1: the top beam)")
    g.add_argument("--score-slots", type=int, default=None,
                   help="beams kept by score alone each step, whatever their constraint "
                   "progress (the engine's score_slots; default: see DecodeSettings)")
    g.add_argument("--early-stopping", action=argparse.BooleanOptionalAction, default=None,
                   help="a set is done once --num-beams sentences have finished "
                   "(transformers' early_stopping=True; default: on, see DecodeSettings)")
    g.add_argument("--plain-first", action=argparse.BooleanOptionalAction, default=None,
                   help="decode every set without constraints first and keep that sentence "
                   "where it uses every concept in its part of speech; constrain the rest "
                   "(default: see DecodeSettings)")
    add_search_arguments(g, unset=True)  # unset: DecodeSettings' defaults
    g.add_argument("--length-penalty", type=float, default=None,
                   help="outputs ranked by log-prob / length ** this (default: see DecodeSettings)")
    g.add_argument("--batch-size", type=int, default=16, help="concept sets decoded at once")
    g.add_argument("--limit", type=int, default=None, help="the first N distinct sets only")
    g.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    add_device_arguments(g)
    g.set_defaults(func=generate_command, interrupted=lambda a: f"the sentences so far are in "
                   f"{a.out}: the same command resumes")

    e = cmds.add_parser("eval", help="coverage, PoS coverage, BLEU-4, ROUGE-L, CIDEr")
    e.add_argument("file", help="results file of dpc commongen generate")
    e.add_argument("--refs", default=DATA + "dev.tgt.txt", help="reference sentences, a line each")
    e.add_argument("--sets", default=DATA + "dev.cs_str.txt",
                   help="their concept sets, line by line (tagged: cs_str.txt)")
    e.add_argument("--json", action="store_true", help="print the scores as one JSON object")
    e.set_defaults(func=eval_command)
    return p


def train_command(args: argparse.Namespace) -> int:
    """``dpc commongen train``."""
    try:
        check_arguments(args, training=True)
        from tasks.commongen.dataset import read_pairs
        from tasks.commongen.generator import CommonGenTrainOptions, train_commongen_lm

        options = CommonGenTrainOptions(epochs=args.epochs, batch_size=args.batch_size,
                                        lr=args.lr, max_minutes=args.max_minutes,
                                        seed=args.seed, base=args.base)
        train = read_pairs(args.src, args.tgt)
        dev = read_pairs(args.dev_src, args.dev_tgt)
        summary = train_commongen_lm(train, args.out, options, dev, device=args.device,
                                     dtype=args.dtype)
    except DpcError as err:
        print(f"dpc: error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(summary))
    return 0


def generate_command(args: argparse.Namespace) -> int:
    """``dpc commongen generate``: decode the distinct sets not yet in ``--out``, appending."""
    try:
        check_arguments(args)
        from dpc_errors import check_int
        from dpc_files import ResultsFile, file_digest, text_digest
        from tasks.commongen.dataset import distinct, lemmas, read_concept_sets
        from tasks.commongen.decoding import DecodeSettings
        from tasks.errors import TaskError

        given = {name: getattr(args, name) for name in
                 ("num_beams", "max_new_tokens", "no_repeat_ngram_size", "candidates",
                  "score_slots", "early_stopping", "plain_first", "search", "prune_factor",
                  "sat_tolerance", "length_penalty", "lookahead", "lookahead_weight")
                 if getattr(args, name) is not None}
        settings = DecodeSettings(mode=args.mode, batch_size=args.batch_size, **given)
        if args.limit is not None:
            check_int("--limit", args.limit, 1, error=TaskError, quote=False)
        sets = distinct(read_concept_sets(args.src))[:args.limit]
        from tasks.commongen.generator import BUNDLED_SENTENCE_LM

        model = Path(args.model) if args.model is not None else BUNDLED_SENTENCE_LM
        if not model.is_dir():
            raise TaskError(f"--model {args.model!r} is not a folder (make one with `dpc "
                            "commongen train`)")
        run = {"src": text_digest([[c._asdict() for c in s] for s in sets]),
               "model": file_digest(model),
               **{k: v for k, v in vars(settings).items() if k != "batch_size"}}
        results = ResultsFile(args.out, "dpc commongen generate", run, overwrite=args.overwrite)
        done = len(results.check())
        if done >= len(sets):
            print(f"note: {args.out} already holds all {len(sets)} sets", file=sys.stderr)
            return 0
        if done:
            print(f"note: {args.out} already holds {done} of {len(sets)} sets: resuming",
                  file=sys.stderr)
        from tqdm.auto import tqdm
        from transformers.utils import logging as hf_logging

        from tasks.commongen.decoding import SentenceGenerator

        hf_logging.disable_progress_bar()
        generator = SentenceGenerator.load(model, device=args.device, dtype=args.dtype)
        started = time.perf_counter()
        with results.writer() as write, tqdm(total=len(sets), initial=done, unit="set") as bar:
            for at in range(done, len(sets), settings.batch_size):
                batch = sets[at:at + settings.batch_size]
                for offset, (concepts, sentence) in enumerate(
                        zip(batch, generator.generate(batch, settings), strict=True)):
                    write({"index": at + offset, "concepts": list(lemmas(concepts)),
                           "text": sentence.text, "satisfied": sentence.satisfied})
                bar.update(len(batch))
        seconds = time.perf_counter() - started
        print(f"{len(sets) - done} sets in {seconds:.1f} s "
              f"({seconds / (len(sets) - done):.3f} s a set)", file=sys.stderr)
    except DpcError as err:
        print(f"dpc: error: {err}", file=sys.stderr)
        return 2
    return 0


def eval_command(args: argparse.Namespace) -> int:
    """``dpc commongen eval``: score a results file against references."""
    try:
        from dpc_files import read_results
        from dpc_inputs import check_input_file
        from tasks.commongen.dataset import read_pairs, reference_key
        from tasks.commongen.evaluation import evaluate, format_scores
        from tasks.errors import TaskError

        try:
            _, rows = read_results(check_input_file(args.file, "results file"))
        except OSError as err:
            raise TaskError(f"cannot read {args.file!r}: {err.strerror}") from None
        if not rows:
            raise TaskError(f"{args.file!r} holds no sentence")
        tagged: dict[tuple[str, ...], Any] = {}
        references: dict[tuple[str, ...], list[str]] = {}
        for concepts, sentence in read_pairs(args.sets, args.refs):
            key = reference_key(concepts)
            tagged.setdefault(key, concepts)
            references.setdefault(key, []).append(sentence)
        outputs, refs = [], []
        for row in rows:
            key = reference_key(row.get("concepts") or [])
            if key not in references:
                raise TaskError(f"{args.file!r}: the concept set {list(key)} (output "
                                f"{row.get('index')}) is not in {args.sets!r}")
            outputs.append((str(row.get("text", "")), tagged[key]))
            refs.append(references[key])
        scores = evaluate(outputs, refs)
    except DpcError as err:
        print(f"dpc: error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(scores.as_dict()))
    print(format_scores(scores))
    return 0
