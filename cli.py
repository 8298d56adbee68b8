"""The ``dpc`` command. Arguments are parsed here; the work is done by library functions.

Every subcommand is registered by an ``add_<name>_parser(subparsers)`` function that sets
``func`` to a function of the parsed arguments returning the exit status (and printing its own
errors), so each package owns its subcommands:

``dpc generate``
    Guided generation of causes and effects (:mod:`guided_generation.cli`).
``dpc mine``
    Mine a CausalBank from raw text (:mod:`causal_mining.cli`).
``dpc graph``
    Build, query, draw and describe the Cause Effect Graph (:mod:`cause_effect_graph.cli`).
``dpc train``
    Tokenizers, generators, CausalBERT (:mod:`train.cli`).
``dpc eval``
    The tasks' evaluations: ``dpc eval copa``, ``dpc eval generation`` (:mod:`tasks.cli`). This
    module makes the group; each package adds its commands to it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from causal_mining.cli import add_mine_parser
from cause_effect_graph.cli import add_graph_parser
from guided_generation.cli import add_generate_parser
from tasks.cli import add_eval_commands
from tasks.copa.dataset import copa_texts
from train.cli import add_train_parser

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``dpc`` argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(prog="dpc", description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_generate_parser(sub)
    add_mine_parser(sub)
    # The graph package cannot read COPA (a task): the task hands it its reader of texts.
    add_graph_parser(sub, vocabulary_texts={"copa": copa_texts})
    evals = sub.add_parser("eval", help="evaluations of the tasks (COPA accuracy, Table 3)")
    add_eval_commands(evals.add_subparsers(dest="task", required=True))
    add_train_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
