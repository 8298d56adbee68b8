"""From what users write to token-id constraint sets: validation, tokenisation, per-input layout.

A **constraint set** is a disjunction: a list of alternatives, any one of which must appear. A list
of sets is a conjunction: every set must be met. An alternative is text (``"rained"``) or token ids
(``[1234, 56]``); both may be mixed in one set. **Banned phrases** are text or token ids that must
never appear.

Shared or per input
    ``constraints`` is either one list of sets for every input, or one list of sets *per input*.
    The depth of the first alternative decides, so neither form needs a flag::

        [["rain", "rained"], ["umbrella"]]                 # shared, text   (text at depth 2)
        [[[31, 7], [31, 9]], [[88]]]                       # shared, ids    (ids at depth 3)
        [[["rain"]], [["snow", "snowed"], ["cold"]]]       # per input, text (depth 3)
        [[[[31, 7]]], [[[88]]]]                            # per input, ids  (depth 4)

    ``banned`` works the same way one level up (``["not"]`` shared, ``[["not"], []]`` per input).
    Per input, a row without sets is ``[]`` beside rows that have some (``[[["rain"]], []]``). A
    value with no alternative anywhere (``[[]]``, ``[[], []]``) has no depth to read: it is taken
    as shared sets, which are empty, and that is an error (``constraint set 0 ... is empty``).
    For no constraints on any input, pass ``None``.

Text and its forms
    Subword tokenizers spell a word differently at the start of a word (``▁rain``, ``Ġrain``),
    inside one (``rain`` in "brain"), and capitalised. :class:`TokenizeOptions` chooses which forms
    an alternative expands to; each form becomes one token-id alternative of the same set, and the
    output reports which user alternative it came from. The default is the word-initial form
    only, so "rain" is not met by "brain".

Whole words
    ``TokenizeOptions(whole_word=True)`` also keeps "rain" from being met by "rained": a text
    alternative then counts only where the next token starts a new word, is punctuation,
    whitespace or EOS, or where the output ends (:mod:`dpc_decode.word_boundary` reads which
    tokens continue a word from the tokenizer). Token-id alternatives are matched as given
    whatever the option: whoever writes ids chose the tokens, a word piece included. Banned
    phrases stay banned wherever they occur.

Prefixes
    An alternative may be a token-prefix of another (``rain`` / ``rained``): both stay, and the
    shorter one alone meets the set. See :mod:`dpc_decode.automaton`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpc_decode.automaton import check_phrase
from dpc_decode.errors import ConstraintError

__all__ = [
    "Alternative",
    "ConstraintSets",
    "InputConstraints",
    "TokenizeOptions",
    "prepare_constraints",
    "tokenize_phrase",
]

Alternative = str | Sequence[int]
ConstraintSets = Sequence[Sequence[Alternative]]


@dataclass(frozen=True)
class TokenizeOptions:
    """Which token forms a text alternative expands to.

    Attributes
    ----------
    word_initial : bool
        The form the text takes as a word after a space (``▁rain`` / ``Ġrain``). Default on.
    as_given : bool
        The text tokenised alone, with no context: for byte-level BPE the sentence-initial and
        mid-word spelling. Off by default, since it lets "rain" be met inside "brain".
    capitalized : bool
        Also the same forms with the first letter upper-cased (sentence-initial "Rain").
    whole_word : bool
        A text alternative counts only where it ends at a word boundary: the next token does not
        continue its word (so "rain" is not met by "rained", nor "twa" by "twa" + "##d"), or the
        output ends. Token-id alternatives are matched as given either way; banned phrases are
        unaffected. Off by default, so decoding is unchanged unless asked for (the guided
        generation pipeline asks for it). Where the alternative starts is the forms' business:
        the word-initial form always starts a word.
    """

    word_initial: bool = True
    as_given: bool = False
    capitalized: bool = False
    whole_word: bool = False

    def __post_init__(self) -> None:
        if not (self.word_initial or self.as_given):
            raise ConstraintError(
                "TokenizeOptions needs `word_initial` or `as_given` (got both False): "
                "a text alternative would have no form"
            )


@dataclass(frozen=True)
class InputConstraints:
    """The constraints of one input, tokenised.

    Attributes
    ----------
    sets : tuple of tuple of tuple of int
        Token-id alternatives of each set.
    origin : tuple of tuple of int
        ``origin[i][k]``: index of the user alternative that token alternative ``k`` of set ``i``
        came from.
    user_sets : tuple of tuple of (str or tuple of int)
        The sets as the user gave them.
    banned : tuple of tuple of int
        Token-id banned phrases (every form of every banned text).
    whole_word : tuple of tuple of bool
        ``whole_word[i][k]``: token alternative ``k`` of set ``i`` counts only at a word boundary
        (:attr:`TokenizeOptions.whole_word`, text alternatives only). Empty: none does.
    """

    sets: tuple[tuple[tuple[int, ...], ...], ...]
    origin: tuple[tuple[int, ...], ...]
    user_sets: tuple[tuple[str | tuple[int, ...], ...], ...]
    banned: tuple[tuple[int, ...], ...]
    whole_word: tuple[tuple[bool, ...], ...] = ()

    @property
    def has_whole_word(self) -> bool:
        """Whether any alternative counts only at a word boundary."""
        return any(any(flags) for flags in self.whole_word)

    @property
    def num_constraint_tokens(self) -> int:
        """Tokens of the shortest alternative of every set, added up."""
        return sum(min(len(a) for a in alts) for alts in self.sets)


def _first_leaf_depth(value: Any, depth: int = 0) -> tuple[str, int] | None:
    if isinstance(value, str):
        return "text", depth
    if isinstance(value, int) and not isinstance(value, bool):
        return "ids", depth
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        for item in value:
            found = _first_leaf_depth(item, depth + 1)
            if found is not None:
                return found
        return None
    raise ConstraintError(
        f"constraint values must be text or token ids, got {value!r} of type {type(value).__name__}"
    )


def _is_per_input(value: Any, shared_text_depth: int, name: str) -> bool:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ConstraintError(f"`{name}` must be a list, got {value!r}")
    found = _first_leaf_depth(value)
    if found is None:
        return False
    kind, depth = found
    shared = shared_text_depth if kind == "text" else shared_text_depth + 1
    if depth == shared:
        return False
    if depth == shared + 1:
        return True
    expected = "list of sets of alternatives" if name == "constraints" else "list of phrases"
    raise ConstraintError(
        f"`{name}` is nested {depth} levels down to its first {kind} value, which fits neither one "
        f"{expected} for every input nor one per input: got {value!r}"
    )


def tokenize_phrase(
    tokenizer: Any, text: str, options: TokenizeOptions, kind: str = "alternative"
) -> list[list[int]]:
    """The distinct token-id forms of ``text`` under ``options`` (word-initial form first).

    A form holding the tokenizer's unknown token (an emoji under a WordPiece vocabulary) is an
    error: the text cannot be spelt, and ``[UNK]`` would match any other unknown text. ``kind``
    names the phrase in messages.

    >>> class Chars:   # a toy tokenizer: one id per character, 0 for a space
    ...     def encode(self, s, add_special_tokens=False):
    ...         return [0 if c == " " else ord(c) for c in s]
    >>> tokenize_phrase(Chars(), "ab", TokenizeOptions(as_given=True, capitalized=True))
    [[0, 97, 98], [97, 98], [0, 65, 98], [65, 98]]
    >>> Chars.unk_token, Chars.unk_token_id = "?", ord("?")
    >>> tokenize_phrase(Chars(), "a?", TokenizeOptions())   # the unknown token written out: kept
    [[0, 97, 63]]
    >>> Chars.encode = lambda self, s, add_special_tokens=False: [ord(c) if c < "~" else 63 for c in s]
    >>> tokenize_phrase(Chars(), "a☂", TokenizeOptions())
    Traceback (most recent call last):
    ...
    dpc_decode.errors.ConstraintError: alternative 'a☂' tokenises to the unknown token '?' (id 63): the tokenizer cannot spell it, so no output could contain it
    """
    stripped = text.strip()
    if not stripped:
        raise ConstraintError(f"{kind} {text!r} is empty or only whitespace")
    variants = [stripped]
    if options.capitalized and stripped[0].upper() != stripped[0]:
        variants.append(stripped[0].upper() + stripped[1:])
    forms: list[list[int]] = []
    for variant in variants:
        if options.word_initial:
            forms.append(_word_initial_ids(tokenizer, variant))
        if options.as_given:
            forms.append(_encode(tokenizer, variant))
    unique: list[list[int]] = []
    for f in forms:
        if f and f not in unique:
            unique.append(f)
    if not unique:
        raise ConstraintError(f"{kind} {text!r} tokenises to no tokens")
    _check_unknown(tokenizer, text, unique, kind)
    return unique


def _check_unknown(tokenizer: Any, text: str, forms: list[list[int]], kind: str) -> None:
    unk_id = getattr(tokenizer, "unk_token_id", None)
    unk = getattr(tokenizer, "unk_token", None)
    if unk_id is None or (unk and unk in text):  # written out by the caller: meant
        return
    if any(unk_id in form for form in forms):
        raise ConstraintError(
            f"{kind} {text!r} tokenises to the unknown token {unk!r} (id {unk_id}): the "
            "tokenizer cannot spell it, so no output could contain it"
        )


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False))


def _word_initial_ids(tokenizer: Any, text: str) -> list[int]:
    """Tokens of ``text`` as a word after a space: tokenise ``"x " + text`` and drop the tokens of
    ``"x"``. Works for SentencePiece (``▁``) and byte-level BPE (``Ġ``) alike."""
    context = _encode(tokenizer, "x")
    full = _encode(tokenizer, "x " + text)
    if full[: len(context)] == context:
        return full[len(context) :]
    return _encode(tokenizer, " " + text)


def _tokenize_sets(
    sets: Any, tokenizer: Any, options: TokenizeOptions, where: str, vocab_size: int | None
) -> tuple[list[list[list[int]]], list[list[int]], list[tuple[str | tuple[int, ...], ...]],
           list[list[bool]]]:
    if isinstance(sets, (str, bytes)) or not isinstance(sets, Sequence):
        raise ConstraintError(f"constraints{where} must be a list of sets, got {sets!r}")
    token_sets: list[list[list[int]]] = []
    origin: list[list[int]] = []
    user_sets: list[tuple[str | tuple[int, ...], ...]] = []
    whole: list[list[bool]] = []
    for i, alternatives in enumerate(sets):
        if isinstance(alternatives, str):
            raise ConstraintError(
                f"constraint set {i}{where} is the text {alternatives!r}; a set is a list of "
                f"alternatives: write [{alternatives!r}]"
            )
        if not isinstance(alternatives, Sequence):
            raise ConstraintError(f"constraint set {i}{where} must be a list, got {alternatives!r}")
        if len(alternatives) == 0:
            raise ConstraintError(
                f"constraint set {i}{where} is empty: every set needs at least one alternative"
            )
        forms: list[list[int]] = []
        from_alt: list[int] = []
        flags: list[bool] = []
        users: list[str | tuple[int, ...]] = []
        for j, alt in enumerate(alternatives):
            if isinstance(alt, str):
                if tokenizer is None:
                    raise ConstraintError(
                        f"alternative {alt!r} of set {i}{where} is text, but no tokenizer was "
                        "given: pass one, or give token ids"
                    )
                try:
                    alt_forms = tokenize_phrase(tokenizer, alt, options)
                except ConstraintError as err:
                    raise ConstraintError(f"set {i}{where}: {err}") from None
                for f in alt_forms:  # the tokenizer's ids may lie past the model's logits
                    check_phrase(f, lambda: f"set {i}{where}, alternative {alt!r}", vocab_size)
                users.append(alt)
                flag = options.whole_word
            else:
                check_phrase(alt, lambda: f"set {i}{where}, alternative {j}", vocab_size)
                alt_forms = [list(alt)]
                users.append(tuple(alt))
                flag = False
            for f in alt_forms:
                # The same tokens as whole word and as given are two alternatives: either may
                # meet the set, and the report names the one that did.
                if not any(f == g and flag == b for g, b in zip(forms, flags)):
                    forms.append(f)
                    from_alt.append(j)
                    flags.append(flag)
        token_sets.append(forms)
        origin.append(from_alt)
        user_sets.append(tuple(users))
        whole.append(flags)
    return token_sets, origin, user_sets, whole


def _tokenize_banned(
    phrases: Any, tokenizer: Any, options: TokenizeOptions, where: str, vocab_size: int | None
) -> list[list[int]]:
    if isinstance(phrases, (str, bytes)) or not isinstance(phrases, Sequence):
        raise ConstraintError(f"`banned`{where} must be a list of phrases, got {phrases!r}")
    out: list[list[int]] = []
    for k, phrase in enumerate(phrases):
        if isinstance(phrase, str):
            if tokenizer is None:
                raise ConstraintError(
                    f"banned phrase {phrase!r}{where} is text, but no tokenizer was given"
                )
            # Every spelling of a banned word is banned, whatever the options for positive ones.
            try:
                forms = tokenize_phrase(
                    tokenizer, phrase, TokenizeOptions(word_initial=True, as_given=True,
                                                       capitalized=options.capitalized),
                    kind="banned phrase",
                )
            except ConstraintError as err:
                raise ConstraintError(f"`banned`{where}: {err}") from None
            for f in forms:
                check_phrase(f, lambda: f"banned phrase {phrase!r}{where}", vocab_size)
        else:
            check_phrase(phrase, lambda: f"banned phrase {k}{where}", vocab_size)
            forms = [list(phrase)]
        for f in forms:
            if f not in out:
                out.append(f)
    return out


def prepare_constraints(
    constraints: Any,
    banned: Any,
    num_inputs: int,
    tokenizer: Any = None,
    vocab_size: int | None = None,
    options: TokenizeOptions | None = None,
) -> list[InputConstraints]:
    """Validate and tokenise user constraints into one :class:`InputConstraints` per input.

    Raises :class:`~dpc_decode.errors.ConstraintError` naming the bad value.

    >>> [c.sets for c in prepare_constraints([[[5, 6], [5]], [[7]]], None, num_inputs=2)]
    [(((5, 6), (5,)), ((7,),)), (((5, 6), (5,)), ((7,),))]
    >>> prepare_constraints([[[[5]]], [[[6]]]], [[9]], num_inputs=2)[1].sets
    (((6,),),)
    >>> prepare_constraints([[[[5]]]], None, num_inputs=2)
    Traceback (most recent call last):
    ...
    dpc_decode.errors.ConstraintError: `constraints` gives sets for 1 inputs, but there are 2 inputs
    """
    options = options or TokenizeOptions()
    # One object per distinct value: rows that share it are tokenised and checked once.
    if constraints is None:
        per_sets: list[Any] = [()] * num_inputs
    elif _is_per_input(constraints, 2, "constraints"):
        if len(constraints) != num_inputs:
            raise ConstraintError(
                f"`constraints` gives sets for {len(constraints)} inputs, but there are "
                f"{num_inputs} inputs"
            )
        per_sets = list(constraints)
    else:
        per_sets = [constraints] * num_inputs

    if banned is None:
        per_banned: list[Any] = [()] * num_inputs
    elif _is_per_input(banned, 1, "banned"):
        if len(banned) != num_inputs:
            raise ConstraintError(
                f"`banned` gives phrases for {len(banned)} inputs, but there are {num_inputs} inputs"
            )
        per_banned = list(banned)
    else:
        per_banned = [banned] * num_inputs

    cache: dict[tuple[int, int], InputConstraints] = {}
    result: list[InputConstraints] = []
    for n, (sets, phrases) in enumerate(zip(per_sets, per_banned)):
        key = (id(sets), id(phrases))
        if key in cache:  # shared constraints are tokenised once
            result.append(cache[key])
            continue
        where = f" of input {n}" if len(per_sets) > 1 else ""
        # Shapes, types and token ids are checked as they are read, each phrase once.
        token_sets, origin, user_sets, whole = _tokenize_sets(sets, tokenizer, options, where, vocab_size)
        token_banned = _tokenize_banned(phrases, tokenizer, options, where, vocab_size)
        item = InputConstraints(
            sets=tuple(tuple(tuple(a) for a in alts) for alts in token_sets),
            origin=tuple(tuple(o) for o in origin),
            user_sets=tuple(user_sets),
            banned=tuple(tuple(p) for p in token_banned),
            whole_word=tuple(tuple(f) for f in whole),
        )
        cache[key] = item
        result.append(item)
    return result
