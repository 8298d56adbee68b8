"""Every command's option values, fuzzed: each class of bad value through every option (issue 60).

    .venv/bin/python benchmarks/fuzz_values.py --out benchmarks/results/fuzz_values.json
    cd /tmp/before && .venv/bin/python benchmarks/fuzz_values.py --root /tmp/before ...

The sibling of :mod:`benchmarks.fuzz_inputs` (bad input *files*) for bad *values*. Every
sub-command of ``dpc`` (the parser itself is walked, so a new option is fuzzed without an edit
here) runs from a command line that is good as it stands (:data:`BASES`: small inputs written
fresh into a temporary folder, the run's outputs inside it), with one option given one bad
value of a class (:func:`value_cases`):

* ``seed too big``: a 20-digit ``--seed`` (beyond what torch's and numpy's generators take);
* ``beyond int64``: a 20-digit value for every other integer option;
* ``negative``: ``-1`` for every integer option, and every number option that must be >= 0;
* ``zero``: ``0`` for every integer option where 0 means nothing (:data:`ZERO_OK` lists the
  options whose help gives 0 a meaning);
* ``inf``, ``nan``: every number (float) option;
* ``empty choice``, ``unknown choice``: every option that takes one of fixed names (argparse's
  ``choices``, and :data:`CHOICE_OPTIONS`: the name lists dpc checks itself);
* ``over-long text``: a 20,000-character text where a command takes a word or phrase
  (:data:`TEXT_CASES`: a concept, a constraint, a banned phrase, ...).

Each case runs in-process (``cli.main``) with its folder as the working folder, and its answer
is sorted as :mod:`benchmarks.fuzz_inputs` sorts them:

* ``one line``: exit 2 and exactly one line on stderr, no traceback (what every case must give);
* ``traceback``: a Python traceback reached the user (or an exception escaped ``cli.main``);
* ``accepted``: exit 0, or still working after ``--timeout`` seconds (``timed_out``: the value
  was taken and the command went on to load a model or train; it is then interrupted);
* ``other``: any other exit status, or more than one line.

``left behind`` counts the refused runs that created a file or folder in the case's folder (a
refused run must leave nothing). Every case is refused before a model loads, so a run over the
fixed code takes seconds a case; ``--root`` puts another checkout first on ``sys.path`` (the
code before a change: ``git worktree add /tmp/before HEAD``), whose cases may run on until the
timeout.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_report import answer_kind, stderr_lines, tally  # noqa: E402

#: A 20-digit integer: beyond int64 (and far beyond any count or seed dpc can use).
HUGE = "99999999999999999999"
#: The over-long text's length in characters.
LONG = 20_000

#: Integer options where 0 has a meaning the help gives (``0: none``, ``0: no limit``, ...).
ZERO_OK = frozenset({
    "--seed", "--split-seed", "--min-new-tokens", "--no-repeat-ngram-size", "--template-limit",
    "--sampled", "--sampled-keywords", "--lookahead", "--sat-tolerance", "--eval-every",
    "--max-replaced", "--finetune", "--warmup-steps", "--cheap-iterations", "--gutenberg-lines",
    "--score-slots", "--min-freq", "--dev-pairs",
})
#: Number options that may be negative.
NEGATIVE_OK = frozenset({"--length-penalty", "--reject-below", "--max-gold-similarity"})
#: String options that take one of fixed names (or a list of them) and are not argparse
#: ``choices``: (sub-command, option).
CHOICE_OPTIONS = (("generate", "--direction"), ("generate", "--rank"), ("generate", "--rerank"),
                  ("generate", "--constraint-mode"), ("eval generation", "--methods"),
                  ("eval generation", "--rank"), ("eval copa", "--scorer"),
                  ("inli variants", "--labels"), ("train causal-bert", "--pairs"),
                  ("aflite", "--view"))
#: Options that are not values of a run (the parser's own, or given by the base line).
SKIP = frozenset({"--help"})


def _write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def make_inputs(folder: Path, shared: dict[str, str]) -> dict[str, str]:
    """Small good inputs for every command, written under ``folder``; the paths by name."""
    from causal_mining.pair import CausalPair
    from causal_mining.shards import write_pairs

    paths = dict(shared)
    _write(folder / "corpus" / "a.txt", "We stayed in because it was raining hard.\n")
    paths["corpus"] = str(folder / "corpus")
    write_pairs(folder / "bank" / "causalbank-00000.tsv", [
        CausalPair(f"it rained {i}", f"the street was wet {i}", "because", "EPC", "EXPLANATION",
                   f"t:{i}", f"the street was wet {i} because it rained {i}.")
        for i in range(40)])
    paths["bank"] = str(folder / "bank")
    paths["ecare"] = _write(folder / "ecare.jsonl", "".join(
        json.dumps({"cause": f"it rained {i}", "effect": f"the street was wet {i}"}) + "\n"
        for i in range(40)))
    paths["vocab"] = _write(folder / "vocab.txt", "rain\nwet\n")
    paths["copa"] = _write(folder / "copa.xml", (
        '<?xml version="1.0" encoding="UTF-8"?>\n<copa-corpus version="1.0">\n'
        '  <item id="1" asks-for="cause" most-plausible-alternative="1">\n'
        "    <p>The baby cried.</p><a1>The baby was hungry.</a1><a2>The baby slept.</a2>\n"
        "  </item>\n</copa-corpus>\n"))
    paths["wg"] = _write(folder / "wg.jsonl", "".join(json.dumps(
        {"qID": f"q-{i}", "sentence": f"Ian ate {i} because _ was hungry.", "option1": "Ian",
         "option2": "Dennis", "answer": str(1 + i % 2)}) + "\n" for i in range(60)))
    paths["mc"] = _write(folder / "mc.jsonl", "".join(json.dumps(
        {"ctx": f"A man is sitting on a roof {i}.", "endings": ["he sings.", "he falls.",
                                                               "he naps.", "he nods."],
         "label": i % 4}) + "\n" for i in range(20)))
    paths["inli"] = _write(folder / "inli.csv", "dataset,premise,implied_entailment,"
                           "explicit_entailment,neutral,contradiction\n" + "".join(
                               f"d,Premise {i}.,Implied {i}.,Explicit {i}.,Neutral {i}.,"
                               f"Contra {i}.\n" for i in range(20)))
    paths["src"] = _write(folder / "src.txt", "dog frisbee catch\nski mountain\n")
    paths["tgt"] = _write(folder / "tgt.txt", "A dog catches a frisbee.\nI ski down a mountain.\n")
    paths["pairs"] = _write(folder / "pairs.jsonl", '{"premise": "P.", "hypothesis": "H."}\n')
    paths["inputs"] = _write(folder / "in.jsonl", '"babies cry"\n')
    data = folder / "data"
    import lzma

    (data / "gutenberg").mkdir(parents=True)
    (data / "gutenberg" / "a.txt.xz").write_bytes(lzma.compress(b"It rained, so we stayed.\n"))
    _write(data / "ecare" / "explanation_generation_train.jsonl",
           json.dumps({"cause": "rain", "effect": "wet"}) + "\n")
    _write(data / "conceptnet" / "conceptnet_cause_sets.txt", 'rain,["wet"]\n')
    paths["data"] = str(data)
    paths["pool"] = str(folder / "pool")
    (folder / "pool").mkdir()
    paths["dir"] = str(folder)
    return paths


def make_shared(folder: Path) -> dict[str, str]:
    """Inputs made once for every case (read only): a graph and a tiny tokenizer."""
    import networkx as nx

    from cause_effect_graph.store import save_graph

    G = nx.DiGraph()
    G.add_weighted_edges_from([("hungry", "cry", 9), ("tired", "cry", 6), ("rain", "wet", 8)])
    for n in G:
        G.nodes[n]["cause_weight"] = G.out_degree(n, weight="weight")
        G.nodes[n]["effect_weight"] = G.in_degree(n, weight="weight")
    G.graph["total"] = 23
    save_graph(G, folder / "graph.ceg")
    tokenizer = folder / "tok"
    try:
        from train.tokenizer import train_tokenizer

        texts = [f"it rained {i} the street was wet {i} cause: effect:" for i in range(200)]
        train_tokenizer(texts, tokenizer, vocab_size=60)
    except Exception:  # noqa: BLE001 - without one, train generator's line is still fuzzed
        tokenizer.mkdir()
    return {"graph": str(folder / "graph.ceg"), "tok": str(tokenizer)}


#: Each sub-command's good command line: run as it is, it would go on to its work (but ``swag
#: filter``, whose pool folder is empty: its options are checked before the pool is read, as
#: the after-run's messages show; ``commongen eval`` has no option of a value to fuzz).
BASES: dict[str, str] = {
    "generate": "generate --input babies_cry --graph {graph} --fast --out {dir}/gen.jsonl",
    "mine": "mine {corpus} --out {dir}/m --no-tags --no-progress",
    "graph build": "graph build {bank} --out {dir}/g.ceg --no-progress",
    "graph add-pairs": "graph add-pairs --everyday ecare={ecare} --graph {graph} "
                       "--out {dir}/g2.ceg",
    "graph cooccur": "graph cooccur {corpus} --vocab {vocab} --out {dir}/c.json.gz "
                     "--no-progress",
    "graph query": "graph query babies_cry --graph {graph}",
    "graph show": "graph show cry --out {dir}/cry.png --graph {graph}",
    "graph stats": "graph stats --graph {graph}",
    "graph export": "graph export --out {dir}/e.tsv --graph {graph}",
    "graph parts-of-speech": "graph parts-of-speech --data {data} --out {dir}/pos.tsv.gz "
                             "--no-progress",
    "eval copa": "eval copa {copa} --scorer graph --graph {graph}",
    "eval generation": "eval generation {copa} --methods gold --graph {graph} "
                       "--out {dir}/eg",
    "train tokenizer": "train tokenizer --bank {bank} --out {dir}/tok",
    "train generator": "train generator --bank {bank} --tokenizer {tok} --out {dir}/run "
                       "--no-progress",
    "train trim-vocab": "train trim-vocab --bank {bank} --out {dir}/tv --no-progress",
    "train export": "train export --model bundled --out {dir}/x",
    "train evaluate": "train evaluate --model bundled --bank {bank}",
    "train causal-bert": "train causal-bert --bank {bank} --out {dir}/cb --no-progress",
    "train lm-generator": "train lm-generator --pairs {ecare} --out {dir}/lm --no-progress "
                          "--device cpu",
    "swag train-endings": "swag train-endings {mc} --out {dir}/te",
    "swag oversample": "swag oversample {mc} --out {dir}/pool2",
    "swag filter": "swag filter {pool} --out {dir}/f.jsonl",
    "aflite": "aflite {wg} --format winogrande --out {dir}/af",
    "inli train": "inli train --train {inli} --out {dir}/inli",
    "inli eval": "inli eval {inli}",
    "inli predict": "inli predict --input {pairs}",
    "inli variants": "inli variants --premise A_man_sleeps. --implied He_is_tired.",
    "commongen train": "commongen train --src {src} --tgt {tgt} --dev-src {src} "
                       "--dev-tgt {tgt} --out {dir}/cgt",
    "commongen generate": "commongen generate {src} --out {dir}/cg.jsonl",
    "commongen eval": "commongen eval {dir}/cg.jsonl --refs {tgt} --sets {src}",
    "serve": "serve --port 7999",
}


def _words(line: str) -> list[str]:
    """A base line's words; in a word that is neither an option nor holds a path (``{...}``),
    ``_`` stands for a space (``babies_cry``: one argument, ``babies cry``)."""
    return [w.replace("_", " ") if not w.startswith(("{", "-")) and "{" not in w else w
            for w in line.split()]


def _leaves(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
            ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(prefix), parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from _leaves(sub, (*prefix, name))


def value_cases(command: str, parser: argparse.ArgumentParser
                ) -> Iterator[tuple[str, str, list[str]]]:
    """(class, option, the words added to the base line) of every bad value of ``command``."""
    for action in parser._actions:
        if not action.option_strings or action.nargs == 0:
            continue
        flag = action.option_strings[-1]
        if flag in SKIP:
            continue
        if action.type is int:
            if flag in ("--seed", "--split-seed"):
                yield "seed too big", flag, [flag, HUGE]
            else:
                yield "beyond int64", flag, [flag, HUGE]
            yield "negative", flag, [flag, "-1"]
            if flag not in ZERO_OK:
                yield "zero", flag, [flag, "0"]
        elif action.type is float:
            yield "inf", flag, [flag, "inf"]
            yield "nan", flag, [flag, "nan"]
            if flag not in NEGATIVE_OK:
                yield "negative", flag, [flag, "-1"]
        elif action.choices is not None or (command, flag) in CHOICE_OPTIONS:
            yield "empty choice", flag, [flag, ""]
            yield "unknown choice", flag, [flag, "bogus"]


#: (sub-command, option or "file", how the over-long text is given): a word or phrase of
#: 20,000 characters where a command takes one.
TEXT_CASES: list[tuple[str, str, Callable[[dict[str, str]], list[str]]]] = [
    ("commongen generate", "a concept", lambda p: [
        _write(Path(p["dir"]) / "long_src.txt", "dog " + "x" * LONG + " catch\n"), "--out",
        f"{p['dir']}/cg_long.jsonl"]),
    ("generate", "--constraint", lambda p: ["--constraint", "x" * LONG]),
    ("generate", "--banned", lambda p: ["--banned", "x" * LONG]),
    ("generate", "--input", lambda p: ["--input", "x" * LONG]),
    ("generate", "--input-file", lambda p: ["--input-file", _write(
        Path(p["dir"]) / "long.jsonl", json.dumps("x" * LONG) + "\n")]),
    ("inli variants", "--implied", lambda p: ["--implied", "x" * LONG]),
]


class _Timeout(KeyboardInterrupt):
    """Raised by the alarm: the case was still working (dpc answers it as an interrupt)."""


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def _paths(folder: Path) -> set[Path]:
    return set(folder.rglob("*"))


def run_case(argv_of: Callable[[dict[str, str]], list[str]], shared: dict[str, str],
             timeout: float) -> dict[str, Any]:
    """One command line in a fresh folder (the working folder while it runs): the answer's
    kind, the exit status, stderr's last line, the seconds, and what a refused run left."""
    import cli

    with tempfile.TemporaryDirectory(prefix="dpc-fuzz-") as tmp:
        folder = Path(tmp)
        paths = make_inputs(folder, shared)
        argv = argv_of(paths)
        before = _paths(folder)
        out, err = io.StringIO(), io.StringIO()
        timed_out = False
        started = time.perf_counter()
        here = os.getcwd()
        os.chdir(folder)
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code: int | None = cli.main(argv)
        except SystemExit as stop:  # argparse's own refusal
            code = stop.code if isinstance(stop.code, int) else 2
        except _Timeout:
            code, timed_out = None, True
        except BaseException:  # noqa: BLE001 (what escaped is the finding)
            code, err = None, io.StringIO(err.getvalue() + traceback.format_exc())
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            os.chdir(here)
        seconds = time.perf_counter() - started
        if code == 130 and seconds >= timeout * 0.99:  # dpc answered the alarm as Ctrl-C
            timed_out = True
        text = err.getvalue()
        lines = stderr_lines(text)
        kind = "accepted" if timed_out else answer_kind(code, text)
        left = sorted(str(p.relative_to(folder)) for p in _paths(folder) - before)
        refused = kind in ("one line", "traceback", "other")
        return {"kind": kind, "code": code, "timed_out": timed_out,
                "seconds": round(seconds, 2),
                "message": (lines[-1] if lines else "")[:300],
                "left_behind": left if refused else []}


