"""AF on a hand-made pool: accuracy falls, short pools are kept, an interrupted run resumes."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from tasks.datasets import read_multiple_choice, write_multiple_choice
from tasks.errors import TaskError
from tasks.swag.adversarial_filter import FilterOptions, adversarial_filter, filtered_items
from tasks.swag.oversample import POOL, PoolEntry

CHEAP = FilterOptions(iterations=6, cheap_iterations=6, members=("mlp", "bow"), patience=6)


def _pool(folder, n=60, short=()):
    """Gold endings say 'indeed' and are unlikely; each pool holds 12 easy endings (likely, 'now')
    and 3 hard ones that look like a gold ending (other verbs than the gold's)."""
    rng = np.random.default_rng(0)
    verbs = ["walks", "runs", "sits", "waves", "jumps", "smiles", "turns", "stops", "nods",
             "laughs", "kneels", "spins", "leaves", "falls", "sings", "reads"]
    lines = []
    for i in range(n):
        m = 2 if i in short else 15
        endings = [f"he {verbs[(i + 1 + j) % 16]} {'indeed' if j >= 12 else 'now'} ."
                   for j in range(m)]
        lps = [(-30.0 if j >= 12 else -8.0) + float(rng.normal()) for j in range(m)]
        lines.append(PoolEntry(i, f"a man stands in room {i} . he", "x",
                               f"he {verbs[i % 16]} indeed .", -30.0 + float(rng.normal()), 5,
                               endings, lps, [5] * m, [], m).to_json())
    folder.mkdir(parents=True, exist_ok=True)
    (folder / POOL).write_text("\n".join(lines) + "\n")
    return folder


def test_af_lowers_accuracy_and_writes_hellaswag_items(tmp_path):
    folder = _pool(tmp_path / "pool", short=(3,))
    report = adversarial_filter(folder, CHEAP, progress=False)
    curve = [r["accuracy"]["ensemble"] for r in report["iterations"]]
    assert curve[0] > 0.6 and min(curve[1:]) < curve[0] - 0.3
    assert report["short_pool"] == ["3"] and report["contexts_4way"] == 59
    items = filtered_items(folder)
    assert len(items) == 60
    assert {len(it.endings) for it in items} == {3, 4}  # the short pool keeps what it has
    assert all(it.gold.endswith("indeed .") and it.gold.startswith("he ") for it in items)
    assert all(len(set(it.endings)) == len(it.endings) for it in items)
    write_multiple_choice(items, tmp_path / "out.jsonl")
    back = read_multiple_choice(tmp_path / "out.jsonl")
    assert [b.endings for b in back] == [it.endings for it in items]


def test_af_stops_once_the_committee_is_at_chance(tmp_path):
    options = FilterOptions(iterations=20, cheap_iterations=0, members=("mlp", "bow"),
                            patience=2)
    report = adversarial_filter(_pool(tmp_path / "p"), options, progress=False)
    curve = [r["accuracy"]["ensemble"] for r in report["iterations"]]
    assert report["stopped"].startswith("at chance") and len(curve) < 20
    assert curve[-2] <= 0.25 and curve[-1] <= 0.25 and curve[0] >= 0.45
    below = adversarial_filter(_pool(tmp_path / "q"), FilterOptions(
        **{**options.__dict__, "stop_at_chance": False, "iterations": len(curve) + 2}),
        progress=False)
    assert len(below["iterations"]) == len(curve) + 2  # told to go on, it goes on


def test_interrupted_run_resumes_to_the_same_result(tmp_path):
    whole = _pool(tmp_path / "whole")
    adversarial_filter(whole, CHEAP, progress=False)
    parts = _pool(tmp_path / "parts")
    first = FilterOptions(**{**CHEAP.__dict__, "iterations": 2})
    adversarial_filter(parts, first, progress=False)
    report = adversarial_filter(parts, CHEAP, progress=False)
    assert [r["iteration"] for r in report["iterations"]] == list(range(6))
    for name in ("af_state.json",):
        a = json.loads((whole / name).read_text())["negatives"]
        b = json.loads((parts / name).read_text())["negatives"]
        assert a == b


def test_changed_settings_and_missing_pool_are_refused(tmp_path):
    folder = _pool(tmp_path / "p")
    adversarial_filter(folder, FilterOptions(**{**CHEAP.__dict__, "iterations": 1}),
                       progress=False)
    with pytest.raises(TaskError, match="other settings"):
        adversarial_filter(folder, FilterOptions(**{**CHEAP.__dict__, "k": 2}), progress=False)
    with pytest.raises(TaskError, match="pool.jsonl"):
        adversarial_filter(tmp_path / "none", CHEAP, progress=False)
    shutil.rmtree(folder)
