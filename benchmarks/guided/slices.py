"""COPA by generation per 100 items, from the records :mod:`frontier` wrote.

    python benchmarks/guided/slices.py "base, 3 examples, N-best=runs/frontier/base_n20.json:nll" ...

Each argument is ``LABEL=FILE[+FILE...]:RERANK``: the records (of one configuration, on
consecutive samples, e.g. ``--start 0`` and ``--start 100``) are joined by item, and the top K of
``RERANK`` is re-scored per 100 items and over all of them (the same measure as
:func:`tasks.copa.plausibility.copa_by_generation`), with the templated share and the CPU seconds
an item. A Markdown table is printed; ``--out`` also writes it as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from tasks.copa.dataset import read_copa
    from tasks.copa.plausibility import copa_by_generation

    items = read_copa(args.copa)
    rows = []
    for spec in args.specs:
        label, _, rest = spec.rpartition("=")
        files, _, rerank = rest.rpartition(":")
        tops: dict[int, list[str]] = {}
        seconds = count = 0.0
        for name in files.split("+"):
            record = json.loads(Path(name).read_text(encoding="utf-8"))
            start = record.get("start", 0)
            for offset, top in enumerate(record["tops"][rerank]):
                tops[start + offset] = top
            per_item = record["cpu_seconds_per_item"]
            seconds += (per_item["decode"] + per_item.get(rerank, 0.0)) * record["items"]
            count += record["items"]
        indices = sorted(tops)
        slices = {f"{lo + 1}-{lo + 100}": [i for i in indices if lo <= i < lo + 100]
                  for lo in range(0, indices[-1] + 1, 100)}
        slices["all"] = indices
        row = {"label": label, "files": files, "rerank": rerank,
               "cpu_seconds_per_item": round(seconds / count, 2)}
        for name, chosen in slices.items():
            s = copa_by_generation([items[i] for i in chosen], [tops[i] for i in chosen])
            row[name] = {"accuracy": round(s.accuracy, 3), "items": s.items,
                         "template_share": round(s.template_share, 3)}
        rows.append(row)
    names = [k for k in rows[0] if isinstance(rows[0][k], dict)]
    print("| configuration | rerank | " + " | ".join(names) + " | templated (all) | CPU s/item |")
    print("|---|---|" + "---:|" * (len(names) + 2))
    for row in rows:
        cells = [f"{row[n]['accuracy']:.3f}" if n in row else "-" for n in names]
        print(f"| {row['label']} | {row['rerank']} | " + " | ".join(cells)
              + f" | {row['all']['template_share']:.2f} | {row['cpu_seconds_per_item']} |")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
