"""Guided generation of causes and effects (Li et al. 2020): graph keywords → DPC → rerank.

For an input sentence and a direction:

1. lemmatise the input and take the top-N lemmas the Cause Effect Graph links to it in that
   direction (:func:`cause_effect_graph.candidates`);
2. expand each into its morphological variants: one disjunctive constraint set per keyword
   (:mod:`guided_generation.keywords`, which also merges the user's own keywords);
3. decode every keyword as one row of a batched constrained beam search (:func:`dpc_decode.generate`,
   per-row constraints, ``batch_rows`` rows at a time to bound memory), keeping each row's top M;
4. merge the N×M outputs, drop those that missed their keyword (only possible when
   ``max_new_tokens`` is too short for it), remove duplicates, rerank by mean negative
   log-likelihood per token (or by maximal marginal relevance, or PMI with the input), move
   outputs that restate the input to the end, and return the top K.

The paper decodes the N keywords one after another; batching them into rows of one search is
what makes N = 300 affordable (``benchmarks/guided/speed.py``).

What happens with awkward input, always said in :attr:`GuidedResult.notes`:

* an input longer than ``max_input_tokens`` (or than the model can read, for a model with an
  absolute position table) is cut to that many tokens, after a whole word where that keeps
  at least half of them, else inside the word (one long word, CJK text with no space);
* an input none of whose words the graph knows (or that yields no keyword) falls back to
  unconstrained N-best beam search;
* an empty input or an unknown direction raises :class:`GuidedGenerationError`.

Examples
--------
>>> import networkx as nx
>>> from train.models import placeholder_model
>>> m = placeholder_model()
>>> G = nx.DiGraph()
>>> G.add_weighted_edges_from([("hungry", "cry", 9), ("tired", "cry", 5), ("rain", "wet", 3)])
>>> gen = GuidedGenerator(m.model, m.tokenizer, G, lemmatizer=lambda s: ["baby", "cry"])
>>> options = GuidedOptions(n=2, m=2, k=3, max_new_tokens=6, rank="weight", plain_row=False)
>>> result = gen.generate("babies cry", "cause", options)
>>> result.keywords
['hungry', 'tired']
>>> len(result.outputs), all(o.keyword in ("hungry", "tired") for o in result.outputs)
(3, True)
>>> all(o.matched in o.text for o in result.outputs)
True
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from cause_effect_graph.lemmas import default_lemmatizer
from cause_effect_graph.parts_of_speech import default_parts_of_speech
from cause_effect_graph.query import candidates
from cause_effect_graph.store import default_graph, load_graph
from dpc_decode.batch import cut_to_tokens, input_token_limit
from dpc_decode.constraints import TokenizeOptions, tokenize_phrase
from dpc_decode.generation import generate
from dpc_decode.memory import available_bytes, model_bytes_per_hypothesis
from dpc_decode.options import SamplingOptions
from dpc_decode.rerank import limit_templates, mmr, normalise, rank_by_nll
from dpc_decode.sampling import sample
from dpc_device import place, resolve_device
from guided_generation.agreement import pronoun_bans
from guided_generation.errors import GuidedGenerationError
from guided_generation.keywords import KeywordRow, keyword_rows
from guided_generation.memory import rows_that_fit
from guided_generation.options import GuidedOptions, check_direction
from guided_generation.restatement import demote_restatements
from guided_generation.sampled_keywords import sampled_keywords
from guided_generation.verifier import Verifier, default_verifier, order_by_verifier
from train.metrics import continuation_log_probs, sequence_log_probs
from train.models import DEFAULT_GENERATOR, resolve_generator
from train.prompts import InputFormat, input_format_for

if TYPE_CHECKING:
    import networkx as nx
    import torch

    from dpc_decode.outputs import GeneratedSequence

__all__ = ["GuidedGenerator", "GuidedOutput", "GuidedResult", "guided_generate",
           "merge_duplicates"]


@dataclass(frozen=True)
class GuidedOutput:
    """One generated cause or effect.

    Attributes
    ----------
    text : str
        The output.
    keyword : str or None
        The keyword of the row that produced it (``None``: unconstrained).
    source : str
        ``"graph"``, ``"sampled"`` (a keyword of the generator's own sampled answers), ``"user"``,
        or ``"none"`` (the plain search, the unconstrained fallback, or a baseline).
    matched : str or None
        The surface form of the keyword that occurs in the text.
    nll : float
        Mean negative log-likelihood per token under the generator (the rerank key).
    log_prob : float
        Total log-probability of the output.
    keywords : tuple of str
        Every keyword whose row produced this output (duplicates merged).
    token_ids : tuple of int
        The decode's tokens of the output (its end token included), whose log-probability is
        ``log_prob``; empty for outputs not decoded here (``knn``).
    pmi : float or None
        Mean pointwise mutual information per token with the input (``rerank="pmi"`` only):
        ``(log P(text | input) - log P(text | empty input)) / tokens``.
    verifier : float or None
        The plausibility verifier's score of the output as the cause or effect of the input
        (:mod:`guided_generation.verifier`; higher is more plausible), when it was asked.
    """

    text: str
    keyword: str | None
    source: str
    matched: str | None
    nll: float
    log_prob: float
    keywords: tuple[str, ...] = ()
    pmi: float | None = None
    verifier: float | None = None
    token_ids: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (without the token ids)."""
        out = asdict(self)
        out["keywords"] = list(self.keywords)
        del out["token_ids"]
        return out


@dataclass(frozen=True)
class GuidedResult:
    """What :meth:`GuidedGenerator.generate` returns for one input.

    Attributes
    ----------
    input : str
        The input as decoded (after any truncation).
    direction : str
        ``"cause"`` or ``"effect"``.
    outputs : list of GuidedOutput
        The top K, best first.
    keywords : list of str
        The keyword of every decoded row, in row order.
    notes : list of str
        What the pipeline had to do about the input (truncation, fallback, ...).
    stats : dict
        Rows decoded, outputs gathered, outputs that missed their keyword, duplicates removed,
        and seconds spent on keywords and on decoding.
    """

    input: str
    direction: str
    outputs: list[GuidedOutput]
    keywords: list[str]
    notes: list[str] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"input": self.input, "direction": self.direction,
                "outputs": [o.to_dict() for o in self.outputs], "keywords": self.keywords,
                "notes": self.notes, "stats": self.stats}


