"""The constraint automaton in plain Python: the reference every tensor path is tested against.

A list of *disjunctive positive constraint sets* (the output must contain at least one alternative
of every set) and a list of *banned phrases* (the output must contain none of them) are compiled
into one Aho–Corasick automaton: a trie over every alternative of every set and every banned
phrase, with failure links, so a single left-to-right walk over the tokens finds every occurrence
of every phrase, overlapping ones included.

Decisions the rest of :mod:`dpc_decode` relies on:

* **Prefixes are normal.** Interior nodes can be terminal: with the set ``{rain, rained}`` the node
  for ``rain`` completes the set and ``rained`` completes it again. Any alternative of a set
  completes it; the set is *met* from the first completion on, and stays met.
* **Failure links** mean ``[1, 1, 2]`` is found inside ``5 1 1 1 2`` and ``[2, 3, 5]`` inside
  ``1 2 3 5`` although the walk first followed ``[1, 2, 3, 4]``.
* **Each node knows every set it completes** (its own alternatives and those of its suffixes,
  through the output links) as a bitmask, so meeting a set is one OR per token.
* **Whole-word alternatives** (``whole_word``) count only where they end at a word boundary:
  the next token does not continue the word (``continues[token]`` is false: it starts a new
  word, or is punctuation, whitespace or EOS), or the output ends right after them. Where one
  ends, its set is *pending*: the next token confirms it or cancels it. Which sets are pending
  depends on the node alone (the whole-word alternatives that end there, through the output
  links), so the state stays (node, sets met): ``met`` holds confirmed sets, and
  :meth:`Automaton.met_if_ended` adds the pending ones, as the end of the output does. Where a
  whole-word alternative *starts* is its tokens' business (a word-initial form always starts a
  word).
* **Banned phrases** live in the same trie. A node whose string ends with a banned phrase is a
  *violation* node. An alternative that contains a banned phrase can never be produced legally:
  it is *dead*, and a set whose alternatives are all dead is *impossible*.
* **need** (fewest further tokens that meet every unmet set) is exact: a shortest path in the
  graph of (node, sets met) states, computed once per automaton while that graph is within
  :data:`EXACT_NEED_BUDGET`. Alternatives that overlap (one's suffix is another's prefix, or one
  contains another) are met in fewer tokens than their lengths added up, and this counts it;
  and a whole-word alternative that the next token of the shortest path would continue does not
  count, which this counts too.

>>> a = Automaton([[[100], [100, 7], [100, 8]], [[3, 4]]])
>>> s = a.run([5, 100, 7, 3, 4])
>>> a.is_satisfied(s)
True
>>> [(m.set_index, m.alternative_index, m.start, m.end) for m in a.matches([5, 100, 7, 3, 4])]
[(0, 0, 1, 2), (0, 1, 1, 3), (1, 0, 3, 5)]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain

from dpc_decode.errors import ConstraintError

__all__ = [
    "EXACT_NEED_BUDGET", "Automaton", "Match", "State", "check_phrase", "need_over_budget",
    "plain_token_ids", "satisfies", "validate_token_constraints",
]

TokenSets = Sequence[Sequence[Sequence[int]]]
WholeWord = Sequence[Sequence[bool]]

#: Largest ``transitions × 2**live_sets`` for which :meth:`Automaton.need` is exact. The search
#: follows every distinct transition out of every (node, sets met) state once (letters leading
#: to the same node count once; any token outside the alphabet is one more), in pure Python,
#: once per distinct automaton, so the budget bounds that set-up time (``python
#: benchmarks/engine_micro.py`` times the search: ``need_python_ms``). Four sets of three
#: two-token alternatives take 5,392; ten such sets 1,967,104; eleven are over. The table has ``nodes × 2**live_sets`` entries, fewer
#: than the transitions. Beyond the budget, :meth:`Automaton.need` is the plan of
#: :meth:`Automaton.plan_need`, which is not exact.
EXACT_NEED_BUDGET = 2**22


def need_over_budget(transitions: int, live_sets: int) -> bool:
    """Whether a state graph of ``transitions`` distinct transitions and ``live_sets`` possible
    sets is over :data:`EXACT_NEED_BUDGET` (read when asked: tests lower it), so that its need is
    the plan's, not exact."""
    return transitions << live_sets > EXACT_NEED_BUDGET


