"""Concept sets to sentences with the CommonGen generator, in one of three modes.

==============  ================================================================================
mode            what the engine is asked
==============  ================================================================================
``plain``       beam search, no constraint (the generator alone)
``conjunctive`` every concept as given, one alternative each: the lemma must appear as written
                (``stand`` is not met by "stood"), what a conjunctive decoder (fairseq, DBA) does
                with a form picked in advance
``dpc``         every concept as the set of its inflections (:func:`concept_forms`:
                lemminflect, restricted to the concept's tagged part of speech where the set is
                tagged): ``stand_V`` is {stand, stands, stood, standing}, ``field_N`` {field,
                fields}; one decode meets one form of each set
==============  ================================================================================

Constrained modes match whole words (``field`` is not met inside "fielder") and accept a form
capitalised at the start of the sentence. The sentence is the output's first line: the generator
was trained to end it with a line break (:mod:`tasks.commongen.generator`), and line-break
tokens that would continue past it are never generated.

>>> from tasks.commongen.dataset import parse_concept_set
>>> field, stand = parse_concept_set("field_N#stand_V")
>>> concept_forms(stand, "dpc")
['stand', 'standing', 'stands', 'stood']
>>> concept_forms(field, "dpc"), concept_forms(field, "conjunctive")
(['field', 'fields'], ['field'])
>>> constraint_sets((field, stand), "plain") is None
True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from transformers import SuppressTokensLogitsProcessor

from cause_effect_graph.lemmas import default_lemmatizer
from cause_effect_graph.word_forms import variants
from dpc_decode import TokenizeOptions
from dpc_decode import generate as dpc_generate
from dpc_decode.options import SEARCHES
from dpc_device import place
from dpc_errors import check_choice, check_float, check_int
from tasks.commongen.dataset import Concept, ConceptSet
from tasks.commongen.evaluation import used_concepts
from tasks.commongen.generator import load_commongen_lm, prompt
from tasks.errors import TaskError

__all__ = ["MODES", "DecodeSettings", "Sentence", "SentenceGenerator", "concept_forms",
           "constraint_sets", "uses_every_concept"]

MODES = ("plain", "conjunctive", "dpc")
#: CommonGen's tags -> the parts of speech of :func:`cause_effect_graph.word_forms.variants`.
UPOS = {"N": "NOUN", "V": "VERB", "A": "ADJ", "J": "ADJ", "R": "ADV"}


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise TaskError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    return mode


def concept_forms(concept: Concept, mode: str) -> list[str]:
    """The lower-case forms that meet ``concept`` in ``mode``: the lemma alone
    (``conjunctive``), or its inflections in its tagged part of speech (``dpc``; every part of
    speech when untagged or tagged with one lemminflect does not inflect)."""
    if _check_mode(mode) == "conjunctive":
        return [concept.lemma]
    if mode == "plain":
        return []
    pos = UPOS.get(concept.pos or "")
    return variants(concept.lemma, pos=[pos] if pos else None)


def constraint_sets(concepts: ConceptSet, mode: str) -> list[list[str]] | None:
    """The engine's constraint sets of one concept set (``None`` in ``plain`` mode)."""
    if _check_mode(mode) == "plain":
        return None
    return [concept_forms(c, mode) for c in concepts]


