"""AFLite variants on the embeddings ``dpc aflite`` cached, each beside random and PMI
reduction to the same size.

    flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2 .venv/bin/python \\
        benchmarks/aflite/variants.py runs/aflite/winogrande_l --variants paper,ungrouped,chance

Variants: ``paper`` (the paper's stopping rule; twins trained on or held out together, as
``dpc aflite`` does), ``ungrouped`` (subsets drawn per instance, as in the paper),
``chance`` (``paper`` + ``stop_at_chance``). Prints a Markdown table (size, PC1 KL, probe
accuracy with twin-grouped folds, chance) and writes ``--figure`` (all / random / PMI / AFLite
of the last variant) if given.

``--plant SHARE`` first plants a linear artifact in the embeddings: a random ``SHARE`` of the
instances is moved ``--strength`` standard deviations along one random direction, towards +
for one label and - for the other (twins: both or neither), and the table says how much of
that planted part each set still holds.

``--noise N`` adds, under each variant, the spread of the measures over ``N`` random
reductions to its size (seeds ``seed + 1 ... seed + N``): mean ± standard deviation and range,
the yardstick for whether a difference between rows is more than sampling noise.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from tasks.aflite.algorithm import aflite
from tasks.aflite.baselines import pmi_filter, random_reduction
from tasks.aflite.formats import load_instances
from tasks.aflite.measures import figure, measure_set

VARIANTS = {"paper": {"grouped": True, "stop_at_chance": False},
            "ungrouped": {"grouped": False, "stop_at_chance": False},
            "chance": {"grouped": True, "stop_at_chance": True}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="a dpc aflite --out folder (its report names the cache)")
    parser.add_argument("--variants", default="paper,ungrouped,chance")
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--tau", type=float, default=0.75)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--figure", default=None)
    parser.add_argument("--plant", type=float, default=0.0)
    parser.add_argument("--strength", type=float, default=3.0)
    parser.add_argument("--noise", type=int, default=0, metavar="N",
                        help="also measure N more random reductions per variant (spread)")
    args = parser.parse_args()
    report = json.loads((Path(args.out) / "report.json").read_text())
    cache = Path(report["embedding_cache"])
    X = np.load(cache / "embeddings.npy", allow_pickle=False)
    positions = np.load(cache / "positions.npy", allow_pickle=False)
    part = load_instances(report["file"], report["format"], report["view"]).subset(positions)
    y = part.labels
    planted = np.zeros(len(y), dtype=bool)
    if args.plant:
        rng = np.random.default_rng(args.seed + 1)
        names = [f"#{i}" if part.groups is None or part.groups[i] is None else part.groups[i]
                 for i in range(len(y))]
        chosen = {g for g in set(names) if rng.random() < args.plant}
        planted = np.array([g in chosen for g in names])
        direction = rng.normal(size=X.shape[1])
        direction /= np.linalg.norm(direction)
        sign = 2.0 * (y == y.min()) - 1.0
        X = X + (planted * sign * args.strength * X.std())[:, None] * direction[None, :]

    def groups_of(ids: np.ndarray) -> list | None:
        return None if part.groups is None else [part.groups[i] for i in ids]

    def row(name: str, ids: np.ndarray) -> str:
        m = measure_set(X[ids], y[ids], seed=args.seed, groups=groups_of(ids))
        share = f" {planted[ids].mean():.3f} |" if args.plant else ""
        return f"| {name} | {m.size} | {m.kl:.4f} | {m.probe:.3f} | {m.chance:.3f} |{share}"

    def noise_row(size: int) -> str:
        draws = [measure_set(X[ids], y[ids], seed=args.seed, groups=groups_of(ids))
                 for ids in (random_reduction(len(y), size, seed=args.seed + 1 + i)
                             for i in range(args.noise))]
        kl = np.array([m.kl for m in draws])
        probe = np.array([m.probe for m in draws])
        return (f"| random, {args.noise} more seeds: mean ± sd (min–max) | {size} | "
                f"{kl.mean():.4f} ± {kl.std(ddof=1):.4f} ({kl.min():.4f}–{kl.max():.4f}) | "
                f"{probe.mean():.3f} ± {probe.std(ddof=1):.3f} ({probe.min():.3f}–"
                f"{probe.max():.3f}) | |" + (" |" if args.plant else ""))

    print(f"{report['file']} ({report['format']}, {report['view']}): {len(y)} instances "
          f"embedded, d={X.shape[1]}")
    if args.plant:
        print(f"planted: {planted.sum()} instances ({planted.mean():.3f}), strength "
              f"{args.strength} standard deviations a dimension along one direction")
    print("\n| set | size | PC1 KL | probe accuracy | chance |" + (" planted share |" if args.plant
                                                                  else "")
          + "\n|---|---:|---:|---:|---:|" + ("---:|" if args.plant else ""))
    print(row("all", np.arange(len(y))))
    sets = {}
    for name in args.variants.split(","):
        v = VARIANTS[name]
        if v["grouped"] is False and part.groups is None:
            continue
        start = time.perf_counter()
        result = aflite(X, y, n=args.n, tau=args.tau, seed=args.seed,
                        groups=part.groups if v["grouped"] else None,
                        stop_at_chance=v["stop_at_chance"])
        seconds = time.perf_counter() - start
        size = len(result.kept)
        phases = ", ".join(f"{p.removed}@{p.mean_score:.3f}" for p in result.phases)
        print(f"| AFLite {name} ({len(result.phases)} phases: removed@ensemble accuracy "
              f"{phases}; {seconds:.0f} s) | " + row("", result.kept).split("| ", 2)[2])
        rand = random_reduction(len(y), size, seed=args.seed)
        print(row(f"random, same size as {name}", rand))
        if args.noise:
            print(noise_row(size))
        sets = {"all": np.arange(len(y)), "random": rand}
        if part.pmi_texts is not None:
            pmi = pmi_filter(part.pmi_texts, y.tolist(), size, groups=part.groups,
                             seed=args.seed)
            print(row(f"PMI, same size as {name}", pmi))
            sets["PMI"] = pmi
        sets["AFLite"] = result.kept
    if args.figure and sets:
        figure({k: (X[ids], y[ids]) for k, ids in sets.items()}, args.figure,
               label_names=part.label_names,
               title=f"{Path(report['file']).name} ({report['format']}, {report['view']})")


if __name__ == "__main__":
    main()
