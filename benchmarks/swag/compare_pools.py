"""Constrained vs unconstrained pools: share of endings naming a context content word, distinct
endings per context, words per ending, and (if AF ran) the committee's accuracy after AF; the
pool's statistics also by source (HellaSwag's WikiHow contexts start "How to", the others are
ActivityNet's).

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
           **_sizes(pool),
           "by_source": {name: _sizes(part) for name, part in (
               ("activitynet", [e for e in pool if not e.ctx.startswith("How to")]),
               ("wikihow", [e for e in pool if e.ctx.startswith("How to")])) if part},
           "summary": settings.get("summary")}
    report = Path(folder) / "report.json"
    if report.exists():
        r = json.loads(report.read_text())
        out["af_iteration0_ensemble"] = r["iterations"][0]["accuracy"]["ensemble"]
        out["af_last_ensemble"] = r["iterations"][-1]["accuracy"]["ensemble"]
        out["af_fresh_committee"] = r.get("final", {}).get("accuracy")
        out["af_iterations"] = len(r["iterations"])
    return out


def _sizes(pool: list) -> dict:
    """Kept endings per context, contexts short of what was drawn, words per ending and gold."""
    return {"contexts_n": len(pool),
            "kept_per_context": round(float(np.mean([len(e.endings) for e in pool])), 2),
            "contexts_short": sum(len(e.endings) < e.drawn for e in pool),
            "kept_min": min(len(e.endings) for e in pool),
            "words_per_ending": round(float(np.mean([len(t.split()) for e in pool
                                                     for t in e.endings])), 1),
            "gold_words": round(float(np.mean([len(e.gold.split()) for e in pool])), 1)}


if __name__ == "__main__":
    print(json.dumps([describe(f) for f in sys.argv[1:]], indent=1))
