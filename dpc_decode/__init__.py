"""dpc_decode: disjunctive positive constraints in one vectorised beam search.

>>> from dpc_decode import satisfies
>>> satisfies([4, 100, 8, 2], [[[100], [100, 7], [100, 8]]])
True
"""

from pathlib import Path

from dpc_decode.automaton import Automaton, satisfies
from dpc_decode.constraints import TokenizeOptions
from dpc_decode.errors import ConstraintError, DpcError, UnsatisfiableConstraintsError
from dpc_decode.generate import generate
from dpc_decode.options import BeamSearchOptions, SamplingOptions
from dpc_decode.outputs import ConstraintMatch, GeneratedSequence
from dpc_decode.sampling import sample

#: Folder for ``model.generate(custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True)``.
CUSTOM_GENERATE_DIR = Path(__file__).resolve().parent / "hf_custom_generate"

__all__ = [
    "CUSTOM_GENERATE_DIR",
    "Automaton",
    "BeamSearchOptions",
    "ConstraintError",
    "ConstraintMatch",
    "DpcError",
    "GeneratedSequence",
    "SamplingOptions",
    "TokenizeOptions",
    "UnsatisfiableConstraintsError",
    "generate",
    "sample",
    "satisfies",
]