def cases(only: str | None) -> Iterator[tuple[str, str, str, Callable[[dict[str, str]],
                                                                     list[str]]]]:
    """(command, class, option, argv maker) of every case."""
    import cli

    parser = cli.build_parser()
    for command, sub in _leaves(parser):
        if command not in BASES or (only and only not in command):
            continue
        base = _words(BASES[command])
        for kind, flag, extra in value_cases(command, sub):
            yield command, kind, flag, _argv(base, extra)
    for command, what, extra_of in TEXT_CASES:
        if only and only not in command:
            continue
        base = _words(BASES[command])
        if what == "a concept":  # the concept file replaces the base line's input and --out
            base = ["commongen", "generate"]
        yield command, "over-long text", what, _argv(base, [], extra_of)


def _argv(base: list[str], extra: list[str],
          extra_of: Callable[[dict[str, str]], list[str]] | None = None
          ) -> Callable[[dict[str, str]], list[str]]:
    def make(paths: dict[str, str]) -> list[str]:
        words = [w.format(**paths) for w in base]
        return words + (extra_of(paths) if extra_of else list(extra))
    return make


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--root", default=str(HERE),
                    help="the checkout whose dpc is fuzzed (first on sys.path; default: this one)")
    ap.add_argument("--out", default=None, help="JSON report")
    ap.add_argument("--only", default=None, help="sub-commands containing this text")
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="seconds a case may run before it counts as accepted (default 30)")
    ap.add_argument("--memory-gb", type=float, default=12.0,
                    help="address space the run may take (a value accepted as a size then "
                    "fails to allocate instead of taking the machine's memory; default 12)")
    args = ap.parse_args()
    import resource

    limit = int(args.memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import cli  # noqa: F401 - from --root

    assert Path(cli.__file__).resolve().parent == root, cli.__file__
    results = []
    with tempfile.TemporaryDirectory(prefix="dpc-fuzz-shared-") as tmp:
        shared = make_shared(Path(tmp))
        for command, kind, flag, argv_of in cases(args.only):
            result = run_case(argv_of, shared, args.timeout)
            results.append({"command": command, "class": kind, "option": flag, **result})
            print(f"{result['kind']:10s} {kind:15s} {command} {flag}: "
                  f"{result['message'][:100]}"
                  + (f"  LEFT {result['left_behind']}" if result["left_behind"] else ""),
                  flush=True)
    report = {
        "command": "benchmarks/fuzz_values.py " + " ".join(sys.argv[1:]),
        "root": str(root),
        **tally(results),
        "timed_out": sum(c["timed_out"] for c in results),
        "seconds": round(sum(c["seconds"] for c in results), 1),
    }
    print(json.dumps({k: report[k] for k in ("cases", "kinds", "timed_out", "left_behind",
                                             "seconds", "by_class")}, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
