"""Every command's input files, fuzzed: each class of bad input through every reader (issue 60).

    .venv/bin/python benchmarks/fuzz_inputs.py --out benchmarks/results/fuzz_inputs.json

For each command that reads a user's file (the table :data:`COMMANDS`: the command line, with
``{in}`` where the input goes) and each class of bad input (:data:`CLASSES`, written fresh into
a temporary folder), the command runs in-process (``cli.main``) and its answer is sorted:

* ``one line``: exit 2 and exactly one line on stderr, no traceback (what every case must give);
* ``traceback``: a Python traceback reached the user (or an exception escaped ``cli.main``);
* ``accepted``: exit 0 (a class the command must refuse was read as input);
* ``other``: any other exit status, or more than one line.

Besides, ``left behind`` counts the refused runs that created a file or folder (a refused run
must leave nothing). The report lists the counts per class and per command, and every case
that is not ``one line``. Every case is refused before a model loads, so the run takes seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzz_report import answer_kind, stderr_lines, tally  # noqa: E402

import cli  # noqa: E402

#: class -> how its input is made in a folder (returns the path given to the command).
CLASSES = {
    "not UTF-8": lambda d, suffix: _write(d / f"latin1{suffix}", b'{"a": "caf\xe9"}\n'),
    "binary": lambda d, suffix: _write(d / f"model{suffix}", bytes(range(256)) * 64),
    "a directory": lambda d, suffix: _dir(d / f"folder{suffix}"),
    "empty": lambda d, suffix: _write(d / f"empty{suffix}", b""),
    "blank lines only": lambda d, suffix: _write(d / f"blank{suffix}", b"\n  \n\r\n"),
    "JSON nested 100,000 deep": lambda d, suffix: _write(
        d / f"deep{suffix}", b"[" * 100_000 + b"]" * 100_000 + b"\n"),
    "missing": lambda d, suffix: d / f"missing{suffix}",
    "a dangling link": lambda d, suffix: _link(d / f"link{suffix}", d / "gone"),
}

#: (command line with {in} for the input and {dir} for the case's folder, the input's suffix,
#: the classes that do not apply to it).
COMMANDS: list[tuple[str, str, frozenset[str]]] = [
    ("generate --input-file {in}", ".jsonl", frozenset()),
    ("inli eval {in}", ".csv", frozenset({"JSON nested 100,000 deep"})),
    ("inli predict --input {in}", ".jsonl", frozenset()),
    ("inli train --train {in} --out {dir}/model", ".csv", frozenset({"JSON nested 100,000 deep"})),
    ("inli variants --file {in} --out {dir}/variants.jsonl", ".csv", frozenset({"JSON nested 100,000 deep"})),
    ("swag oversample {in} --out {dir}/pool", ".jsonl", frozenset()),
    ("swag train-endings {in} --out {dir}/endings", ".jsonl", frozenset()),
    ("aflite {in} --format winogrande --out {dir}/af", ".jsonl", frozenset()),
    ("aflite {in} --format multiple-choice --out {dir}/af", ".jsonl", frozenset()),
    ("aflite {in} --format swag-csv --out {dir}/af", ".csv", frozenset({"JSON nested 100,000 deep"})),
    ("aflite {in} --format inli --out {dir}/af", ".csv", frozenset({"JSON nested 100,000 deep"})),
    ("commongen generate {in} --out {dir}/cg.jsonl", ".jsonl", frozenset()),
    ("commongen train --src {in} --tgt {in} --out {dir}/cg", ".txt",
     frozenset({"JSON nested 100,000 deep"})),
    ("commongen eval {in} --refs {in} --sets {in}", ".jsonl", frozenset()),
    ("graph cooccur {corpus} --vocab {in} --out {dir}/c.json.gz", ".txt",
     frozenset({"JSON nested 100,000 deep"})),
    ("train lm-generator --pairs {in} --out {dir}/lm --device cpu", ".jsonl", frozenset()),
    ("eval copa {in} --scorer graph", ".xml", frozenset({"JSON nested 100,000 deep"})),
]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _dir(path: Path) -> Path:
    path.mkdir()
    (path / "notes.txt").write_text("a user's file\n", encoding="utf-8")
    return path


def _link(path: Path, target: Path) -> Path:
    path.symlink_to(target)
    return path


def run_case(command: str, suffix: str, make: object) -> dict[str, object]:
    """One command over one class of input, in a fresh folder: the answer's kind, the exit
    status, stderr's first line, and whether the run left anything behind."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = folder / "corpus"
        corpus.mkdir()
        (corpus / "a.txt").write_text("We stayed in because it was raining.\n", encoding="utf-8")
        given = make(folder, suffix)  # type: ignore[operator]
        before = {p for p in folder.rglob("*")}
        argv = command.format(**{"in": str(given), "dir": str(folder), "corpus": str(corpus)})
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main(argv.split())
        except SystemExit as stop:  # argparse's own refusal
            code = stop.code if isinstance(stop.code, int) else 2
        except BaseException:  # noqa: BLE001 (what escaped is the finding)
            code, err = None, io.StringIO(err.getvalue() + traceback.format_exc())
        text = err.getvalue()
        lines = stderr_lines(text)
        kind = answer_kind(code, text)
        left = sorted(str(p.relative_to(folder)) for p in set(folder.rglob("*")) - before)
        return {"kind": kind, "code": code, "message": lines[-1] if lines else "",
                "left_behind": left if code != 0 else []}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="JSON report")
    ap.add_argument("--only", default=None, help="commands containing this text")
    args = ap.parse_args()
    cases = []
    for command, suffix, skip in COMMANDS:
        if args.only and args.only not in command:
            continue
        for name, make in CLASSES.items():
            if name in skip:
                continue
            result = run_case(command, suffix, make)
            cases.append({"command": command, "class": name, **result})
            print(f"{result['kind']:10s} {name:26s} {command}: {result['message'][:110]}",
                  flush=True)
    report = {"command": "benchmarks/fuzz_inputs.py " + " ".join(sys.argv[1:]), **tally(cases)}
    print(json.dumps({k: report[k] for k in ("cases", "kinds", "left_behind", "by_class")},
                     indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
