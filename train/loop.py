"""The one resumable training loop: steps, gradient accumulation, evaluation, checkpoints, progress.

Every trainer of dpc calls :func:`run_loop` with its own *forward* function (the loss of one
micro-batch) and its own hooks (evaluation, saving a checkpoint, the postfix of the bar); the
loop does the rest, in this order at every step:

1. stop if :attr:`LoopOptions.total_steps` is reached, the time budget is spent or the trainer's
   ``stop`` hook names a reason;
2. ``forward(step, micro)`` for each of the :attr:`LoopOptions.accumulate` micro-batches, each
   loss divided by their number and back-propagated (one micro-batch: the loss as it is);
3. clip the gradients' norm (:attr:`LoopOptions.clip_norm`), step the optimizer and the
   scheduler, drop the gradients;
4. count the step and the training time, show the loss (tqdm, only when ``progress``), then
   evaluate and save a checkpoint when they are due.

Nothing in a step reads a tensor on the host: the loss stays a tensor, and only a trainer's
``record``/``postfix`` hooks may read it (the bar's postfix is asked for only when the bar is
shown). A :class:`KeyboardInterrupt` (Ctrl-C, or SIGTERM under ``dpc``) closes the bar and goes
on up to :func:`cli.main`, which prints what was kept and exits with 130; the last checkpoint
saved is where the same call resumes.

A checkpoint is one safetensors file with its tree as JSON in the header
(:func:`train.checkpoint.save_state`, written whole or not at all): what
:func:`checkpoint_state` gives (optimizer, scheduler, random generators, step, training seconds)
and the trainer's own entries (weights, data position, history). :func:`resume` puts the common
part back and returns the :class:`LoopState` to start from.

>>> import torch
>>> w = torch.nn.Parameter(torch.zeros(2))
>>> x, y = torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([1.0, 2.0])
>>> optimizer = torch.optim.SGD([w], lr=0.01)
>>> state = run_loop(lambda step, micro: ((x @ w - y) ** 2).mean(), optimizer,
...                  LoopOptions(total_steps=50, progress=False))
>>> state.step, round(float(((x @ w - y) ** 2).mean().detach()), 3)
(50, 0.005)
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from train.checkpoint import CheckpointError, capture_rng, restore_rng, save_state
from train.errors import TrainConfigError

__all__ = ["Forward", "LoopHooks", "LoopOptions", "LoopState", "checkpoint_state", "resume",
           "run_loop", "save_checkpoint"]

#: The loss of one micro-batch: ``forward(step, micro)`` returns the loss to minimise, or
#: ``(loss, shown)`` where ``shown`` is what the bar and the records see (e.g. without a
#: regulariser).
Forward = Callable[[int, int], "torch.Tensor | tuple[torch.Tensor, torch.Tensor]"]


@dataclass(frozen=True)
class LoopOptions:
    """How the loop steps.

    Attributes
    ----------
    total_steps
        Optimizer steps of the whole run (a resumed run counts the earlier ones).
    accumulate
        Micro-batches a step: their gradients are summed, each loss divided by their number,
        so ``k`` micro-batches of ``b`` examples make the step of one batch of ``k * b``.
    clip_norm
        Clip the gradients to this norm before each step (``None``: no clipping).
    eval_every, checkpoint_every
        Steps between evaluations and between checkpoints (``0``: none), at the steps below
        ``total_steps``; a trainer's ``eval_due``/``save_due`` hook replaces the rule.
    max_minutes
        Stop once the training time (over all the runs of a resumed training) reaches it.
    progress, desc
        Show a tqdm bar on stderr, with this description.

    >>> LoopOptions(total_steps=10, accumulate=0)
    Traceback (most recent call last):
    ...
    train.errors.TrainConfigError: `accumulate` (=0) has to be a positive integer
    """

    total_steps: int
    accumulate: int = 1
    clip_norm: float | None = None
    eval_every: int = 0
    checkpoint_every: int = 0
    max_minutes: float | None = None
    progress: bool = True
    desc: str | None = None

    def __post_init__(self) -> None:
        for name, least in (("total_steps", 0), ("accumulate", 1), ("eval_every", 0),
                            ("checkpoint_every", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                kind = "a positive" if least else "a non-negative"
                raise TrainConfigError(f"`{name}` (={value!r}) has to be {kind} integer")
        if self.clip_norm is not None and not self.clip_norm > 0:
            raise TrainConfigError(f"`clip_norm` (={self.clip_norm!r}) has to be positive")
        if self.max_minutes is not None and not self.max_minutes > 0:
            raise TrainConfigError(f"`max_minutes` (={self.max_minutes!r}) has to be positive")


@dataclass
class LoopState:
    """Where the loop stands: steps done, training seconds (earlier runs included), and why it
    stopped before ``total_steps`` ("" while it goes on or when it reached them)."""

    step: int = 0
    elapsed: float = 0.0
    stopped: str = ""


def _never(*_: Any) -> None:
    return None


@dataclass(frozen=True)
class LoopHooks:
    """What a trainer adds to the loop; every hook is optional.

    Attributes
    ----------
    evaluate
        ``evaluate(state, loss)`` after a step where evaluation is due (``loss``: the step's
        shown loss, a tensor).
    eval_due
        ``eval_due(step) -> bool`` replaces the rule of ``eval_every``.
    save
        ``save(state)`` writes a checkpoint (e.g. :func:`save_checkpoint`).
    save_due
        ``save_due(step) -> bool`` replaces the rule of ``checkpoint_every``.
    save_on_stop
        Also save when the loop stops for a reason (a budget, the ``stop`` hook), unless the
        last step saved already.
    stop
        ``stop(state) -> str``: a reason to stop before the next step ("" to go on); replaces
        the rule of ``total_steps`` and ``max_minutes`` (which the hook then applies itself).
    record
        ``record(state, loss)`` after every step (to keep losses; reading one is a host sync).
    postfix
        ``postfix(state, loss) -> dict``: the bar's postfix, asked for only when it is shown.
    """

    evaluate: Callable[[LoopState, torch.Tensor], None] | None = None
    eval_due: Callable[[int], bool] | None = None
    save: Callable[[LoopState], None] | None = None
    save_due: Callable[[int], bool] | None = None
    save_on_stop: bool = False
    stop: Callable[[LoopState], str] | None = None
    record: Callable[[LoopState, torch.Tensor], None] = field(default=_never)
    postfix: Callable[[LoopState, torch.Tensor], dict[str, Any]] | None = None


def _budget_reason(options: LoopOptions, state: LoopState) -> str:
    """Why the loop stops by the options: ``"done"`` at ``total_steps``, the time budget, or ""."""
    if state.step >= options.total_steps:
        return "done"
    if options.max_minutes is not None and state.elapsed >= options.max_minutes * 60:
        return f"max_minutes={options.max_minutes} reached"
    return ""


def _every(period: int, total: int) -> Callable[[int], bool]:
    return lambda step: bool(period) and step % period == 0 and step < total


def run_loop(forward: Forward, optimizer: torch.optim.Optimizer, options: LoopOptions, *,
             scheduler: Any = None, parameters: Iterable[torch.Tensor] | None = None,
             start: LoopState | None = None, hooks: LoopHooks = LoopHooks()) -> LoopState:
    """Train from ``start`` (a new run: step 0) until a stop; returns the final state.

    ``parameters`` are the ones clipped (``options.clip_norm``; default: the optimizer's).
    ``scheduler`` is stepped after each optimizer step. See the module notes for the order of a
    step and the hooks for what a trainer adds.
    """
    state = LoopState(start.step, start.elapsed) if start is not None else LoopState()
    clipped = list(parameters) if parameters is not None else \
        [p for group in optimizer.param_groups for p in group["params"]]
    eval_due = hooks.eval_due or _every(options.eval_every, options.total_steps)
    save_due = hooks.save_due or _every(options.checkpoint_every, options.total_steps)
    bar = _bar(options, state.step)
    saved_at: int | None = None
    began = time.monotonic() - state.elapsed
    optimizer.zero_grad(set_to_none=True)
    try:
        while True:
            reason = hooks.stop(state) if hooks.stop is not None else \
                _budget_reason(options, state)
            if reason:
                break
            shown = _step(forward, optimizer, scheduler, clipped, options, state.step)
            state.step += 1
            state.elapsed = time.monotonic() - began
            hooks.record(state, shown)
            if bar is not None:
                bar.update(1)
                if hooks.postfix is not None:
                    bar.set_postfix(hooks.postfix(state, shown), refresh=False)
            if hooks.evaluate is not None and eval_due(state.step):
                hooks.evaluate(state, shown)
            if hooks.save is not None and save_due(state.step):
                hooks.save(state)
                saved_at = state.step
    finally:
        if bar is not None:
            bar.close()
    state.stopped = "" if reason == "done" else reason
    if hooks.save is not None and hooks.save_on_stop and state.stopped and saved_at != state.step:
        hooks.save(state)
    return state


def _step(forward: Forward, optimizer: torch.optim.Optimizer, scheduler: Any,
          clipped: list[torch.Tensor], options: LoopOptions, step: int) -> torch.Tensor:
    """One optimizer step over ``options.accumulate`` micro-batches; the shown loss (a detached
    tensor, their mean when there are several)."""
    if options.accumulate == 1:
        loss, shown = _split(forward(step, 0))
        loss.backward()
        shown = shown.detach()
    else:
        parts = []
        for micro in range(options.accumulate):
            loss, part = _split(forward(step, micro))
            (loss / options.accumulate).backward()
            parts.append(part.detach())
        shown = torch.stack(parts).mean()  # on the losses' device: no copy to the host
    if options.clip_norm is not None:
        torch.nn.utils.clip_grad_norm_(clipped, options.clip_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return shown


def _split(out: torch.Tensor | tuple[torch.Tensor, torch.Tensor]
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """``(loss, shown)`` of what a forward function returned."""
    return out if isinstance(out, tuple) else (out, out)


def _bar(options: LoopOptions, step: int) -> Any:
    """A tqdm bar on stderr starting at ``step``, or ``None`` without ``progress``."""
    if not options.progress:
        return None
    import sys

    from tqdm import tqdm

    return tqdm(total=options.total_steps, initial=step, desc=options.desc, unit="step",
                file=sys.stderr, dynamic_ncols=True)


# ----------------------------------------------------------------------------- checkpoints


def checkpoint_state(state: LoopState, optimizer: torch.optim.Optimizer,
                     scheduler: Any = None) -> dict[str, Any]:
    """The loop's part of a checkpoint: ``optimizer``, ``scheduler`` (when there is one),
    ``rng`` (:func:`train.checkpoint.capture_rng`), ``step`` and ``elapsed``."""
    common: dict[str, Any] = {"optimizer": optimizer.state_dict()}
    if scheduler is not None:
        common["scheduler"] = scheduler.state_dict()
    return {**common, "rng": capture_rng(), "step": state.step, "elapsed": state.elapsed}


def save_checkpoint(path: Path, state: LoopState, optimizer: torch.optim.Optimizer,
                    scheduler: Any = None, extra: dict[str, Any] | None = None) -> None:
    """Write :func:`checkpoint_state` and the trainer's ``extra`` entries to ``path`` (one
    safetensors file, written whole or not at all)."""
    save_state(path, {**checkpoint_state(state, optimizer, scheduler), **(extra or {})})


def resume(saved: dict[str, Any], path: Path, optimizer: torch.optim.Optimizer,
           scheduler: Any = None) -> LoopState:
    """Put back the optimizer, the scheduler and the random generators of ``saved`` (a state
    read from ``path``); the :class:`LoopState` to start from. A state that lacks an entry or
    does not fit this optimizer is a :class:`~train.checkpoint.CheckpointError` naming ``path``.
    """
    try:
        step, elapsed = saved["step"], saved["elapsed"]
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise TypeError(f"'step' is {step!r}")
        if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) \
                or not math.isfinite(elapsed):
            raise TypeError(f"'elapsed' is {elapsed!r}")
        optimizer.load_state_dict(saved["optimizer"])
        if scheduler is not None:
            scheduler.load_state_dict(saved["scheduler"])
        restore_rng(saved["rng"])
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as err:
        raise CheckpointError(f"training state {os.fspath(path)!r} does not fit this run "
                              f"({type(err).__name__}: {str(err).splitlines()[0]}); delete it "
                              "to train from the start") from None
    return LoopState(step, float(elapsed))
