"""Guided generation of causes and effects: Cause Effect Graph keywords → DPC → rerank.

The job of ``dpc generate --input "babies cry" --direction cause``: the graph proposes N keywords
in the asked direction, the DPC engine decodes one row per keyword (each output contains a form
of its keyword), and the N×M outputs are merged, deduplicated and reranked into the top K.

- :mod:`~guided_generation.options`: :class:`GuidedOptions` (N, M, K, beams, rerank, ...)
- :mod:`~guided_generation.keywords`: keyword → constraint set; graph and user keywords → rows
- :mod:`~guided_generation.pipeline`: :class:`GuidedGenerator`, :func:`guided_generate`
- :mod:`~guided_generation.baselines`: the paper's Table 3 baselines on the same model
- :mod:`~guided_generation.retrieval`: KNN retrieval over a CausalBank
- :mod:`~guided_generation.metrics`: Div (BLEU-1), distinct-n, coverage
- :mod:`~guided_generation.cli`: ``dpc generate``

The Table 3 evaluation on COPA premises is a task: :mod:`tasks.copa.generation`.

Names are imported lazily, so ``import guided_generation`` does not load torch.

>>> from guided_generation import GuidedOptions
>>> GuidedOptions(n=50).n
50
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from guided_generation.errors import GuidedGenerationError
from guided_generation.options import GuidedOptions

if TYPE_CHECKING:
    from guided_generation.pipeline import (
        GuidedGenerator,
        GuidedOutput,
        GuidedResult,
        guided_generate,
    )

_LAZY = {name: "guided_generation.pipeline"
         for name in ("GuidedGenerator", "GuidedOutput", "GuidedResult", "guided_generate")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'guided_generation' has no attribute {name!r}")


__all__ = ["GuidedGenerationError", "GuidedGenerator", "GuidedOptions", "GuidedOutput",
           "GuidedResult", "guided_generate"]
