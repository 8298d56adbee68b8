"""The ``dpc mine`` sub-command: parse in :func:`add_mine_parser`, work in :func:`run_mine`.

Wire it into the top-level parser with::

    from causal_mining.cli import add_mine_parser
    add_mine_parser(subparsers)          # sets defaults(func=run_mine)
    options = parser.parse_args(argv); options.func(options)

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="dpc")
>>> _ = add_mine_parser(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["mine", "corpus/", "--out", "runs/x", "--workers", "2"])
>>> to_options(args).workers, args.func is run_mine
(2, True)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from causal_mining.extract import ExtractOptions
from causal_mining.mine import mine
from causal_mining.options import ENGINES, MineOptions
from causal_mining.readers import ReaderOptions
from dpc_errors import DpcError

__all__ = ["add_mine_parser", "interrupted_note", "main", "run_mine", "to_options"]


def add_mine_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``mine`` sub-command to an ``argparse`` sub-parsers object and return it."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mine",
        help="mine cause-effect pairs (a CausalBank) from raw text",
        description="Mine CausalBank pairs from text, JSON lines or WARC/WET files, folders or "
        "globs (gzip/bzip2/xz/zstd). An existing --out of the same run is resumed.",
    )
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="files, folders or globs")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--engine", choices=ENGINES, default="local")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (--engine spark)")
    parser.add_argument("--batch-chars", type=int, default=4_000_000,
                        help="characters of text per part file (resumption unit)")
    parser.add_argument("--shard-pairs", type=int, default=100_000, help="pairs per shard")
    parser.add_argument("--text-field", default="text", help="text field of JSON lines")
    parser.add_argument("--no-tags", action="store_true",
                        help="no spaCy at all: tag-dependent patterns accepted lexically, no "
                        "parse check (fastest, least precise)")
    parser.add_argument("--no-parse", action="store_true",
                        help="tag where needed but skip the dependency-parse check of every "
                        "pair (about 1.8x faster, less precise)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--follow-symlinks", action="store_true",
                        help="read symbolic links that point out of the input folders "
                        "(default: skip them, and count them in the report)")
    parser.set_defaults(func=run_mine, interrupted=interrupted_note)
    return parser


def to_options(args: argparse.Namespace) -> MineOptions:
    """The :class:`MineOptions` of parsed arguments."""
    return MineOptions(
        inputs=tuple(args.inputs),
        out=args.out,
        engine=args.engine,
        workers=args.workers,
        spark_master=args.master,
        batch_chars=args.batch_chars,
        shard_pairs=args.shard_pairs,
        extract=ExtractOptions(use_tags=not args.no_tags, use_parse=not args.no_parse),
        reader=ReaderOptions(text_field=args.text_field),
        progress=not args.no_progress,
        follow_symlinks=args.follow_symlinks,
    )


def run_mine(args: argparse.Namespace) -> int:
    """Run ``dpc mine``; print a summary; return the exit status (2 on a mining error)."""
    try:
        report = mine(to_options(args))
    except DpcError as error:  # MiningError, and OutputError for --out
        print(f"dpc mine: error: {error}", file=sys.stderr)
        return 2
    summary = {k: report[k] for k in ("pairs", "sentences", "text_bytes", "wall_seconds",
                                      "mb_per_s", "skipped_input")}
    print(json.dumps(summary, indent=1))
    print(f"report: {args.out}/report.md", file=sys.stderr)
    return 0


def interrupted_note(args: argparse.Namespace) -> str:
    """What an interrupted ``dpc mine`` kept, and how to go on (``dpc`` prints it)."""
    return (f"the finished parts are kept in {args.out}/parts; run the same command again to "
            "resume")


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m causal_mining.cli``) until the ``dpc`` command wires it."""
    parser = argparse.ArgumentParser(prog="dpc")
    add_mine_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
