"""Exception type of guided generation (a :class:`~dpc_errors.DpcError`, so a ``ValueError``).

>>> raise GuidedGenerationError("--direction 'sideways' is not one of cause, effect")
Traceback (most recent call last):
...
guided_generation.errors.GuidedGenerationError: --direction 'sideways' is not one of cause, effect
"""

from __future__ import annotations

from dpc_errors import DpcError

__all__ = ["GuidedGenerationError"]


class GuidedGenerationError(DpcError):
    """Bad input to the guided-generation pipeline; the message names the value."""