@dataclass(frozen=True, slots=True)
class State:
    """Where a walk over the tokens stands: the automaton node, the sets met (confirmed: a
    whole-word alternative that has just ended is not in it until the next token starts a new
    word; see :meth:`Automaton.met_if_ended`), and whether a banned phrase has occurred.
    Immutable; :meth:`Automaton.advance` returns a new one."""

    node: int
    met: int
    violated: bool = False


@dataclass(frozen=True, slots=True)
class Match:
    """One occurrence of one alternative: ``tokens[start:end] == sets[set_index][alternative_index]``."""

    set_index: int
    alternative_index: int
    start: int
    end: int


def validate_token_constraints(
    sets: TokenSets, banned: Sequence[Sequence[int]] = (), vocab_size: int | None = None
) -> None:
    """Check the shape and the ids of token-id constraints; raise :class:`ConstraintError` naming
    the bad value.

    >>> validate_token_constraints([[[1, 2]], []])
    Traceback (most recent call last):
    ...
    dpc_decode.errors.ConstraintError: constraint set 1 is empty: every set needs at least one alternative
    >>> validate_token_constraints([[[1, 2000]]], vocab_size=1000)
    Traceback (most recent call last):
    ...
    dpc_decode.errors.ConstraintError: token id 2000 in set 0, alternative 0 ([1, 2000]) is outside the vocabulary (size 1000)
    """
    if isinstance(sets, (str, bytes)) or not isinstance(sets, Sequence):
        raise ConstraintError(f"constraints must be a list of sets, got {sets!r}")
    for i, alternatives in enumerate(sets):
        if isinstance(alternatives, (str, bytes)) or not isinstance(alternatives, Sequence):
            raise ConstraintError(f"constraint set {i} must be a list of alternatives, got {alternatives!r}")
        if len(alternatives) == 0:
            raise ConstraintError(
                f"constraint set {i} is empty: every set needs at least one alternative"
            )
        for j, alt in enumerate(alternatives):
            check_phrase(alt, lambda: f"set {i}, alternative {j}", vocab_size)
    if isinstance(banned, (str, bytes)) or not isinstance(banned, Sequence):
        raise ConstraintError(f"banned phrases must be a list of token-id lists, got {banned!r}")
    for k, phrase in enumerate(banned):
        check_phrase(phrase, lambda: f"banned phrase {k}", vocab_size)


def plain_token_ids(phrase: object, vocab_size: int | None = None) -> bool:
    """Whether ``phrase`` is a non-empty list or tuple of ints, none negative or outside the
    vocabulary: the usual case, checked at C speed (:func:`check_phrase` names the value in its
    error only when this is false).

    >>> plain_token_ids([5, 6], 10), plain_token_ids([5, 60], 10), plain_token_ids([True])
    (True, False, False)
    """
    return (
        type(phrase) in (tuple, list)
        and len(phrase) > 0  # type: ignore[arg-type]
        and all(type(t) is int for t in phrase)  # type: ignore[attr-defined]
        and min(phrase) >= 0  # type: ignore[type-var]
        and (vocab_size is None or max(phrase) < vocab_size)  # type: ignore[type-var]
    )


def check_phrase(phrase: object, where: str | Callable[[], str], vocab_size: int | None) -> None:
    """Raise a :class:`ConstraintError` naming ``phrase`` (at ``where``) unless it is a non-empty
    list of token ids within the vocabulary. ``where`` may be a function that writes it: callers
    checking many phrases then format it only for the one that fails."""
    if plain_token_ids(phrase, vocab_size):
        return
    if callable(where):
        where = where()
    if isinstance(phrase, (str, bytes)) or not isinstance(phrase, Sequence):
        raise ConstraintError(f"{where} must be a list of token ids, got {phrase!r}")
    if len(phrase) == 0:
        raise ConstraintError(f"{where} is empty: a phrase needs at least one token")
    for t in phrase:
        if isinstance(t, bool) or not isinstance(t, int):
            raise ConstraintError(f"{where} ({list(phrase)!r}) holds {t!r}, which is not a token id (int)")
        if t < 0 or (vocab_size is not None and t >= vocab_size):
            size = f" (size {vocab_size})" if vocab_size is not None else ""
            raise ConstraintError(
                f"token id {t} in {where} ({list(phrase)!r}) is outside the vocabulary{size}"
            )


