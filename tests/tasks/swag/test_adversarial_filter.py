"""AF on a hand-made pool: accuracy falls, short pools are kept, an interrupted run resumes; the
paper's settings: at most 2 replacements an iteration, the MLP-only cheap phase, the cross-fitted
final choice of the hardest negatives, restatements of the gold dropped first."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from tasks.datasets import read_multiple_choice, write_multiple_choice
from tasks.errors import TaskError
from tasks.swag.adversarial_filter import FilterOptions, adversarial_filter, filtered_items
from tasks.swag.oversample import POOL, PoolEntry

#: The earlier rules on the small pool: 3 negatives, every easy one replaced, summed logits.
OLD = {"k": 3, "choices": 4, "max_replaced": None, "ensemble": "sum", "max_gold_similarity": None}
CHEAP = FilterOptions(iterations=6, cheap_iterations=6, members=("mlp", "bow"), patience=6, **OLD)


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
                            patience=2, **OLD)
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
        adversarial_filter(folder, FilterOptions(**{**CHEAP.__dict__, "k": 4}), progress=False)
    with pytest.raises(TaskError, match="pool.jsonl"):
        adversarial_filter(tmp_path / "none", CHEAP, progress=False)
    shutil.rmtree(folder)


def test_at_most_max_replaced_negatives_change_per_iteration(tmp_path):
    """k = 9 of 15 endings (12 easy, 3 hard): every context starts with at least 6 easy
    negatives, and one iteration may swap only ``max_replaced`` of them."""
    start = np.random.default_rng([0, 0xAF])
    first = [start.choice(15, size=9, replace=False).tolist() for _ in range(60)]
    for cap in (1, 2):
        folder = _pool(tmp_path / f"cap{cap}")
        options = FilterOptions(k=9, iterations=1, cheap_iterations=0, members=("mlp", "bow"),
                                max_replaced=cap, ensemble="sum", max_gold_similarity=None)
        report = adversarial_filter(folder, options, progress=False)
        after = json.loads((folder / "af_state.json").read_text())["negatives"]
        swapped = [sum(a != b for a, b in zip(x, y)) for x, y in zip(first, after)]
        assert max(swapped) == cap and report["iterations"][0]["contexts_changed"] > 0
        assert all(j >= 12 for x, y in zip(first, after) for a, j in zip(x, y) if a != j)


def test_final_choice_is_the_hardest_of_the_k_negatives(tmp_path):
    """Of 9 negatives, the written 4-way question keeps the 3 a cross-fitted committee finds
    hardest: the pool's 3 hard endings ('indeed', unlikely), wherever AF left them."""
    folder = _pool(tmp_path / "p")
    options = FilterOptions(k=9, iterations=3, cheap_iterations=1, members=("mlp", "bow"),
                            ensemble="joint", max_gold_similarity=None, stop_at_chance=False)
    report = adversarial_filter(folder, options, progress=False)
    assert report["iterations"][0]["members"] == ["mlp"]  # the cheap phase: the MLP alone
    assert report["iterations"][1]["members"] == ["mlp", "bow"] and report["full_from"] == 1
    items = filtered_items(folder)
    assert {len(it.endings) for it in items} == {4}
    state = json.loads((folder / "af_state.json").read_text())
    among = [sum(j >= 12 for j in x) for x in state["negatives"]]  # hard ones among the 9
    assert np.mean(among) > 1.8  # AF brought hard ones in (at random: 9 x 3/15 = 1.8)
    kept = [sum(e.endswith("indeed .") for e in it.negatives) for it in items]
    assert np.mean([k == min(3, a) for k, a in zip(kept, among)]) > 0.95, (kept, among)
    assert report["final"]["choices"] == 4 and report["final"]["accuracy"]["ensemble"] < 0.5


def test_a_converged_cheap_phase_hands_over_to_the_whole_committee(tmp_path):
    """min_replaced = 100%: every iteration is 'quiet'; after ``patience`` of them the cheap
    phase ends (not the run), and the whole committee's quiet iterations then stop it."""
    options = FilterOptions(iterations=20, cheap_iterations=15, members=("mlp", "bow"),
                            patience=2, min_replaced=1.0, stop_at_chance=False, **OLD)
    report = adversarial_filter(_pool(tmp_path / "p"), options, progress=False)
    assert [r["members"] for r in report["iterations"]] == [["mlp"]] * 2 + [["mlp", "bow"]] * 2
    assert report["full_from"] == 2 and report["stopped"].startswith("converged")


def test_restatements_of_the_gold_leave_the_pool_first(tmp_path):
    """Two endings of every context restate its gold (all-MiniLM-L6-v2 similarity >= 0.8): they
    are dropped before AF and never written; the similarities are cached once."""
    folder = _pool(tmp_path / "p", n=20)
    lines = []
    for line in (folder / POOL).read_text().splitlines():
        entry = json.loads(line)
        verb = entry["gold"].split()[1]
        entry["endings"][:2] = [f"he {verb} indeed !", f"indeed , he {verb} ."]
        lines.append(json.dumps(entry))
    (folder / POOL).write_text("\n".join(lines) + "\n")
    options = FilterOptions(k=3, iterations=1, cheap_iterations=0, members=("mlp",),
                            ensemble="sum", max_gold_similarity=0.8)
    report = adversarial_filter(folder, options, progress=False)
    assert report["restatements_dropped"] >= 40
    cache = json.loads((folder / "gold_similarity.json").read_text())
    assert cache["encoder"].startswith("all-MiniLM-L6-v2") and len(cache["similarity"]) == 20
    written = [e for it in filtered_items(folder) for e in it.negatives]
    assert not [e for e in written if e.endswith("indeed !") or e.startswith("indeed ,")]


def test_bad_settings_name_the_value():
    with pytest.raises(TaskError, match="choices"):
        FilterOptions(k=3, choices=5)
    with pytest.raises(TaskError, match="max_replaced"):
        FilterOptions(max_replaced=0)
    with pytest.raises(TaskError, match="ensemble"):
        FilterOptions(ensemble="vote")
    with pytest.raises(TaskError, match="max_gold_similarity"):
        FilterOptions(max_gold_similarity=1.5)


def test_an_unfinished_run_is_not_written(tmp_path):
    """A state without the final choice (a run interrupted before it) is refused, not written
    as the first 3 of its k negatives."""
    folder = _pool(tmp_path / "p")
    adversarial_filter(folder, FilterOptions(**{**CHEAP.__dict__, "iterations": 1}),
                       progress=False)
    path = folder / "af_state.json"
    state = json.loads(path.read_text())
    del state["final_negatives"]
    path.write_text(json.dumps(state))
    with pytest.raises(TaskError, match="has not finished"):
        filtered_items(folder)
