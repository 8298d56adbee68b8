"""One AFLite phase: the batched torch ensemble against the scikit-learn loop, in one run.

    flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2 .venv/bin/python benchmarks/aflite/speed.py \\
        runs/aflite/winogrande_l

reads the embeddings ``dpc aflite`` cached for that output folder (its ``report.json`` names
them), standardises them as :func:`tasks.aflite.algorithm.aflite` does, draws one phase's subsets
with the paper-scaled ``m`` (or ``--m``) and ``n`` models, and times both ensembles on the same
subsets; prints the seconds, the ratio and how often the two agree.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from tasks.aflite.algorithm import (
    _group_ids,
    _standardise,
    ensemble_scores,
    ensemble_scores_reference,
    phase_subsets,
    scaled_parameters,
)
from tasks.aflite.formats import load_instances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="a dpc aflite --out folder")
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--m", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    report = json.loads((Path(args.out) / "report.json").read_text())
    cache = Path(report["embedding_cache"])
    X = np.load(cache / "embeddings.npy", allow_pickle=False).astype(np.float64)
    positions = np.load(cache / "positions.npy", allow_pickle=False)
    instances = load_instances(report["file"], report["format"], report["view"]).subset(positions)
    y = np.unique(instances.labels, return_inverse=True)[1]
    m = args.m or scaled_parameters(len(y))[0]
    groups = _group_ids(instances.groups, len(y)) if instances.groups else None
    subsets = phase_subsets(np.random.default_rng(args.seed), args.n, len(y), m, groups)
    Xz = _standardise(X)
    classes = len(np.unique(y))
    print(f"{report['file']} ({report['format']}, {report['view']}): N={len(y)}, "
          f"d={X.shape[1]}, classes={classes}, n={args.n}, m={m}")
    ensemble_scores(Xz[:200], y[:200], subsets[:2, :50] % 200, classes=classes)  # warm-up
    start = time.perf_counter()
    fast = ensemble_scores(Xz, y, subsets, classes=classes)
    batched = time.perf_counter() - start
    start = time.perf_counter()
    slow = ensemble_scores_reference(Xz, y, subsets, classes=classes)
    loop = time.perf_counter() - start
    print(f"batched torch ensemble (float32, L-BFGS): {batched:.2f} s")
    print(f"scikit-learn loop ({args.n} LogisticRegression fits): {loop:.2f} s")
    print(f"ratio: {loop / batched:.1f}x")
    print(f"scores equal: {np.mean(fast == slow):.4f}; max |difference| "
          f"{np.nanmax(np.abs(fast - slow)):.4f}; mean {np.nanmean(fast):.4f} vs "
          f"{np.nanmean(slow):.4f}; instances >= 0.75: {(fast >= 0.75).sum()} vs "
          f"{(slow >= 0.75).sum()}")


if __name__ == "__main__":
    main()
