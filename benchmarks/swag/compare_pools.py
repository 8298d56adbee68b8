"""Constrained vs unconstrained pools: share of endings naming a context content word, distinct
endings per context, and (if AF ran) the committee's accuracy after AF.

Usage: python benchmarks/swag/compare_pools.py POOL_DIR [POOL_DIR ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from tasks.swag.oversample import names_context, read_pool


def describe(folder: str) -> dict:
    pool = read_pool(folder)
    named = [names_context(t, e.ctx) for e in pool for t in e.endings]
    gold_named = [names_context(e.gold, e.ctx) for e in pool]
    settings = json.loads((Path(folder) / "oversample.json").read_text())
    out = {"folder": folder, "constrained": settings["settings"]["constrain_context"],
           "contexts": len(pool), "endings": len(named),
           "share_naming_context": round(float(np.mean(named)), 4) if named else None,
           "gold_share_naming_context": round(float(np.mean(gold_named)), 4),
           "distinct_per_context_mean": round(float(np.mean([len(e.endings) for e in pool])), 2),
           "distinct_per_context_min": int(min(len(e.endings) for e in pool)),
           "returned_per_context_mean": round(float(np.mean([e.drawn for e in pool])), 2),
           "summary": settings.get("summary")}
    report = Path(folder) / "report.json"
    if report.exists():
        r = json.loads(report.read_text())
        out["af_iteration0_ensemble"] = r["iterations"][0]["accuracy"]["ensemble"]
        out["af_last_ensemble"] = r["iterations"][-1]["accuracy"]["ensemble"]
        out["af_fresh_committee"] = r.get("final", {}).get("accuracy")
        out["af_iterations"] = len(r["iterations"])
    return out


if __name__ == "__main__":
    print(json.dumps([describe(f) for f in sys.argv[1:]], indent=1))
