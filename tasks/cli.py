"""``dpc eval copa FILE --scorer NAME``: COPA accuracy of any registered scorer.

Scorers register themselves (:func:`tasks.copa.register_scorer`) in the modules listed in
:data:`SCORER_MODULES`, which are imported here. The accuracy is the last line printed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from dpc_decode.errors import DpcError
from tasks.copa import available_scorers, decide_all, make_scorer, read_copa

__all__ = ["SCORER_MODULES", "add_eval_parser", "eval_copa_command", "load_scorer_modules"]

#: Modules whose import registers COPA scorers (graph, pmi, generator, causal-bert, ...).
SCORER_MODULES = ("cause_effect_graph.copa_scorers", "cause_effect_graph.cooccurrence",
                  "train.copa_scorers", "train.causal_bert")


def load_scorer_modules() -> None:
    """Import every scorer module that exists in this checkout."""
    for name in SCORER_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name not in (name, name.rsplit(".", 1)[0]):
                raise


def add_eval_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpc eval copa`` and ``dpc eval generation``."""
    p = sub.add_parser("eval", help="evaluations (COPA accuracy)")
    tasks = p.add_subparsers(dest="task", required=True)
    c = tasks.add_parser("copa", help="COPA accuracy of a scorer on a COPA XML file")
    c.add_argument("file", help="COPA XML file (e.g. ../shared/data/copa/copa-dev.xml)")
    c.add_argument("--scorer", required=True, help="scorer name (see the error for the list)")
    c.add_argument("--graph", default=None, help="Cause Effect Graph path (graph scorers)")
    c.add_argument("--counts", default=None,
                   help="co-occurrence counts (window-pmi, graph-window; dpc graph cooccur)")
    c.add_argument("--model", default=None, help="model folder (generator scorers)")
    c.add_argument("--train", default=None, help="COPA XML to train on (trained scorers)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--predictions", default=None, help="write per-item predictions (JSON lines)")
    c.set_defaults(func=eval_copa_command)
    from guided_generation.cli import add_eval_generation_parser

    add_eval_generation_parser(tasks)
    return p


def eval_copa_command(args: argparse.Namespace) -> int:
    """Score every item; print counts, then the accuracy alone on the last line."""
    try:
        load_scorer_modules()
        items = read_copa(args.file)
        options = {k: getattr(args, k) for k in ("graph", "counts", "model", "train", "seed")}
        scorer = make_scorer(args.scorer, **{k: v for k, v in options.items() if v is not None})
        decisions = decide_all(scorer, items)  # (predicted, tie) per item, once
        if args.predictions:
            with open(args.predictions, "w", encoding="utf-8") as out:
                for it, (predicted, _) in zip(items, decisions):
                    out.write(json.dumps({"id": it.id, "predicted": predicted,
                                          "answer": it.answer}) + "\n")
    except DpcError as err:
        print(f"dpc eval: error: {err}", file=sys.stderr)
        return 2
    correct = sum(p == it.answer for it, (p, _) in zip(items, decisions))
    ties = sum(tie for _, tie in decisions)
    print(f"scorer {args.scorer} on {args.file}: {correct}/{len(items)} correct, {ties} ties "
          f"(first alternative taken) (scorers available: {', '.join(available_scorers())})")
    print(f"{correct / len(items):.4f}")
    return 0
