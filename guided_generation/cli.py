"""``dpc generate``: guided generation of causes or effects from the command line.

Arguments are parsed here; the work is :class:`~guided_generation.pipeline.GuidedGenerator`.
Inputs come from ``--input`` (repeatable) or ``--input-file`` (JSON lines, ``-`` for stdin): each
line a JSON string, or an object with ``"input"`` and optionally ``"direction"`` and
``"constraints"`` (a list of keywords). Results print as a table, or as one JSON object per
input with ``--json``; ``--out FILE`` appends them to a JSON-lines file instead and, when
re-run with the same inputs, skips the inputs the file already holds (interrupt and resume).
"""

from __future__ import annotations

import argparse
import codecs
import json
import shutil
import sys
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causal_mining.pair import DIRECTIONS
from dpc_decode.options import SearchOptions, add_search_arguments, search_options_from
from dpc_device import add_device_arguments
from dpc_errors import DpcError, check_length, check_seed
from dpc_files import (
    ResultsFile,
    atomic_open,
    file_digest,
    text_digest,
)
from dpc_inputs import parse_json, read_input_lines
from dpc_spark import add_spark_arguments, check_spark_arguments
from guided_generation.errors import GuidedGenerationError
from guided_generation.options import (
    CONSTRAINT_MODES,
    MAX_INPUT_CHARS,
    MAX_PHRASE_CHARS,
    RANKS,
    RERANKS,
    GuidedOptions,
    check_direction,
)

if TYPE_CHECKING:
    from guided_generation.pipeline import GuidedGenerator, GuidedResult

__all__ = ["GenerateItem", "GeneratorLoad", "add_generate_parser", "generate_command",
           "generate_row", "generator_run",
           "interrupted_note", "read_items", "run_signature", "verifier_run"]


@dataclass(frozen=True)
class GenerateItem:
    """One input to generate for."""

    text: str
    direction: str
    constraints: list[str] = field(default_factory=list)


def read_items(handle: Iterable[str] | Iterable[bytes], direction: str,
               name: str = "<stdin>") -> Iterator[GenerateItem]:
    """Items from JSON lines (text, or bytes decoded as UTF-8; a byte-order mark before the
    first is dropped); blank lines are skipped; a bad line (not UTF-8, not JSON, nested too
    deeply, no "input") is an error naming it.

    >>> import io
    >>> lines = io.StringIO('"babies cry"\\n\\n{"input": "it rained", "direction": "effect"}\\n')
    >>> [(i.text, i.direction) for i in read_items(lines, "cause")]
    [('babies cry', 'cause'), ('it rained', 'effect')]
    >>> list(read_items(io.StringIO('{"text": "x"}'), "cause", "in.jsonl"))
    Traceback (most recent call last):
    ...
    guided_generation.errors.GuidedGenerationError: in.jsonl line 1: an object needs an "input" string
    >>> list(read_items(io.BytesIO(b'"ok"\\n"caf\\xe9"\\n'), "cause", "in.jsonl"))
    Traceback (most recent call last):
    ...
    guided_generation.errors.GuidedGenerationError: in.jsonl line 2: not UTF-8 text (byte 5 is 0xe9)
    """
    for number, raw in enumerate(handle, start=1):
        if isinstance(raw, bytes):
            if number == 1:
                raw = raw.removeprefix(codecs.BOM_UTF8)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise GuidedGenerationError(f"{name} line {number}: not UTF-8 text (byte "
                                            f"{err.start + 1} is 0x{raw[err.start]:02x})") from None
        else:
            line = raw.removeprefix("\ufeff") if number == 1 else raw
        if not line.strip():
            continue
        value = parse_json(line, f"{name} line {number}")  # depth and length limits too
        if isinstance(value, str):
            yield GenerateItem(value, direction)
            continue
        if not isinstance(value, dict) or not isinstance(value.get("input"), str):
            raise GuidedGenerationError(f'{name} line {number}: an object needs an "input" string')
        constraints = value.get("constraints", [])
        if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
            raise GuidedGenerationError(f'{name} line {number}: "constraints" must be a list of strings')
        yield GenerateItem(value["input"], value.get("direction", direction), constraints)