#: The verifier score under which the default generator's outputs are rejected (chosen on
#: COPA-dev items 1-250, benchmarks/guided/RESULTS.md).
DEFAULT_REJECT_FLOOR = 5.0
#: How many decodes a :class:`GuidedGenerator` keeps for reranking again.
_DECODE_CACHE = 4
#: How many empty-input log-likelihoods (``rerank="pmi"``) it keeps before starting afresh.
_PRIOR_CACHE = 200_000


@dataclass(frozen=True)
class _Decoded:
    """One input's decode before reranking (shared by reranks of the same decode)."""

    merged: tuple[GuidedOutput, ...]
    keywords: tuple[str, ...]
    notes: tuple[str, ...]
    stats: dict[str, float]


class GuidedGenerator:
    """A generator, its tokenizer and a Cause Effect Graph, loaded once and reused.

    Parameters
    ----------
    model, tokenizer
        A Hugging Face seq2seq generator trained on ``"cause: ..."`` / ``"effect: ..."`` inputs
        (:func:`train.models.format_input`), e.g. the bundled one.
    graph : networkx.DiGraph
        A Cause Effect Graph (:mod:`cause_effect_graph`).
    lemmatizer : callable, optional
        Text → content lemmas (default: the graph's own spaCy lemmatiser).
    input_format : InputFormat, optional
        How the model is asked for a cause or an effect (default: :func:`input_format_for` the
        model: ``"cause: ..."`` for a seq2seq generator, ``"... because"`` for a causal LM).
    verifier : Verifier, "bundled" or None
        The plausibility verifier (:mod:`guided_generation.verifier`): ``"bundled"`` (the
        default) loads the bundled one on first use; ``None``: none, and the options that ask
        for it (``verify``, ``verify_keywords``, ``rerank="verifier"``) are skipped with a note.
    parts_of_speech : callable, optional
        Lemma → its parts of speech (default: the bundled corpus profile,
        :func:`cause_effect_graph.parts_of_speech.default_parts_of_speech`), for
        ``options.parts_of_speech``.
    """

    def __init__(self, model: Any, tokenizer: Any, graph: nx.DiGraph,
                 lemmatizer: Callable[[str], list[str]] | None = None,
                 input_format: InputFormat | None = None,
                 verifier: Verifier | Literal["bundled"] | None = "bundled",
                 parts_of_speech: Callable[[str], Collection[str]] | None = None) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.graph = graph
        self.lemmatizer = lemmatizer
        self.input_format = input_format or input_format_for(model)
        self._verifier = verifier
        #: The verifier score under which ``reject_below="auto"`` rejects an output: calibrated
        #: for the default generator (set by :meth:`load`), none for others.
        self.reject_floor: float | None = None
        self._parts_of_speech = parts_of_speech
        self._frequency: dict[str, float] | None = None
        self._decoded: OrderedDict[tuple[Any, ...], _Decoded] = OrderedDict()
        self._prior: dict[tuple[str, Any], float] = {}

    @property
    def verifier(self) -> Verifier | None:
        """The plausibility verifier (the bundled one is loaded on first use), or ``None``."""
        if self._verifier == "bundled":
            self._verifier = default_verifier()
        return self._verifier  # type: ignore[return-value]

    def parts_of_speech(self, lemma: str) -> Collection[str]:
        """The parts of speech ``lemma`` has in the corpus (empty: unknown, every form)."""
        if self._parts_of_speech is None:
            self._parts_of_speech = default_parts_of_speech().of
        return self._parts_of_speech(lemma)

    @classmethod
    def load(cls, model: str | Path | None = None, graph: str | Path | None = None, *,
             device: str | torch.device | None = None,
             dtype: str | torch.dtype | None = None,
             verifier: str | Path | None = "bundled") -> GuidedGenerator:
        """The default generator and the bundled graph, or those named; the model moved to
        ``device`` with its weights in ``dtype`` (:func:`dpc_device.place`: ``"auto"``,
        ``"cpu"``, ``"cuda:0"``, ...; ``None`` keeps the CPU and float32). ``verifier``:
        ``"bundled"``, a verifier folder (:meth:`Verifier.load`), or ``None`` for none.

        ``model``: ``None`` (the default pretrained LM), ``"bundled"`` (dpc's seq2seq generator),
        a pretrained model's name or a model folder (:func:`train.models.resolve_generator`).

        Raises :class:`~dpc_errors.DpcError` naming a missing or corrupt path, or a device this
        machine does not have (checked before the model is read).
        """
        if device is not None:
            device = resolve_device(device)
        judge: Verifier | Literal["bundled"] | None = None
        if verifier is not None:
            judge = "bundled" if verifier == "bundled" else Verifier.load(verifier, device=device)
        loaded = resolve_generator(model)
        G = load_graph(graph) if graph is not None else default_graph()
        generator = cls(place(loaded.model, device, dtype), loaded.tokenizer, G, verifier=judge)
        if verifier == "bundled" and (model is None or str(model) == DEFAULT_GENERATOR):
            generator.reject_floor = DEFAULT_REJECT_FLOOR
        return generator

    # ------------------------------------------------------------------ steps

    def prompt(self, text: str, direction: str) -> str:
        """The model input asking for the ``direction`` of ``text`` (:attr:`input_format`)."""
        return self.input_format.prompt(text, direction)

    @property
    def eos_token_id(self) -> list[int] | str:
        """What ends an output: the format's stop tokens, or ``"model"`` (the model's EOS)."""
        return self.input_format.eos_ids(self.tokenizer)

    def prepare_input(self, text: str, max_tokens: int,
                      limit: str | None = None) -> tuple[str, list[str]]:
        """The input cut to ``max_tokens`` tokens, and a note if it was cut.

        The cut falls after a whole word when that keeps at least half of the budget, else
        inside a word (one long word, a run of CJK text with no space):
        :func:`dpc_decode.batch.cut_to_tokens`. ``limit`` says in the note what sets the budget
        (default ``max_input_tokens=...``).
        """
        if not isinstance(text, str) or not text.strip():
            raise GuidedGenerationError(f"the input {text!r} is empty")
        text = " ".join(text.split())
        count = len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        if count <= max_tokens:
            return text, []
        cut = cut_to_tokens(self.tokenizer, text, max_tokens)
        if not cut:
            raise GuidedGenerationError(f"the input cannot be cut to {max_tokens} tokens")
        kept = len(self.tokenizer(cut, add_special_tokens=False)["input_ids"])
        limit = limit or f"max_input_tokens={max_tokens}"
        words = len(cut.split())
        where = (f"its first {words} words" if text[len(cut):][:1] == " "
                 else f"its first {kept} tokens, inside a word")
        return cut, [f"the input has {count} tokens: cut to {where} (at most {limit})"]

    def input_budget(self, direction: str, options: GuidedOptions) -> tuple[int, str]:
        """How many tokens of the input the pipeline keeps, and what sets that: at most
        ``options.max_input_tokens``, and no more than the model can read with the prompt's own
        tokens (and, for a decoder-only model, room for ``max_new_tokens``) when it has an
        absolute position table (:func:`dpc_decode.batch.input_token_limit`)."""
        budget, why = options.max_input_tokens, f"max_input_tokens={options.max_input_tokens}"
        limit = input_token_limit(self.model, options.max_new_tokens)
        if limit is None:
            return budget, why
        causal = not getattr(self.model.config, "is_encoder_decoder", False)
        reads = f"the model reads {limit} tokens" + (
            f" beside max_new_tokens={options.max_new_tokens}" if causal else "")
        frame = len(self.tokenizer(self.prompt("", direction))["input_ids"])
        if limit - frame < 1:
            raise GuidedGenerationError(
                f"{reads}: no room for the input beside the prompt's own {frame}"
                + (" (lower max_new_tokens)" if causal else ""))
        if limit - frame < budget:
            budget = limit - frame
            why = f"{budget} tokens: {reads}, {frame} of them the prompt's own"
        return budget, why

    def graph_keywords(self, text: str, direction: str, options: GuidedOptions) -> tuple[list[str], list[str]]:
        """The graph's top-N keywords for the input, and the graph's message if any."""
        found = candidates(self.graph, text, direction, options.n, rank=options.rank,  # type: ignore[arg-type]
                           lemmatizer=self.lemmatizer)
        return found.keywords, [f"graph: {found.message}"] if found.message else []

    def decode_rows(self, prompt: str, rows: Sequence[KeywordRow], options: GuidedOptions,
                    progress: bool = False,
                    banned: Sequence[str | Sequence[int]] = ()) -> list[list[GeneratedSequence]]:
        """Decode every row (the same prompt, the row's sets), ``batch_rows`` rows at a time."""
        from tqdm.auto import tqdm


        beam = options.beam_options(options.m)
        found: list[list[GeneratedSequence]] = []
        with tqdm(total=len(rows), unit="keyword", desc="decoding", disable=not progress,
                  leave=False) as bar:
            for start in range(0, len(rows), options.batch_rows):
                chunk = rows[start:start + options.batch_rows]
                found += generate(self.model, self.tokenizer, [prompt] * len(chunk),
                                  [row.sets for row in chunk], banned=list(banned) or None,
                                  options=beam, eos_token_id=self.eos_token_id,
                                  tokenize=TokenizeOptions(whole_word=True))
                bar.update(len(chunk))
        return found

    def unconstrained(self, prompt: str, count: int, options: GuidedOptions,
                      banned: Sequence[str | Sequence[int]] = ()) -> list[GuidedOutput]:
        """N-best beam search without constraints (the fallback, and a baseline)."""
        found = generate(self.model, self.tokenizer, [prompt], None, banned=list(banned) or None,
                         options=options.beam_options(count), eos_token_id=self.eos_token_id)[0]
        return [GuidedOutput((s.text or "").strip(), None, "none", None, s.nll, s.log_prob,
                             token_ids=tuple(s.token_ids)) for s in found]

    def sample_answers(self, prompt: str, count: int, options: GuidedOptions, seed: int = 0,
                       banned: Sequence[str | Sequence[int]] = ()) -> list[str]:
        """``count`` answers sampled for the prompt in one batch (temperature 0.7, nucleus 0.9,
        a fixed seed, so the same input gives the same samples), repeats once: the generator's
        own topics, for :func:`guided_generation.sampled_keywords.sampled_keywords`."""
        found = sample(self.model, self.tokenizer, [prompt], None, banned=list(banned) or None,
                       options=SamplingOptions(num_samples=count, temperature=0.7, top_p=0.9,
                                               seed=seed, max_new_tokens=options.max_new_tokens,
                                               no_repeat_ngram_size=options.no_repeat_ngram_size),
                       eos_token_id=self.eos_token_id)[0]
        return list(dict.fromkeys((s.text or "").strip() for s in found if (s.text or "").strip()))

    def rank_by_pmi(self, outputs: Sequence[GuidedOutput], text: str, direction: str) -> list[GuidedOutput]:
        """Outputs with their ``pmi`` set, highest first (ties: lower ``nll``, then text).

        A causal LM's outputs carry the decode's own tokens and their log-probability given the
        input (``token_ids``, ``log_prob``), so only the empty-input prior is computed: the same
        tokens, end token included, teacher-forced after the empty input's prompt, the prompt
        read once for all of them. Otherwise (a seq2seq generator, outputs made elsewhere) both
        likelihoods are teacher-forced over the output's own tokenisation, EOS included. The
        empty-input prior is the same for every input, so it is the output's genericness that
        is taken away, not the input's; priors are kept across inputs.
        """
        if not outputs:
            return []
        scored = self.with_pmi(outputs, text, direction)
        return sorted(scored, key=lambda o: (-(o.pmi or 0.0), o.nll, o.text))

    def with_pmi(self, outputs: Sequence[GuidedOutput], text: str, direction: str) -> list[GuidedOutput]:
        """``outputs`` (same order) with ``pmi`` set: see :meth:`rank_by_pmi`."""
        sums, lengths = self.pmi_sums(outputs, text, direction)
        return [replace(o, pmi=v / max(n, 1)) for o, v, n in zip(outputs, sums, lengths)]

    def pmi_sums(self, outputs: Sequence[GuidedOutput], text: str,
                 direction: str) -> tuple[list[float], list[int]]:
        """``log P(output | input) - log P(output | empty input)`` of each output (over its
        tokens, end token included), and its number of tokens (see :meth:`rank_by_pmi`)."""
        if not outputs:
            return [], []
        causal = not getattr(self.model.config, "is_encoder_decoder", False)
        if causal and all(o.token_ids for o in outputs):
            cond = [o.log_prob for o in outputs]
            prior = self._token_priors([o.token_ids for o in outputs], direction)
            lengths = [len(o.token_ids) for o in outputs]
        else:
            texts = [o.text for o in outputs]
            cond = sequence_log_probs(self.model, self.tokenizer,
                                      [self.prompt(text, direction)] * len(texts), texts,
                                      end_id=self.input_format.end_id(self.tokenizer))
            prior = self._priors(texts, direction)
            lengths = [len(ids) for ids in self.tokenizer(texts)["input_ids"]]
        return [c - p for c, p in zip(cond, prior)], lengths

    def _priors(self, texts: Sequence[str], direction: str) -> list[float]:
        """``log P(text | empty input)``, kept across inputs (generic outputs recur)."""
        missing = [t for t in dict.fromkeys(texts) if (direction, t) not in self._prior]
        if missing:
            if len(self._prior) + len(missing) > _PRIOR_CACHE:
                self._prior.clear()
            values = sequence_log_probs(self.model, self.tokenizer,
                                        [self.prompt("", direction)] * len(missing), missing,
                                        end_id=self.input_format.end_id(self.tokenizer))
            self._prior.update(((direction, t), v) for t, v in zip(missing, values))
        return [self._prior[(direction, t)] for t in texts]

    def _token_priors(self, tokens: Sequence[tuple[int, ...]], direction: str) -> list[float]:
        """``log P(tokens | empty input)`` of decoded token sequences, kept across inputs."""
        missing = [t for t in dict.fromkeys(tokens) if (direction, t) not in self._prior]
        if missing:
            if len(self._prior) + len(missing) > _PRIOR_CACHE:
                self._prior.clear()
            values = continuation_log_probs(self.model, self.tokenizer,
                                            self.prompt("", direction), missing)
            self._prior.update(((direction, t), v) for t, v in zip(missing, values))
        return [self._prior[(direction, t)] for t in tokens]

    # ------------------------------------------------------------------ the pipeline

    def generate(self, text: str, direction: str, options: GuidedOptions | None = None,
                 constraints: Sequence[str] = (), progress: bool = False,
                 banned: Sequence[str] = ()) -> GuidedResult:
        """The top-K causes or effects of ``text`` (see the module docstring).

        Parameters
        ----------
        text
            The input sentence.
        direction
            ``"cause"`` or ``"effect"``.
        options
            :class:`GuidedOptions` (N, M, K, beams, rerank, ...).
        constraints
            User keywords (``"rain"``, or alternatives ``"hungry|hunger"``), combined with the
            graph's as ``options.constraint_mode`` says.
        progress
            Show a progress bar over the decoded keywords.
        banned
            Phrases no output may contain (negative constraints).
        """
        options = options or GuidedOptions()
        check_direction(direction)
        text, notes = self.prepare_input(text, *self.input_budget(direction, options))
        decoded = self._decode(text, direction, options, tuple(constraints), progress, tuple(banned))
        started = time.perf_counter()
        ranked, rejected = self._rerank(decoded.merged, text, direction, options)  # merged once
        stats = {**decoded.stats, "rerank_seconds": round(time.perf_counter() - started, 3),
                 "rejected": rejected}
        notes = notes + list(decoded.notes)
        if self.verifier is None and (options.verify or options.verify_keywords
                                      or options.rerank == "verifier"):
            notes.append("no verifier: outputs are not verified"
                         + (", and ordered by likelihood" if options.rerank == "verifier" else ""))
        if rejected and len(ranked) < options.k:
            notes.append(f"the verifier rejected {rejected} of {len(decoded.merged)} outputs as "
                         f"implausible: {len(ranked)} returned, not k={options.k}")
        return GuidedResult(text, direction, ranked, list(decoded.keywords), notes, stats)

    def rerank(self, outputs: Sequence[GuidedOutput], text: str, direction: str,
               options: GuidedOptions) -> list[GuidedOutput]:
        """The top K of ``outputs`` (distinct texts) for the input ``text``: each scored by
        the verifier (``options.verify``, or ``rerank="verifier"``), ordered as
        ``options.rerank`` says, those scoring below ``options.reject_below`` dropped
        (``options.verify``),
        outputs that restate the input moved to the end
        (:func:`guided_generation.restatement.demote_restatements`), then at most
        ``options.template_limit`` sharing a word trigram
        (:func:`dpc_decode.rerank.limit_templates`). Fewer than K when the verifier rejected
        the rest."""
        return self._rerank(outputs, text, direction, options)[0]

    def _rerank(self, outputs: Sequence[GuidedOutput], text: str, direction: str,
                options: GuidedOptions) -> tuple[list[GuidedOutput], int]:
        """:meth:`rerank`, and how many outputs the verifier rejected."""
        merged = list(outputs)
        judge = self.verifier if options.verify or options.rerank == "verifier" else None
        if judge is not None and merged:
            scores = judge.scores(text, direction, [o.text for o in merged])
            if options.verifier_pmi_weight:  # the generator's own evidence beside the judge's
                sums, lengths = self.pmi_sums(merged, text, direction)
                scores = scores + options.verifier_pmi_weight * np.array(sums)
                merged = [replace(o, pmi=v / max(n, 1)) for o, v, n in zip(merged, sums, lengths)]
            merged = [replace(o, verifier=round(float(v), 4)) for o, v in zip(merged, scores)]
        limit = options.template_limit
        if options.rerank == "mmr":  # an MMR order long enough for the template limit to skip in
            ranked = mmr(merged, options.k * 4 if limit else options.k, options.mmr_lambda)
        elif options.rerank == "pmi":
            ranked = self.rank_by_pmi(merged, text, direction)
        elif options.rerank == "verifier" and judge is not None:
            ranked = order_by_verifier(merged)
        else:
            ranked = rank_by_nll(merged)
        rejected = 0
        floor = self.reject_floor if options.reject_below == "auto" else options.reject_below
        if options.verify and judge is not None and floor is not None:
            kept = [o for o in ranked if o.verifier is not None and o.verifier >= floor]
            rejected, ranked = len(ranked) - len(kept), kept
        ranked = demote_restatements(ranked, text)
        return (limit_templates(ranked, options.k, limit) if limit else ranked[: options.k]), rejected

    def answer_keywords(self, text: str, prompt: str, options: GuidedOptions,
                        banned: Sequence[str | Sequence[int]] = ()) -> list[str]:
        """Keywords from ``options.sampled`` answers sampled for the prompt
        (:func:`guided_generation.sampled_keywords.sampled_keywords`: the input's own lemmas
        left out, the more frequent and the more specific first)."""
        if not options.sampled or not options.sampled_keywords:
            return []
        lemmatize = self.lemmatizer or default_lemmatizer()
        if self._frequency is None:
            self._frequency = {v: float(d.get("cause_freq", 0)) + float(d.get("effect_freq", 0))
                               for v, d in self.graph.nodes(data=True)}
        samples = self.sample_answers(prompt, options.sampled, options, banned=banned)
        return sampled_keywords(samples, lemmatize(text), lemmatize, options.sampled_keywords,
                                self._frequency)

    def choose_keywords(self, text: str, direction: str, graph: Sequence[str],
                        sampled: Sequence[str], options: GuidedOptions) -> tuple[list[str], set[str]]:
        """The keywords to decode, at most ``options.n``, and which of them came only from the
        sampled answers. With the verifier (``options.verify_keywords``): the candidates (the
        graph's first, then the sampled ones) best first by its score of each keyword as the
        ``direction`` of ``text``; without: the sampled answers' keywords, then the graph's."""
        known = set(graph)
        own = [k for k in dict.fromkeys(sampled) if k not in known]
        pool = list(dict.fromkeys([*graph, *own]))
        if options.verify_keywords and self.verifier is not None and pool:
            scores = self.verifier.scores(text, direction, pool)
            order = sorted(range(len(pool)), key=lambda i: (-scores[i], i))
            chosen = [pool[i] for i in order[: options.n]]
        else:
            chosen = [*own, *graph][: options.n]
        return chosen, set(own) & set(chosen)

    def clear_cache(self) -> None:
        """Forget the kept decodes and empty-input priors (the next :meth:`generate` decodes
        and scores again; for timing)."""
        self._decoded.clear()
        self._prior.clear()

    def _decode(self, text: str, direction: str, options: GuidedOptions,
                constraints: tuple[str, ...], progress: bool,
                banned: tuple[str | tuple[int, ...], ...]) -> _Decoded:
        """Keywords, rows and the merged outputs of one input, before reranking.

        The last few results are kept, so generating again with only the rerank options
        changed (``rerank``, ``mmr_lambda``) reuses the decode.
        """

        key = (text, direction, replace(options, rerank="nll", mmr_lambda=0.7, verify=True),
               constraints, banned)
        if key in self._decoded:
            self._decoded.move_to_end(key)
            return self._decoded[key]
        notes: list[str] = []
        prompt = self.prompt(text, direction)
        bans = pronoun_bans(text) if options.pronoun_agreement else ()
        if bans:
            notes.append("pronoun agreement: the input speaks of one gender only, so no output "
                         f"says {', '.join(bans)}")
            banned = tuple(banned) + tuple(self._word_ids(bans))
        started = time.perf_counter()
        graph: list[str] = []
        own: set[str] = set()
        if options.constraint_mode in ("combine", "require"):
            choosing = options.verify_keywords and self.verifier is not None
            asked = replace(options, n=max(options.n, options.keyword_pool)) if choosing else options
            graph, messages = self.graph_keywords(text, direction, asked)
            notes += messages
            sampled = (self.answer_keywords(text, prompt, options, banned)
                       if options.constraint_mode == "combine" else [])
            graph, own = self.choose_keywords(text, direction, graph, sampled, options)
        pos_of = self.parts_of_speech if options.parts_of_speech else None
        rows = keyword_rows(graph, constraints, options.constraint_mode, options.n,
                            options.capitalized, pos_of=pos_of)
        rows = [replace(r, source="sampled") if r.source == "graph" and r.keyword in own else r
                for r in rows]
        plain = bool(rows) and options.plain_row and options.constraint_mode == "combine"
        keyword_seconds = time.perf_counter() - started
        started = time.perf_counter()
        stats: dict[str, float] = {"rows": len(rows) + plain,
                                   "sampled_rows": sum(r.source == "sampled" for r in rows)}
        if not rows:
            notes.append("no keyword from the graph: unconstrained N-best beam search instead")
            self._fit_memory(prompt, 1, options, max(options.k, options.num_beams or 1))
            gathered, missed = self.unconstrained(prompt, options.k, options, banned), 0
        else:
            options, fitted = self._fit_memory(prompt, len(rows), options, options.num_beams or 1)
            notes += fitted
            found = self.decode_rows(prompt, rows, options, progress, banned)
            gathered, missed = _gather(rows, found)
            if plain:  # the model's own best answers, from a search of their own
                gathered += self.unconstrained(prompt, options.plain_m, options, banned)
        merged = merge_duplicates(gathered)  # the pipeline's one deduplication
        stats.update(outputs=len(gathered), missed=missed, duplicates=len(gathered) - len(merged))
        if missed:
            notes.append(f"{missed} outputs missed their keyword within max_new_tokens="
                         f"{options.max_new_tokens} and were dropped")
        stats.update(keyword_seconds=round(keyword_seconds, 3),
                     decode_seconds=round(time.perf_counter() - started, 3))
        decoded = _Decoded(tuple(merged), tuple(r.keyword for r in rows if r.keyword), tuple(notes),
                           stats)
        self._decoded[key] = decoded
        while len(self._decoded) > _DECODE_CACHE:
            self._decoded.popitem(last=False)
        return decoded

    def _word_ids(self, words: Sequence[str]) -> list[tuple[int, ...]]:
        """The word-initial token ids of each word, lower-case and capitalised: banned as
        ids, so that only the word is banned, not every word it is a piece of ("he" in
        "the")."""
        forms: list[tuple[int, ...]] = []
        for word in words:
            for ids in tokenize_phrase(self.tokenizer, word,
                                       TokenizeOptions(word_initial=True, capitalized=True)):
                if tuple(ids) not in forms:
                    forms.append(tuple(ids))
        return forms

    def _fit_memory(self, prompt: str, rows: int, options: GuidedOptions,
                    beams: int) -> tuple[GuidedOptions, list[str]]:
        """``options`` with ``batch_rows`` lowered so that the rows decoded at once fit in the
        memory free on the model's device, and a note saying so
        (:mod:`guided_generation.memory`); a :class:`GuidedGenerationError` with the estimate
        when one row of ``beams`` hypotheses alone does not fit."""
        tokens = len(self.tokenizer(prompt)["input_ids"]) + options.max_new_tokens
        per_hypothesis = model_bytes_per_hypothesis(self.model, tokens)
        free = available_bytes(self.model)
        if per_hypothesis is None or free is None:
            return options, []
        fit = rows_that_fit(per_hypothesis=per_hypothesis, beams=beams, rows=rows,
                            batch_rows=options.batch_rows, available=free)
        if fit >= min(options.batch_rows, rows):
            return options, []
        note = (f"decoding {fit} keywords at a time (not batch_rows={options.batch_rows}): "
                f"{fit * beams} hypotheses of about {per_hypothesis / 1e6:.1f} MB fit the "
                f"{free / 1e9:.1f} GB of memory free")
        return replace(options, batch_rows=fit), [note]

    def generate_many(self, requests: Iterable[tuple[str, str]], options: GuidedOptions | None = None,
                      constraints: Sequence[str] = (), progress: bool = False,
                      banned: Sequence[str] = ()) -> Iterator[GuidedResult]:
        """:meth:`generate` for each ``(text, direction)``, lazily (results stream as they come)."""
        for text, direction in requests:
            yield self.generate(text, direction, options, constraints, progress, banned)


