"""``dpc train ...``: tokenizer, generator training and dev metrics.

``add_train_parser(subparsers)`` registers ``dpc train tokenizer``, ``dpc train generator``,
``dpc train trim-vocab``, ``dpc train export``, ``dpc train evaluate``, ``dpc train causal-bert``
and ``dpc train lm-generator``;
the same commands run as ``python -m train.cli tokenizer|generator|trim-vocab|export|evaluate|
causal-bert``.
Each command prints its own errors and returns an exit status (2 for bad input).

>>> parser = argparse.ArgumentParser(prog="dpc")
>>> _ = add_train_parser(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["train", "generator", "--bank", "B", "--tokenizer", "T", "--out", "O"])
>>> args.func.__name__, args.d_model, args.variant
('generator_command', 256, 'both')
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, fields
from typing import Any, get_args, get_type_hints

from dpc_device import add_device_arguments
from dpc_errors import DpcError

__all__ = ["add_train_parser", "causal_bert_command", "evaluate_command", "export_command",
           "generator_command", "lm_generator_command", "main", "tokenizer_command",
           "trim_vocab_command"]


def add_train_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpc train`` and its subcommands on an argparse subparsers object."""
    from train.cause_effect_lm import LmGeneratorOptions
    from train.options import CausalBertOptions, TrainOptions

    p = sub.add_parser("train", help="train the tokenizer and the cause/effect generators")
    cmds = p.add_subparsers(dest="train_command", required=True)

    t = cmds.add_parser("tokenizer", help="train a SentencePiece tokenizer on a CausalBank")
    t.add_argument("--bank", required=True, help="CausalBank shard, shard folder or mining output")
    t.add_argument("--out", required=True, help="output folder (a Hugging Face tokenizer)")
    t.add_argument("--vocab-size", type=int, default=8000)
    t.add_argument("--model-type", choices=("unigram", "bpe"), default="unigram")
    t.add_argument("--seed", type=int, default=0)
    t.set_defaults(func=tokenizer_command)

    g = cmds.add_parser("generator", help="train (or resume) a cause/effect generator")
    g.add_argument("--bank", required=True, help="CausalBank shard, shard folder or mining output")
    g.add_argument("--tokenizer", required=True, help="tokenizer folder (dpc train tokenizer)")
    g.add_argument("--out", required=True,
                   help="run folder: checkpoint/, model/ (best), log.jsonl; rerun to resume")
    defaults = TrainOptions(bank="", tokenizer="", out="")
    for f in fields(TrainOptions):
        if f.name in ("bank", "tokenizer", "out", "progress"):
            continue
        value = getattr(defaults, f.name)
        flag = "--" + f.name.replace("_", "-")
        if f.name == "variant":
            g.add_argument(flag, choices=("both", "paper-cause", "paper-effect"), default=value)
        elif f.name == "init_from":
            g.add_argument(flag, default=None, metavar="MODEL",
                           help="start from this generator's weights (e.g. the bundled model): "
                           "a T5 of the run's sizes, or a bert2bert (then pass it as --tokenizer "
                           "too; it keeps its own architecture and weight sharing)")
        elif f.name == "warm_start":
            g.add_argument(flag, default=None, metavar="ENCODER",
                           help="warm-start encoder and decoder from a BERT-style model folder, "
                           "or 'minilm' for the packaged all-MiniLM-L6-v2 (bert2bert; pass the "
                           "same value as --tokenizer; the --d-model/... sizes do not apply)")
        elif f.name == "share_weights":
            g.add_argument(flag, action="store_true",
                           help="with --warm-start: the decoder shares the encoder's weights "
                           "(Rothe et al. 2020's BERTShare; about half the parameters)")
        else:
            g.add_argument(flag, type=field_type(TrainOptions, f.name), default=value)
    add_device_arguments(g, training=True)
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.set_defaults(func=generator_command, interrupted=_checkpoint_kept("checkpoint/"))

    v = cmds.add_parser("trim-vocab",
                        help="cut a BERT-style model's vocabulary down to a CausalBank's tokens")
    v.add_argument("--from", dest="source", default="minilm", metavar="MODEL",
                   help="BERT-style model folder, or 'minilm' (default) for all-MiniLM-L6-v2")
    v.add_argument("--bank", required=True, help="CausalBank whose train split is counted")
    v.add_argument("--out", required=True, help="new model folder (use it as --warm-start)")
    v.add_argument("--min-count", type=int, default=1,
                   help="keep tokens seen at least this often (specials and characters always)")
    v.add_argument("--no-progress", action="store_true", help="no progress bar")
    v.set_defaults(func=trim_vocab_command)

    x = cmds.add_parser("export", help="copy a generator with its weights in half precision")
    x.add_argument("--model", required=True, help="generator folder (e.g. RUN/model)")
    x.add_argument("--out", required=True, help="new folder (replaced as a whole)")
    x.add_argument("--dtype", choices=("float16", "bfloat16", "float32"), default="float16")
    x.set_defaults(func=export_command)

    e = cmds.add_parser("evaluate", help="dev perplexity and word accuracy of a generator")
    e.add_argument("--model", required=True, help="generator folder")
    e.add_argument("--bank", required=True, help="CausalBank the model was trained on")
    e.add_argument("--split", choices=("dev", "test"), default="dev")
    e.add_argument("--variant", choices=("both", "paper-cause", "paper-effect"), default="both",
                   help="which examples to score (both directions, or one paper model's)")
    e.add_argument("--max-examples", type=int, default=None)
    add_device_arguments(e)
    e.set_defaults(func=evaluate_command)

    cb = cmds.add_parser("causal-bert",
                         help="continued training of MiniLM with the CausalBERT margin loss")
    cb.add_argument("--bank", required=True, help="CausalBank shard or folder (train split used)")
    cb.add_argument("--out", required=True,
                    help="output folder (Hugging Face encoder + head.safetensors); a finished one is reused")
    cb_defaults = CausalBertOptions(bank="", out="")
    cb.add_argument("--pairs", default="10000",
                    help="number of train pairs, or 'all' (default 10000)")
    for f in fields(CausalBertOptions):
        if f.name in ("bank", "out", "pairs", "progress"):
            continue
        value = getattr(cb_defaults, f.name)
        cb.add_argument("--" + f.name.replace("_", "-"), type=field_type(CausalBertOptions, f.name),
                        default=value)
    add_device_arguments(cb, training=True)
    cb.add_argument("--no-progress", action="store_true", help="no progress bar")
    cb.set_defaults(func=causal_bert_command,
                    interrupted=_checkpoint_kept("checkpoint.safetensors"))

    lm = cmds.add_parser(
        "lm-generator",
        help="fine-tune a pretrained causal LM (LoRA) on everyday cause/effect pairs")
    lm.add_argument("--pairs", required=True, nargs="+", metavar="FILE",
                    help="e-CARE JSON lines files (either task's format), e.g. "
                    "../shared/data/ecare/explanation_generation_train.jsonl")
    lm.add_argument("--out", required=True,
                    help="run folder: adapter.safetensors + generator.json (use it with "
                    "--model OUT); rerun the same command to resume")
    lm_defaults = LmGeneratorOptions()
    for f in fields(LmGeneratorOptions):
        if f.name == "progress":
            continue
        value = getattr(lm_defaults, f.name)
        kind = field_type(LmGeneratorOptions, f.name)
        if kind is bool:
            lm.add_argument("--" + f.name.replace("_", "-"),
                            action=argparse.BooleanOptionalAction, default=value)
            continue
        lm.add_argument("--" + f.name.replace("_", "-"), type=kind, default=value,
                        help="a train.pretrained name or a causal LM folder" if f.name == "base"
                        else None)
    add_device_arguments(lm, training=True)
    lm.add_argument("--no-progress", action="store_true", help="no progress bar")
    lm.set_defaults(func=lm_generator_command,
                    interrupted=_checkpoint_kept("lora_state.safetensors"))
    return p


