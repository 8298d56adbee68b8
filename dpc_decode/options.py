"""Decoding options: one definition serves the Python API and the command line.

Values are checked where the objects are built, and the error names the value: an integer
option takes an ``int`` (not a bool), a float option a finite number (not nan or infinite).
Memory is checked when a decode starts (:mod:`dpc_decode.memory`), as it depends on the model.

>>> BeamSearchOptions(num_beams=4, num_return_sequences=5)
Traceback (most recent call last):
...
dpc_errors.DpcError: `num_return_sequences` (=5) must be at most `num_beams` (=4)
>>> BeamSearchOptions(search="astar")
Traceback (most recent call last):
...
dpc_errors.DpcError: `search` (='astar') is not one of dba, neurologic
>>> BeamSearchOptions(length_penalty=float("nan"))
Traceback (most recent call last):
...
dpc_errors.DpcError: `length_penalty` (=nan) has to be a finite number
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from typing import Any, Literal

from dpc_decode.errors import DpcError
from dpc_errors import check_choice, check_float, check_int

__all__ = ["SEARCHES", "BeamSearchOptions", "DecodeOptions", "SamplingOptions", "SearchOptions",
           "add_search_arguments", "search_options_from"]

#: The beam selections under constraints (:attr:`BeamSearchOptions.search`).
SEARCHES = ("dba", "neurologic")


@dataclass(frozen=True)
class DecodeOptions:
    """Options every decoding method shares (see :class:`BeamSearchOptions` for their meaning)."""

    max_new_tokens: int = 20
    min_new_tokens: int = 0
    no_repeat_ngram_size: int = 0
    strict: bool = False
    feasible: bool = True

    def __post_init__(self) -> None:
        check_int("max_new_tokens", self.max_new_tokens, 1)
        check_int("min_new_tokens", self.min_new_tokens, 0)
        check_int("no_repeat_ngram_size", self.no_repeat_ngram_size, 0)
        if self.min_new_tokens > self.max_new_tokens:
            raise DpcError(
                f"`min_new_tokens` (={self.min_new_tokens}) must not exceed `max_new_tokens` "
                f"(={self.max_new_tokens})"
            )


@dataclass(frozen=True)
class BeamSearchOptions(DecodeOptions):
    """Options of constrained beam search.

    Attributes
    ----------
    num_beams : int
        Hypotheses kept per input.
    num_return_sequences : int
        Outputs returned per input (at most ``num_beams``).
    max_new_tokens, min_new_tokens : int
        Bounds on generated tokens (EOS included, as in transformers).
    length_penalty : float
        Outputs are ranked by ``log_prob / length ** length_penalty`` (transformers' convention).
    no_repeat_ngram_size : int
        Forbid repeating any n-gram of this size within the generated tokens (0: off).
    early_stopping : bool or "never"
        transformers' semantics: ``False`` stops an input when no running hypothesis can beat its
        finished ones by the usual heuristic, ``True`` as soon as ``num_beams`` are finished,
        ``"never"`` only when none can improve. Under constraints every beam that has met all
        its sets offers its ending to the finished pool, so ``True`` stops soon after
        ``num_beams`` beams have met them, some outputs ending right after their last
        constraint (fast; on CommonGen it kept BLEU and read well in 15 of 20 sentences, and
        counting only the search's own endings cost 1.7x the time for less BLEU:
        benchmarks/commongen/RESULTS.md).
    strict : bool
        Raise :class:`~dpc_decode.errors.UnsatisfiableConstraintsError` instead of returning an
        output with ``satisfied=False``.
    feasible : bool
        Keep every hypothesis able to meet its remaining sets within ``max_new_tokens`` (see
        :mod:`dpc_decode.masks`). On by default; off gives plain dynamic beam allocation.
    score_slots : int
        Of the ``num_beams`` kept each step, this many go to the best candidates by score alone,
        whatever their constraint progress; dynamic beam allocation fills the rest
        (:func:`dpc_decode.beam.allocate`). 0 (the default): allocation alone, which gives each
        progress bank an equal share, so with as many banks as beams the likeliest hypothesis
        of the step can be dropped for one that met a set sooner. ``num_beams``: the beams of
        plain beam search (EOS held back until every set is met), so an output plain search
        would find that meets the sets is found too. Without constraints it changes nothing.
        CommonGen chose its value on dev (benchmarks/commongen/RESULTS.md). Under
        ``search="neurologic"`` the same: that many of the step's best non-ending candidates
        by score lead, then NeuroLogic's order.
    search : "dba" or "neurologic"
        How the beams are chosen each step under constraints (without constraints both are
        plain beam search). ``"dba"``: dynamic beam allocation over banks of constraint
        progress (:func:`dpc_decode.beam.allocate`), as in every release so far. Under it, every
        beam that has met all its sets also offers its ending to the finished pool, scored
        with the first EOS id, and ``early_stopping=True`` stops once ``num_beams`` are
        there. ``"neurologic"``: NeuroLogic decoding's selection (Lu et al. 2021;
        :func:`dpc_decode.beam.neurologic_allocate`): constraint tokens pruned by
        ``prune_factor``, candidates more than ``sat_tolerance`` sets behind dropped, grouped by
        *which* sets they have met, hypotheses that meet every set first. Its outputs end only
        as the model ends them: an EOS id among the model's own top ``num_beams`` tokens of a
        hypothesis (or the step's top ``2 * num_beams``), scored as the model scores that id,
        and ``early_stopping=True`` stops only when no open beam can beat the finished ones
        (transformers' ``False`` rule): it never closes on an ending the open beams can
        still beat.
    prune_factor : int
        ``search="neurologic"``: a constraint token, or a hypothesis's own top-``num_beams``
        token, is a candidate only if its total score is among the ``prune_factor`` best of
        its input's step (all beams, all tokens). NeuroLogic's CommonGen scripts use 50.
    sat_tolerance : int
        ``search="neurologic"``: candidates that have met more than this many sets fewer than
        the most advanced candidate of their input are dropped (NeuroLogic's scripts: 2).
    lookahead : int
        ``search="neurologic"``: NeuroLogic A*esque's lookahead (Lu et al. 2022), 0 (the
        default) for none. Each step, of the first ``2 * num_beams`` candidates in
        NeuroLogic's order, those that have not met every set are rolled out greedily this many tokens (one
        batched model call a token, from a copy of their cache); each one's estimate of its
        future is the best log-probability, over the rollout's positions, of a token that
        starts (or continues) an alternative of a set it has not met, and the candidates are
        ordered again by ``score / (step + 1) + lookahead_weight * future``. The rollouts read
        the model's raw log-probabilities (no logits processor, no mask).
    lookahead_weight : float
        The weight of that estimate (A*esque's CommonGen scripts: 0.25 for greedy rollouts).
    """

    num_beams: int = 4
    num_return_sequences: int = 1
    length_penalty: float = 1.0
    early_stopping: bool | Literal["never"] = False
    score_slots: int = 0
    search: Literal["dba", "neurologic"] = "dba"
    prune_factor: int = 50
    sat_tolerance: int = 2
    lookahead: int = 0
    lookahead_weight: float = 0.25

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("num_beams", self.num_beams, 1)
        check_int("num_return_sequences", self.num_return_sequences, 1)
        check_int("score_slots", self.score_slots, 0, self.num_beams)
        check_int("prune_factor", self.prune_factor, 1)
        check_int("sat_tolerance", self.sat_tolerance, 0)
        check_choice("search", self.search, SEARCHES)
        check_int("lookahead", self.lookahead, 0)
        check_float("lookahead_weight", self.lookahead_weight, 0)
        if self.lookahead and self.search != "neurologic":
            raise DpcError(f"`lookahead` (={self.lookahead}) is NeuroLogic A*esque's: it needs "
                           f"search='neurologic' (search is {self.search!r})")
        check_float("length_penalty", self.length_penalty)
        if self.num_return_sequences > self.num_beams:
            raise DpcError(
                f"`num_return_sequences` (={self.num_return_sequences}) must be at most "
                f"`num_beams` (={self.num_beams})"
            )
        if self.early_stopping not in (True, False, "never"):
            raise DpcError(f"`early_stopping` (={self.early_stopping!r}) must be True, False or 'never'")


@dataclass(frozen=True)
class SamplingOptions(DecodeOptions):
    """Options of constrained sampling.

    Attributes
    ----------
    num_samples : int
        Outputs per input.
    temperature : float
        Softmax temperature (> 0).
    top_k : int
        Keep the ``top_k`` most likely tokens (0: all).
    top_p : float
        Nucleus sampling: keep the smallest set of tokens whose probability reaches ``top_p``.
    unique : bool
        Return ``num_samples`` *distinct* outputs per input, drawing more rounds as needed.
    max_rounds : int
        With ``unique``, at most this many rounds of ``num_samples`` draws per input.
    seed : int or None
        Seed of the sampler's own generator (``None``: torch's global generator).
    """

    num_samples: int = 1
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    unique: bool = False
    max_rounds: int = 20
    seed: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("num_samples", self.num_samples, 1)
        check_int("top_k", self.top_k, 0)
        check_int("max_rounds", self.max_rounds, 1)
        if self.seed is not None:
            check_int("seed", self.seed, 0, 2**64 - 1)  # what torch.Generator.manual_seed takes
        check_float("temperature", self.temperature, 0, open_min=True)
        check_float("top_p", self.top_p, 0, 1, open_min=True)


@dataclass(frozen=True)
class SearchOptions:
    """The beam selection under constraints, as one value a task or command hands to the engine
    (the fields of :class:`BeamSearchOptions` of the same names, checked the same way).

    >>> SearchOptions(search="neurologic", lookahead=3).as_kwargs()["lookahead"]
    3
    >>> SearchOptions(lookahead=3)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: `lookahead` (=3) is NeuroLogic A*esque's: it needs search='neurologic' (search is 'dba')
    """

    search: Literal["dba", "neurologic"] = "dba"
    prune_factor: int = 50
    sat_tolerance: int = 2
    lookahead: int = 0
    lookahead_weight: float = 0.25

    def __post_init__(self) -> None:
        BeamSearchOptions(**self.as_kwargs())  # the checks live there

    def as_kwargs(self) -> dict[str, Any]:
        """The fields, as keyword arguments of :func:`dpc_decode.generate`."""
        return asdict(self)


def add_search_arguments(parser: argparse.ArgumentParser,
                         defaults: SearchOptions | None = None, *, unset: bool = False) -> None:
    """``--search``, ``--prune-factor``, ``--sat-tolerance``, ``--lookahead`` and
    ``--lookahead-weight``, defaulting to ``defaults`` (the command's own; ``None``:
    :class:`SearchOptions`'), or with ``unset`` to ``None`` (the command's settings object
    fills them in): the same flags on every command that decodes under constraints (read back
    with :func:`search_options_from`)."""
    d = defaults or SearchOptions()

    def default(name: str) -> Any:
        return None if unset else getattr(d, name)

    def shown(name: str) -> str:
        return "the command's" if unset else str(getattr(d, name))

    flags = [("search", str, "the engine's beam selection under constraints"),
             ("prune_factor", int, "--search neurologic: constraint tokens kept only among the "
              "step's N best"),
             ("sat_tolerance", int, "--search neurologic: candidates at most N sets behind the "
              "best are kept"),
             ("lookahead", int, "--search neurologic: A*esque greedy rollouts of N tokens (0: none)"),
             ("lookahead_weight", float, "--search neurologic: the weight of the rollouts' "
              "estimate")]
    for name, kind, text in flags:
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=default(name),
                            choices=SEARCHES if name == "search" else None,
                            help=f"{text} (default {shown(name)})")


def search_options_from(args: argparse.Namespace) -> SearchOptions:
    """The :class:`SearchOptions` of flags :func:`add_search_arguments` registered."""
    return SearchOptions(search=args.search, prune_factor=args.prune_factor,
                         sat_tolerance=args.sat_tolerance, lookahead=args.lookahead,
                         lookahead_weight=args.lookahead_weight)
