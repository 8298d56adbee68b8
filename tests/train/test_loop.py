"""The training loop (train.loop) on a linear model: accumulation, resume, interrupt, hooks."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from train.checkpoint import CheckpointError, load_state
from train.errors import TrainConfigError
from train.loop import (
    LoopHooks,
    LoopOptions,
    LoopState,
    resume,
    run_loop,
    save_checkpoint,
)

X = torch.linspace(-1, 1, 24).reshape(8, 3)  # (8 examples, 3 features)
Y = X @ torch.tensor([0.5, -1.0, 2.0]) + 0.25  # (8,)


def _model() -> torch.nn.Linear:
    torch.manual_seed(0)
    return torch.nn.Linear(3, 1)


def _mse(model: torch.nn.Linear, rows: slice) -> torch.Tensor:
    return ((model(X[rows]).squeeze(-1) - Y[rows]) ** 2).mean()


def test_accumulated_micro_batches_make_the_step_of_one_big_batch() -> None:
    big, small = _model(), _model()
    big_shown: list[float] = []
    small_shown: list[float] = []
    run_loop(lambda step, micro: _mse(big, slice(0, 8)),
             torch.optim.SGD(big.parameters(), lr=0.1),
             LoopOptions(total_steps=5, progress=False, clip_norm=10.0),
             hooks=LoopHooks(record=lambda state, loss: big_shown.append(float(loss))))
    run_loop(lambda step, micro: _mse(small, slice(2 * micro, 2 * micro + 2)),
             torch.optim.SGD(small.parameters(), lr=0.1),
             LoopOptions(total_steps=5, accumulate=4, progress=False, clip_norm=10.0),
             hooks=LoopHooks(record=lambda state, loss: small_shown.append(float(loss))))
    for a, b in zip(big.parameters(), small.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
    # the shown loss of a step is the mean over its micro-batches: the big batch's loss
    assert small_shown == pytest.approx(big_shown, rel=1e-6)
    assert big_shown[-1] < big_shown[0]


def test_accumulation_differs_from_a_single_micro_batch() -> None:
    # guards the test above: the micro-batches must all count
    one, four = _model(), _model()
    run_loop(lambda step, micro: _mse(one, slice(0, 2)),
             torch.optim.SGD(one.parameters(), lr=0.1), LoopOptions(total_steps=3, progress=False))
    run_loop(lambda step, micro: _mse(four, slice(2 * micro, 2 * micro + 2)),
             torch.optim.SGD(four.parameters(), lr=0.1),
             LoopOptions(total_steps=3, accumulate=4, progress=False))
    assert not torch.equal(one.weight, four.weight)


class _Run:
    """A noisy linear regression with Adam, a schedule and a checkpoint file: the random noise
    makes the generators part of what a resume must put back."""

    def __init__(self, path: Path, crash_at: int | None = None) -> None:
        self.path = path
        self.crash_at = crash_at
        self.model = _model()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.05)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: 1 / (1 + s))
        self.evaluated: list[int] = []

    def forward(self, step: int, micro: int) -> torch.Tensor:
        if step == self.crash_at:
            raise KeyboardInterrupt
        rows = slice(2 * (step % 4), 2 * (step % 4) + 2)
        noise = 0.1 * torch.randn(2)
        return ((self.model(X[rows]).squeeze(-1) - Y[rows] - noise) ** 2).mean()

    def save(self, state: LoopState) -> None:
        save_checkpoint(self.path, state, self.optimizer, self.scheduler,
                        {"model": self.model.state_dict()})

    def run(self, total: int = 10) -> LoopState:
        start = None
        if self.path.exists():
            saved = load_state(self.path)
            self.model.load_state_dict(saved["model"])
            start = resume(saved, self.path, self.optimizer, self.scheduler)
        return run_loop(self.forward, self.optimizer,
                        LoopOptions(total_steps=total, checkpoint_every=3, eval_every=4,
                                    progress=False),
                        scheduler=self.scheduler, start=start,
                        hooks=LoopHooks(save=self.save, evaluate=self.evaluate))

    def evaluate(self, state: LoopState, loss: torch.Tensor) -> None:
        self.evaluated.append(state.step)


def test_an_interrupted_run_resumes_to_the_weights_of_an_uninterrupted_one(tmp_path: Path
                                                                           ) -> None:
    torch.manual_seed(1)
    straight = _Run(tmp_path / "a.safetensors")
    assert straight.run().step == 10
    torch.manual_seed(1)
    cut = _Run(tmp_path / "b.safetensors", crash_at=7)
    with pytest.raises(KeyboardInterrupt):
        cut.run()
    assert load_state(tmp_path / "b.safetensors")["step"] == 6  # the last checkpoint kept
    torch.manual_seed(99)  # the generators must come from the checkpoint
    resumed = _Run(tmp_path / "b.safetensors")
    assert resumed.run().step == 10
    for a, b in zip(straight.model.parameters(), resumed.model.parameters()):
        assert torch.equal(a, b)
    assert straight.evaluated == [4, 8] and cut.evaluated == [4] and resumed.evaluated == [8]


def test_a_resume_without_the_generators_differs(tmp_path: Path) -> None:
    # guards the test above: the noise matters, so a wrong random state would show
    torch.manual_seed(1)
    straight = _Run(tmp_path / "a.safetensors")
    straight.run()
    torch.manual_seed(1)
    cut = _Run(tmp_path / "b.safetensors", crash_at=7)
    with pytest.raises(KeyboardInterrupt):
        cut.run()
    saved = load_state(tmp_path / "b.safetensors")
    saved["rng"]["torch"] = torch.manual_seed(5).get_state()
    (tmp_path / "b.safetensors").unlink()
    save_checkpoint(tmp_path / "b.safetensors", LoopState(6, 0.0), cut.optimizer, cut.scheduler,
                    {"model": saved["model"]})
    resumed = _Run(tmp_path / "b.safetensors")
    resumed.run()
    assert not torch.equal(straight.model.weight, resumed.model.weight)


@pytest.mark.parametrize("eval_every, total, expected", [
    (3, 10, [3, 6, 9]),   # every 3 steps
    (5, 10, [5]),         # not at the last step: the trainer evaluates its end itself
    (0, 10, []),          # 0: never
    (1, 3, [1, 2]),
])
def test_evaluation_is_called_at_its_period(eval_every: int, total: int,
                                            expected: list[int]) -> None:
    model, seen = _model(), []
    run_loop(lambda step, micro: _mse(model, slice(0, 8)),
             torch.optim.SGD(model.parameters(), lr=0.01),
             LoopOptions(total_steps=total, eval_every=eval_every, progress=False),
             hooks=LoopHooks(evaluate=lambda state, loss: seen.append(state.step)))
    assert seen == expected


def test_hooks_replace_the_rules_and_a_stop_is_saved_once() -> None:
    model, evaluated, saved = _model(), [], []
    state = run_loop(
        lambda step, micro: _mse(model, slice(0, 8)),
        torch.optim.SGD(model.parameters(), lr=0.01), LoopOptions(total_steps=100, progress=False),
        hooks=LoopHooks(eval_due=lambda step: step in (2, 5),
                        evaluate=lambda state, loss: evaluated.append(state.step),
                        save=lambda state: saved.append(state.step),
                        save_due=lambda step: step % 2 == 0, save_on_stop=True,
                        stop=lambda state: "enough" if state.step >= 5 else ""))
    assert (state.step, state.stopped) == (5, "enough")
    assert evaluated == [2, 5]
    assert saved == [2, 4, 5]  # step 5 saved at the stop


def test_the_time_budget_stops_after_the_first_step() -> None:
    model, saved = _model(), []
    state = run_loop(lambda step, micro: _mse(model, slice(0, 8)),
                     torch.optim.SGD(model.parameters(), lr=0.01),
                     LoopOptions(total_steps=50, max_minutes=1e-9, progress=False),
                     hooks=LoopHooks(save=saved.append, save_on_stop=True))
    assert state.step == 1 and state.stopped == "max_minutes=1e-09 reached"
    assert [s.step for s in saved] == [1]
    done = run_loop(lambda step, micro: _mse(model, slice(0, 8)),
                    torch.optim.SGD(model.parameters(), lr=0.01),
                    LoopOptions(total_steps=2, progress=False),
                    hooks=LoopHooks(save=saved.append, save_on_stop=True))
    assert done.stopped == "" and len(saved) == 1  # reaching total_steps is no stop to save


def test_the_postfix_is_asked_for_only_with_a_bar(capsys: pytest.CaptureFixture) -> None:
    model, asked = _model(), []

    def postfix(state: LoopState, loss: torch.Tensor) -> dict[str, str]:
        asked.append(state.step)
        return {"loss": f"{float(loss):.3f}"}

    for progress in (False, True):
        run_loop(lambda step, micro: _mse(model, slice(0, 8)),
                 torch.optim.SGD(model.parameters(), lr=0.01),
                 LoopOptions(total_steps=2, progress=progress, desc="linear"),
                 hooks=LoopHooks(postfix=postfix))
    assert asked == [1, 2]
    assert "linear" in capsys.readouterr().err


@pytest.mark.parametrize("field, value", [
    ("total_steps", -1), ("accumulate", 0), ("accumulate", True), ("eval_every", 1.5),
    ("checkpoint_every", -2), ("clip_norm", 0.0), ("max_minutes", -1.0)])
def test_bad_options_name_the_value(field: str, value: object) -> None:
    values = {"total_steps": 3, field: value}
    with pytest.raises(TrainConfigError, match=rf"`{field}` \(={value!r}\)"):
        LoopOptions(**values)  # type: ignore[arg-type]


def test_a_state_that_does_not_fit_is_named(tmp_path: Path) -> None:
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    path = tmp_path / "state.safetensors"
    save_checkpoint(path, LoopState(3, 1.0), optimizer)
    saved = load_state(path)
    assert resume(saved, path, optimizer) == LoopState(3, 1.0)
    del saved["step"]
    with pytest.raises(CheckpointError, match="state.safetensors.*does not fit"):
        resume(saved, path, optimizer)


def test_the_loop_reads_no_tensor_on_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``.item()``, ``float()``, ``bool()`` or ``.tolist()`` of a tensor inside the loop's own
    steps (each a device sync on a GPU); only a trainer's hooks may read a loss."""
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def refuse(self: torch.Tensor, *args: object) -> None:
        raise AssertionError("the loop read a tensor on the host")

    for name in ("item", "__float__", "__bool__", "tolist"):
        monkeypatch.setattr(torch.Tensor, name, refuse)
    state = run_loop(lambda step, micro: _mse(model, slice(2 * micro, 2 * micro + 2)), optimizer,
                     LoopOptions(total_steps=3, accumulate=2, clip_norm=1.0, progress=False))
    monkeypatch.undo()
    assert state.step == 3
