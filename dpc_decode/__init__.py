"""dpc_decode: disjunctive positive constraints in one vectorised beam search.

Names are imported lazily (PEP 562), so ``import dpc_decode.errors`` or ``from dpc_decode
import DpcError`` does not load torch and transformers.

>>> from dpc_decode import satisfies
>>> satisfies([4, 100, 8, 2], [[[100], [100, 7], [100, 8]]])
True
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpc_decode.errors import ConstraintError, DpcError, UnsatisfiableConstraintsError

if TYPE_CHECKING:
    from dpc_decode.automaton import Automaton, satisfies
    from dpc_decode.constraints import TokenizeOptions
    from dpc_decode.generation import generate
    from dpc_decode.options import BeamSearchOptions, SamplingOptions, SearchOptions
    from dpc_decode.outputs import ConstraintMatch, GeneratedSequence
    from dpc_decode.sampling import sample

#: Folder for ``model.generate(custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True)``.
CUSTOM_GENERATE_DIR = Path(__file__).resolve().parent / "hf_custom_generate"

_LAZY = {
    "Automaton": "dpc_decode.automaton",
    "satisfies": "dpc_decode.automaton",
    "TokenizeOptions": "dpc_decode.constraints",
    "generate": "dpc_decode.generation",
    "BeamSearchOptions": "dpc_decode.options",
    "SamplingOptions": "dpc_decode.options",
    "SearchOptions": "dpc_decode.options",
    "ConstraintMatch": "dpc_decode.outputs",
    "GeneratedSequence": "dpc_decode.outputs",
    "sample": "dpc_decode.sampling",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpc_decode' has no attribute {name!r}")


__all__ = [
    "CUSTOM_GENERATE_DIR",
    "Automaton",
    "BeamSearchOptions",
    "ConstraintError",
    "ConstraintMatch",
    "DpcError",
    "GeneratedSequence",
    "SamplingOptions",
    "SearchOptions",
    "TokenizeOptions",
    "UnsatisfiableConstraintsError",
    "generate",
    "sample",
    "satisfies",
]