@dataclass(frozen=True)
class DecodeSettings:
    """How sentences are decoded: the mode, beams, the length cap, how many sets a batch, the
    n-gram size that may not repeat (0: any may), ``candidates``: how many of the final beams
    are read (``None``: all ``num_beams``), the sentence being the first of them (by beam score)
    whose spaCy tagging uses every concept in its tagged part of speech
    (:func:`uses_every_concept`), or the top one when none does (1: the top beam, no tagging);
    ``score_slots``: beams kept by score alone each step (:class:`dpc_decode.BeamSearchOptions`;
    ``None``: 5, or every beam when there are fewer; with 5 of 8, plain 5-beam search's
    hypotheses are all kept and the other 3 go to constraint progress); ``early_stopping``:
    transformers' ``True`` (a set is done once its pool holds ``num_beams`` finished
    sentences; under ``search="neurologic"`` only once no open beam can beat them, see
    :attr:`dpc_decode.BeamSearchOptions.search`); ``plain_first``: in a
    constrained mode, every set is first decoded without constraints, and a set keeps that
    sentence when one of its read beams uses every concept in its tagged part of speech; only
    the others are decoded with constraints (generate, verify, constrain what failed);
    ``search``, ``prune_factor``, ``sat_tolerance``, ``length_penalty``, ``lookahead``,
    ``lookahead_weight``: the engine's (:class:`dpc_decode.BeamSearchOptions`; NeuroLogic's
    selection with real endings, outputs ranked by log-prob / length ** 0.75, no lookahead;
    the length penalty applies to the plain pass too). The defaults were chosen on the first
    half of CommonGen dev and confirmed once on the second (benchmarks/commongen/RESULTS.md,
    round 4)."""

    mode: str = "dpc"
    num_beams: int = 8
    max_new_tokens: int = 32
    batch_size: int = 16
    no_repeat_ngram_size: int = 3
    candidates: int | None = None
    score_slots: int | None = None
    early_stopping: bool = True
    plain_first: bool = True
    search: str = "neurologic"
    prune_factor: int = 50
    sat_tolerance: int = 2
    length_penalty: float = 0.75
    lookahead: int = 0
    lookahead_weight: float = 0.25

    def __post_init__(self) -> None:
        _check_mode(self.mode)
        check_choice("search", self.search, SEARCHES, error=TaskError)
        check_int("prune_factor", self.prune_factor, 1)
        check_int("sat_tolerance", self.sat_tolerance, 0)
        check_float("length_penalty", self.length_penalty)
        check_int("lookahead", self.lookahead, 0)
        check_float("lookahead_weight", self.lookahead_weight, 0)
        if self.lookahead and self.search != "neurologic":
            raise TaskError(f"lookahead {self.lookahead} needs search 'neurologic', not "
                            f"{self.search!r}")
        check_int("num_beams", self.num_beams, 1)
        check_int("max_new_tokens", self.max_new_tokens, 1)
        check_int("batch_size", self.batch_size, 1)
        check_int("no_repeat_ngram_size", self.no_repeat_ngram_size, 0)
        if self.candidates is not None:
            check_int("candidates", self.candidates, 1, self.num_beams)
        if self.score_slots is not None:
            check_int("score_slots", self.score_slots, 0, self.num_beams)
        for name in ("early_stopping", "plain_first"):
            if not isinstance(getattr(self, name), bool):
                raise TaskError(f"{name} {getattr(self, name)!r} is not True or False")

    @property
    def slots(self) -> int:
        """The score slots the engine gets (``score_slots``, or its default)."""
        return min(5, self.num_beams) if self.score_slots is None else self.score_slots


@dataclass(frozen=True)
class Sentence:
    """One decoded sentence: its text, whether it meets every set of its mode (``None`` in
    ``plain`` mode; for a sentence ``plain_first`` kept, whether it uses every concept by
    :func:`uses_every_concept`, which is ``True``), its beam score and whether it was decoded
    without constraints (``plain`` mode, or kept by ``plain_first``)."""

    text: str
    satisfied: bool | None
    score: float
    unconstrained: bool = False


