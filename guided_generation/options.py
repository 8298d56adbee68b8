"""Options of the guided-generation pipeline: one definition for the Python API and the CLI.

Values are checked where the object is built, and the error names the value: integers are
``int`` (not bool), floats finite numbers (not nan or infinite; :func:`dpc_errors.check_float`).
Whether ``num_beams`` fits in memory depends on the model: the pipeline checks it before it
decodes (:mod:`guided_generation.memory`), and so does the engine
(:mod:`dpc_decode.memory`).

>>> GuidedOptions(n=300, m=5, k=10).num_beams
5
>>> GuidedOptions(m=8, num_beams=4)
Traceback (most recent call last):
...
guided_generation.errors.GuidedGenerationError: `m` (=8) must be at most `num_beams` (=4)
>>> GuidedOptions(rerank="bleu")
Traceback (most recent call last):
...
guided_generation.errors.GuidedGenerationError: `rerank` (='bleu') is not one of nll, pmi, mmr, verifier
>>> GuidedOptions(length_penalty=float("nan"))
Traceback (most recent call last):
...
guided_generation.errors.GuidedGenerationError: `length_penalty` (=nan) has to be a finite number
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from causal_mining.pair import Direction
from causal_mining.pair import check_direction as _check_direction
from dpc_decode.options import BeamSearchOptions
from dpc_errors import check_choice, check_float, check_int
from guided_generation.errors import GuidedGenerationError

__all__ = ["CONSTRAINT_MODES", "MAX_INPUT_CHARS", "MAX_PHRASE_CHARS", "METHODS", "RANKS",
           "RERANKS", "GuidedOptions", "check_direction", "method_names"]

#: The longest input ``dpc generate`` takes, in characters. The pipeline reads an input's first
#: ``max_input_tokens`` tokens only (64 by default: a sentence or two); a text a hundred times
#: longer is a wrong file or field, not an input.
MAX_INPUT_CHARS = 5_000
#: The longest keyword, alternative or banned phrase, in characters (a few words; the web
#: API's own limit is 100).
MAX_PHRASE_CHARS = 200

CONSTRAINT_MODES = ("combine", "replace", "require", "all")
#: How the graph ranks keywords (:data:`cause_effect_graph.query.RANKS`; kept here too so that
#: options import without the graph package).
RANKS = ("weight", "strength", "pmi", "mix")
RERANKS = ("nll", "pmi", "mmr", "verifier")
#: The generation methods of the paper's Table 3 (:mod:`guided_generation.baselines`).
METHODS = ("guided", "guided-pmi", "guided-mmr", "guided-verifier", "nbest", "sample", "knn",
           "gold")


def check_direction(direction: object) -> Direction:
    """``direction`` if it is ``"cause"`` or ``"effect"``; an error listing the choices otherwise.

    >>> check_direction("effect")
    'effect'
    >>> check_direction("why")
    Traceback (most recent call last):
    ...
    guided_generation.errors.GuidedGenerationError: --direction 'why' is not one of cause, effect
    """
    return _check_direction(direction, GuidedGenerationError, "--direction")


def method_names(names: Sequence[str]) -> list[str]:
    """Check a list of method names (:data:`METHODS`), naming the first unknown one; an empty
    list is refused too (it would evaluate nothing).

    >>> method_names(["guided", "nbest"])
    ['guided', 'nbest']
    >>> method_names(["beam"])
    Traceback (most recent call last):
    ...
    guided_generation.errors.GuidedGenerationError: method 'beam' is not one of guided, guided-pmi, guided-mmr, guided-verifier, nbest, sample, knn, gold
    >>> method_names([])
    Traceback (most recent call last):
    ...
    guided_generation.errors.GuidedGenerationError: no method named: give one or more of guided, guided-pmi, guided-mmr, guided-verifier, nbest, sample, knn, gold
    """
    if not names:
        raise GuidedGenerationError(f"no method named: give one or more of {', '.join(METHODS)}")
    for name in names:
        if name not in METHODS:
            raise GuidedGenerationError(f"method {name!r} is not one of {', '.join(METHODS)}")
    return list(names)


@dataclass(frozen=True)
class GuidedOptions:
    """How :class:`~guided_generation.pipeline.GuidedGenerator` generates.

    Attributes
    ----------
    n : int
        Keyword rows decoded (one constraint set, hence one decoded row, each). Paper: 300;
        default 20. With ``verify_keywords`` the verifier chooses them among the graph's top
        ``keyword_pool`` and the sampled answers' keywords; otherwise the graph's top ``n``
        (after the sampled answers' keywords, when ``sampled``).
    m : int
        Outputs kept per keyword (the row's best ``m`` beams). Paper: 5; default 2.
    k : int
        Outputs returned after merging, removing duplicates and reranking.
    num_beams : int
        Beams per row (at least ``m``; default ``max(m, 4)``).
    max_new_tokens, min_new_tokens, no_repeat_ngram_size, length_penalty
        Beam-search options of every row (:class:`dpc_decode.BeamSearchOptions`).
    rank : {"weight", "strength", "pmi", "mix"}
        How the graph ranks keywords (:func:`cause_effect_graph.query.candidates`): edge counts
        (the paper), causal strength, positive PMI, or ``mix`` (each input lemma's share of
        edge counts × PMI; the default, chosen on COPA by generation).
    rerank : {"nll", "pmi", "mmr", "verifier"}
        Final order (default ``verifier``, chosen on COPA-dev items 1-250 and confirmed on
        251-500, benchmarks/guided/RESULTS.md): mean negative log-likelihood per token (lower
        first, the paper); ``pmi``:
        mean pointwise mutual information per token with the input, ``log P(y | input) -
        log P(y | empty input)``, which demotes outputs the model would write for any input
        ("it was a man"); or maximal marginal relevance, which trades likelihood against word
        overlap with the outputs already chosen (``mmr_lambda`` = weight of the likelihood);
        ``verifier``: the plausibility verifier's score, highest first
        (:mod:`guided_generation.verifier`).
    verify : bool
        Score every output with the plausibility verifier (its score is in the result) and
        drop those scoring below ``reject_below``: the result then holds fewer than K, with a
        note, rather than an answer the verifier finds implausible.
    reject_below : float, None or "auto"
        The verifier's score under which an output is rejected (``None``: none is). ``"auto"``
        (the default): the floor calibrated for the generator
        (:attr:`GuidedGenerator.reject_floor <guided_generation.pipeline.GuidedGenerator.reject_floor>`):
        5, chosen on COPA-dev items 1-250 for the default generator, the bundled verifier and
        ``verifier_pmi_weight=0.75`` (benchmarks/guided/RESULTS.md); none for any other
        generator, whose PMI has another scale.
    verifier_pmi_weight : float
        The verifier's score of an output is the cross-encoder's plus this weight times the
        output's PMI with the input under the generator (``log P(y | input) - log P(y | empty
        input)``, over its tokens): the judge alone transfers weakly to COPA, the two together
        better (benchmarks/guided/RESULTS.md). 0: the cross-encoder alone.
    verify_keywords : bool
        Let the verifier choose the ``n`` keyword rows to decode among the candidates (the
        graph's top ``keyword_pool`` and the sampled answers' keywords), by its score of each
        keyword as a cause or effect of the input. Off: the sampled answers' keywords first,
        then the graph's, ``n`` in all.
    keyword_pool : int
        Graph keywords the verifier chooses among (at least ``n`` are asked of the graph).
    sampled : int
        Answers sampled from the generator (one batch, fixed seed) whose content lemmas become
        candidate keywords (:mod:`guided_generation.sampled_keywords`); 0: none.
    sampled_keywords : int
        At most this many keywords taken from the sampled answers.
    parts_of_speech : bool
        Inflect a keyword only in the parts of speech it has in the corpus
        (:mod:`cause_effect_graph.parts_of_speech`): a noun keyword gets no verb forms.
    template_limit : int or None
        At most this many of the top K share any word trigram (default 2): an output that would
        repeat a template a third time ("they are too young to ...") gives its place to the next
        one (:func:`dpc_decode.rerank.limit_templates`); ``None``: no limit.
    constraint_mode : {"combine", "replace", "require", "all"}
        How user keywords (``constraints``) meet the graph's: ``combine`` decodes them as rows
        before the graph's (N rows in all); ``replace`` decodes only them, one row each;
        ``require`` adds all of them to every graph row (each output has its graph keyword *and*
        every user keyword); ``all`` decodes one row that must contain every user keyword.
    capitalized : bool
        Add capitalised forms to every keyword's set (for outputs that may start with it).
    plain_row : bool
        Also decode the input without any keyword, in a beam search of its own whose best
        ``plain_m`` outputs join the pool: the model's own most likely answers compete with the
        keyword-guided ones (default on: COPA by generation 79% with it, 74% without, on the
        first 100 COPA-dev items). Only in ``combine`` mode: the other modes ask that every
        output hold the user's keywords.
    plain_m : int
        Outputs the plain row keeps (default 10, from ``max(num_beams, plain_m)`` beams: the
        generator's own 10-best, which the verifier ranks beside the keyword rows' outputs;
        benchmarks/guided/RESULTS.md).
    pronoun_agreement : bool
        When the input speaks of people of one gender only ("she missed the bus"), ban the
        other gender's third-person pronouns from every output (negative constraints of the
        same decode; :mod:`guided_generation.agreement`). Default on.
    max_input_tokens : int
        Longer inputs are cut to this many tokens, and the result says so.
    batch_rows : int
        Rows decoded at once; bounds memory (``batch_rows * num_beams`` hypotheses per step).
    search, prune_factor, sat_tolerance, lookahead, lookahead_weight
        The engine's beam selection under constraints and its settings
        (:class:`dpc_decode.BeamSearchOptions`; ``"dba"``, as in every release so far).
    """

    n: int = 20
    m: int = 2
    k: int = 10
    num_beams: int | None = None
    max_new_tokens: int = 16
    min_new_tokens: int = 0
    no_repeat_ngram_size: int = 3
    length_penalty: float = 1.0
    rank: Literal["weight", "strength", "pmi", "mix"] = "mix"
    rerank: Literal["nll", "pmi", "mmr", "verifier"] = "verifier"
    mmr_lambda: float = 0.7
    template_limit: int | None = 2
    constraint_mode: Literal["combine", "replace", "require", "all"] = "combine"
    capitalized: bool = False
    plain_row: bool = True
    plain_m: int = 10
    pronoun_agreement: bool = True
    verify: bool = True
    verifier_pmi_weight: float = 0.75
    reject_below: float | Literal["auto"] | None = "auto"
    verify_keywords: bool = True
    keyword_pool: int = 24
    sampled: int = 8
    sampled_keywords: int = 8
    parts_of_speech: bool = True
    max_input_tokens: int = 64
    batch_rows: int = 100
    search: Literal["dba", "neurologic"] = "dba"
    prune_factor: int = 50
    sat_tolerance: int = 2
    lookahead: int = 0
    lookahead_weight: float = 0.25

    def __post_init__(self) -> None:
        error = GuidedGenerationError
        for name in ("n", "m", "k", "plain_m", "max_input_tokens", "batch_rows", "keyword_pool"):
            check_int(name, getattr(self, name), 1, error=error)
        for name in ("sampled", "sampled_keywords"):
            check_int(name, getattr(self, name), 0, error=error)
        if self.num_beams is None:
            object.__setattr__(self, "num_beams", max(self.m, 4))
        check_int("num_beams", self.num_beams, 1, error=error)
        assert self.num_beams is not None  # for the type checker; set just above
        if self.m > self.num_beams:
            raise GuidedGenerationError(f"`m` (={self.m}) must be at most `num_beams` (={self.num_beams})")
        check_choice("rank", self.rank, RANKS, error=error)
        check_choice("rerank", self.rerank, RERANKS, error=error)
        check_choice("constraint_mode", self.constraint_mode, CONSTRAINT_MODES, error=error)
        check_float("mmr_lambda", self.mmr_lambda, 0, 1, error=error)
        check_float("verifier_pmi_weight", self.verifier_pmi_weight, 0, error=error)
        if self.reject_below not in (None, "auto"):
            check_float("reject_below", self.reject_below, error=error)
        check_float("length_penalty", self.length_penalty, error=error)
        if self.template_limit is not None:
            check_int("template_limit", self.template_limit, 1, error=error)
        self.beam_options(self.m)  # the decoding options check themselves

    def run_record(self) -> dict[str, Any]:
        """The options that decide the outputs (all but ``batch_rows``, which only bounds
        memory): what a resumable run's signature records (:class:`dpc_files.ResultsFile`)."""
        return {k: v for k, v in asdict(self).items() if k != "batch_rows"}

    def beam_options(self, num_return: int, num_beams: int | None = None) -> BeamSearchOptions:
        """The engine's options for a row returning ``num_return`` outputs."""
        beams = max(num_beams or self.num_beams or 1, num_return)
        return BeamSearchOptions(
            num_beams=beams,
            num_return_sequences=num_return,
            max_new_tokens=self.max_new_tokens,
            min_new_tokens=self.min_new_tokens,
            no_repeat_ngram_size=self.no_repeat_ngram_size,
            length_penalty=self.length_penalty,
            search=self.search,
            prune_factor=self.prune_factor,
            sat_tolerance=self.sat_tolerance,
            lookahead=self.lookahead,
            lookahead_weight=self.lookahead_weight,
        )
