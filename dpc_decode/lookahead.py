"""NeuroLogic A*esque's lookahead (Lu et al. 2022, ``GXimingLu/a_star_neurologic``): a short
greedy rollout from each of the step's leading candidates estimates whether the sets it has not
met can still be placed, and the estimate joins its rank score
(``score / (step + 1) + lookahead_weight * estimate``; :func:`~dpc_decode.search.beam_search`
orders the candidates again by it).

The rollouts are the search's main cost, so no model step is taken twice:

- **The first step is the search's next.** A rollout's first model step, from a candidate, is
  the one the search takes next if it chooses that candidate as a beam. The complete candidates
  that could be chosen take that step too (without a rollout), and the new beams take their rows
  over (:meth:`Lookahead.adopt`) instead of stepping the model again.
- **A beam's rollout continues.** A candidate that extends a beam by the token the beam's own
  rollout chose next has a rollout that is the beam's, one step on: its first ``steps - 1``
  positions (their model states, log-probabilities and tokens) are kept from the previous step
  (:class:`_Kept`), and only the last takes a model step (on CommonGen about a quarter of the
  candidates that take the first step: ``benchmarks/commongen/lookahead_work.py``).
- **No rollout where it cannot matter**: for done inputs, and for candidates that cannot be
  among the next beams whatever their estimate (:func:`never_chosen`).

Keeping model states across steps holds references to a cache's tensors instead of copies
(:meth:`~dpc_decode.model_runner.ModelRunner.snapshot`), which is sound only for caches whose
steps replace their tensors (``ModelRunner.joinable``: transformers' dynamic caches); for other
caches only the first two savings apply.

>>> from dpc_decode import generate
>>> from transformers import GPT2Config, GPT2LMHeadModel
>>> import torch
>>> _ = torch.manual_seed(0)
>>> model = GPT2LMHeadModel(GPT2Config(vocab_size=40, n_positions=32, n_embd=16, n_layer=1,
...                                    n_head=2, eos_token_id=1, pad_token_id=0)).eval()
>>> out = generate(model, None, [[5, 6, 7]], [[[9], [10]], [[12]]], num_beams=4,
...                max_new_tokens=8, search="neurologic", lookahead=3)
>>> out[0][0].satisfied
True
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from dpc_decode.model_runner import ModelRunner
from dpc_decode.options import BeamSearchOptions
from dpc_decode.tensor_automaton import TensorAutomaton, rows_at

__all__ = ["Candidates", "FirstStep", "Lookahead", "never_chosen"]

NEG_INF = float("-inf")


@dataclass(frozen=True)
class Candidates:
    """What the lookahead reads of the step's candidates: all (B, C) but ``met`` ((B, C, S)
    booleans, or (B, C) packed bits where the automaton packs them)."""

    parent: torch.Tensor  # beam each candidate extends
    token: torch.Tensor
    score: torch.Tensor  # total log-probability; -inf: dropped
    valid: torch.Tensor
    is_eos: torch.Tensor
    node: torch.Tensor  # automaton node
    complete: torch.Tensor  # meets every set were it to end now
    met: torch.Tensor  # the sets met were it to end now


@dataclass(frozen=True)
class _Rows:
    """N model states held by some runners, all at the same length: state ``i`` is row
    ``at[i]`` of ``runners[of[i]]``."""

    runners: tuple[ModelRunner, ...]
    of: torch.Tensor  # (N,)
    at: torch.Tensor  # (N,)

    @classmethod
    def of_runner(cls, runner: ModelRunner, rows: torch.Tensor) -> _Rows:
        return cls((runner,), torch.zeros_like(rows), rows)

    def take(self, index: torch.Tensor) -> ModelRunner:
        """A runner of its own over copies of states ``index`` (n,), in that order."""
        if len(self.runners) == 1:
            return self.runners[0].fork(self.at[index])
        of, at = self.of[index], self.at[index]
        positions = torch.arange(index.numel(), device=index.device)
        parts = []
        for number, runner in enumerate(self.runners):
            mine = of == number
            parts.append((runner, at[mine], positions[mine]))
        return ModelRunner.joined(parts, index.numel())

    @staticmethod
    def cat(first: _Rows, second: _Rows) -> _Rows:
        """``first``'s states, then ``second``'s."""
        return _Rows(first.runners + second.runners,
                     torch.cat([first.of, second.of + len(first.runners)]),
                     torch.cat([first.at, second.at]))


@dataclass(frozen=True)
class FirstStep:
    """The model step the lookahead took from some of the step's candidates (N of them): the
    next step's beams are mostly among them (:meth:`Lookahead.adopt`)."""

    states: _Rows  # the model state after each stepped candidate's token
    log_probs: torch.Tensor  # (N, V) the next log-probabilities of each stepped candidate
    row: torch.Tensor  # (B, C) the stepped candidate of each candidate column; -1: not stepped