class Automaton:
    """Aho–Corasick automaton over disjunctive constraint sets and banned phrases.

    Parameters
    ----------
    sets : list of list of list of int
        ``sets[i][j]`` is alternative ``j`` of set ``i``, a list of token ids.
    banned : list of list of int, optional
        Phrases that must never occur.
    whole_word : list of list of bool, optional
        ``whole_word[i][j]``: alternative ``j`` of set ``i`` counts only where it ends at a word
        boundary (see the module's notes). Default: none.
    continues : sequence of bool, optional
        ``continues[t]``: token ``t`` continues the word before it
        (:func:`dpc_decode.word_boundary.word_pieces`); ids past its end do. Needed when an
        alternative is whole-word.

    Examples
    --------
    Cases a trie walk without failure links, or without the banned-phrase check, gets wrong:

    >>> a = Automaton([[[1, 1, 2]]])            # overlap: needs the failure link
    >>> a.is_satisfied(a.run([5, 1, 1, 1, 2]))
    True
    >>> a = Automaton([[[1, 2, 3, 4], [2, 3, 5], [3, 6], [7]]])
    >>> a.is_satisfied(a.run([1, 2, 3, 5]))
    True
    >>> a = Automaton([[[1, 2, 3]]], banned=[[2]])   # a banned phrase inside the only alternative
    >>> a.impossible_sets
    (0,)

    A whole-word alternative, with token 9 a word piece (``##ed``):

    >>> a = Automaton([[[5]]], whole_word=[[True]], continues=[False] * 9 + [True])
    >>> [a.is_satisfied(a.run(t)) for t in ([5], [5, 9], [5, 3], [5, 9, 5])]
    [True, False, True, True]
    """

    def __init__(
        self,
        sets: TokenSets,
        banned: Sequence[Sequence[int]] = (),
        whole_word: WholeWord | None = None,
        continues: Sequence[bool] | None = None,
    ) -> None:
        """Check the constraints, then build in steps: the trie (:meth:`_build_trie`), its
        failure links (:meth:`_link_failures`), the impossible sets
        (:meth:`_find_impossible_sets`) and the progress tables
        (:meth:`_compute_progress_tables`)."""
        validate_token_constraints(sets, banned)
        self._check_word_boundaries(sets, whole_word, continues)
        self.sets: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
            tuple(tuple(alt) for alt in alternatives) for alternatives in sets
        )
        self.banned: tuple[tuple[int, ...], ...] = tuple(tuple(p) for p in banned)
        self.num_sets = len(self.sets)
        self.all_met = (1 << self.num_sets) - 1
        own_ends, own_banned = self._build_trie()
        self._link_failures(own_ends, own_banned)
        self._find_impossible_sets()
        self._compute_progress_tables()

    def _check_word_boundaries(self, sets: TokenSets, whole_word: WholeWord | None,
                               continues: Sequence[bool] | None) -> None:
        """Set ``whole_word`` (one flag per alternative), ``has_whole_word`` and ``continues``
        (kept only when some alternative is whole-word, which needs it)."""
        self.whole_word: tuple[tuple[bool, ...], ...] = _check_whole_word(sets, whole_word)
        self.has_whole_word = any(any(flags) for flags in self.whole_word)
        if self.has_whole_word and continues is None:
            raise ConstraintError(
                "whole-word alternatives need `continues` (which tokens continue a word, "
                "dpc_decode.word_boundary.word_pieces): got None"
            )
        self.continues: Sequence[bool] | None = continues if self.has_whole_word else None

    def _build_trie(self) -> tuple[list[list[tuple[int, int]]], list[bool]]:
        """The trie of every alternative and banned phrase (``children``, ``depth``,
        ``alternative_node``); node 0 is the root. Returns, per node, the (set, alternative)
        pairs ending exactly there and whether a banned phrase does, for :meth:`_link_failures`."""
        self.children: list[dict[int, int]] = [{}]
        self.depth: list[int] = [0]
        own_ends: list[list[tuple[int, int]]] = [[]]  # (set, alternative) ending exactly here
        own_banned: list[bool] = [False]

        def insert(phrase: Sequence[int]) -> int:
            node = 0
            for t in phrase:
                nxt = self.children[node].get(t)
                if nxt is None:
                    nxt = len(self.children)
                    self.children[node][t] = nxt
                    self.children.append({})
                    self.depth.append(self.depth[node] + 1)
                    own_ends.append([])
                    own_banned.append(False)
                node = nxt
            return node

        self.alternative_node: list[list[int]] = []
        for i, alternatives in enumerate(self.sets):
            nodes = []
            for j, alt in enumerate(alternatives):
                node = insert(alt)
                own_ends[node].append((i, j))
                nodes.append(node)
            self.alternative_node.append(nodes)
        for phrase in self.banned:
            own_banned[insert(phrase)] = True
        return own_ends, own_banned

    def _link_failures(self, own_ends: list[list[tuple[int, int]]], own_banned: list[bool]) -> None:
        """Failure links in breadth-first order (``fail``, ``order``); what a node completes
        (``ends``, ``completes``, ``pending``) and whether it violates a banned phrase
        (``violation``) propagate along them."""
        n = len(self.children)
        self.fail: list[int] = [0] * n
        self.ends: list[tuple[tuple[int, int], ...]] = [()] * n  # every (set, alt) ending here
        self.completes: list[int] = [0] * n  # sets met on reaching the node
        self.pending: list[int] = [0] * n  # sets met if the next token starts a new word
        self.violation: list[bool] = [False] * n
        self.order: list[int] = []  # breadth-first
        queue = deque([0])
        while queue:
            node = queue.popleft()
            self.order.append(node)
            f = self.fail[node]
            own = own_ends[node]
            self.ends[node] = (tuple(own) + self.ends[f]) if node else tuple(own)
            if self.has_whole_word:
                exact = [e for e in own if not self.whole_word[e[0]][e[1]]]
                whole = [e for e in own if self.whole_word[e[0]][e[1]]]
                self.pending[node] = self._mask(whole) | (self.pending[f] if node else 0)
            else:
                exact = own
            self.completes[node] = self._mask(exact) | (self.completes[f] if node else 0)
            self.violation[node] = own_banned[node] or (self.violation[f] if node else False)
            for t, child in self.children[node].items():
                self.fail[child] = 0 if node == 0 else self._goto_from(self.fail[node], t)
                queue.append(child)

    def _find_impossible_sets(self) -> None:
        """Dead alternatives (``dead``: they contain a banned phrase), impossible sets (every
        alternative dead) and each set's shortest live alternative (``min_length``, 0 if none)."""
        self.dead: list[list[bool]] = [
            [bool(self.banned) and self._contains_banned(alt) for alt in alternatives]
            for alternatives in self.sets
        ]
        self.impossible_sets: tuple[int, ...] = tuple(
            i for i, d in enumerate(self.dead) if all(d)
        )
        self._impossible_mask = self._mask((i, 0) for i in self.impossible_sets)
        self.min_length: list[int] = [
            min((len(a) for a, d in zip(alts, dead) if not d), default=0)
            for alts, dead in zip(self.sets, self.dead)
        ]

    @staticmethod
    def _mask(ends: Iterator[tuple[int, int]] | Sequence[tuple[int, int]]) -> int:
        m = 0
        for i, _ in ends:
            m |= 1 << i
        return m

    def _goto_from(self, node: int, token: int) -> int:
        while True:
            nxt = self.children[node].get(token)
            if nxt is not None:
                return nxt
            if node == 0:
                return 0
            node = self.fail[node]

    def _contains_banned(self, phrase: Sequence[int]) -> bool:
        node = 0
        for t in phrase:
            node = self.goto(node, t)
            if self.violation[node]:
                return True
        return False

    def _compute_progress_tables(self) -> None:
        """``useful[node]``: sets with a live alternative that has this node's string as a prefix;
        ``remaining[node][s]``: fewest tokens that finish set ``s`` from ``node``, using the
        longest suffix of the node's string that is a prefix of one of its live alternatives."""
        n, big = len(self.children), 1 << 30
        own_rem = [[big] * self.num_sets for _ in range(n)]
        self.useful: list[int] = [0] * n
        for i, alternatives in enumerate(self.sets):
            for alt, dead in zip(alternatives, self.dead[i]):
                if dead:
                    continue
                node = 0
                own_rem[0][i] = min(own_rem[0][i], len(alt))
                for d, t in enumerate(alt, start=1):
                    node = self.children[node][t]
                    own_rem[node][i] = min(own_rem[node][i], len(alt) - d)
                    self.useful[node] |= 1 << i
        self.remaining: list[list[int]] = [[0] * self.num_sets for _ in range(n)]
        for node in self.order:  # a node's failure target comes earlier in breadth-first order
            base = own_rem[node] if node == 0 else [
                min(a, b) for a, b in zip(own_rem[node], self.remaining[self.fail[node]])
            ]
            self.remaining[node] = base

    # ------------------------------------------------------------------ walking
    @property
    def num_nodes(self) -> int:
        """Number of trie nodes, the root included."""
        return len(self.children)

    def goto(self, node: int, token: int) -> int:
        """The automaton's transition: the node of the longest suffix of ``string(node) + token``
        that is in the trie."""
        return self._goto_from(node, token)

    def start(self) -> State:
        """The state before any token: at the root, nothing met (impossible sets excepted: they
        can never be met, and are reported through :attr:`impossible_sets`)."""
        return State(node=0, met=0, violated=False)

    def advance(self, state: State, token: int) -> State:
        """The state after one more token.

        >>> a = Automaton([[[1, 2]], [[3]]])
        >>> a.advance(a.advance(a.start(), 1), 2).met
        1
        """
        return State(*self._step(state.node, state.met, state.violated, token))

    def _step(self, node: int, met: int, violated: bool, token: int) -> tuple[int, int, bool]:
        """:meth:`advance` on the state's fields, without a State object (a walk over many
        tokens keeps them in locals instead of making a State a token: ``python
        benchmarks/engine_micro.py``, ``scan_ms`` against ``walk_states_ms``)."""
        nxt = self._goto_from(node, token)
        met |= self.completes[nxt]
        if self.pending[node] and not self._continues(token):
            met |= self.pending[node]
        return nxt, met, violated or self.violation[nxt]

    def _continues(self, token: int) -> bool:
        c = self.continues
        return c is None or token >= len(c) or bool(c[token])

    def met_if_ended(self, state: State) -> int:
        """The sets met if the output ended here: ``state.met`` and the pending sets (a
        whole-word alternative that has just ended is met by the end of the text)."""
        return state.met | self.pending[state.node]

    def run(self, tokens: Sequence[int], state: State | None = None) -> State:
        """Advance over every token of ``tokens``."""
        state = self.start() if state is None else state
        node, met, violated = state.node, state.met, state.violated
        for t in tokens:
            node, met, violated = self._step(node, met, violated, t)
        return State(node=node, met=met, violated=violated)

    def is_satisfied(self, state: State) -> bool:
        """All sets met, were the output to end here, and no banned phrase seen."""
        return self.met_if_ended(state) == self.all_met and not state.violated

    def matches(self, tokens: Sequence[int]) -> Iterator[Match]:
        """Every occurrence of every alternative, in order of its end position (then of set and
        alternative); a whole-word alternative only where the next token does not continue the
        word, or at the end."""
        node = 0
        for pos, t in enumerate(tokens):
            node = self.goto(node, t)
            yield from self._matches_at(node, pos, tokens)

    def _matches_at(self, node: int, pos: int, tokens: Sequence[int]) -> Iterator[Match]:
        """The occurrences that end at ``tokens[pos]``, where the walk is at ``node``."""
        if not self.ends[node]:
            return
        boundary = pos + 1 == len(tokens) or not self._continues(tokens[pos + 1])
        for i, j in sorted(self.ends[node]):
            if self.whole_word[i][j] and not boundary:
                continue
            yield Match(i, j, pos + 1 - len(self.sets[i][j]), pos + 1)

    def first_matches(self, tokens: Sequence[int]) -> dict[int, Match]:
        """For each set met by ``tokens``, the occurrence that met it first (the earliest end;
        among alternatives ending there, the lowest index)."""
        return self.scan(tokens)[1]

    def scan(self, tokens: Sequence[int]) -> tuple[State, dict[int, Match]]:
        """:meth:`run` and :meth:`first_matches` of ``tokens`` in one walk.

        >>> a = Automaton([[[1, 2]], [[3]]])
        >>> state, first = a.scan([3, 1, 2])
        >>> a.is_satisfied(state), first[0].start, first[1].end
        (True, 1, 1)
        """
        if self.num_nodes == 1:  # no phrase at all: the walk stays at the root, nothing is met
            return self.start(), {}
        node, met, violated, first = 0, 0, False, {}
        for pos, t in enumerate(tokens):
            node, met, violated = self._step(node, met, violated, t)
            if self.ends[node]:
                for m in self._matches_at(node, pos, tokens):
                    first.setdefault(m.set_index, m)
        return State(node=node, met=met, violated=violated), first

    # ------------------------------------------------------------------ fewest tokens
    @cached_property
    def live_bit(self) -> tuple[int, ...]:
        """For each set, its bit in the met-bits of :meth:`need` (the k-th possible set gets
        ``1 << k``); 0 for impossible sets, which are never counted."""
        bits, k = [], 0
        for s in range(self.num_sets):
            if s in self.impossible_sets:
                bits.append(0)
            else:
                bits.append(1 << k)
                k += 1
        return tuple(bits)

    def met_bits(self, met: int) -> int:
        """``met`` (a bit per set) as the met-bits of the possible sets only."""
        if not self.impossible_sets:  # every set is possible: its met-bit is its own bit
            return met
        return sum(b for s, b in enumerate(self.live_bit) if (met >> s) & 1)

    def transitions(self) -> list[tuple[int, ...]]:
        """For each node, the distinct nodes one more token leads to, violation nodes left out:
        those of the letters (tokens of some phrase) and the root, where any other token leads.
        Assumes the vocabulary holds a token outside the alphabet."""
        rows: list[dict[int, int]] = [{}] * self.num_nodes
        for node in self.order:  # a node's failure target comes earlier in breadth-first order
            rows[node] = {**rows[self.fail[node]], **self.children[node]} if node else dict(self.children[0])
        return [
            tuple(sorted(w for w in {0, *row.values()} if not self.violation[w])) for row in rows
        ]

    def _edges(self) -> list[list[tuple[int, int]]]:
        """For each node, the distinct ``(target, met-bits gained)`` of one more token, violation
        targets left out: each letter's, and the root's for any other token, taken to start a
        new word (one that continues it leads to the root too, gaining less: never shorter)."""
        if not self.has_whole_word:
            gets = [self.met_bits(c) for c in self.completes]
            return [[(w, gets[w]) for w in ws] for ws in self.transitions()]
        rows: list[dict[int, int]] = [{}] * self.num_nodes
        for node in self.order:
            rows[node] = {**rows[self.fail[node]], **self.children[node]} if node else dict(self.children[0])
        gets = [self.met_bits(c) for c in self.completes]
        pend = [self.met_bits(p) for p in self.pending]
        edges = []
        for v, row in enumerate(rows):
            out = {(0, pend[v])}
            for t, w in row.items():
                out.add((w, gets[w] | (0 if self._continues(t) else pend[v])))
            edges.append(sorted(e for e in out if not self.violation[e[0]]))
        return edges

    @cached_property
    def exact_need_table(self) -> tuple[int, ...] | None:
        """Fewest further tokens that meet every unmet possible set, for every state: entry
        ``node << L | bits`` (``L`` possible sets, ``bits`` from :meth:`met_bits`). ``None`` when
        the state graph is over :data:`EXACT_NEED_BUDGET`. Computed on first use, then kept.

        A shortest path in the graph of (node, met-bits) states, each token one edge, edges into
        violation nodes left out. Sets met only grow along an edge, so the met-bits are solved
        from all-met (0 tokens) down to none: within one met-bits value, an edge that meets a new
        set leads to a solved value, and the edges that do not are unit steps of a breadth-first
        search backwards from the nodes that have such an edge. A node whose pending sets hold
        every set still unmet is done (0 tokens): the output may end there.

        >>> a = Automaton([[[1, 2, 3]], [[2, 3, 4]]])   # suffix of one is the other's prefix
        >>> a.need(a.start()), a.plan_need(a.start())
        (4, 6)
        """
        live = sum(1 for b in self.live_bit if b)
        if need_over_budget(self.num_nodes, live):  # every node has a transition at least
            return None
        edges = self._edges()
        if need_over_budget(sum(len(e) for e in edges), live):
            return None
        n, full, big = self.num_nodes, (1 << live) - 1, 1 << 30
        pend = [(v, self.met_bits(p)) for v, p in enumerate(self.pending) if p]
        # An edge that meets no set stays within every met-bits value: reversed once. An edge
        # that does (few) leaves the values that lack its sets.
        plain_back: list[list[int]] = [[] for _ in range(n)]
        exits: list[tuple[int, list[tuple[int, int]]]] = []  # (node, [(target, met-bits)])
        for v, out in enumerate(edges):
            for w, got in out:
                if not got:
                    plain_back[w].append(v)
            meets = [(w, got) for w, got in out if got]
            if meets:
                exits.append((v, meets))
        layers: list[list[int]] = [[]] * (full + 1)  # layers[bits][node]
        layers[full] = [0] * n
        for bits in range(full - 1, -1, -1):  # every superset of bits is larger, so solved
            dist = [big] * n
            extra: dict[int, list[int]] = {}  # exits within this value after all, reversed
            for v, out in exits:
                best = big
                for w, got in out:
                    if got | bits != bits:
                        best = min(best, layers[bits | got][w])
                    else:
                        extra.setdefault(w, []).append(v)
                dist[v] = best + 1
            for v, got in pend:  # the end of the output meets the pending sets
                if got | bits == full:
                    dist[v] = 0
            # Breadth-first from nodes that leave the value, each starting at its own distance:
            # the sources in order of distance, merged with the queue (unit steps keep it sorted).
            sources = sorted((d, v) for v, d in enumerate(dist) if d < big)
            queue: deque[int] = deque()
            i = 0
            while i < len(sources) or queue:
                if queue and (i == len(sources) or dist[queue[0]] <= sources[i][0]):
                    w = queue.popleft()
                else:
                    d, w = sources[i]
                    i += 1
                    if d > dist[w]:  # reached sooner from another source: queued already
                        continue
                d = dist[w] + 1
                for v in plain_back[w] if w not in extra else plain_back[w] + extra[w]:
                    if d < dist[v]:
                        dist[v] = d
                        queue.append(v)
            layers[bits] = dist
        return tuple(chain.from_iterable(zip(*layers)))  # node-major: entry node << L | bits

    @property
    def need_is_exact(self) -> bool:
        """Whether :meth:`need` is the exact minimum (the state graph is within the budget)."""
        return self.exact_need_table is not None

    def need(self, state: State) -> int:
        """Fewest further tokens that meet every unmet (possible) set from ``state``, without
        completing a banned phrase: exact when :attr:`need_is_exact`, else :meth:`plan_need`.

        Decoding keeps every hypothesis able to finish within ``max_new_tokens`` by this value;
        strict mode refuses constraints whose exact minimum at the start exceeds the budget.

        >>> a = Automaton([[[1, 2, 3]], [[4], [5, 6]]])
        >>> a.need(a.start()), a.need(a.run([1, 2])), a.need(a.run([1, 2, 3]))
        (4, 2, 1)
        >>> a = Automaton([[[1, 2, 3]], [[2]]])       # one alternative contains the other
        >>> a.need(a.start()), a.plan_need(a.start())
        (3, 4)
        """
        table = self.exact_need_table
        if table is None:
            return self.plan_need(state)
        live = sum(1 for b in self.live_bit if b)
        return table[state.node << live | self.met_bits(state.met)]

    @cached_property
    def max_need(self) -> int:
        """The largest :meth:`need` of any state decoding can reach (no banned phrase completed).

        Exact: the largest need of any non-violation node with nothing met, which is the start's
        unless a banned phrase makes a node's way out one token longer. Otherwise the plan's need
        at the start (:meth:`plan_need` never grows along a walk)."""
        table = self.exact_need_table
        if table is None:
            return self.plan_need(self.start())
        live = sum(1 for b in self.live_bit if b)
        return max([table[v << live] for v in range(self.num_nodes) if not self.violation[v]] + [0])

    def plan_need(self, state: State) -> int:
        """Tokens of one plan that meets every unmet (possible) set: finish the set with the most
        progress from here, then each other set with its shortest alternative.

        The fallback of :meth:`need` beyond :data:`EXACT_NEED_BUDGET`, and not exact: it ignores
        savings from alternatives that overlap each other, so it can exceed the true minimum
        (``[1, 2, 3]`` and ``[2, 3, 4]`` fit in 4 tokens; the plan says 6), it ignores
        banned phrases that the plan's tokens could complete across an alternative's boundary,
        and it counts a pending whole-word set as met.

        >>> a = Automaton([[[1, 2, 3]], [[4], [5, 6]]])
        >>> a.plan_need(a.start()), a.plan_need(a.run([1, 2])), a.plan_need(a.run([5]))
        (4, 2, 4)
        """
        unmet = [
            i
            for i in range(self.num_sets)
            if not (state.met >> i) & 1 and not (self._impossible_mask >> i) & 1
        ]
        if not unmet:
            return 0
        total = sum(self.min_length[i] for i in unmet)
        gain = max(self.min_length[i] - self.remaining[state.node][i] for i in unmet)
        return total - gain


