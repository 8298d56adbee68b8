"""Word forms of a lemma (its morphological variants): its inflections and, where the graph
attests them, its derived forms.

Guided generation turns every constraint lemma into a *set* of surface forms ({love, loves,
loved, loving}) so that the decoder may use any of them.

Inflections come from lemminflect (Jascob, https://github.com/bjascob/LemmInflect), across every
part of speech the lemma has (noun plural, verb forms, comparative and superlative). The paper
used pattern.en, which is no longer installable on current Python versions (its last release,
3.6, does not build on Python ≥ 3.7 without patches and pins MySQL client libraries); lemminflect
covers the same inflections from a dictionary with rule-based fallback. A lemma lemminflect does
not know gets its out-of-vocabulary noun and verb forms when ``oov=True``.

``pos`` restricts the inflections to some parts of speech (UPOS: ``NOUN``, ``VERB``, ``ADJ``,
``ADV``), e.g. those a lemma has in the graph's text
(:meth:`cause_effect_graph.parts_of_speech.PartsOfSpeech.of`), so a noun keyword is never forced
into a verb slot ("purse" gives "purses", not "pursed"). A form two parts of speech share stays
("purses" is also a verb form). The lemma itself is always a form; ``pos=None`` or empty keeps
every part of speech.

Derived forms (rain → rainy, sad → sadness, quick → quickly) cannot be generated reliably from
rules alone ("corny" is not derived from "corn" in the intended sense, and rules invent words),
so :func:`derived_forms` proposes them by suffix rules and keeps only those the caller's
vocabulary attests, e.g. the lemmas of the Cause Effect Graph itself.

Examples
--------
>>> variants("rain")
['rain', 'rained', 'raining', 'rains']
>>> variants("happy", capitalized=True)
['happier', 'happiest', 'happy', 'Happier', 'Happiest', 'Happy']
>>> variants("purse"), variants("purse", pos=["NOUN"])
(['purse', 'pursed', 'purses', 'pursing'], ['purse', 'purses'])
>>> derived_forms("rain", {"rainy", "brain", "wet"})
['rainy']
>>> derived_forms("happy", {"happiness", "happily", "unhappy"})
['happily', 'happiness']
"""

from __future__ import annotations

from collections.abc import Collection

from cause_effect_graph.errors import GraphError
from cause_effect_graph.lemmas import CONTENT_POS

__all__ = ["DERIVATIONAL_SUFFIXES", "derived_forms", "inflections", "variants"]

DERIVATIONAL_SUFFIXES: tuple[str, ...] = (
    "y", "ly", "ness", "ful", "less", "ous", "al", "ic", "ish", "ive", "able", "ible", "ment",
    "ion", "ation", "ity", "er", "or", "ist", "ism", "ize", "ise", "en", "ing", "ance", "ence",
    "ant", "ent", "hood", "ship", "some", "ward", "wise", "like",
)
_VOWELS = set("aeiou")


def _tags(pos: Collection[str] | None) -> tuple[str, ...]:
    """The parts of speech of a ``pos`` argument, checked (a lone string is one tag)."""
    if pos is None:
        return ()
    tags = (pos,) if isinstance(pos, str) else tuple(pos)
    for tag in tags:
        if tag not in CONTENT_POS:
            raise GraphError(f"part of speech {tag!r} (in pos={pos!r}) is not one of "
                             f"{', '.join(sorted(CONTENT_POS))}")
    return tuple(dict.fromkeys(tags))