def field_type(options: type, name: str) -> Any:
    """The type of the field ``name`` of the options dataclass ``options``, as its annotation
    says, ``None`` left out: what its flag parses (``int | None`` -> ``int``).

    >>> from train.options import TrainOptions
    >>> field_type(TrainOptions, "max_minutes"), field_type(TrainOptions, "batch_size")
    (<class 'float'>, <class 'int'>)
    """
    hint = get_type_hints(options)[name]
    kinds = [kind for kind in get_args(hint) if kind is not type(None)]
    return kinds[0] if kinds else hint


def _checkpoint_kept(name: str) -> Any:
    """The note ``dpc`` prints when a training command is interrupted: where the last
    checkpoint is, and that the same command resumes from it."""
    def note(args: argparse.Namespace) -> str:
        return (f"the last checkpoint is kept in {args.out}/{name} (the steps since it are "
                "lost); run the same command again to resume from it")
    return note


def _no_hub_bars(args: argparse.Namespace) -> None:
    """``--no-progress`` also silences transformers' own bars (``Writing model shards``)."""
    if args.no_progress:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()


def _error(command: str, err: Exception) -> int:
    """Print ``dpc train COMMAND: error: ...`` on stderr; exit status 2 (bad input)."""
    print(f"dpc train {command}: error: {err}", file=sys.stderr)
    return 2


def tokenizer_command(args: argparse.Namespace) -> int:
    """``dpc train tokenizer``."""
    from train.data import texts_for_tokenizer
    from train.tokenizer import train_tokenizer

    try:
        tok = train_tokenizer(texts_for_tokenizer(args.bank), args.out,
                              vocab_size=args.vocab_size, model_type=args.model_type,
                              seed=args.seed)
    except DpcError as err:
        return _error("tokenizer", err)
    print(f"tokenizer with {len(tok)} pieces written to {args.out}")
    return 0


def _print_summary(result: Any) -> int:
    """Print a run's result dataclass as JSON, without its per-step history; exit status 0."""
    print(json.dumps({k: v for k, v in asdict(result).items() if k != "history"}, indent=1))
    return 0


