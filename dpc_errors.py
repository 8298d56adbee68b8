"""The one root of every error dpc raises for bad input: :class:`DpcError`; and the checks of
option values that raise it (:func:`check_int`, :func:`check_seed`, :func:`check_float`,
:func:`check_choice`, :func:`check_length`).

Every options dataclass's ``__post_init__`` and every command checks its values with these, so
an option is checked one way wherever it is given, and its message names the option and the
value in the same words: ``error`` picks the package's own error type, ``quote=False`` shows the
name as given (a flag such as ``--max-queue``, a field of a web request) instead of as code.
They live here, not in a module of their own, because every package may import the error root,
the engine (:mod:`dpc_decode`) included, which may import nothing else of the project.

Every package derives its own errors from it (``MiningError``, ``GraphError``, ``TrainError``,
``ConstraintError``, ``GuidedGenerationError``, ...), so a caller catches one type and shows the
message as is; each message names the offending value. This module imports nothing heavy
(only ``math``, ``numbers`` and ``collections.abc``), so the packages below the engine (the
miner, the graph, training)
need not import the engine, torch or transformers to raise or catch it.

>>> from causal_mining.errors import MiningConfigError
>>> try:
...     raise MiningConfigError("`workers` (=0) has to be a positive integer")
... except DpcError as error:
...     print(error)
`workers` (=0) has to be a positive integer
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

__all__ = ["INT64_MAX", "MAX_SEED", "DpcError", "check_choice", "check_float", "check_int",
           "check_length", "check_seed"]

#: The largest integer an option takes when it names no bound of its own: what torch and numpy
#: hold (int64). No count dpc uses comes near it; a larger one would overflow in their code.
INT64_MAX = 2**63 - 1
#: The largest seed (:func:`check_seed`): what every generator dpc seeds takes. torch's take
#: up to 2**64 - 1, numpy's legacy ones and scikit-learn's ``random_state`` only up to
#: 2**32 - 1, and the per-epoch seeds derived from a run's (``seed * 1000003 + epoch``) stay
#: within torch's range from this one.
MAX_SEED = 2**32 - 1


class DpcError(ValueError):
    """Base class of the errors every dpc package raises for bad input (a ``ValueError``)."""


def _is_number(value: object) -> bool:
    """A real number that is not a bool (``True`` is an ``int`` to Python, not to a user)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _named(name: str, quote: bool) -> str:
    return f"`{name}`" if quote else name


def _rule(minimum: float | None, maximum: float | None, *, open_min: bool = False,
          open_max: bool = False, interval: bool = True) -> str:
    """The bounds as a message words them: `` in [0, 1)``, `` from 1 to 9`` (``interval``
    off), `` > 0``, `` <= 9``, or nothing."""
    if minimum is not None and maximum is not None:
        if not interval:
            return f" from {minimum} to {maximum}"
        return f" in {'(' if open_min else '['}{minimum}, {maximum}{')' if open_max else ']'}"
    if minimum is not None:
        return f" {'>' if open_min else '>='} {minimum}"
    if maximum is not None:
        return f" {'<' if open_max else '<='} {maximum}"
    return ""


def check_int(name: str, value: object, minimum: int | None = None, maximum: int | None = None,
              *, error: type[DpcError] = DpcError, quote: bool = True) -> int:
    """``value`` if it is an integer (not a bool) from ``minimum`` to ``maximum`` (``None``: no
    bound but int64's, :data:`INT64_MAX`); else ``error`` naming ``name`` (in backticks, unless
    ``quote`` is off) and the value.

    >>> check_int("n", 3, 1)
    3
    >>> check_int("n", 0, 1)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `n` (=0) must be an integer >= 1
    >>> check_int("n", True, 1)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `n` (=True) must be an integer >= 1
    >>> check_int("port", 2.0, 1, 65535)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `port` (=2.0) must be an integer from 1 to 65535
    >>> check_int("--max-queue", 0, 1, 10_000, quote=False)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: --max-queue (=0) must be an integer from 1 to 10000
    >>> check_int("--limit", 10**20, 1, quote=False)  # beyond int64: its bound is named
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: --limit (=100000000000000000000) must be an integer from 1 to 9223372036854775807
    """
    integer = not isinstance(value, bool) and isinstance(value, numbers.Integral)
    if integer and maximum is None and value > INT64_MAX:  # type: ignore[operator]
        maximum = INT64_MAX
    if integer and minimum is None and value < -INT64_MAX - 1:  # type: ignore[operator]
        minimum = -INT64_MAX - 1
    if (not integer or (minimum is not None and value < minimum)  # type: ignore[operator]
            or (maximum is not None and value > maximum)):  # type: ignore[operator]
        rule = _rule(minimum, maximum, interval=False)
        raise error(f"{_named(name, quote)} (={value!r}) must be an integer{rule}")
    return int(value)  # type: ignore[arg-type]


