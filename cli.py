"""The ``dpc`` command. Arguments are parsed here; the work is done by library functions.

Subcommands
-----------
``dpc generate``
    Constrained generation with the DPC engine (see ``dpc generate --help``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from dpc_decode import BeamSearchOptions, DpcError, GeneratedSequence, generate

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


def _add_generate(sub: argparse._SubParsersAction) -> None:
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dpc", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _add_generate(sub)
    args = parser.parse_args(argv)
    try:
        if args.command == "generate":
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
            if args.json:
                for text, outputs in zip(request.inputs, results):
                    for out in outputs:
                        print(json.dumps({"input": text, "direction": request.direction,
                                          **out.to_dict()}))
            else:
                _print_table(request, results)
    except DpcError as err:
        print(f"dpc: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
