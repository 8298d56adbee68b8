"""The generation methods of the paper's Table 3, on one model, behind one function.

=============  ==============================================================================
``guided``     the pipeline (keywords, one DPC row each, the verifier's rejection), NLL rerank
``guided-pmi`` the same decode, reranked by PMI with the input (``rerank="pmi"``)
``guided-mmr`` the same decode, reranked by maximal marginal relevance (``rerank="mmr"``)
``guided-verifier`` the same decode, ordered by the plausibility verifier (``rerank="verifier"``,
               the default of ``dpc generate``)
``nbest``      N-best beam search without constraints (``num_beams = max(K, beams)``)
``sample``     random sampling: K distinct samples from the full distribution (temperature 1)
``knn``        KNN retrieval over a CausalBank: the other side of the pairs whose cause/effect
               is nearest the input (:mod:`guided_generation.retrieval`)
``gold``       the pipeline with the gold answer's content lemmas as its only keywords
               (``constraint_mode="replace"``): an upper bound on what keywords can do
=============  ==============================================================================

Every method returns :class:`~guided_generation.pipeline.GuidedOutput` objects, best first;
samples come in the order drawn (a random set, not reranked), and KNN outputs have no
likelihood under the model (their ``nll`` is NaN; their order is the retrieval score). The names
and their check (:data:`~guided_generation.options.METHODS`,
:func:`~guided_generation.options.method_names`) are options, importable without torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from cause_effect_graph.lemmas import default_lemmatizer
from dpc_decode.sampling import sample
from guided_generation.errors import GuidedGenerationError
from guided_generation.options import METHODS, GuidedOptions, check_direction, method_names
from guided_generation.pipeline import GuidedOutput

if TYPE_CHECKING:
    from guided_generation.pipeline import GuidedGenerator, GuidedOutput
    from guided_generation.retrieval import KnnRetriever

__all__ = ["METHODS", "method_names", "run_method"]

_RERANKS = {"guided": "nll", "guided-pmi": "pmi", "guided-mmr": "mmr",
            "guided-verifier": "verifier"}


def run_method(
    method: str,
    generator: GuidedGenerator,
    text: str,
    direction: str,
    options: GuidedOptions | None = None,
    *,
    gold: str | None = None,
    retriever: KnnRetriever | None = None,
    lemmatize: Callable[[str], list[str]] | None = None,
    seed: int = 0,
) -> tuple[list[GuidedOutput], dict[str, float]]:
    """The top-K outputs of one method for one input, and the method's counters.

    Parameters
    ----------
    method
        One of :data:`METHODS`.
    generator
        The model and graph (every method but ``knn`` decodes with its model).
    gold
        The gold answer (``gold`` only): its content lemmas become the keywords.
    retriever
        The CausalBank index (``knn`` only).
    lemmatize
        Text → content lemmas for ``gold`` (default: the graph's spaCy lemmatiser).
    seed
        Seed of ``sample``.

    Returns
    -------
    outputs, stats
        ``stats`` has ``rows`` and ``missed`` (outputs that missed their keyword) for the
        constrained methods.
    """
    options = options or GuidedOptions()
    check_direction(direction)
    method_names([method])
    if method in _RERANKS:  # the variants share one decode (GuidedGenerator keeps it)
        result = generator.generate(text, direction, _with(options, rerank=_RERANKS[method]))
        return result.outputs, result.stats
    if method == "gold":
        if not gold:
            raise GuidedGenerationError("method 'gold' needs the gold answer")

        lemmas = (lemmatize or generator.lemmatizer or default_lemmatizer())(gold)
        if not lemmas:
            return [], {"rows": 0, "missed": 0}
        result = generator.generate(text, direction,
                                    _with(options, constraint_mode="replace"), constraints=lemmas)
        return result.outputs, result.stats
    if method == "knn":
        if retriever is None:
            raise GuidedGenerationError("method 'knn' needs a CausalBank retriever (--bank)")
        found = retriever.retrieve(text, direction, options.k)
        return [GuidedOutput(r.text, None, "none", None, math.nan, math.nan) for r in found], {}

    prompt = generator.prompt(text, direction)
    if method == "nbest":
        return generator.unconstrained(prompt, options.k, options), {}
    return _sample(generator, prompt, options, seed), {}


def _with(options: GuidedOptions, **changes: object) -> GuidedOptions:
    from dataclasses import replace

    return replace(options, **changes)  # type: ignore[arg-type]


def _sample(generator: GuidedGenerator, prompt: str, options: GuidedOptions,
            seed: int) -> list[GuidedOutput]:
    found = sample(generator.model, generator.tokenizer, [prompt], None, num_samples=options.k,
                   unique=True, max_new_tokens=options.max_new_tokens, seed=seed,
                   eos_token_id=generator.eos_token_id)[0]
    return [GuidedOutput((s.text or "").strip(), None, "none", None, s.nll, s.log_prob)
            for s in found]