def inflections(lemma: str, oov: bool = True, pos: Collection[str] | None = None) -> list[str]:
    """Every inflection of ``lemma`` across its parts of speech (or those of ``pos``), the lemma
    included, sorted.

    Parameters
    ----------
    lemma
        A lower-case lemma.
    oov
        A lemma lemminflect does not know at all gets its rule-made noun and verb forms (only
        those of ``pos`` among them, when it is given).
    pos
        UPOS tags (``NOUN``, ``VERB``, ``ADJ``, ``ADV``): only the inflections of these parts of
        speech. ``None`` or empty: every part of speech.

    Raises
    ------
    GraphError
        Naming a tag of ``pos`` that is not one of those four.

    >>> inflections("go")
    ['go', 'goes', 'going', 'gone', 'went']
    >>> inflections("xyzzy")
    ['xyzzied', 'xyzzies', 'xyzzy', 'xyzzying']
    >>> inflections("xyzzy", oov=False)
    ['xyzzy']
    >>> inflections("rain", pos=["NOUN"]), inflections("xyzzy", pos=["ADJ", "VERB"])
    (['rain', 'rains'], ['xyzzied', 'xyzzies', 'xyzzy', 'xyzzying'])
    >>> inflections("fast", pos=("ADV",)), inflections("hungry", pos=("VERB",))
    (['fast', 'faster', 'fastest'], ['hungry'])
    """
    from lemminflect import getAllInflections, getAllInflectionsOOV

    tags = _tags(pos)
    forms = {lemma}
    if not tags:
        table = getAllInflections(lemma)
        if not table and oov:
            table = getAllInflectionsOOV(lemma, "NOUN") | getAllInflectionsOOV(lemma, "VERB")
    else:
        table = {}
        for tag in tags:
            table |= getAllInflections(lemma, upos=tag)
        if not table and oov and not getAllInflections(lemma):
            for tag in tags:
                if tag in ("NOUN", "VERB"):
                    table |= getAllInflectionsOOV(lemma, tag)
    for values in table.values():
        forms.update(values)
    return sorted(forms)


def variants(lemma: str, capitalized: bool = False, upper: bool = False,
             oov: bool = True, derived: Collection[str] | None = None,
             pos: Collection[str] | None = None) -> list[str]:
    """Surface forms of ``lemma`` for a constraint set.

    Parameters
    ----------
    lemma
        A lower-case lemma (leading/trailing spaces are stripped; empty gives ``[]``).
    capitalized
        Also add every form with its first letter upper-cased (sentence-initial use).
    upper
        Also add every form in upper case.
    oov
        Inflect lemmas lemminflect does not know by its rules for nouns and verbs.
    derived
        A vocabulary (e.g. the graph's nodes); derived forms it attests are added with their
        own inflections (of every part of speech: ``pos`` is the lemma's).
    pos
        UPOS tags (``NOUN``, ``VERB``, ``ADJ``, ``ADV``): only the lemma's inflections of these
        parts of speech, the lemma itself always included (:func:`inflections`). ``None`` or
        empty: every part of speech.

    Raises
    ------
    GraphError
        Naming a tag of ``pos`` that is not one of those four.

    >>> variants("love", derived={"lovely", "loveless"})
    ['love', 'loved', 'loves', 'loving', 'loveless', 'lovelier', 'lovelies', 'loveliest', 'lovely']
    """
    lemma = lemma.strip()
    if not lemma:
        return []
    forms = inflections(lemma, oov, pos)
    if derived is not None:
        for word in derived_forms(lemma, derived):
            forms += [f for f in inflections(word, oov=False) if f not in forms]
    forms = list(dict.fromkeys(forms))
    out = list(forms)
    if capitalized:
        out += [f[:1].upper() + f[1:] for f in forms if f[:1].upper() + f[1:] not in out]
    if upper:
        out += [f.upper() for f in forms if f.upper() not in out]
    return out


def _stems(lemma: str) -> set[str]:
    """Spellings a suffix may attach to: rain; happ(i); lov(e); sad → sadd (doubling)."""
    stems = {lemma}
    if lemma.endswith("y") and len(lemma) > 2 and lemma[-2] not in _VOWELS:
        stems.add(lemma[:-1] + "i")
    if lemma.endswith("e"):
        stems.add(lemma[:-1])
    if (len(lemma) >= 3 and lemma[-1] not in _VOWELS | {"w", "x", "y"}
            and lemma[-2] in _VOWELS and lemma[-3] not in _VOWELS):
        stems.add(lemma + lemma[-1])
    return stems


def derived_forms(lemma: str, vocabulary: Collection[str]) -> list[str]:
    """Words of ``vocabulary`` made of ``lemma`` plus one derivational suffix, sorted.

    Candidates are built by spelling rules (y → i, silent e dropped, final consonant doubled)
    and kept only if ``vocabulary`` holds them, so nothing is invented.

    >>> derived_forms("sad", {"sadness", "saddle", "sadly"})
    ['sadly', 'sadness']
    >>> derived_forms("fog", {"foggy"})
    ['foggy']
    """
    lemma = lemma.strip().lower()
    if len(lemma) < 2:
        return []
    found = {stem + suffix for stem in _stems(lemma) for suffix in DERIVATIONAL_SUFFIXES}
    if lemma.endswith("le"):
        found.add(lemma[:-1] + "y")
    found.discard(lemma)
    return sorted(w for w in found if w in vocabulary)
