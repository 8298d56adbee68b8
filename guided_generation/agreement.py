"""Pronoun agreement: outputs about an input's people use the input's gender.

A generator trained on text that says "he" more often than "she" (e-CARE's answers: 4.5 times as
often) answers "she missed the bus" with "he was late for school". When the input speaks of
people of one gender only ("she", "the woman", "his"), the third-person pronouns of the other
gender are banned from the outputs: negative constraints of the same beam search
(:func:`dpc_decode.generate`'s ``banned``), so the decode writes the agreeing pronoun instead of
the outputs being filtered afterwards. An input with both genders, or with neither ("babies
cry", "I missed the bus"), bans nothing.

The ban is a trade-off, said here so that nobody meets it by surprise: an output that brings in
someone of the other gender ("his wife woke him" for "the man fell asleep" becomes impossible
with "her") is not written. :attr:`guided_generation.GuidedOptions.pronoun_agreement` turns it
off (``--no-pronoun-agreement``).

>>> pronoun_bans("she missed the bus")
('he', 'him', 'his', 'himself')
>>> pronoun_bans("The man fell asleep.")
('she', 'her', 'hers', 'herself')
>>> pronoun_bans("the woman gave her husband a gift"), pronoun_bans("babies cry")
((), ())
"""

from __future__ import annotations

import re

__all__ = ["FEMALE", "MALE", "gender_of", "pronoun_bans"]

#: Words that say the input speaks of a woman or a girl (lower case).
FEMALE = frozenset({
    "she", "her", "hers", "herself", "woman", "women", "girl", "girls", "lady", "ladies",
    "mother", "mom", "mum", "wife", "daughter", "sister", "aunt", "grandmother", "grandma",
    "girlfriend", "queen", "princess", "actress", "waitress", "niece", "bride", "madam", "mrs",
    "ms",
})
#: Words that say the input speaks of a man or a boy (lower case).
MALE = frozenset({
    "he", "him", "his", "himself", "man", "men", "boy", "boys", "gentleman", "gentlemen",
    "father", "dad", "husband", "son", "brother", "uncle", "grandfather", "grandpa",
    "boyfriend", "king", "prince", "actor", "waiter", "nephew", "groom", "sir", "mr",
})
_PRONOUNS = {"female": ("she", "her", "hers", "herself"), "male": ("he", "him", "his", "himself")}
_WORD = re.compile(r"[a-z]+")


def gender_of(text: str) -> str | None:
    """``"female"`` or ``"male"`` when the text speaks of people of that gender only, else
    ``None`` (both, or neither).

    >>> gender_of("The girl gasped."), gender_of("the boy and his sister"), gender_of("it rained")
    ('female', None, None)
    """
    words = set(_WORD.findall(text.lower()))
    female, male = bool(words & FEMALE), bool(words & MALE)
    if female == male:
        return None
    return "female" if female else "male"


def pronoun_bans(text: str) -> tuple[str, ...]:
    """The third-person pronouns no output for ``text`` should use: those of the gender the
    input does not speak of, when it speaks of one gender only (:func:`gender_of`); else none.
    """
    gender = gender_of(text)
    if gender is None:
        return ()
    return _PRONOUNS["male" if gender == "female" else "female"]