def generator_command(args: argparse.Namespace) -> int:
    """``dpc train generator``: train or resume; prints the result as JSON."""
    from train.trainer import options_from_dict, train_generator

    _no_hub_bars(args)
    try:
        options = options_from_dict({**vars(args), "progress": not args.no_progress})
        result = train_generator(options, device=args.device, dtype=args.dtype)
    except DpcError as err:
        return _error("generator", err)
    return _print_summary(result)


def trim_vocab_command(args: argparse.Namespace) -> int:
    """``dpc train trim-vocab``: a warm-start folder with the bank's WordPiece tokens only."""
    from train.data import load_examples
    from train.vocab_trim import trim_vocabulary

    try:
        examples = load_examples(args.bank, "both")["train"]
        texts = (text for e in examples for text in (e.source, e.target))
        result = trim_vocabulary(args.source, texts, args.out, min_count=args.min_count,
                                 progress=not args.no_progress)
    except DpcError as err:
        return _error("trim-vocab", err)
    print(f"{result.kept} of {result.original} tokens kept ({result.tokens} tokens in "
          f"{result.texts} texts, {result.retokenized} of them retokenized); parameters "
          f"{result.parameters_before} -> {result.parameters_after}; written to {result.out}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    """``dpc train export``: the generator's folder with its weights stored as ``--dtype``."""
    from train.export import export_generator

    try:
        result = export_generator(args.model, args.out, args.dtype)
    except DpcError as err:
        return _error("export", err)
    print(f"{result.parameters} parameters as {result.dtype}: {result.bytes / 1e6:.1f} MB "
          f"written to {result.out}")
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    """``dpc train evaluate``: perplexity and word accuracy on a held-out split."""
    from dpc_errors import check_int
    from train.errors import TrainError
    from train.evaluation import evaluate_generator

    try:
        if args.max_examples is not None:  # None: the whole split
            check_int("--max-examples", args.max_examples, 1, error=TrainError, quote=False)
        m = evaluate_generator(args.model, args.bank, args.split, args.variant, args.max_examples,
                               device=args.device, dtype=args.dtype)
    except DpcError as err:
        return _error("evaluate", err)
    print(f"{args.split} ({args.variant}): {m.tokens} target tokens, {m.words} words, "
          f"perplexity {m.perplexity:.2f}, word accuracy {m.word_accuracy:.4f}, "
          f"per-word perplexity {m.word_perplexity:.2f}")
    return 0


def causal_bert_command(args: argparse.Namespace) -> int:
    """``dpc train causal-bert``: train (or reuse) a CausalBERT; prints the result as JSON."""
    from train.causal_bert import CausalBertOptions, continue_training
    from train.errors import TrainError

    _no_hub_bars(args)
    try:
        if args.pairs == "all":
            pairs = None
        elif args.pairs.isdigit():
            pairs = int(args.pairs)
        else:
            raise TrainError(f"--pairs (={args.pairs!r}) must be a number or 'all'")
        values = {f.name: getattr(args, f.name) for f in fields(CausalBertOptions)
                  if f.name not in ("pairs", "progress")}
        result = continue_training(CausalBertOptions(**values, pairs=pairs,
                                                     progress=not args.no_progress),
                                   device=args.device, dtype=args.dtype)
    except DpcError as err:
        return _error("causal-bert", err)
    return _print_summary(result)


def lm_generator_command(args: argparse.Namespace) -> int:
    """``dpc train lm-generator``: fine-tune (or resume) the cause/effect LM; prints its summary
    as JSON."""
    from causal_mining.curated_pairs import read_ecare
    from causal_mining.errors import MiningError
    from dpc_device import resolve_device
    from dpc_files import check_output_folder, claim_output_folder
    from train.cause_effect_lm import (
        LmGeneratorOptions,
        split_pairs,
        train_cause_effect_lm,
    )
    from train.errors import TrainDataError

    _no_hub_bars(args)
    try:
        resolve_device(args.device)
        values = {f.name: getattr(args, f.name) for f in fields(LmGeneratorOptions)
                  if f.name != "progress"}
        options = LmGeneratorOptions(**values, progress=not args.no_progress)
        pairs = [pair for path in args.pairs for pair in read_ecare(path)]
        if not split_pairs(pairs)[0]:  # refused before --out is made: nothing left behind
            raise TrainDataError("no usable (cause, effect) pair to train on in --pairs "
                                 + " ".join(map(repr, args.pairs)))
        out = check_output_folder(args.out, "--out", command="dpc train lm-generator")
        claim_output_folder(out, "dpc train lm-generator")
        summary = train_cause_effect_lm(pairs, out, options, args.pairs, device=args.device,
                                        dtype=args.dtype)
    except (DpcError, MiningError) as err:
        return _error("lm-generator", err)
    print(json.dumps(summary, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m train.cli ...`` (same as ``dpc train ...``)."""
    parser = argparse.ArgumentParser(prog="python -m train.cli")
    sub = parser.add_subparsers(dest="command", required=True)
    add_train_parser(sub)
    args = parser.parse_args(["train", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
