"""Print the all / random / PMI / AFLite table of ``dpc aflite`` reports as Markdown.

    .venv/bin/python benchmarks/aflite/table.py runs/aflite/winogrande_l/report.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def table(report: dict) -> str:
    p = report["aflite"]["parameters"]
    head = (f"{report['file']} ({report['format']}, {report['view']}): {report['instances']} "
            f"instances, {report['finetuned_on']} fine-tuned on and discarded, "
            f"{report['embedded']} filtered; n={p['n']} m={p['m']} k={p['k']} tau={p['tau']}, "
            f"{len(report['aflite']['phases'])} phases, {report['seconds']} s")
    lines = [head, "", "| set | size | PC1 KL | probe accuracy | chance (majority) |",
             "|---|---:|---:|---:|---:|"]
    for name, m in report["sets"].items():
        lines.append(f"| {name} | {m['size']} | {m['kl']:.3f} | {m['probe']:.3f} | "
                     f"{m['chance']:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(table(json.loads(Path(path).read_text())))
        print()
