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
``dpc serve``
    The web page and HTTP JSON API (:mod:`serve.cli`; Gradio, the ``demo`` extra).
``dpc swag``, ``dpc aflite``, ``dpc inli``
    The task pipelines: SWAG endings with Adversarial Filtering, AFLite, implied NLI (each
    package's ``cli`` module; :func:`tasks.cli.add_task_parsers` adds them).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn

from causal_mining.cli import add_mine_parser
from cause_effect_graph.cli import add_graph_parser
from dpc_errors import DpcError
from guided_generation.cli import add_generate_parser
from serve.cli import add_serve_parser
from tasks.cli import add_eval_commands, add_task_parsers
from tasks.copa.dataset import copa_texts
from train.cli import add_train_parser

__all__ = ["build_parser", "main"]


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser, its errors one line: ``dpc generate: error: argument --n: invalid int
    value: 'x'``, not the usage block first (``--help`` shows it). A parser of sub-commands
    called without one (``dpc graph``) still answers with its usage, which is then the answer.
    Every sub-command's parser is one too (``add_subparsers`` makes its parsers of the same
    class).

    >>> OneLineParser(prog="dpc demo").error("argument --n: invalid int value: 'x'")
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """

    def error(self, message: str) -> NoReturn:
        if self._subparsers is not None and message.startswith(
                "the following arguments are required"):
            super().error(message)  # a missing sub-command: the usage lists them
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``dpc`` argument parser with every subcommand registered."""
    parser = OneLineParser(prog="dpc", description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_generate_parser(sub)
    add_mine_parser(sub)
    # The graph package cannot read COPA (a task): the task hands it its reader of texts.
    add_graph_parser(sub, vocabulary_texts={"copa": copa_texts})
    evals = sub.add_parser("eval", help="evaluations of the tasks (COPA accuracy, Table 3)")
    add_eval_commands(evals.add_subparsers(dest="task", required=True))
    add_train_parser(sub)
    add_task_parsers(sub)  # dpc swag, dpc aflite, dpc inli
    add_serve_parser(sub)
    return parser


#: What an interrupted command kept, for the commands that say nothing more (their outputs are
#: written to a temporary name and renamed, whole or not at all).
NOTHING_KEPT = "no output was written (outputs are written whole or not at all); run it again"


def _command(args: argparse.Namespace) -> str:
    words = [getattr(args, key, None) for key in ("command", "graph_command", "task",
                                                   "train_command", "swag_command",
                                                   "inli_command")]
    return " ".join(["dpc", *(w for w in words if isinstance(w, str))])


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, as Ctrl-C raises :class:`KeyboardInterrupt`."""


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While the block runs, SIGTERM interrupts the command as SIGINT does (the same clean-up
    and the same line), in the main thread only (where Python runs signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dpc ARGV``; return the exit status.

    0 on success; 2 for bad input, with one line on stderr (every :class:`~dpc_errors.DpcError`,
    and the operating system's errors: a full disk, a file that cannot be read); 130 when
    interrupted (Ctrl-C, SIGINT), 143 when terminated (SIGTERM), with the same one line saying
    what was kept and how to resume (each command's ``interrupted(args)``, given with its
    parser's defaults).
    """
    try:
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:
        print("dpc: interrupted before the command started: nothing was done", file=sys.stderr)
        return 130
    try:
        with _sigterm_interrupts():
            return int(args.func(args))
    except KeyboardInterrupt as stop:
        note = getattr(args, "interrupted", None)
        print(f"{_command(args)}: interrupted: {note(args) if note else NOTHING_KEPT}",
              file=sys.stderr)
        return 143 if isinstance(stop, _Terminated) else 130
    except (DpcError, OSError, MemoryError) as err:
        # a command prints its own errors; these got past it (a disk that fills up, memory)
        reason = str(err) or type(err).__name__
        print(f"{_command(args)}: error: {reason}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        if type(err).__name__ != "OutOfMemoryError":  # torch.OutOfMemoryError (no torch import)
            raise
        print(f"{_command(args)}: error: out of memory on the device: "
              f"{str(err).splitlines()[0] if str(err) else ''}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