def _gather(rows: Sequence[KeywordRow], found: Sequence[Sequence[GeneratedSequence]]) -> tuple[list[GuidedOutput], int]:
    """Every satisfied output of every row as a :class:`GuidedOutput`; and how many missed."""
    gathered: list[GuidedOutput] = []
    missed = 0
    for row, outputs in zip(rows, found):
        for seq in outputs:
            if not seq.satisfied:
                missed += 1
                continue
            first = seq.matches[0] if seq.matches else None
            matched = first.alternative if first is not None and isinstance(first.alternative, str) else None
            keyword = row.keyword or None  # the plain row has none
            gathered.append(GuidedOutput((seq.text or "").strip(), keyword, row.source, matched,
                                         seq.nll, seq.log_prob, (keyword,) if keyword else (),
                                         token_ids=tuple(seq.token_ids)))
    return gathered, missed


def merge_duplicates(outputs: Sequence[GuidedOutput]) -> list[GuidedOutput]:
    """Duplicates merged (case, spacing and final punctuation ignored): the most likely copy,
    carrying every keyword that produced the text, in first-appearance order.

    >>> a = GuidedOutput("They were hungry.", "hungry", "graph", "hungry", 1.2, -6.0)
    >>> b = GuidedOutput("they were hungry", "eat", "graph", None, 0.9, -4.5)
    >>> [(o.text, o.keywords) for o in merge_duplicates([a, b])]
    [('they were hungry', ('hungry', 'eat'))]
    """

    best: dict[str, GuidedOutput] = {}
    keywords: dict[str, list[str]] = {}
    for out in outputs:
        key = normalise(out.text)
        keywords.setdefault(key, [])
        if out.keyword is not None and out.keyword not in keywords[key]:
            keywords[key].append(out.keyword)
        if key not in best or out.nll < best[key].nll:
            best[key] = out
    return [replace(out, keywords=tuple(keywords[key])) for key, out in best.items()]


def guided_generate(text: str, direction: str = "cause", *, model: str | Path | None = None,
                    graph: str | Path | None = None, constraints: Sequence[str] = (),
                    options: GuidedOptions | None = None, **option_values: Any) -> GuidedResult:
    """One call: load the bundled (or given) generator and graph, and run the pipeline.

    Options are a :class:`GuidedOptions` or its fields as keywords (``n=300, m=5, k=10``). To
    generate for many inputs, build a :class:`GuidedGenerator` once instead.

    >>> result = guided_generate("babies cry", "cause", n=4, m=2, k=2, max_new_tokens=8)
    >>> len(result.outputs), result.direction
    (2, 'cause')
    """
    if options is not None and option_values:
        raise GuidedGenerationError(f"give options either as `options` or as keywords, not both "
                                    f"(got {', '.join(sorted(option_values))})")
    if options is None:
        try:
            options = GuidedOptions(**option_values)
        except TypeError as err:
            raise GuidedGenerationError(f"unknown option: {err}") from err
    return GuidedGenerator.load(model, graph).generate(text, direction, options, constraints)
