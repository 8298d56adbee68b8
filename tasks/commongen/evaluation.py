"""CommonGen's metrics for sentences generated from concept sets.

Per concept set (one generated sentence against every reference sentence of that set):

``coverage``
    The leaderboard's figure: the share of sets whose sentence uses *every* concept, a concept
    counting as used when a token's spaCy lemma equals it.
``concepts``
    Concept-level coverage, what CommonGen's own script (``evaluation/PivotScore/evaluate.py``)
    prints: the mean over sets of the share of concepts used, by the same spaCy lemmas. The
    lemmas are lower-cased here (the script compares them as spaCy writes them, so a
    sentence-initial "Dogs" tagged a proper noun would count as missing).
``pos``
    The share of sets whose sentence uses every concept *in its tagged part of speech*: a noun
    concept (``_N``) as a noun or proper noun, a verb (``_V``) as a verb (or auxiliary, for
    "have" and "be"). Only where the sets are tagged (``None`` otherwise).
``coverage_forms``, ``pos_forms``
    The same two read by forms as well as by spaCy's lemma: a token also uses a concept when
    lemminflect lists the concept among the lemmas of the token's form (for ``pos_forms``, among
    its lemmas in the token's tagged part of speech). en_core_web_sm 3.8 lemmatises "riding" and
    "rides" as *rid* and some "leaves" as *leaf*, so by lemma alone only 0.949 of dev's human
    reference sentences use every concept of their set; this reading is a diagnostic of that,
    reported beside the leaderboard's figure, never instead of it.
``bleu4``
    sacrebleu's corpus BLEU-4 against all references of each set, lower-cased (13a tokenizer).
``rougeL``
    The mean over sets of the best ROUGE-L F1 against a reference (``rouge-score``, stemmed).
``cider``
    CIDEr-D (``pycocoevalcap``'s Cider, the implementation the CommonGen leaderboard uses) over
    lower-cased, space-tokenised text (without the Stanford tokenizer its scripts run first).

>>> from tasks.commongen.dataset import parse_concept_set
>>> scores = evaluate([("A dog catches a frisbee.",
...                     parse_concept_set("catch_V#dog_N#frisbee_N"))],
...                   [["A dog catches the frisbee.", "The dog caught a frisbee."]])
>>> scores.coverage, scores.concepts, scores.pos
(1.0, 1.0, 1.0)
>>> ride = evaluate([("A boy is riding a horse.", parse_concept_set("horse_N#ride_V"))],
...                 [["A boy rides a horse."]])
>>> ride.coverage, ride.coverage_forms, ride.pos_forms
(0.0, 1.0, 1.0)
>>> summary_line(scores)
'coverage 1.000 pos 1.000 bleu4 48.5'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import sacrebleu
from pycocoevalcap.cider.cider import Cider
from rouge_score import rouge_scorer

from cause_effect_graph.lemmas import default_lemmatizer
from tasks.commongen.dataset import ConceptSet
from tasks.errors import TaskError

__all__ = ["CommonGenScores", "evaluate", "format_scores", "summary_line", "used_concepts"]

#: A tagged concept's part of speech -> the spaCy coarse tags that count as it.
POS_TAGS = {"N": {"NOUN", "PROPN"}, "V": {"VERB", "AUX"}, "A": {"ADJ"}, "J": {"ADJ"},
            "R": {"ADV"}}
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class CommonGenScores:
    """The metrics of one evaluation (see the module's table); ``sets`` is how many."""

    sets: int
    coverage: float
    concepts: float
    pos: float | None
    bleu4: float
    rougeL: float  # noqa: N815 (the metric's name)
    cider: float
    coverage_forms: float
    pos_forms: float | None

    def as_dict(self) -> dict[str, Any]:
        """The scores as a JSON object."""
        return asdict(self)


#: A spaCy coarse tag -> lemminflect's part of speech for a token's lemmas by form.
_LEMMINFLECT_POS = {"NOUN": "NOUN", "PROPN": "NOUN", "VERB": "VERB", "AUX": "VERB",
                    "ADJ": "ADJ", "ADV": "ADV"}


def used_concepts(doc: Any, concepts: ConceptSet, forms: bool = False) -> tuple[int, int]:
    """How many of ``concepts`` a spaCy ``doc`` uses by lemma, and how many in their tagged part
    of speech (an untagged concept counts for the second when used at all). ``forms``: a token
    also uses a concept that lemminflect lists among the lemmas of its form, in any part of
    speech for the first count and in the token's own tagged part of speech for the second."""
    tags: dict[str, set[str]] = {}  # lemma -> the coarse tags of the tokens read as it
    for token in doc:
        tags.setdefault(token.lemma_.lower(), set()).add(token.pos_)
    used_lemmas = set(tags)
    if forms:
        from lemminflect import getAllLemmas

        for token in doc:
            by_pos = getAllLemmas(token.lower_)
            used_lemmas.update(lemma for lemmas in by_pos.values() for lemma in lemmas)
            for lemma in by_pos.get(_LEMMINFLECT_POS.get(token.pos_, ""), ()):
                tags.setdefault(lemma, set()).add(token.pos_)
    used = [c for c in concepts if c.lemma in used_lemmas]
    right = [c for c in used
             if c.pos is None or tags.get(c.lemma, set()) & POS_TAGS.get(c.pos, set())]
    return len(used), len(right)


def _cider(sentences: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    def tokens(text: str) -> str:
        return " ".join(_TOKEN.findall(text.lower()))

    res = {i: [tokens(s)] for i, s in enumerate(sentences)}
    gts = {i: [tokens(r) for r in refs] for i, refs in enumerate(references)}
    score, _ = Cider().compute_score(gts, res)
    return float(score)


def evaluate(outputs: Sequence[tuple[str, ConceptSet]], references: Sequence[Sequence[str]],
             nlp: Any = None) -> CommonGenScores:
    """The metrics of ``outputs`` (sentence, its concept set), ``references[i]`` being the
    reference sentences of ``outputs[i]``'s set. ``nlp``: a spaCy pipeline with a tagger and a
    lemmatizer (default: the project's,
    :func:`cause_effect_graph.lemmas.default_lemmatizer`'s)."""
    if not outputs:
        raise TaskError("nothing to evaluate: no generated sentence")
    if len(references) != len(outputs):
        raise TaskError(f"{len(outputs)} sentences but {len(references)} reference lists")
    empty = [i for i, refs in enumerate(references) if not refs]
    if empty:
        raise TaskError(f"the concept set of output {empty[0] + 1} has no reference sentence")
    nlp = nlp or default_lemmatizer().nlp
    sentences = [s for s, _ in outputs]
    all_used = pos_used = forms_used = forms_pos = 0
    shares = []
    for doc, (_, concepts) in zip(nlp.pipe(sentences, batch_size=256), outputs, strict=True):
        used, right = used_concepts(doc, concepts)
        all_used += used == len(concepts)
        pos_used += right == len(concepts)
        shares.append(used / len(concepts))
        used, right = used_concepts(doc, concepts, forms=True)
        forms_used += used == len(concepts)
        forms_pos += right == len(concepts)
    tagged = all(c.pos is not None for _, cs in outputs for c in cs)
    depth = max(len(r) for r in references)
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(depth)]
    bleu = sacrebleu.corpus_bleu(sentences, streams, lowercase=True)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    rouge = [scorer.score_multi(list(refs), s)["rougeL"].fmeasure
             for s, refs in zip(sentences, references, strict=True)]
    n = len(outputs)
    return CommonGenScores(sets=n, coverage=all_used / n, concepts=sum(shares) / n,
                           pos=pos_used / n if tagged else None, bleu4=float(bleu.score),
                           rougeL=sum(rouge) / n, cider=_cider(sentences, references),
                           coverage_forms=forms_used / n, pos_forms=forms_pos / n if tagged else None)


def format_scores(scores: CommonGenScores) -> str:
    """The scores as a few printed lines, :func:`summary_line` last."""
    pos = "-" if scores.pos is None else f"{scores.pos:.3f}"
    forms_pos = "-" if scores.pos_forms is None else f"{scores.pos_forms:.3f}"
    return (f"sets {scores.sets}\n"
            f"coverage (every concept) {scores.coverage:.3f}\n"
            f"concept coverage {scores.concepts:.3f}\n"
            f"pos-correct coverage {pos}\n"
            f"by lemmas and forms (lemminflect): coverage {scores.coverage_forms:.3f} "
            f"pos {forms_pos}\n"
            f"BLEU-4 {scores.bleu4:.1f}  ROUGE-L {100 * scores.rougeL:.1f}  "
            f"CIDEr {scores.cider:.2f}\n"
            + summary_line(scores))


def summary_line(scores: CommonGenScores) -> str:
    """``coverage 0.xxx pos 0.xxx bleu4 xx.x`` (pos ``-`` for untagged sets)."""
    pos = "-" if scores.pos is None else f"{scores.pos:.3f}"
    return f"coverage {scores.coverage:.3f} pos {pos} bleu4 {scores.bleu4:.1f}"