class SentenceGenerator:
    """A causal LM that writes a sentence after :func:`~tasks.commongen.generator.prompt`, and
    its tokenizer. The line break (and the tokenizer's EOS) ends a sentence; tokens holding a
    line break inside them are never generated."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        newline = tokenizer("\n", add_special_tokens=False).input_ids
        self.eos = [tokenizer.eos_token_id] + ([newline[-1]] if len(newline) == 1 else [])
        texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
        self.line_breaks = [i for i, t in enumerate(texts) if "\n" in t and i not in self.eos]

    @classmethod
    def load(cls, folder: str | Path, *, device: str | torch.device | None = None,
             dtype: str | torch.dtype | None = None) -> SentenceGenerator:
        """The generator ``dpc commongen train`` saved in ``folder``, on ``device`` in ``dtype``
        (:func:`dpc_device.place`; ``None``: the CPU, float32)."""
        if not Path(folder).is_dir():
            raise TaskError(f"no CommonGen generator folder {os.fspath(folder)!r}")
        loaded = load_commongen_lm(folder)
        return cls(place(loaded.model, device, dtype), loaded.tokenizer)

    def generate(self, sets: Sequence[ConceptSet], settings: DecodeSettings = DecodeSettings()
                 ) -> list[Sentence]:
        """One sentence per concept set, decoded in ``settings.mode`` (after an unconstrained
        decode when ``settings.plain_first``)."""
        if not sets:
            return []
        if settings.mode == "plain" or not settings.plain_first:
            return self._choose(self._decode(sets, settings), sets)
        plain = replace(settings, mode="plain", plain_first=False)
        decoded = self._decode(sets, plain)
        chosen: list[Sentence | None] = []
        for beams, fits in zip(decoded, _fits(decoded, sets), strict=True):
            kept = [replace(b, satisfied=True) for b, fit in zip(beams, fits, strict=True) if fit]
            chosen.append(kept[0] if kept else None)
        rest = [i for i, sentence in enumerate(chosen) if sentence is None]
        if rest:
            again = self._choose(self._decode([sets[i] for i in rest], settings),
                                 [sets[i] for i in rest])
            for i, sentence in zip(rest, again, strict=True):
                chosen[i] = sentence
        return [sentence for sentence in chosen if sentence is not None]

    def _decode(self, sets: Sequence[ConceptSet], settings: DecodeSettings
                ) -> list[list[Sentence]]:
        """Every set's read beams (``settings.candidates`` of them), best first."""
        constraints = [constraint_sets(s, settings.mode) for s in sets]
        processors = ([SuppressTokensLogitsProcessor(self.line_breaks, device=self.model.device)]
                      if self.line_breaks else None)
        outs = dpc_generate(
            self.model, self.tokenizer, [prompt(s) for s in sets],
            None if settings.mode == "plain" else constraints,
            tokenize=TokenizeOptions(capitalized=True, whole_word=True),
            num_beams=settings.num_beams,
            num_return_sequences=settings.candidates or settings.num_beams,
            no_repeat_ngram_size=settings.no_repeat_ngram_size, score_slots=settings.slots,
            early_stopping=settings.early_stopping, max_new_tokens=settings.max_new_tokens,
            search=settings.search, prune_factor=settings.prune_factor,
            sat_tolerance=settings.sat_tolerance, length_penalty=settings.length_penalty,
            lookahead=settings.lookahead if settings.mode != "plain" else 0,
            lookahead_weight=settings.lookahead_weight,
            eos_token_id=self.eos,
            batch_size=settings.batch_size, generation_config=None, logits_processor=processors)
        plain = settings.mode == "plain"
        return [[Sentence(" ".join((o.text or "").split("\n")[0].split()),
                          None if plain else bool(o.satisfied), float(o.score), plain)
                 for o in out] for out in outs]

    @staticmethod
    def _choose(decoded: list[list[Sentence]], sets: Sequence[ConceptSet]) -> list[Sentence]:
        """Per set, the first of its beams that uses every concept in its part of speech (the
        top one when none does, or when only one beam is read: then nothing is tagged)."""
        fits = _fits(decoded, sets, tag_single=False)
        return [next((b for b, fit in zip(beams, ok, strict=True) if fit), beams[0])
                for beams, ok in zip(decoded, fits, strict=True)]


def _fits(decoded: Sequence[Sequence[Sentence]], sets: Sequence[ConceptSet], *,
          tag_single: bool = True) -> list[list[bool]]:
    """:func:`uses_every_concept` for every set's beams, the texts of all sets tagged in one
    ``nlp.pipe`` (spaCy batches them) rather than one call a set; without ``tag_single`` a lone
    beam is not tagged (``True``: nothing to choose between)."""
    tagged = [len(beams) > 1 or tag_single for beams in decoded]
    texts = [b.text for beams, tag in zip(decoded, tagged, strict=True) if tag for b in beams]
    docs = iter(default_lemmatizer().nlp.pipe(texts))
    return [[_uses_all(next(docs), concepts) for _ in beams] if tag else [True] * len(beams)
            for beams, concepts, tag in zip(decoded, sets, tagged, strict=True)]


def uses_every_concept(texts: Sequence[str], concepts: ConceptSet,
                       nlp: Any = None) -> list[bool]:
    """Whether each of ``texts`` uses every one of ``concepts`` in its tagged part of speech, by
    spaCy's tags and its lemmas or lemminflect's lemmas of the form
    (:func:`~tasks.commongen.evaluation.used_concepts` with ``forms=True``: en_core_web_sm reads
    "riding" as *rid*; ``nlp``: default, the project's lemmatizer). The engine matches forms,
    not parts of speech: "walking shoes" meets {walk, walks, walked, walking} with a noun.

    >>> from tasks.commongen.dataset import parse_concept_set
    >>> uses_every_concept(["A man walks his dog.", "A man in walking shoes and his dog."],
    ...                    parse_concept_set("dog_N#walk_V"))
    [True, False]
    >>> uses_every_concept(["A boy is riding his horse."], parse_concept_set("horse_N#ride_V"))
    [True]
    """
    nlp = nlp or default_lemmatizer().nlp
    return [_uses_all(doc, concepts) for doc in nlp.pipe(texts)]


def _uses_all(doc: Any, concepts: ConceptSet) -> bool:
    return used_concepts(doc, concepts, forms=True)[1] == len(concepts)
