"""The engine's tensor-operation counts: its set-up does not grow with the number of rows.

Operation counts (torch calls seen by a ``TorchFunctionMode``) are deterministic, unlike times: on
a GPU each is a kernel launch or a small copy, so a set-up that grows with the rows, or a step
that grows with the sets, shows here first. The targets themselves (top-level aten ops, kernels,
times) are measured in ``benchmarks/engine_gpu.py``.
"""

from __future__ import annotations

from torch.overrides import TorchFunctionMode

from dpc_decode import generate

from .conftest import tiny_t5

SETS = [[[5, 6], [7], [8, 9, 10]], [[11]], [[12, 13], [14]]]


class _Count(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def _top_level_ops(fn) -> int:
    with _Count() as count:
        fn()
    return count.calls


def _extra_ops(model, rows: int, constraints, steps: int) -> int:
    inputs = [[3, 4, 5]] * rows

    def run(c):
        return _top_level_ops(lambda: generate(model, None, inputs, c, num_beams=4,
                                               max_new_tokens=steps, eos_token_id=None))
    return run(constraints) - run(None)


def test_setup_ops_do_not_grow_with_rows():
    model = tiny_t5(vocab=60)
    shared = [_extra_ops(model, rows, SETS, 8) for rows in (2, 12)]
    assert shared[0] == shared[1]
    # 12 rows with a set each, equal by value but separate lists: built and laid out once.
    assert _extra_ops(model, 12, [[list(map(list, s)) for s in SETS] for _ in range(12)], 8) == shared[0]


def test_step_ops_do_not_grow_with_rows_or_sets():
    model = tiny_t5(vocab=60)
    per_step = []
    for rows, sets in [(2, SETS), (12, SETS), (2, SETS[:1])]:
        per_step.append(_extra_ops(model, rows, sets, 10) - _extra_ops(model, rows, sets, 8))
    assert per_step[0] == per_step[1] == per_step[2]
