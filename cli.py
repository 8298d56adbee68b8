"""The ``dpc`` command. Arguments are parsed here; the work is done by library functions.

Every subcommand is registered by an ``add_<name>_parser(subparsers)`` function that sets
``func`` to a function of the parsed arguments returning the exit status (and printing its own
errors), so each package owns its subcommands:

``dpc generate``
    Constrained generation with the DPC engine (see ``dpc generate --help``).
``dpc mine``
    Mine a CausalBank from raw text (:mod:`causal_mining.cli`).
``dpc graph``
    Build, query, draw and describe the Cause Effect Graph (:mod:`cause_effect_graph.cli`).
``dpc eval copa``
    COPA accuracy of a registered scorer (:mod:`tasks.cli`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dpc_decode import DpcError
from dpc_decode.options import BeamSearchOptions

if TYPE_CHECKING:
    from dpc_decode.outputs import GeneratedSequence

__all__ = ["GenerateRequest", "main", "parse_constraint", "run_generate"]

DIRECTIONS = ("cause", "effect")


def parse_constraint(text: str) -> list[str]:
    """One ``--constraint`` value is one set: alternatives separated by ``|``.

    >>> parse_constraint("rain|rains|rained")
    ['rain', 'rains', 'rained']
    >>> parse_constraint("rain||")
    Traceback (most recent call last):
    ...
    dpc_decode.errors.DpcError: --constraint 'rain||' has an empty alternative
    """
    parts = [p.strip() for p in text.split("|")]
    if any(not p for p in parts):
        raise DpcError(f"--constraint {text!r} has an empty alternative")
    return parts


@dataclass(frozen=True)
class GenerateRequest:
    """What ``dpc generate`` does, as the Python API takes it."""

    inputs: list[str]
    direction: str = "cause"
    constraints: list[list[str]] = field(default_factory=list)
    banned: list[str] = field(default_factory=list)
    model: str | None = None
    options: BeamSearchOptions = field(default_factory=BeamSearchOptions)

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise DpcError(f"--direction {self.direction!r} is not one of {', '.join(DIRECTIONS)}")
        for i, text in enumerate(self.inputs):
            if not text.strip():
                raise DpcError(f"input {i} is empty")


def run_generate(request: GenerateRequest) -> list[list[GeneratedSequence]]:
    """Load the model and decode every input under the request's constraints."""
    from dpc_decode.generate import generate
    from train.models import default_model, load_model

    loaded = load_model(request.model) if request.model else default_model()
    prompts = [f"{request.direction}: {text}" for text in request.inputs]
    return generate(
        loaded.model,
        loaded.tokenizer,
        prompts,
        request.constraints or None,
        banned=request.banned or None,
        options=request.options,
    )


def _print_table(request: GenerateRequest, results: list[list[GeneratedSequence]]) -> None:
    for text, outputs in zip(request.inputs, results):
        print(f"{request.direction} of: {text}")
        for rank, out in enumerate(outputs, start=1):
            met = ", ".join(
                str(m.alternative) if m is not None else "-" for m in out.matches
            ) or "-"
            flag = "" if out.satisfied else "  [constraints NOT met]"
            print(f"  {rank:>2}. {out.text}    (score {out.score:.3f}; keywords: {met}){flag}")


def add_generate_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``dpc generate``."""
    p = sub.add_parser(
        "generate",
        help="generate causes or effects under disjunctive constraints",
        description="Generate with the DPC engine. Each --constraint is one set of alternatives "
        "separated by '|'; every output contains one alternative of every set.",
    )
    p.add_argument("--input", action="append", required=True, help="input text (repeatable)")
    p.add_argument("--direction", default="cause", help="cause or effect (default: cause)")
    p.add_argument(
        "--constraint", action="append", default=[], metavar="ALT|ALT...",
        help="one constraint set, e.g. 'hungry|hunger' (repeatable)",
    )
    p.add_argument("--banned", action="append", default=[], help="a phrase never to generate")
    p.add_argument("--model", default=None, help="a local Hugging Face model folder")
    p.add_argument("--num-beams", type=int, default=8)
    p.add_argument("--num-return", type=int, default=3, help="outputs per input")
    p.add_argument("--max-new-tokens", type=int, default=20)
    p.add_argument("--min-new-tokens", type=int, default=0)
    p.add_argument("--length-penalty", type=float, default=1.0)
    p.add_argument("--no-repeat-ngram-size", type=int, default=3)
    p.add_argument("--strict", action="store_true", help="fail if a set cannot be met")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.set_defaults(func=generate_command)
    return p


def generate_command(args: argparse.Namespace) -> int:
    """``dpc generate``: build the request from parsed arguments, decode, print."""
    try:
        request = GenerateRequest(
            inputs=args.input,
            direction=args.direction,
            constraints=[parse_constraint(c) for c in args.constraint],
            banned=args.banned,
            model=args.model,
            options=BeamSearchOptions(
                num_beams=args.num_beams,
                num_return_sequences=args.num_return,
                max_new_tokens=args.max_new_tokens,
                min_new_tokens=args.min_new_tokens,
                length_penalty=args.length_penalty,
                no_repeat_ngram_size=args.no_repeat_ngram_size,
                strict=args.strict,
            ),
        )
        if not request.constraints:
            print(
                "note: no --constraint given, and the Cause Effect Graph that proposes "
                "keywords is not built yet: decoding without constraints",
                file=sys.stderr,
            )
        results = run_generate(request)
    except DpcError as err:
        print(f"dpc: error: {err}", file=sys.stderr)
        return 2
    if args.json:
        for text, outputs in zip(request.inputs, results):
            for out in outputs:
                print(json.dumps({"input": text, "direction": request.direction, **out.to_dict()}))
    else:
        _print_table(request, results)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``dpc`` argument parser with every subcommand registered."""
    from causal_mining.cli import add_mine_parser
    from cause_effect_graph.cli import add_graph_parser
    from tasks.cli import add_eval_parser
    from train.cli import add_train_parser

    parser = argparse.ArgumentParser(prog="dpc", description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_generate_parser(sub)
    add_mine_parser(sub)
    add_graph_parser(sub)
    add_eval_parser(sub)
    add_train_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
