"""Keywords from the generator's own sampled answers.

The Cause Effect Graph proposes keywords from counts over a corpus; many have no causal tie to
the input the user gave ("purse" for "babies cry"). The generator, asked for a cause or an
effect, already knows some plausible topics: its sampled answers ("the baby is hungry", "she
was tired") carry them as content lemmas (hungry, tired). :func:`sampled_keywords` turns a few
samples into keyword candidates, most often sampled first, and among equals the more specific
(the rarer in the graph); the input's own lemmas are left out, since an answer that restates
the input is no answer.

The pipeline (:mod:`guided_generation.pipeline`) pools these with the graph's keywords and lets
the verifier (:mod:`guided_generation.verifier`) choose the rows to decode: the graph then adds
topics that the model would not reach alone.

>>> lemmas = {"the baby is hungry": ["baby", "hungry"], "she was hungry and tired": ["hungry", "tired"],
...           "the baby has a cold": ["baby", "cold"]}
>>> sampled_keywords(list(lemmas), ["baby", "cry"], lemmas.__getitem__, limit=3)
['hungry', 'cold', 'tired']
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

__all__ = ["sampled_keywords", "specificity"]


def specificity(lemma: str, frequency: Mapping[str, float] | None) -> float:
    """How specific ``lemma`` is: ``-log(1 + count)`` of its count in ``frequency`` (the
    graph's node counts); 0 for a lemma the graph does not know or without counts.

    >>> specificity("hyena", {"hyena": 3, "man": 9000}) > specificity("man", {"hyena": 3, "man": 9000})
    True
    """
    if not frequency:
        return 0.0
    return -math.log1p(float(frequency.get(lemma, 0.0)))


def sampled_keywords(samples: Sequence[str], input_lemmas: Sequence[str],
                     lemmatizer: Callable[[str], list[str]], limit: int = 8,
                     frequency: Mapping[str, float] | None = None) -> list[str]:
    """Content lemmas of the sampled answers, as keywords: at most ``limit``, those in more
    samples first, then the more specific (:func:`specificity`), then alphabetical; lemmas of
    the input and single letters are left out."""
    skip = {lemma.lower() for lemma in input_lemmas}
    counts: Counter[str] = Counter()
    for text in samples:
        counts.update({lemma.lower() for lemma in lemmatizer(text)
                       if len(lemma) > 1 and lemma.isalpha() and lemma.lower() not in skip})
    ranked = sorted(counts, key=lambda w: (-counts[w], -specificity(w, frequency), w))
    return ranked[:limit]