def add_generate_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``dpc generate``."""
    d = GuidedOptions()
    p = sub.add_parser(
        "generate",
        help="generate causes or effects guided by the Cause Effect Graph",
        description="Guided generation (Li et al. 2020): the Cause Effect Graph proposes N keywords "
        "in the asked direction, the DPC engine decodes one row per keyword (every output contains "
        "a form of its keyword), and the N x M outputs are merged, deduplicated and reranked.",
    )
    p.add_argument("--input", action="append", default=[], help="input text (repeatable)")
    p.add_argument("--input-file", default=None, metavar="PATH",
                   help="JSON lines of inputs ('-': stdin): a string, or {\"input\", \"direction\", "
                   "\"constraints\"}")
    p.add_argument("--direction", default="cause", help=f"{' or '.join(DIRECTIONS)} (default: cause)")
    p.add_argument("--n", type=int, default=d.n, help=f"keywords from the graph (default {d.n})")
    p.add_argument("--m", type=int, default=d.m, help=f"outputs kept per keyword (default {d.m})")
    p.add_argument("--k", type=int, default=d.k, help=f"outputs returned (default {d.k})")
    p.add_argument("--num-beams", type=int, default=None, help="beams per keyword (default: M)")
    p.add_argument("--max-new-tokens", type=int, default=d.max_new_tokens)
    p.add_argument("--min-new-tokens", type=int, default=d.min_new_tokens)
    p.add_argument("--no-repeat-ngram-size", type=int, default=d.no_repeat_ngram_size)
    p.add_argument("--length-penalty", type=float, default=d.length_penalty)
    add_search_arguments(p, SearchOptions(d.search, d.prune_factor, d.sat_tolerance,
                                          d.lookahead, d.lookahead_weight))
    p.add_argument("--rank", default=d.rank, help=f"graph keyword ranking: {', '.join(RANKS)}")
    p.add_argument("--rerank", default=d.rerank, help=f"final order: {', '.join(RERANKS)} "
                   "(nll: likelihood; pmi: likelihood gain over an empty input; mmr: diverse)")
    p.add_argument("--mmr-lambda", type=float, default=d.mmr_lambda)
    p.add_argument("--template-limit", type=int, default=d.template_limit,
                   help="at most this many outputs share a word trigram (default "
                   f"{d.template_limit}; 0: no limit)")
    p.add_argument("--constraint", action="append", default=[], metavar="WORD",
                   help="a keyword of your own (its inflections are allowed), or alternatives "
                   "'hungry|hunger' (repeatable)")
    p.add_argument("--constraint-mode", default=d.constraint_mode,
                   help=f"how --constraint meets the graph's keywords: {', '.join(CONSTRAINT_MODES)} "
                   "(default combine: extra rows beside the graph's)")
    p.add_argument("--capitalized", action="store_true", help="allow capitalised keyword forms")
    p.add_argument("--plain-row", action=argparse.BooleanOptionalAction, default=d.plain_row,
                   help="also decode the input without a keyword, whose --plain-m best outputs "
                   f"join the pool (default {'on' if d.plain_row else 'off'})")
    p.add_argument("--plain-m", type=int, default=d.plain_m,
                   help=f"outputs of the keyword-free search (default {d.plain_m})")
    p.add_argument("--pronoun-agreement", action=argparse.BooleanOptionalAction,
                   default=d.pronoun_agreement,
                   help="when the input speaks of one gender only, ban the other's pronouns "
                   f"(default {'on' if d.pronoun_agreement else 'off'})")
    p.add_argument("--verify", action=argparse.BooleanOptionalAction, default=d.verify,
                   help="score every output with the plausibility verifier and drop those it "
                   f"rejects: fewer than K rather than nonsense (default {'on' if d.verify else 'off'})")
    p.add_argument("--verifier-pmi-weight", type=float, default=d.verifier_pmi_weight,
                   help="the verifier's score adds this weight times the output's PMI with the "
                   f"input under the generator (default {d.verifier_pmi_weight}; 0: the "
                   "cross-encoder alone)")
    p.add_argument("--reject-below", type=_floor, default=d.reject_below, metavar="SCORE",
                   help="with --verify, drop outputs whose verifier score is below this; 'none': "
                   "keep all (default auto: 5 for the default generator, none for others)")
    p.add_argument("--verify-keywords", action=argparse.BooleanOptionalAction,
                   default=d.verify_keywords,
                   help="the verifier chooses the N keyword rows among the graph's top "
                   "--keyword-pool and the sampled answers' keywords (default "
                   f"{'on' if d.verify_keywords else 'off'})")
    p.add_argument("--keyword-pool", type=int, default=d.keyword_pool,
                   help=f"graph keywords the verifier chooses among (default {d.keyword_pool})")
    p.add_argument("--sampled", type=int, default=d.sampled,
                   help="answers sampled from the generator whose words become candidate "
                   f"keywords (default {d.sampled}; 0: none)")
    p.add_argument("--sampled-keywords", type=int, default=d.sampled_keywords,
                   help=f"keywords taken from the sampled answers (default {d.sampled_keywords})")
    p.add_argument("--parts-of-speech", action=argparse.BooleanOptionalAction,
                   default=d.parts_of_speech,
                   help="inflect a keyword only in the parts of speech it has in the corpus "
                   f"(default {'on' if d.parts_of_speech else 'off'})")
    p.add_argument("--verifier", default="bundled", metavar="DIR",
                   help="the plausibility verifier: 'bundled' (default), a folder of "
                   "benchmarks/guided/verifier_train.py, or 'none'")
    p.add_argument("--banned", action="append", default=[], help="a phrase never to generate")
    p.add_argument("--batch-rows", type=int, default=d.batch_rows, help="rows decoded at once")
    p.add_argument("--max-input-tokens", type=int, default=d.max_input_tokens)
    p.add_argument("--model", default=None,
                   help="generator: smollm2-ecare (the default: SmolLM2-135M fine-tuned on e-CARE), a "
                   "pretrained model's name (smollm2-135m, asked with worked examples; "
                   "gemma3-270m), 'bundled' (dpc's small seq2seq generator), or a model folder")
    p.add_argument("--fast", action="store_true",
                   help="the small bundled generator (--model bundled): about 3x faster, "
                   "less plausible (benchmarks/guided/RESULTS.md)")
    p.add_argument("--graph", default=None, help="Cause Effect Graph file (default: the bundled one)")
    p.add_argument("--seed", type=int, default=0)
    add_device_arguments(p)
    p.add_argument("--json", action="store_true", help="one JSON object per input")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="append JSON lines here, after a header line naming the run; a re-run "
                   "of the same run skips the inputs already written (any other file is "
                   "refused)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out file instead of resuming it (the new file "
                   "is written beside it and renamed when the run ends)")
    add_spark_arguments(p, what="decode --input-file (needs --out)", units="inputs",
                        parts="OUT.parts/")
    p.set_defaults(func=generate_command, interrupted=interrupted_note)
    return p


def interrupted_note(args: argparse.Namespace) -> str:
    """What an interrupted ``dpc generate`` kept, and how to go on (``dpc`` prints it)."""
    if not args.out:
        return ("the results printed are all there is (with --out FILE, a re-run resumes where "
                "it stopped)")
    if getattr(args, "replacing", False):
        return (f"--overwrite: {args.out} is as it was (it is replaced only when the run ends); "
                "the results of this run were not kept")
    if not getattr(args, "started", False) and not getattr(args, "skip", 0):
        return f"nothing was written to {args.out}; run it again"
    again = "again without --overwrite" if args.overwrite else "the same command again"
    if getattr(args, "spark", None) is not None:
        return (f"the finished partitions are kept in {args.out}.parts; run {again} to resume "
                "(they are not decoded again)")
    return f"the results of the finished inputs are kept in {args.out}; run {again} to resume"


def _options(args: argparse.Namespace) -> GuidedOptions:
    return GuidedOptions(
        n=args.n, m=args.m, k=args.k, num_beams=args.num_beams, max_new_tokens=args.max_new_tokens,
        min_new_tokens=args.min_new_tokens, no_repeat_ngram_size=args.no_repeat_ngram_size,
        length_penalty=args.length_penalty, **search_options_from(args).as_kwargs(),
        rank=args.rank, rerank=args.rerank,
        mmr_lambda=args.mmr_lambda, template_limit=args.template_limit or None,
        constraint_mode=args.constraint_mode,
        capitalized=args.capitalized, plain_row=args.plain_row,
        plain_m=args.plain_m, pronoun_agreement=args.pronoun_agreement, max_input_tokens=args.max_input_tokens,
        batch_rows=args.batch_rows, verify=args.verify, verify_keywords=args.verify_keywords,
        verifier_pmi_weight=args.verifier_pmi_weight, reject_below=args.reject_below,
        keyword_pool=args.keyword_pool, sampled=args.sampled,
        sampled_keywords=args.sampled_keywords, parts_of_speech=args.parts_of_speech,
    )


def _floor(value: str) -> float | str | None:
    """``--reject-below``: a number, ``auto`` or ``none``."""
    if value in ("auto", "none"):
        return None if value == "none" else value
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number, auto or none") from None


def _verifier(args: argparse.Namespace) -> str | None:
    """The ``--verifier`` argument as :meth:`GuidedGenerator.load` takes it (``None``: none)."""
    name = getattr(args, "verifier", "bundled")
    return None if name == "none" else name


def verifier_run(name: str | None) -> dict[str, Any] | None:
    """What a run's signature records of the verifier (``None``: none): its name and the
    digests of its files. A missing folder is a :class:`~dpc_errors.DpcError` naming it."""
    from guided_generation.verifier import BUNDLED_VERIFIER

    if name is None:
        return None
    folder = BUNDLED_VERIFIER if name == "bundled" else Path(name)
    if not folder.is_dir():
        raise GuidedGenerationError(f"--verifier {name!r} is not a folder")
    return {"name": name, "files": {str(p.relative_to(folder)): file_digest(p)
                                    for p in sorted(folder.rglob("*")) if p.is_file()}}


def _items(args: argparse.Namespace) -> list[GenerateItem]:
    items = [GenerateItem(text, args.direction, list(args.constraint)) for text in args.input]
    if args.input_file == "-":
        stdin = getattr(sys.stdin, "buffer", sys.stdin)  # bytes: bad UTF-8 named by its line
        items += [GenerateItem(i.text, i.direction, i.constraints or list(args.constraint))
                  for i in read_items(stdin, args.direction)]
    elif args.input_file:
        lines = read_input_lines(args.input_file, "--input-file", skip_blank=False)
        items += [GenerateItem(i.text, i.direction, i.constraints or list(args.constraint))
                  for i in read_items(lines, args.direction, args.input_file)]
    if not items:
        raise GuidedGenerationError("no input: give --input TEXT or --input-file PATH")
    error = GuidedGenerationError
    for phrase in args.banned:
        check_length("--banned", phrase, MAX_PHRASE_CHARS, error=error)
    for keyword in args.constraint:  # each alternative of 'hungry|hunger'
        for alternative in keyword.split("|"):
            check_length("--constraint", alternative, MAX_PHRASE_CHARS, error=error)
    for number, item in enumerate(items):
        if not item.text.strip():
            raise GuidedGenerationError(f"input {number} is empty")
        check_length(f"input {number}", item.text, MAX_INPUT_CHARS, error=error)
        for keyword in item.constraints:
            for alternative in keyword.split("|"):
                check_length(f"input {number}'s constraint", alternative, MAX_PHRASE_CHARS,
                             error=error)
        check_direction(item.direction)
    return items


def generator_run(model: str | None, graph: str | None) -> dict[str, Any]:
    """``{"model": ..., "graph": ...}``: what a run's signature records of the generator and the
    graph a command names (``None``: the defaults): their names and the digests of their files
    (:func:`train.identity.generator_identity`, :func:`dpc_files.file_digest`), read without
    loading either. A missing model or graph is a :class:`~dpc_errors.DpcError` naming it."""
    from cause_effect_graph.store import DEFAULT_GRAPH
    from train.identity import generator_identity

    path = Path(graph) if graph else DEFAULT_GRAPH
    if not path.is_file():
        raise GuidedGenerationError(f"graph file {str(path)!r} does not exist")
    return {"model": generator_identity(model),
            "graph": {"name": graph or "bundled", "files": file_digest(path)}}


def run_signature(args: argparse.Namespace, items: list[GenerateItem],
                  options: GuidedOptions) -> dict[str, Any]:
    """What makes a ``dpc generate --out`` run: every option that changes the outputs, the
    model's and graph's digests and the inputs' (:class:`dpc_files.ResultsFile` compares them
    before a file is resumed). The device is not part of it: a run begun on the CPU may be
    resumed on a GPU. Reads the model's and graph's files, not the model."""
    run: dict[str, Any] = {"direction": args.direction}
    run.update(options.run_record())
    run.update(constraint=list(args.constraint), banned=list(args.banned), seed=args.seed,
               dtype=args.dtype, **generator_run("bundled" if args.fast else args.model,
                                                 args.graph))
    run["verifier"] = verifier_run(_verifier(args))
    run["the inputs"] = {"count": len(items), "sha256": text_digest(
        [[i.text, i.direction, i.constraints] for i in items])}
    return run


def _resume_point(results: ResultsFile, items: list[GenerateItem]) -> int:
    """How many inputs ``results`` already holds (0 for a new file); its rows must be the results
    of inputs 0, 1, ... in order."""
    rows = results.check()
    for number, row in enumerate(rows):
        if row.get("index") != number or number >= len(items):
            raise GuidedGenerationError(
                f"--out {str(results.path)!r} line {number + 2} is not the result of input "
                f"{number} (was the file edited?); give a new file, or pass --overwrite to "
                "replace it")
    return len(rows)


_RERANK_LABELS = {"nll": "mean NLL", "pmi": "PMI with the input", "mmr": "MMR (likelihood and novelty)",
                  "verifier": "the plausibility verifier"}


@dataclass(frozen=True)
class GeneratorLoad:
    """What loads the generator of a ``dpc generate`` run (picklable: Spark's executors load
    it from this, once per process)."""

    model: str | None
    graph: str | None
    device: str
    dtype: str
    verifier: str | None
    seed: int

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> GeneratorLoad:
        return cls("bundled" if args.fast else args.model, args.graph, args.device, args.dtype,
                   _verifier(args), args.seed)

    def load(self, device: str | None = None) -> GuidedGenerator:
        """The generator, on ``device`` (default: the run's ``--device``), torch seeded."""
        import torch
        from transformers.utils import logging as hf_logging

        from guided_generation.pipeline import GuidedGenerator

        torch.manual_seed(self.seed)
        hf_logging.disable_progress_bar()  # one bar per command: ours
        return GuidedGenerator.load(self.model, self.graph, device=device or self.device,
                                    dtype=self.dtype, verifier=self.verifier)


def generate_row(generator: GuidedGenerator, index: int, item: GenerateItem,
                 options: GuidedOptions, banned: list[str],
                 progress: bool = False) -> tuple[dict[str, Any], GuidedResult]:
    """The ``--out``/``--json`` record of input ``index`` (and the result it was made from):
    the one definition the local and the Spark path share."""
    result = generator.generate(item.text, item.direction, options, item.constraints,
                                progress=progress, banned=banned)
    return {"index": index, **result.to_dict()}, result


def _spark_load(spec: GeneratorLoad) -> GuidedGenerator:
    """The generator on a Spark executor: on the GPU Spark gave this task, if it gave one
    (:func:`dpc_spark.task_device`), else on ``--device``."""
    from dpc_spark import task_device

    return spec.load(task_device(spec.device))


def _spark_row(options: GuidedOptions, banned: list[str], generator: GuidedGenerator,
               index: int, item: GenerateItem) -> list[dict[str, Any]]:
    """One input's records on a Spark executor (:func:`generate_row`, as the local path)."""
    row, result = generate_row(generator, index, item, options, banned)
    for note in result.notes:
        print(f"note: input {index}: {note}", file=sys.stderr)
    return [row]


def _parts_folder(args: argparse.Namespace, results: ResultsFile, inputs: int,
                  session: Any) -> tuple[Path, int]:
    """The checked parts folder of a ``--spark`` run (``OUT.parts``, claimed as this run's)
    and its partition count: the one it recorded, else ``--partitions`` or the default."""
    from dpc_spark import claim_parts, default_partitions

    parts = results.path.with_name(results.path.name + ".parts")
    count = claim_parts(parts, results.run, args.partitions, lambda: default_partitions(
        inputs, session.sparkContext.defaultParallelism), command="dpc generate --spark",
        overwrite=args.overwrite)
    return parts, count


def _generate_spark(args: argparse.Namespace, items: list[GenerateItem], options: GuidedOptions,
                    results: ResultsFile, skip: int) -> None:
    """``--spark``: decode the inputs not in ``--out`` yet in committed partitions, then write
    ``--out`` whole (its rows so far, then the parts' in input order), rename it in place and
    remove the parts folder."""
    from functools import partial

    from dpc_spark import partition_ranges, read_parts, run_partitions, spark_session

    session, created = spark_session(args.spark, "dpc-generate")
    try:
        parts, count = _parts_folder(args, results, len(items), session)
        spec = GeneratorLoad.from_args(args)
        args.started = True
        summary = run_partitions(items, parts, count, load=partial(_spark_load, spec), key=spec,
                                 apply=partial(_spark_row, options, list(args.banned)),
                                 master=args.spark, app_name="dpc-generate", done_before=skip,
                                 desc="partitions (spark)")
    finally:
        if created:
            session.stop()
    kept = results.check()[:skip]  # the rows --out already held, read again just before writing
    ranges = partition_ranges(len(items), count)
    first = next((n for n, (_, end) in enumerate(ranges) if end > skip), len(ranges))
    with atomic_open(results.path) as handle:
        handle.write(json.dumps(results.header, ensure_ascii=False) + "\n")
        for row in kept:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        for row in read_parts(parts, range(first, len(ranges))):
            if row["index"] >= skip:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    shutil.rmtree(parts, ignore_errors=True)  # OUT holds every row now, as swag's and inli's
    print(f"note: {summary['computed']} of {summary['partitions']} partitions decoded, "
          f"{summary['skipped']} were done; {results.path} holds all {len(items)} results",
          file=sys.stderr)


def _print_table(result: GuidedResult, elapsed: float, rerank: str = "nll") -> None:
    stats = result.stats
    what = "causes" if result.direction == "cause" else "effects"
    print(f"{what} of {result.input!r}: {int(stats.get('rows', 0))} keywords -> "
          f"{int(stats.get('outputs', 0))} outputs, top {len(result.outputs)} by "
          f"{_RERANK_LABELS.get(rerank, rerank)} ({elapsed:.1f} s)")
    width = max([len(o.keyword or "-") for o in result.outputs] + [7])
    pmi = any(o.pmi is not None for o in result.outputs)
    judged = any(o.verifier is not None for o in result.outputs)
    print(f"  {'#':>3}  {'nll':>6}  " + (f"{'pmi':>6}  " if pmi else "")
          + (f"{'verif':>6}  " if judged else "") + f"{'keyword':<{width}}  output")
    for rank, out in enumerate(result.outputs, start=1):
        pmi_cell = f"{out.pmi:6.3f}  " if pmi and out.pmi is not None else ""
        judged_cell = f"{out.verifier:6.2f}  " if judged and out.verifier is not None else ""
        print(f"  {rank:>3}  {out.nll:6.3f}  {pmi_cell}{judged_cell}{out.keyword or '-':<{width}}  "
              f"{out.text}")


def generate_command(args: argparse.Namespace) -> int:
    """``dpc generate``: load once, generate for every input, print or append the results."""
    import time

    try:
        if args.fast and args.model is not None:
            raise GuidedGenerationError(f"give --fast or --model (={args.model!r}), not both")
        check_seed("--seed", args.seed, error=GuidedGenerationError, quote=False)
        options = _options(args)
        spark = getattr(args, "spark", None)
        if spark is not None and (not args.input_file or not args.out):
            raise GuidedGenerationError("--spark needs --input-file and --out (the results are "
                                        "written to --out, partition by partition)")
        check_spark_arguments(args)
        items = _items(args)  # checks every input's direction (--direction's too)
        results = None
        skip = 0
        if args.out:
            results = ResultsFile(args.out, "dpc generate", run_signature(args, items, options),
                                  overwrite=args.overwrite)
            skip = args.skip = _resume_point(results, items)  # checks the path, then the file
            args.replacing = results.replacing
        if skip == len(items):  # a finished run: nothing to load the model for
            print(f"note: {args.out} already holds all {skip} results", file=sys.stderr)
            return 0
        if skip:
            print(f"note: {args.out} already holds {skip} of {len(items)} results: resuming",
                  file=sys.stderr)
        if spark is not None and results is not None:
            _generate_spark(args, items, options, results, skip)
            return 0
        generator = GeneratorLoad.from_args(args).load()
        from tqdm.auto import tqdm

        with results.writer() if results else nullcontext(None) as write:  # everything checked
            args.started = True
            for index, item in enumerate(tqdm(items, unit="input", disable=len(items) < 2 or None,
                                              initial=0)):
                if index < skip:
                    continue
                started = time.perf_counter()
                row, result = generate_row(generator, index, item, options, args.banned,
                                           progress=len(items) == 1)
                for note in result.notes:
                    print(f"note: {note}", file=sys.stderr)
                if write:
                    write(row)
                elif args.json:
                    print(json.dumps(row, ensure_ascii=False), flush=True)
                else:
                    _print_table(result, time.perf_counter() - started, options.rerank)
    except DpcError as err:
        print(f"dpc: error: {err}", file=sys.stderr)
        return 2
    return 0