@dataclass(frozen=True)
class _Rolled:
    """This step's rollouts (N' of them), positions 1..S (S = the lookahead's steps)."""

    row: torch.Tensor  # (B, C) the rollout of each candidate column; -1: none
    greedy: torch.Tensor  # (N', S) the greedy token after each position
    log_probs: list[torch.Tensor]  # positions 2..S: (N', V)
    states: list[_Rows]  # positions 2..S: the model state that gave those log-probabilities


@dataclass(frozen=True)
class _Kept:
    """The rollouts of the beams chosen last step (M of them), positions 1..S."""

    beam: torch.Tensor  # (B, K) the kept rollout of each beam; -1: none
    greedy: torch.Tensor  # (M, S)
    log_probs: list[torch.Tensor]  # positions 2..S: (M, V)
    states: list[ModelRunner]  # positions 2..S: M rows each


class Lookahead:
    """The lookahead of one beam search: its estimates (:meth:`estimate`), the model step the
    new beams take over (:meth:`adopt`), and the rollouts kept for the next step
    (:meth:`keep`)."""

    def __init__(self, automaton: TensorAutomaton, input_block: torch.Tensor, beams: int,
                 options: BeamSearchOptions) -> None:
        self.automaton = automaton
        self.input_block = input_block  # (B, 1)
        self.beams = beams
        self.steps = options.lookahead
        self.slots = options.score_slots
        self.packed = automaton.set_bits is not None
        self.kept: _Kept | None = None
        self._rolled: _Rolled | None = None

    def estimate(
        self,
        runner: ModelRunner,
        running: torch.Tensor,  # (A,) inputs whose beams are the runner's rows, in its order
        done: torch.Tensor,  # (B,)
        candidates: Candidates,
        short: torch.Tensor,  # (B, W) the candidate columns to estimate
        last: bool,
    ) -> tuple[torch.Tensor, FirstStep | None]:
        """Each candidate's estimate (B, W): the best log-probability, over the positions of a
        greedy rollout of ``steps`` tokens from it, of a token that starts or continues an
        alternative of a set it has not met (the automaton walked along the rollout). 0 where
        there is none, and for candidates that meet every set, end, are invalid, belong to a
        done input or cannot be chosen (:func:`never_chosen`). Also the first model step taken
        (:class:`FirstStep`), for :meth:`adopt`."""
        c = candidates
        batch = c.token.shape[0]
        device = short.device
        position = torch.full((batch,), -1, dtype=torch.long, device=device)
        position[running] = torch.arange(running.numel(), device=device)
        valid, is_eos = c.valid.gather(1, short), c.is_eos.gather(1, short)
        live = valid & ~is_eos & ((position >= 0) & ~done).unsqueeze(1)  # (B, W)
        complete = c.complete.gather(1, short)
        score = c.score.gather(1, short)  # (B, W)
        best_complete = score.masked_fill(~(live & complete), NEG_INF).topk(
            min(self.beams, short.shape[1]), dim=1)
        roll = live & ~complete
        if not last:  # (at the last step the whole head ends, in the order the estimates give)
            roll &= ~never_chosen(score, best_complete.values, valid & is_eos, self.beams,
                                  self.slots)
        # the complete candidates that could be chosen take the first step too (no rollout)
        stepped = roll.scatter(1, best_complete.indices, torch.isfinite(best_complete.values)
                               | roll.gather(1, best_complete.indices))  # (B, W)
        future = torch.zeros(short.shape, device=device)
        self._rolled = None
        if not bool(stepped.any()):
            return future, None
        at_input, at_col = stepped.nonzero(as_tuple=True)  # (N,) each
        column = short[at_input, at_col]
        first, continued = self._first_step(runner, position, c, at_input, column)
        rolled = roll[at_input, at_col].nonzero().squeeze(-1)  # (N',) among the stepped
        if rolled.numel():
            best = self._roll_out(first, continued, c, at_input[rolled], column[rolled])
            future[at_input[rolled], at_col[rolled]] = best
        return future, first

    def _first_step(
        self,
        runner: ModelRunner,
        position: torch.Tensor,  # (B,) each input's place among the runner's, -1: not running
        c: Candidates,
        at_input: torch.Tensor,  # (N,) the stepped candidates
        column: torch.Tensor,  # (N,)
    ) -> tuple[FirstStep, torch.Tensor]:
        """The model step from each stepped candidate, and the kept rollout each continues
        (N,; -1: none). A continuation's step is its beam's rollout's second position, kept;
        the others take it now, in one batch on a fork of the runner."""
        parent, token = c.parent[at_input, column], c.token[at_input, column]
        continued = self._continued(at_input, parent, token)  # (N,)
        fresh = (continued < 0).nonzero().squeeze(-1)
        again = (continued >= 0).nonzero().squeeze(-1)
        n = at_input.numel()
        parts: list[tuple[torch.Tensor, _Rows]] = []
        if fresh.numel():
            fork = runner.fork(position[at_input[fresh]] * self.beams + parent[fresh])
            parts.append((torch.log_softmax(fork.step(token[fresh]), dim=-1),
                          _Rows.of_runner(fork, torch.arange(fresh.numel(), device=column.device))))
        if again.numel():
            assert self.kept is not None
            kept_rows = continued[again]
            parts.append((self.kept.log_probs[0][kept_rows],
                          _Rows.of_runner(self.kept.states[0], kept_rows)))
        log_probs, states = _cat_parts(parts)
        order = torch.cat([fresh, again])  # stepped candidate of each state
        place = torch.empty_like(order)
        place[order] = torch.arange(n, device=order.device)  # state of each stepped candidate
        row = torch.full(c.token.shape, -1, dtype=torch.long, device=column.device)
        row[at_input, column] = place
        return FirstStep(states, log_probs, row), continued[order]

    def _continued(self, at_input: torch.Tensor, parent: torch.Tensor, token: torch.Tensor
                   ) -> torch.Tensor:
        """The kept rollout (N,) each candidate continues (it extends a beam by the token the
        beam's rollout chose next), -1 where none."""
        kept = self.kept
        none = torch.full_like(token, -1)
        if kept is None or self.steps < 2:
            return none
        row = kept.beam[at_input, parent]  # (N,)
        follows = (row >= 0) & (kept.greedy[row.clamp(min=0), 0] == token)
        return torch.where(follows, row, none)

    def _roll_out(
        self,
        first: FirstStep,
        continued: torch.Tensor,  # (N,) in state order: the kept rollout each continues, -1
        c: Candidates,
        at_input: torch.Tensor,  # (N',) the rolled-out candidates
        column: torch.Tensor,  # (N',)
    ) -> torch.Tensor:
        """The rolled-out candidates' estimates (N',), their rollouts kept in ``_rolled``."""
        a = self.automaton
        steps = self.steps
        state_of = first.row[at_input, column]  # (N',) their first step's state
        reused = continued[state_of]  # (N',) the kept rollout each continues, -1
        new = (reused < 0).nonzero().squeeze(-1)
        old = (reused >= 0).nonzero().squeeze(-1)
        order = torch.cat([new, old])  # rollouts: the new ones, then the continued
        state_of, reused, at_input, column = (state_of[order], reused[order], at_input[order],
                                              column[order])
        kept_rows = reused[len(new):]
        node = c.node[at_input, column]  # (N',) automaton node
        block = self.input_block[at_input]  # (N', 1)
        wanted = (~a.unpack(c.met[at_input, column]) if self.packed
                  else ~c.met[at_input, column])  # (N', sets)
        log_probs = first.log_probs[state_of]  # position 1
        fork = first.states.take(state_of[: len(new)]) if steps > 1 and len(new) else None
        greedy, per_set, kept_log_probs, states = [], [], [], []
        for at in range(1, steps + 1):
            if at > 1:
                log_probs, rows = self._position(at, fork, greedy[-1][: len(new)], kept_rows)
                kept_log_probs.append(log_probs)
                states.append(rows)
            per_set.append(self._per_set(log_probs, node, block))
            token = log_probs.argmax(-1)  # (N',)
            greedy.append(token)
            node = a.next_node[node, a.block_symbols(block, token.unsqueeze(1)).squeeze(1)]
        per_set_t = torch.stack(per_set, dim=1)  # (N', S, sets)
        best = per_set_t.masked_fill(~wanted.unsqueeze(1), NEG_INF).amax(dim=(1, 2))
        row = torch.full(c.token.shape, -1, dtype=torch.long, device=column.device)
        row[at_input, column] = torch.arange(order.numel(), device=column.device)
        self._rolled = _Rolled(row, torch.stack(greedy, dim=1), kept_log_probs, states)
        estimate = torch.where(torch.isfinite(best), best, 0.0)
        return estimate[torch.argsort(order)]

    def _position(
        self,
        at: int,  # 2..S
        fork: ModelRunner | None,  # the new rollouts' runner, at position at - 1
        token: torch.Tensor,  # (n,) the new rollouts' greedy token after position at - 1
        kept_rows: torch.Tensor,  # (m,) the kept rollout each continued one continues
    ) -> tuple[torch.Tensor, _Rows]:
        """Log-probabilities (n + m, V) and model states of every rollout at position ``at``:
        a model step for the new rollouts; for the continued ones position ``at + 1`` of the
        rollout they continue, kept, but at the last position a model step from its last."""
        parts: list[tuple[torch.Tensor, _Rows]] = []
        if fork is not None:
            log_probs = torch.log_softmax(fork.step(token), dim=-1)
            held = fork.snapshot() if fork.joinable else fork  # (kept only where joinable)
            parts.append((log_probs, _Rows.of_runner(held, torch.arange(
                token.numel(), device=token.device))))
        if kept_rows.numel():
            kept = self.kept
            assert kept is not None
            if at < self.steps:
                parts.append((kept.log_probs[at - 1][kept_rows],
                              _Rows.of_runner(kept.states[at - 1], kept_rows)))
            else:
                last = kept.states[-1].fork(kept_rows)
                log_probs = torch.log_softmax(last.step(kept.greedy[kept_rows, -1]), dim=-1)
                parts.append((log_probs, _Rows.of_runner(last, torch.arange(
                    kept_rows.numel(), device=kept_rows.device))))
        return _cat_parts(parts)

    def _per_set(self, log_probs: torch.Tensor, node: torch.Tensor, block: torch.Tensor
                 ) -> torch.Tensor:
        """The best log-probability (n, sets) of a token that starts or continues an
        alternative of each set from automaton ``node`` (n,)."""
        a = self.automaton
        letters = a.leaving[node]  # (n, M) tokens leaving the root from here
        reached = a.next_node[node.unsqueeze(1), a.block_symbols(block, letters)]  # (n, M)
        useful = rows_at(a.useful, reached)  # (n, M, sets)
        letter = log_probs.gather(1, letters).unsqueeze(-1)  # (n, M, 1)
        return letter.masked_fill(~useful, NEG_INF).amax(1)

    def keep(self, pick: torch.Tensor) -> None:
        """Keep the rollouts of the candidates chosen as beams (``pick`` (B, K) columns) for
        the next step's continuations; where the runner's cache can be kept without copies."""
        rolled, self._rolled, self.kept = self._rolled, None, None
        if rolled is None or self.steps < 2 or not rolled.states[0].runners[0].joinable:
            return
        beam = rolled.row.gather(1, pick)  # (B, K)
        chosen = beam[beam >= 0]  # (M,)
        if not chosen.numel():
            return
        index = torch.full((rolled.greedy.shape[0],), -1, dtype=torch.long, device=pick.device)
        index[chosen] = torch.arange(chosen.numel(), device=pick.device)
        self.kept = _Kept(
            beam=torch.where(beam >= 0, index[beam.clamp(min=0)], beam),
            greedy=rolled.greedy[chosen],
            log_probs=[lp[chosen] for lp in rolled.log_probs],
            states=[rows.take(chosen) for rows in rolled.states])

    def adopt(
        self,
        runner: ModelRunner,
        first: FirstStep,
        pick: torch.Tensor,  # (B, K) chosen candidate columns
        beam_scores: torch.Tensor,  # (B, K) -inf: no beam
        done: torch.Tensor,  # (B,)
        running: torch.Tensor,  # (A,)
    ) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The next step's model step taken from the lookahead's first (:class:`FirstStep`)
        instead of anew, where it holds every new beam of the inputs still running: the runner
        takes those states (done inputs leave its batch, as the search's compaction would make
        them), and the running inputs (A',) and their beams' next log-probabilities (A' K, V)
        are returned. ``None`` (nothing changed) where a beam was not stepped. A row without a
        beam (score -inf: nothing it holds is read again) takes any stepped state of its
        input. One host sync."""
        keep = running[~done[running]]  # (A',)
        input_rows = first.row[keep]  # (A', C)
        rows = torch.where(torch.isfinite(beam_scores[keep]), input_rows.gather(1, pick[keep]),
                           input_rows.amax(1, keepdim=True))  # (A', K)
        if bool((rows < 0).any()):
            return None
        rows = rows.view(-1)
        runner.adopt(first.states.take(rows))
        return keep, first.log_probs[rows]


def _cat_parts(parts: list[tuple[torch.Tensor, _Rows]]) -> tuple[torch.Tensor, _Rows]:
    """One or two parts' log-probabilities (n, V) and model states, the first's then the
    second's."""
    if len(parts) == 1:
        return parts[0]
    (first_log_probs, first), (second_log_probs, second) = parts
    return torch.cat([first_log_probs, second_log_probs]), _Rows.cat(first, second)


def never_chosen(
    score: torch.Tensor,  # (B, W) the lookahead's candidates
    best_complete: torch.Tensor,  # (B, k) the best scores of those that meet every set, not EOS
    ending: torch.Tensor,  # (B, W) valid EOS candidates
    beams: int,
    slots: int,
) -> torch.Tensor:
    """The candidates (B, W) that cannot be among the next beams whatever their estimate, so
    need no rollout. :func:`~dpc_decode.beam.neurologic_allocate` puts first the ``slots``
    best non-EOS candidates by rank score, then the ``beams`` best complete ones; where those
    are not EOS (the ``beams`` best complete ones outscore every EOS), the next beams are all
    among them. An incomplete candidate's rank score is at most its ``score / (step + 1)`` (an
    estimate is at most 0), a complete one's is exactly that (no estimate): one outscored by
    ``slots`` complete non-EOS candidates is never among the leaders, so never chosen."""
    if best_complete.shape[1] < beams or slots > beams:
        return torch.zeros_like(ending)
    settled = best_complete[:, -1] > score.masked_fill(~ending, NEG_INF).amax(1)  # (B,)
    bar = best_complete[:, slots - 1] if slots else torch.full_like(
        best_complete[:, 0], float("inf"))
    return settled.unsqueeze(1) & (score < bar.unsqueeze(1))
