"""Print the all / random / PMI / AFLite table of ``dpc aflite`` reports as Markdown.

    .venv/bin/python benchmarks/aflite/table.py runs/aflite/winogrande_l/report.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: The paper's order of the rows (report.json keeps its keys sorted).
ORDER = ("all", "random", "PMI", "AFLite")

def table(report: dict) -> str:
    p = report["aflite"]["parameters"]
    head = (f"{report['file']} ({report['format']}, {report['view']}): {report['instances']} "
            f"instances, {report['finetuned_on']} fine-tuned on and discarded, "
            f"{report['embedded']} filtered; n={p['n']} m={p['m']} k={p['k']} tau={p['tau']}, "
            f"{len(report['aflite']['phases'])} phases, {report['seconds']} s")
    lines = [head, "", "| set | size | PC1 KL | probe accuracy | chance (majority) |",
             "|---|---:|---:|---:|---:|"]
    sets = report["sets"]
    order = [name for name in ORDER if name in sets] + [n for n in sets if n not in ORDER]
    for name in order:
        m = sets[name]
        lines.append(f"| {name} | {m['size']} | {m['kl']:.4f} | {m['probe']:.3f} | "
                     f"{m['chance']:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(table(json.loads(Path(path).read_text())))
        print()