def satisfies(
    token_ids: Sequence[int],
    constraints: TokenSets,
    banned: Sequence[Sequence[int]] = (),
    *,
    whole_word: WholeWord | None = None,
    continues: Sequence[bool] | None = None,
) -> bool:
    """Whether ``token_ids`` contains an alternative of every set and none of the banned phrases.

    Parameters
    ----------
    token_ids : list of int
        The generated tokens (the prompt excluded: it never counts).
    constraints : list of list of list of int
        ``constraints[i][j]`` is alternative ``j`` of set ``i``.
    banned : list of list of int, optional
        Phrases that must not occur.
    whole_word, continues : optional
        Whole-word alternatives and the word pieces of the vocabulary (see :class:`Automaton`).

    Examples
    --------
    >>> satisfies([1, 3, 4, 9, 1, 2], [[[1, 2]], [[3, 4]]])
    True
    >>> satisfies([1, 3, 4, 9, 1, 2], [[[1, 2]], [[3, 4]]], banned=[[4, 9]])
    False
    >>> satisfies([100, 8], [[[100], [100, 7], [100, 8]]])
    True
    """
    automaton = Automaton(constraints, banned, whole_word, continues)
    return automaton.is_satisfied(automaton.run(token_ids))


def _check_whole_word(sets: TokenSets, whole_word: WholeWord | None) -> tuple[tuple[bool, ...], ...]:
    """``whole_word`` as tuples, one flag per alternative (all False for None); a
    :class:`ConstraintError` naming the value when its shape is not that of ``sets``.

    >>> _check_whole_word([[[1], [2]]], [[True]])
    Traceback (most recent call last):
    ...
    dpc_decode.errors.ConstraintError: `whole_word` needs one flag per alternative of every set (shape [2]), got [[True]]
    """
    shape = [len(alternatives) for alternatives in sets]
    if whole_word is None:
        return tuple((False,) * k for k in shape)
    if (
        isinstance(whole_word, (str, bytes)) or not isinstance(whole_word, Sequence)
        or [len(f) if isinstance(f, Sequence) else -1 for f in whole_word] != shape
        or not all(isinstance(b, bool) for f in whole_word for b in f)
    ):
        raise ConstraintError(
            f"`whole_word` needs one flag per alternative of every set (shape {shape}), "
            f"got {whole_word!r}"
        )
    return tuple(tuple(f) for f in whole_word)
