"""How much memory a decode needs, and how many keyword rows fit at once.

Every keyword row is a beam search of ``num_beams`` hypotheses, and ``batch_rows`` rows are
decoded together, so one decoding step holds ``rows * num_beams`` hypotheses. Each hypothesis
costs about :func:`dpc_decode.memory.bytes_per_hypothesis` (where the estimate lives: the
engine refuses a ``num_beams`` too large for memory as well).

:func:`rows_that_fit` lowers the rows decoded at once when their hypotheses would not fit in
the memory free on the model's device (``MemAvailable`` of ``/proc/meminfo``, or
``torch.cuda.mem_get_info``), and refuses with the estimate when even one row's beams would
not: a ``--m 100000`` is an error naming the gigabytes it needs, not the machine swapping or
the process being killed.

>>> rows_that_fit(per_hypothesis=1_000_000, beams=5, rows=300, batch_rows=100,
...               available=10**9)   # 500 hypotheses of 1 MB: 0.5 GB of 0.8 GB usable
100
>>> rows_that_fit(per_hypothesis=1_000_000, beams=50, rows=300, batch_rows=100,
...               available=10**9)   # 100 rows would need 5 GB: 16 rows at a time
16
>>> rows_that_fit(per_hypothesis=1_000_000, beams=100_000, rows=1, batch_rows=100,
...               available=10**9)
Traceback (most recent call last):
...
guided_generation.errors.GuidedGenerationError: `num_beams` (=100000, --m/--num-beams) needs about 100.0 GB for one keyword's beams (100000 hypotheses of about 1.0 MB); about 0.8 GB of memory is free for decoding: lower --m/--num-beams or --max-new-tokens
"""

from __future__ import annotations

from dpc_decode.memory import check_fits
from guided_generation.errors import GuidedGenerationError

__all__ = ["rows_that_fit"]


def rows_that_fit(*, per_hypothesis: int, beams: int, rows: int, batch_rows: int,
                  available: int) -> int:
    """How many rows of ``beams`` hypotheses to decode at once: ``batch_rows`` (or all ``rows``,
    if fewer) when they fit in :data:`USABLE` of ``available`` bytes, else as many as fit.

    Raises
    ------
    GuidedGenerationError
        If one row's beams alone would not fit; the message gives the estimate.
    """
    usable = check_fits(per_hypothesis=per_hypothesis, hypotheses=beams, available=available,
                        flags="--m/--num-beams", unit="keyword",
                        lower="--m/--num-beams or --max-new-tokens", error=GuidedGenerationError)
    wanted = max(1, min(batch_rows, rows))
    return min(wanted, usable // (beams * per_hypothesis))
