"""The local engine: one process per core, one input file per task, largest files first.

Workers write their part files themselves (atomically); the parent only schedules, shows the
progress bar (input bytes consumed) and collects the file summaries.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "a.txt").write_text("The drought led to a terrible famine.\\n")
>>> opts = MineOptions(inputs=(str(folder / "a.txt"),), out=str(folder / "out"), workers=1)
>>> [s["pairs"] for s in run_local([folder / "a.txt"], opts)]
[1]
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import signal
from collections.abc import Sequence
from multiprocessing.managers import SyncManager
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from causal_mining.options import MineOptions
from causal_mining.worker import mine_file

__all__ = ["run_local"]


def _ignore_interrupts() -> None:
    """Worker processes leave Ctrl-C (SIGINT, sent to the whole process group) to the parent,
    which stops the pool: one message, not a traceback per worker. SIGTERM ends a worker
    quietly (its default action), as the pool's own shutdown sends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _leave_stopping_to_the_parent() -> None:
    """The progress queue's manager process ignores Ctrl-C and SIGTERM sent to the whole
    process group: the parent, stopping, still reads the pool's queues through it, then shuts
    it down (and kills it if it must)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _mine_with_queue(
    index: int, path: str, out: str, options: MineOptions, progress: Any
) -> dict[str, Any]:
    return mine_file(index, path, out, options, progress.put if progress is not None else None)


def run_local(files: Sequence[Path], options: MineOptions) -> list[dict[str, Any]]:
    """Mine ``files`` (in run order: ``files[i]`` has index ``i``) with worker processes.

    With one worker everything runs in this process (no pickling, easy debugging).

    Returns
    -------
    list[dict]
        The file summaries, in index order.
    """
    total = sum(p.stat().st_size for p in files)
    bar = tqdm(total=total, unit="B", unit_scale=True, desc="mining", disable=not options.progress)
    order = sorted(range(len(files)), key=lambda i: -files[i].stat().st_size)
    summaries: dict[int, dict[str, Any]] = {}
    try:
        if options.n_workers == 1 or len(files) == 1:
            for i in order:
                summaries[i] = mine_file(i, str(files[i]), options.out, options, bar.update)
            return [summaries[i] for i in range(len(files))]
        context = mp.get_context("spawn")
        manager = SyncManager(ctx=context)
        manager.start(_leave_stopping_to_the_parent)
        with manager, context.Pool(
                min(options.n_workers, len(files)), initializer=_ignore_interrupts) as pool:
            progress = manager.Queue()
            pending = {
                i: pool.apply_async(
                    _mine_with_queue, (i, str(files[i]), options.out, options, progress)
                )
                for i in order
            }
            while pending:
                try:
                    bar.update(progress.get(timeout=0.5))
                except queue.Empty:
                    pass
                for i in [i for i, r in pending.items() if r.ready()]:
                    summaries[i] = pending.pop(i).get()
            while True:
                try:
                    bar.update(progress.get_nowait())
                except queue.Empty:
                    break
        return [summaries[i] for i in range(len(files))]
    finally:
        bar.close()