def check_seed(name: str, value: object, *, error: type[DpcError] = DpcError,
               quote: bool = True) -> int:
    """``value`` if it is a seed every generator dpc seeds takes (an integer from 0 to
    :data:`MAX_SEED`); else ``error`` naming ``name`` and the value (:func:`check_int`).

    >>> check_seed("--seed", 7, quote=False)
    7
    >>> check_seed("--seed", 99999999999999999999, quote=False)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: --seed (=99999999999999999999) must be an integer from 0 to 4294967295
    """
    return check_int(name, value, 0, MAX_SEED, error=error, quote=quote)


def check_length(name: str, text: str, max_chars: int, *,
                 error: type[DpcError] = DpcError) -> str:
    """``text`` if it has at most ``max_chars`` characters; else ``error`` naming ``name`` and
    the length, with the text's start only (it is long).

    >>> check_length("input 0", "babies cry", 5_000)
    'babies cry'
    >>> check_length("--constraint", "x" * 300, 200)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: --constraint ('xxxxxxxxxxxxxxxxxxxx'...) has 300 characters: at most 200
    """
    if len(text) > max_chars:
        raise error(f"{name} ({text[:20]!r}...) has {len(text)} characters: at most {max_chars}")
    return text


def check_float(name: str, value: object, minimum: float | None = None,
                maximum: float | None = None, *, open_min: bool = False, open_max: bool = False,
                error: type[DpcError] = DpcError, quote: bool = True) -> float:
    """``value`` as a float if it is a finite real number (not a bool, nan or infinite) from
    ``minimum`` to ``maximum`` (``None``: no bound; ``open_min``/``open_max``: the bound itself
    excluded); else ``error`` naming ``name`` and the value.

    >>> check_float("length_penalty", 2)
    2.0
    >>> check_float("length_penalty", float("nan"))
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `length_penalty` (=nan) has to be a finite number
    >>> check_float("top_p", 0.0, 0, 1, open_min=True)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `top_p` (=0.0) has to be a finite number in (0, 1]
    >>> check_float("temperature", float("inf"), 0, open_min=True)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `temperature` (=inf) has to be a finite number > 0
    >>> check_float("lr", True, 0, open_min=True)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `lr` (=True) has to be a finite number > 0
    """
    number = math.nan
    if _is_number(value):
        try:
            number = float(value)  # type: ignore[arg-type]
        except OverflowError:  # an int beyond the floats
            number = math.inf
    low_ok = minimum is None or (number > minimum if open_min else number >= minimum)
    high_ok = maximum is None or (number < maximum if open_max else number <= maximum)
    if not (math.isfinite(number) and low_ok and high_ok):
        rule = _rule(minimum, maximum, open_min=open_min, open_max=open_max)
        raise error(f"{_named(name, quote)} (={value!r}) has to be a finite number{rule}")
    return number


def check_choice(name: str, value: object, choices: Iterable[str], *,
                 error: type[DpcError] = DpcError, quote: bool = True) -> str:
    """``value`` if it is one of ``choices``; else ``error`` naming ``name`` (in backticks,
    unless ``quote`` is off), the value and the choices.

    >>> check_choice("rerank", "pmi", ("nll", "pmi"))
    'pmi'
    >>> check_choice("rerank", "bleu", ("nll", "pmi"))
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `rerank` (='bleu') is not one of nll, pmi
    """
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise error(f"{_named(name, quote)} (={value!r}) is not one of {', '.join(choices)}")
    return value
