"""``dpc graph {build,add-pairs,query,show,stats,export,cooccur,parts-of-speech}``: the Cause
Effect Graph from the command line.

Every command reads the bundled graph (:data:`~cause_effect_graph.store.DEFAULT_GRAPH`) unless
``--graph PATH`` names another (``.ceg``, edge-list TSV or the official release format). Errors
are printed as ``dpc graph: error: ...`` and give exit status 2.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="dpc")
>>> _ = add_graph_parser(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["graph", "query", "babies cry", "--direction", "cause"])
>>> args.func.__name__, args.direction, args.n, args.rank
('query_command', 'cause', 10, 'weight')
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from cause_effect_graph.errors import GraphError
from cause_effect_graph.query import HUB_SHARE, MIN_FREQ, RANKS
from cause_effect_graph.store import graph_from_option
from dpc_errors import DpcError, check_int, check_seed
from dpc_files import check_output_file, check_output_folder
from dpc_inputs import read_input_text

__all__ = ["add_graph_parser", "add_pairs_command", "build_command", "cooccur_command",
           "export_command", "main", "parts_of_speech_command", "query_command", "show_command",
           "stats_command"]

_EVERYDAY_HELP = ("everyday cause -> effect pairs counted beside the bank: ecare=FILE|FOLDER "
                  "(e-CARE JSON lines) or conceptnet=FILE|FOLDER (ConceptNet Causes lines); "
                  "repeat for several sources")
_WEIGHT_HELP = ("how many mined pairs one everyday pair counts as: N for every source or "
                "NAME=N for one (default 5; see cause_effect_graph/everyday.py for why)")


def _add_everyday_options(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--everyday", action="append", default=[], metavar="NAME=PATH",
                   required=required, help=_EVERYDAY_HELP)
    p.add_argument("--everyday-weight", action="append", default=[], metavar="N|NAME=N",
                   help=_WEIGHT_HELP)


def _error(err: Exception) -> int:
    print(f"dpc graph: error: {err}", file=sys.stderr)
    return 2


def _graph(args: argparse.Namespace) -> Any:
    return graph_from_option(args.graph)


def add_graph_parser(
        sub: Any,
        vocabulary_texts: Mapping[str, Callable[[Sequence[str]], Iterable[str]]] | None = None,
) -> argparse.ArgumentParser:
    """Register ``dpc graph`` and its subcommands on ``sub`` (an argparse subparsers object).

    ``vocabulary_texts`` maps a dataset name to a reader of the texts of its files: each gives
    ``dpc graph cooccur`` an option ``--vocab-NAME FILE...`` (count the content lemmas of those
    texts). The graph knows no dataset format; the ``dpc`` command passes the tasks' readers
    (``{"copa": tasks.copa.dataset.copa_texts}``).
    """
    p = sub.add_parser("graph", help="the Cause Effect Graph: build, query, show, stats",
                       description="Build and query the Cause Effect Graph (lemma-level "
                       "causal knowledge). Without --graph, the bundled graph (Gutenberg "
                       "CausalBank, e-CARE and ConceptNet) is used.")
    commands = p.add_subparsers(dest="graph_command", required=True)

    b = commands.add_parser("build", help="build a graph from CausalBank shards")
    b.add_argument("bank", nargs="+", help="mining output folder, causalbank-*.tsv shards or "
                   "folders of them, or official release folders (because_mode/therefore_mode)")
    b.add_argument("--out", required=True, help="graph file to write (.ceg)")
    b.add_argument("--work", default=None, help="folder for resumable lemma files, kept "
                   "(default: OUT.work, removed when the build ends; kept only when it is "
                   "interrupted, for the same command to resume)")
    b.add_argument("--min-count", type=int, default=6,
                   help="keep edges seen at least this often (default 6: the paper drops <= 5)")
    b.add_argument("--top-k", type=int, default=None,
                   help="also keep only the K heaviest out- and in-edges of every lemma")
    b.add_argument("--engine", choices=("local", "spark"), default="local")
    b.add_argument("--spark-master", default="local[2]")
    b.add_argument("--chunk-pairs", type=int, default=10_000,
                   help="pairs per lemma file (the unit of resumption)")
    b.add_argument("--tsv", default=None, help="also export the edges as cause<TAB>effect<TAB>count")
    b.add_argument("--compression", choices=("xz", "zlib"), default="xz")
    b.add_argument("--no-progress", action="store_true")
    b.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out (and --tsv) file")
    _add_everyday_options(b, required=False)
    b.set_defaults(func=build_command, interrupted=_build_interrupted)

    a = commands.add_parser("add-pairs", help="add everyday pairs (e-CARE, ConceptNet) to a "
                            "built graph whose bank is not at hand")
    _add_everyday_options(a, required=True)
    a.add_argument("--graph", default=None, help="graph to add to (default: the bundled one)")
    a.add_argument("--out", required=True, help="graph file to write (.ceg)")
    a.add_argument("--min-count", type=int, default=None,
                   help="keep edges whose summed count reaches this (default: the graph's own "
                   "min count)")
    a.add_argument("--work", default=None,
                   help="folder to keep the everyday lemmas in (a rerun skips spaCy)")
    a.add_argument("--compression", choices=("xz", "zlib"), default="xz")
    a.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    a.set_defaults(func=add_pairs_command)

    c = commands.add_parser("cooccur", help="window co-occurrence counts of lemmas in raw text "
                            "(for the window-PMI COPA baseline)")
    c.add_argument("inputs", nargs="+", help="text files, folders or globs (any reader of dpc mine)")
    c.add_argument("--out", required=True, help="counts file to write (.json.gz)")
    vocab = c.add_mutually_exclusive_group(required=True)
    for name in vocabulary_texts or {}:
        vocab.add_argument(f"--vocab-{name}", nargs="+", metavar=f"{name.upper()}_FILE",
                           dest=f"vocab_{name}", help=f"count the content lemmas of these {name} files")
    vocab.add_argument("--vocab", metavar="FILE", help="count these lemmas (one per line)")
    c.set_defaults(vocabulary_texts=dict(vocabulary_texts or {}))
    c.add_argument("--window", type=int, default=5, help="words after a lemma that count (5)")
    c.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    c.add_argument("--no-progress", action="store_true")
    c.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    c.set_defaults(func=cooccur_command)

    q = commands.add_parser("query", help="constraint lemmas for a sentence")
    q.add_argument("sentence")
    q.add_argument("--direction", choices=("cause", "effect"), default="cause",
                   help="causes of the sentence (predecessors) or its effects (successors)")
    q.add_argument("-n", type=int, default=10, help="how many lemmas (default 10)")
    q.add_argument("--rank", choices=RANKS, default="weight",
                   help="weight (edge counts, the paper), strength (causal strength), pmi "
                   "(specific lemmas first) or mix (count x PMI)")
    q.add_argument("--hub-share", type=float, default=HUB_SHARE,
                   help=f"leave out this share of the graph's lemmas, the most connected "
                   f"(default {HUB_SHARE}; 0: none)")
    q.add_argument("--min-freq", type=int, default=MIN_FREQ,
                   help=f"pmi and mix: leave out lemmas seen in fewer pairs (default {MIN_FREQ})")
    q.add_argument("--no-diversify", dest="diversify", action="store_false",
                   help="keep lemmas that share an inflected form with a better one")
    q.add_argument("--variants", action="store_true",
                   help="print each lemma's surface forms (inflections, and derived forms "
                   "found in the graph)")
    q.add_argument("--json", action="store_true")
    q.add_argument("--graph", default=None)
    q.set_defaults(func=query_command)

    s = commands.add_parser("show", help="draw a lemma's neighbourhood (PNG/SVG/PDF)")
    s.add_argument("lemma")
    s.add_argument("--out", required=True, help="picture file, e.g. rain.png")
    s.add_argument("-n", type=int, default=10, help="causes and effects to draw (default 10)")
    s.add_argument("--graph", default=None)
    s.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    s.set_defaults(func=show_command)

    t = commands.add_parser("stats", help="size and most connected lemmas of a graph")
    t.add_argument("--graph", default=None)
    t.add_argument("--top", type=int, default=10)
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=stats_command)

    e = commands.add_parser("export", help="write a graph as an edge-list TSV or release file")
    e.add_argument("--out", required=True)
    e.add_argument("--format", choices=("tsv", "release", "ceg"), default="tsv")
    e.add_argument("--graph", default=None)
    e.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    e.set_defaults(func=export_command)

    o = commands.add_parser("parts-of-speech", help="count the parts of speech of the graph's "
                            "lemmas in its source text (which inflections a keyword gets)",
                            description="Tag a random sample of Gutenberg lines and every "
                            "e-CARE and ConceptNet cause and effect with the graph build's spaCy "
                            "model, and write how often each lemma was a noun, verb, adjective "
                            "or adverb (cause_effect_graph/parts_of_speech.py).")
    o.add_argument("--data", required=True, help="the shared data folder: gutenberg/*.txt.xz, "
                   "ecare/explanation_generation_train.jsonl, conceptnet/conceptnet_cause_sets.txt")
    o.add_argument("--out", required=True, help="profile file to write (.tsv.gz)")
    o.add_argument("--gutenberg-lines", type=int, default=200_000,
                   help="Gutenberg lines to sample (default 200000)")
    o.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    o.add_argument("--min-count", type=int, default=2,
                   help="keep lemmas seen at least this often (default 2)")
    o.add_argument("--no-progress", action="store_true")
    o.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    o.set_defaults(func=parts_of_speech_command)
    return p


def build_command(args: argparse.Namespace) -> int:
    """``dpc graph build``."""
    from cause_effect_graph.build import BuildOptions, build_graph
    from cause_effect_graph.everyday import parse_sources
    from cause_effect_graph.store import save_graph, write_edgelist

    try:
        check_output_file(args.out, "--out", overwrite=args.overwrite)
        if args.tsv:
            check_output_file(args.tsv, "--tsv", overwrite=args.overwrite)
        check_output_folder(args.work or f"{args.out}.work", "--work", command="dpc graph build")
        everyday = _everyday(args, parse_sources)
        options = BuildOptions(
            bank=tuple(args.bank), work=args.work or f"{args.out}.work",
            min_count=args.min_count, top_k=args.top_k, chunk_pairs=args.chunk_pairs,
            engine=args.engine, spark_master=args.spark_master, progress=not args.no_progress,
            everyday=everyday,
        )
        with _work_folder(args) as work:  # every value checked before it is made
            G, report = build_graph(replace(options, work=work))
        t = time.perf_counter()
        save_graph(G, args.out, compression=args.compression)
        save_s = time.perf_counter() - t
        if args.tsv:
            write_edgelist(G, args.tsv)
    except (GraphError, ValueError, OSError) as err:
        return _error(err)
    print(f"{report.pairs:,} pairs{' (resumed)' if report.resumed else ''}: "
          f"{report.nodes_before:,} lemmas and {report.edges_before:,} edges before pruning, "
          f"{report.nodes:,} and {report.edges:,} after (min count {args.min_count}"
          f"{f', top {args.top_k}' if args.top_k else ''})")
    if "everyday" in G.graph:
        print(f"everyday pairs (distinct pairs x weight): {G.graph['everyday']}")
    print(f"lemmatise {report.lemmatise_s:.1f} s, count {report.count_s:.1f} s, graph "
          f"{report.graph_s:.1f} s, save {save_s:.1f} s; {args.out}: "
          f"{Path(args.out).stat().st_size:,} bytes")
    return 0


def _everyday(args: argparse.Namespace, parse: Callable[..., Any]) -> Any:
    """The ``--everyday`` sources; a weight without a source is an error."""
    if args.everyday_weight and not args.everyday:
        raise GraphError("`--everyday-weight` needs at least one `--everyday NAME=PATH`")
    return parse(args.everyday, args.everyday_weight)


def add_pairs_command(args: argparse.Namespace) -> int:
    """``dpc graph add-pairs --everyday NAME=PATH... --out FILE [--graph BASE]``."""
    from cause_effect_graph.everyday import add_everyday, parse_sources
    from cause_effect_graph.store import save_graph

    try:
        check_output_file(args.out, "--out", overwrite=args.overwrite)
        sources = _everyday(args, parse_sources)
        if args.min_count is not None:
            check_int("--min-count", args.min_count, 1, error=GraphError)
        G = _graph(args)
        t = time.perf_counter()
        H = add_everyday(G, sources, args.min_count, cache=args.work)
        add_s = time.perf_counter() - t
        save_graph(H, args.out, compression=args.compression)
    except (DpcError, OSError) as err:
        return _error(err)
    print(f"{H.graph['everyday']}: {G.number_of_nodes():,} lemmas and {G.number_of_edges():,} "
          f"edges before, {H.number_of_nodes():,} and {H.number_of_edges():,} after (min count "
          f"{H.graph['min_count']})")
    print(f"lemmatise and add {add_s:.1f} s; {args.out}: {Path(args.out).stat().st_size:,} bytes")
    return 0


@contextmanager
def _work_folder(args: argparse.Namespace) -> Iterator[str]:
    """``dpc graph build``'s work folder: ``--work`` (always kept, so that a rerun resumes),
    else ``OUT.work``, made only once every value is checked and removed when the build ends
    or is refused: it stays behind only when the build is interrupted, for the same command to
    resume from (what :func:`_build_interrupted` says)."""
    if args.work:
        yield args.work
        return
    work = Path(f"{args.out}.work")
    existed = work.exists()  # an interrupted build's: resumed here
    try:
        yield str(work)
    except (KeyboardInterrupt, SystemExit):
        raise  # kept: the rerun resumes from it
    except BaseException:
        if not existed:  # refused or failed before anything worth resuming was kept
            shutil.rmtree(work, ignore_errors=True)
        raise
    shutil.rmtree(work, ignore_errors=True)  # built: nothing is left beside the graph


def _build_interrupted(args: argparse.Namespace) -> str:
    """What an interrupted ``dpc graph build`` kept (``dpc`` prints it)."""
    work = args.work or f"{args.out}.work"
    return (f"the finished lemma files are kept in {work}; run the same command again "
            "to resume")


def query_command(args: argparse.Namespace) -> int:
    """``dpc graph query``: one lemma a line (``lemma<TAB>score``), message on stderr."""
    from cause_effect_graph.query import CandidateOptions, candidates
    from cause_effect_graph.word_forms import variants

    try:
        G = _graph(args)
        result = candidates(G, args.sentence, args.direction, args.n, args.rank,
                            options=CandidateOptions(hub_share=args.hub_share,
                                                     min_freq=args.min_freq,
                                                     diversify=args.diversify))
    except GraphError as err:
        return _error(err)
    if result.message:
        print(f"dpc graph: {result.message}", file=sys.stderr)
    for lemma, score in result:
        forms = variants(lemma, derived=G) if args.variants else None
        if args.json:
            row: dict[str, Any] = {"lemma": lemma, "score": score}
            if forms is not None:
                row["variants"] = forms
            print(json.dumps(row))
        else:
            extra = f"\t{'|'.join(forms)}" if forms is not None else ""
            print(f"{lemma}\t{score:.4g}{extra}")
    return 0


def show_command(args: argparse.Namespace) -> int:
    """``dpc graph show LEMMA --out FILE``."""
    from cause_effect_graph.show import draw_neighbourhood

    try:
        check_int("-n", args.n, 1, error=GraphError, quote=False)
        check_output_file(args.out, "--out", overwrite=args.overwrite)
        H = draw_neighbourhood(_graph(args), args.lemma.strip().lower(), args.out, args.n)
    except (GraphError, ValueError, OSError) as err:
        return _error(err)
    print(f"{args.out}: '{args.lemma}' with {H.number_of_nodes() - 1} neighbours")
    return 0


def graph_stats(G: Any, top: int = 10) -> dict[str, Any]:
    """Counts and most connected lemmas of ``G`` (what ``dpc graph stats`` prints)."""
    def heaviest(attr: str) -> list[tuple[str, int]]:
        ranked = sorted(G.nodes(data=attr, default=0), key=lambda kv: (-kv[1], kv[0]))
        return [(n, int(v)) for n, v in ranked[:top]]

    edges = sorted(G.edges(data="weight", default=1), key=lambda e: (-e[2], e[0], e[1]))
    return {
        "nodes": G.number_of_nodes(),
        "edges": G.number_of_edges(),
        "graph": dict(G.graph),
        "top_causes": heaviest("cause_weight"),
        "top_effects": heaviest("effect_weight"),
        "top_edges": [(u, v, int(w)) for u, v, w in edges[:top]],
    }


def stats_command(args: argparse.Namespace) -> int:
    """``dpc graph stats``."""
    try:
        check_int("--top", args.top, 1, error=GraphError, quote=False)
        stats = graph_stats(_graph(args), args.top)
    except GraphError as err:
        return _error(err)
    if args.json:
        print(json.dumps(stats, indent=1))
        return 0
    print(f"nodes {stats['nodes']:,}  edges {stats['edges']:,}")
    for key, value in sorted(stats["graph"].items()):
        print(f"  {key}: {value}")
    print("most frequent causes: " + ", ".join(f"{n} ({v:,})" for n, v in stats["top_causes"]))
    print("most frequent effects: " + ", ".join(f"{n} ({v:,})" for n, v in stats["top_effects"]))
    print("heaviest edges: " + ", ".join(f"{u}->{v} ({w:,})" for u, v, w in stats["top_edges"]))
    return 0


def cooccur_command(args: argparse.Namespace) -> int:
    """``dpc graph cooccur INPUT... --out FILE (--vocab-copa X.xml | --vocab FILE)``."""
    from cause_effect_graph.cooccurrence import count_windows, save_counts, text_vocabulary

    try:
        check_int("--window", args.window, 1, error=GraphError, quote=False)
        if args.workers is not None:  # None: all cores
            check_int("--workers", args.workers, 1, error=GraphError, quote=False)
        check_output_file(args.out, "--out", overwrite=args.overwrite)
        named = [(read, getattr(args, f"vocab_{name}"))
                 for name, read in args.vocabulary_texts.items() if getattr(args, f"vocab_{name}")]
        if named:
            read, paths = named[0]
            vocab = text_vocabulary(read(paths))
        else:
            vocab = {w.strip() for w in read_input_text(args.vocab, "--vocab").split()}
        counts = count_windows(args.inputs, vocab, args.window, args.workers,
                               not args.no_progress)
        save_counts(counts, args.out)
    except (DpcError, OSError) as err:
        return _error(err)
    print(f"{args.out}: {len(counts.pairs):,} lemma pairs of {len(vocab):,} lemmas over "
          f"{counts.tokens:,} words in {len(counts.sources)} files (window {counts.window})")
    return 0


def export_command(args: argparse.Namespace) -> int:
    """``dpc graph export --out FILE [--format tsv|release|ceg]``."""
    from cause_effect_graph.store import save_graph, write_edgelist, write_release_graph

    try:
        check_output_file(args.out, "--out", overwrite=args.overwrite)
        G = _graph(args)
        if args.format == "tsv":
            n = write_edgelist(G, args.out)
        elif args.format == "release":
            n = write_release_graph(G, args.out)
        else:
            save_graph(G, args.out)
            n = G.number_of_edges()
    except (DpcError, OSError) as err:
        return _error(err)
    print(f"{args.out}: {n:,} edges ({args.format})")
    return 0


def parts_of_speech_command(args: argparse.Namespace) -> int:
    """``dpc graph parts-of-speech --data DIR --out FILE``."""
    from cause_effect_graph.parts_of_speech import build_parts_of_speech

    try:
        check_output_file(args.out, "--out", overwrite=args.overwrite)
        check_int("--gutenberg-lines", args.gutenberg_lines, 0, error=GraphError)
        check_int("--min-count", args.min_count, 1, error=GraphError)
        check_seed("--seed", args.seed, error=GraphError)
        t = time.perf_counter()
        profile = build_parts_of_speech(args.data, args.out, args.gutenberg_lines, args.seed,
                                        progress=not args.no_progress, min_count=args.min_count)
        took = time.perf_counter() - t
    except (DpcError, OSError) as err:
        return _error(err)
    print(f"{args.out}: {len(profile):,} lemmas seen at least {args.min_count} times, "
          f"{Path(args.out).stat().st_size:,} bytes, in {took:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``dpc graph ...`` alone: ``python -m cause_effect_graph.cli graph query ...``."""
    parser = argparse.ArgumentParser(prog="dpc")
    add_graph_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
