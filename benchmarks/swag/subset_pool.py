"""The part of a pool that another pool covers: the same contexts, for side-by-side measures
(e.g. AF on the unconstrained pool restricted to the contexts of a smaller constrained one).

Writes ``OUT_DIR/pool.jsonl`` (the lines of ``POOL_DIR`` whose ``ind`` is in ``LIKE_DIR``'s pool,
in ``POOL_DIR``'s order) and a copy of ``POOL_DIR/oversample.json``; refuses an ``OUT_DIR`` that
holds anything.

Usage: python benchmarks/swag/subset_pool.py POOL_DIR LIKE_DIR OUT_DIR
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tasks.swag.oversample import POOL, SETTINGS, read_pool


def main(pool_dir: str, like_dir: str, out_dir: str) -> None:
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        sys.exit(f"subset_pool: {out_dir!r} is not empty")
    wanted = {str(e.ind) for e in read_pool(like_dir)}
    entries = [e for e in read_pool(pool_dir) if str(e.ind) in wanted]
    out.mkdir(parents=True, exist_ok=True)
    (out / POOL).write_text("".join(e.to_json() + "\n" for e in entries), encoding="utf-8")
    shutil.copy(Path(pool_dir) / SETTINGS, out / SETTINGS)
    print(f"{len(entries)} of {len(wanted)} contexts of {like_dir} written to {out / POOL}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
