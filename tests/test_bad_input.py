"""Bad input never damages a file and never shows a traceback (issue 20, items 2, 3 and 5).

:data:`CASES` is the table: a ``dpc`` command line, the exit status it must give, and a word its
message must hold. Every case runs in-process (``cli.main``) in a fresh folder of small inputs
(:func:`make_env`), and every case checks, besides its own row:

- every file that was there before (inputs, and outputs of earlier runs) is byte-identical
  afterwards, unless the row names it as one the command may replace (``--overwrite``);
- stderr holds no ``Traceback``; a failing command writes exactly one line there.

:data:`API_CASES` does the same for the Python API (an exception of the project's own type with
a message naming the value). The interrupt tests at the end send SIGINT to real ``dpc``
processes (``generate --out``, ``mine``, ``train generator``): exit 130, one line saying what was
kept, and a re-run that resumes to the same result as an uninterrupted run.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import lzma
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

import cli
from causal_mining.pair import CausalPair
from causal_mining.shards import write_pairs
from cause_effect_graph.store import MAGIC, save_graph
from dpc_errors import DpcError
from dpc_files import FOLDER_FORMAT, FOLDER_MARKER, RESULTS_FORMAT

ROOT = Path(__file__).resolve().parents[1]

COPA = """<?xml version="1.0" encoding="UTF-8"?>
<copa-corpus version="1.0">
  <item id="1" asks-for="cause" most-plausible-alternative="1">
    <p>The baby cried.</p><a1>The baby was hungry.</a1><a2>The baby slept.</a2>
  </item>
  <item id="2" asks-for="effect" most-plausible-alternative="2">
    <p>It rained all night.</p><a1>The street was dry.</a1><a2>The street was wet.</a2>
  </item>
</copa-corpus>
"""


# ----------------------------------------------------------------------------- the inputs

#: The files dpc's folder commands write first, or resume from (their names, not dpc's files).
LOOKALIKE_NAMES = ("manifest.json", "train_config.json", "spm.model", "dpc_generator.json",
                   "dpc_vocab_trim.json", "causal_bert.json", "generator.json",
                   "lm_generator_run.json", "report.json", "outputs.jsonl", "oversample.json",
                   "pool.jsonl", "swag_endings.json", "training_run.json", "cross_encoder.json",
                   "generator_run.json", "variant_generator.json", "config.json")


def small_graph() -> nx.DiGraph:
    G = nx.DiGraph()
    G.add_weighted_edges_from([("hungry", "cry", 9), ("tired", "cry", 6), ("rain", "wet", 8),
                               ("cry", "tear", 5)])
    for n in G:
        G.nodes[n]["cause_weight"] = G.out_degree(n, weight="weight")
        G.nodes[n]["effect_weight"] = G.in_degree(n, weight="weight")
    G.graph["total"] = 28
    return G


def write_ceg(path: Path, vocab: list[str], src: list[int], dst: list[int]) -> None:
    """A ``.ceg`` file with these edge ends, its header and digest right: only the indices are
    wrong (what a damaged or hand-made file may hold)."""
    import numpy as np

    n, m = len(vocab), len(src)
    raw = b"".join([("\n".join(vocab)).encode(), *(np.zeros(n, "<i8").tobytes() for _ in range(4)),
                    np.asarray(src, "<i4").tobytes(), np.asarray(dst, "<i4").tobytes(),
                    np.ones(m, "<i8").tobytes()])
    payload = lzma.compress(raw)
    header = json.dumps({"format": "dpc-cause-effect-graph", "nodes": n, "edges": m,
                         "vocab_bytes": len("\n".join(vocab).encode()), "raw_bytes": len(raw),
                         "payload_bytes": len(payload), "compression": "xz",
                         "blake2b": hashlib.blake2b(payload, digest_size=16).hexdigest(),
                         "graph": {}}).encode()
    path.write_bytes(MAGIC + struct.pack("<II", 1, len(header)) + header + payload)


def tiny_pairs(n: int = 40) -> list[CausalPair]:
    return [CausalPair(f"it rained {i}", f"the street was wet {i}", "because", "EPC",
                       "EXPLANATION", f"t:{i}", f"the street was wet {i} because it rained {i}.")
            for i in range(n)]


def make_env(root: Path) -> dict[str, str]:
    """Small inputs and earlier outputs under ``root``; the paths by name, for the table."""
    root.mkdir(parents=True, exist_ok=True)
    save_graph(small_graph(), root / "graph.ceg")
    write_ceg(root / "neg.ceg", ["rain", "wet"], [0], [-1])
    write_ceg(root / "big.ceg", ["rain", "wet"], [0], [7])
    (root / "garbage.ceg").write_bytes(b"\x00\xffnot a graph" * 10)
    (root / "copa.xml").write_text(COPA, encoding="utf-8")
    (root / "in.jsonl").write_text('"babies cry"\n{"input": "it rained"}\n', encoding="utf-8")
    (root / "bad_utf8.jsonl").write_bytes(b'"babies cry"\n"caf\xe9 au lait"\n')
    (root / "not_json.jsonl").write_text('"babies cry"\nbabies cry\n', encoding="utf-8")
    (root / "existing.out").write_text("user data, not dpc's\n", encoding="utf-8")
    (root / "binary.out").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    (root / "no_newline.out").write_text("hello", encoding="utf-8")
    (root / "other_inputs.jsonl").write_text('{"index": 0, "input": "the dog barked"}\n',
                                             encoding="utf-8")
    (root / "lookalike.jsonl").write_text('{"index": 0, "input": "babies cry"}\n{"index": 1',
                                          encoding="utf-8")
    (root / "lookalike_same.jsonl").write_text('{"index": 0, "input": "babies cry", "outputs": '
                                               '[]}\n', encoding="utf-8")
    (root / "old_format.jsonl").write_text('{"index": 0, "input": "babies cry", "direction": '
                                           '"cause", "outputs": [], "keywords": []}\n',
                                           encoding="utf-8")
    (root / "empty.jsonl").write_bytes(b"")
    (root / "other_command.jsonl").write_text(json.dumps(
        {"format": RESULTS_FORMAT, "command": "dpc eval generation", "run": {}}) + "\n",
        encoding="utf-8")
    (root / "foreign").mkdir()
    (root / "foreign" / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (root / "foreign" / "report.md").write_text("# my report\n", encoding="utf-8")
    (root / "foreign_manifest").mkdir()
    (root / "foreign_manifest" / "manifest.json").write_text('{"mine": true}\n')
    # a user's folder holding files of the names dpc's commands write: none of them is dpc's
    (root / "lookalike").mkdir()
    for name in LOOKALIKE_NAMES:
        (root / "lookalike" / name).write_text('{"the user\'s": true}\n', encoding="utf-8")
    # a folder another dpc command wrote (its marker names that command)
    (root / "mined").mkdir()
    (root / "mined" / FOLDER_MARKER).write_text(json.dumps(
        {"format": FOLDER_FORMAT, "command": "dpc mine"}) + "\n", encoding="utf-8")
    (root / "mined" / "manifest.json").write_text("{}\n", encoding="utf-8")
    (root / "afile.txt").write_text("a file, not a folder\n", encoding="utf-8")
    (root / "corpus").mkdir()
    (root / "corpus" / "a.txt").write_text("We stayed in because it was raining hard.\n")
    (root / "outside").mkdir()
    (root / "outside" / "secret.txt").write_text("The drought led to a terrible famine.\n")
    (root / "corpus" / "link.txt").symlink_to(Path("..") / "outside" / "secret.txt")
    (root / "trunc").mkdir()
    text = "".join(f"We stayed in because it was raining on day {i}.\n\n" for i in range(400))
    whole = gzip.compress(text.encode())
    (root / "trunc" / "cut.txt.gz").write_bytes(whole[: len(whole) // 2])
    (root / "bank").mkdir()
    write_pairs(root / "bank" / "causalbank-00000.tsv", tiny_pairs())
    (root / "vocab.txt").write_text("rain\nwet\n", encoding="utf-8")
    (root / "wg.jsonl").write_text(json.dumps({"qID": "q-1", "sentence": "Ian ate because _ was "
                                               "hungry.", "option1": "Ian", "option2": "Dennis",
                                               "answer": "2"}) + "\n", encoding="utf-8")
    (root / "bad.csv").write_text("premise,hypothesis,label\nP,H,neutral\n", encoding="utf-8")
    # one reader for every input (issue 60): a file of each class of bad input
    (root / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n",
                                     encoding="utf-8")
    (root / "latin1.csv").write_bytes(b"dataset,premise,implied_entailment,explicit_entailment,"
                                      b"neutral,contradiction\nd,caf\xe9,a,b,c,d\n")
    (root / "latin1.txt").write_bytes(b"rain\ncaf\xe9\n")
    (root / "blank.jsonl").write_text("\n  \n", encoding="utf-8")
    # every value checked before any model loads (issue 60, item 2): good inputs to give them
    (root / "inli.csv").write_text("dataset,premise,implied_entailment,explicit_entailment,"
                                   "neutral,contradiction\n" + "".join(
                                       f"d,Premise {i}.,Implied {i}.,Explicit {i}.,Neutral {i}.,"
                                       f"Contra {i}.\n" for i in range(8)), encoding="utf-8")
    (root / "mc.jsonl").write_text("".join(json.dumps(
        {"ctx": f"A man is sitting on a roof on day {i}.", "endings": [
            "he sings a song.", "he falls off.", "he takes a nap.", "he nods at me."],
         "label": i % 4}) + "\n" for i in range(8)), encoding="utf-8")
    (root / "long_concept.txt").write_text("dog " + "x" * 20_000 + " catch\n", encoding="utf-8")
    (root / "str_config_model").mkdir()  # a model folder whose config.json has "16" for 16
    (root / "str_config_model" / "config.json").write_text(json.dumps(
        {"model_type": "gpt2", "vocab_size": 50, "n_embd": "16", "n_layer": 1, "n_head": 2}),
        encoding="utf-8")
    paths = {p.name.replace(".", "_"): str(p) for p in root.iterdir()}
    paths["root"] = str(root)
    paths["missing"] = str(root / "no-such-folder")
    return paths


def tree(root: Path) -> set[str]:
    """Every file and folder under ``root``, by relative path (what a refused run may not add
    to)."""
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (links as their target's path), by relative path."""
    files: dict[str, bytes] = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            key = str(path.relative_to(root))
            files[key] = (b"-> " + os.readlink(path).encode() if path.is_symlink()
                          else path.read_bytes())
    return files


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return make_env(tmp_path / "env")


def _immutable(path: Path, on: bool) -> bool:
    flag = "+i" if on else "-i"
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True,
                              check=False).returncode == 0
    except OSError:
        return False


@pytest.fixture
def unwritable(env: dict[str, str]) -> Iterator[str]:
    """A folder nothing can be written in, even by root (chmod, else ``chattr +i``)."""
    folder = Path(env["root"]) / "locked"
    folder.mkdir()
    (folder / "kept.txt").write_text("kept\n")
    folder.chmod(0o555)
    writable = os.access(folder, os.W_OK)
    if writable and not _immutable(folder, True):
        folder.chmod(0o755)
        pytest.skip("cannot make a folder unwritable here (root without chattr)")
    yield str(folder)
    if writable:
        _immutable(folder, False)
    folder.chmod(0o755)


# ----------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Case:
    """One bad (or borderline) command line and what ``dpc`` must answer."""

    name: str
    argv: tuple[str, ...]  # formatted with the env's paths: "{graph_ceg}"
    code: int
    word: str  # in stderr (code != 0) or stdout (code 0)
    changes: tuple[str, ...] = ()  # files (env names) the command may replace
    unwritable: bool = False  # needs the `unwritable` fixture as {locked}


G = ("--graph", "{graph_ceg}")
#: A 20-digit number: beyond int64, and beyond every seed torch and numpy take.
HUGE = "99999999999999999999"
#: What ``dpc generate --out`` says of a file it did not write.
NOT_OURS = "is not a results file of dpc generate (its first line is not dpc's header)"
GEN = ("generate", "--input", "babies cry", "--n", "3", "--m", "2", "--k", "2",
       "--max-new-tokens", "6")
MINE = ("mine", "--workers", "1", "--no-tags", "--no-progress")

CASES: list[Case] = [
    # dpc generate: --out, input files, options (all refused before the model is read)
    Case("generate --out is a folder", (*GEN, "--out", "{foreign}"), 2, "is a folder"),
    Case("generate --out in a missing folder", (*GEN, "--out", "{missing}/o.jsonl"), 2,
         "does not exist"),
    Case("generate --out unwritable", (*GEN, "--out", "{locked}/o.jsonl"), 2, "cannot write",
         unwritable=True),
    Case("generate --out binary", (*GEN, "--out", "{binary_out}"), 2, NOT_OURS),
    Case("generate --out a text file without newline", (*GEN, "--out", "{no_newline_out}"), 2,
         NOT_OURS),
    Case("generate --out a file of other text", (*GEN, "--out", "{existing_out}"), 2, NOT_OURS),
    Case("generate --out a file of {index: N} lines (not ours)",
         (*GEN, "--out", "{other_inputs_jsonl}"), 2, NOT_OURS),
    Case("generate --out a file shaped like ours, no trailing newline",
         (*GEN, "--out", "{lookalike_jsonl}"), 2, NOT_OURS),
    Case("generate --out a file shaped like ours, for these very inputs",
         (*GEN, "--out", "{lookalike_same_jsonl}"), 2, NOT_OURS),
    Case("generate --out a file of an earlier dpc (no header)",
         (*GEN, "--out", "{old_format_jsonl}"), 2, NOT_OURS),
    Case("generate --out an empty file", (*GEN, "--out", "{empty_jsonl}"), 2, NOT_OURS),
    Case("generate --out results of another command", (*GEN, "--out", "{other_command_jsonl}"),
         2, "holds results of 'dpc eval generation'"),
    Case("generate --out --overwrite with a missing model leaves the old file",
         (*GEN, "--out", "{other_command_jsonl}", "--overwrite", "--model", "{missing}"), 2,
         "is not a folder"),
    Case("generate --input-file invalid UTF-8", ("generate", "--input-file", "{bad_utf8_jsonl}"),
         2, "is not UTF-8 text (line 2"),
    Case("generate --input-file not JSON", ("generate", "--input-file", "{not_json_jsonl}"), 2,
         "line 2 is not JSON"),
    Case("generate --input-file missing", ("generate", "--input-file", "{missing}/in.jsonl"), 2,
         "does not exist"),
    Case("generate --input-file a folder", ("generate", "--input-file", "{foreign}"), 2,
         "is a directory"),
    Case("generate no input", ("generate",), 2, "no input"),
    Case("generate --direction", ("generate", "--input", "x", "--direction", "why"), 2,
         "direction"),
    Case("generate --n 0", ("generate", "--input", "x", "--n", "0"), 2, "`n`"),
    Case("generate --m over --num-beams", ("generate", "--input", "x", "--m", "8",
                                           "--num-beams", "4"), 2, "num_beams"),
    Case("generate --m too big for memory", ("generate", "--input", "babies cry", "--m",
                                             "200000", "--k", "1", "--constraint", "rain",
                                             "--constraint-mode", "replace"), 2, "GB"),
    Case("generate --graph negative edge index", ("generate", "--input", "x", "--graph",
                                                  "{neg_ceg}"), 2, "index -1"),
    # dpc mine
    Case("mine --out is a file", (*MINE, "{corpus}", "--out", "{afile_txt}"), 2, "is a file"),
    Case("mine --out under a file", (*MINE, "{corpus}", "--out", "{afile_txt}/out"), 2,
         "is a file"),
    Case("mine --out holds other files", (*MINE, "{corpus}", "--out", "{foreign}"), 2,
         "did not write"),
    Case("mine --out holds a manifest.json not ours", (*MINE, "{corpus}", "--out",
                                                       "{foreign_manifest}"), 2, "did not write"),
    Case("mine --out unwritable", (*MINE, "{corpus}", "--out", "{locked}"), 2, "did not write",
         unwritable=True),
    Case("mine --out in an unwritable folder", (*MINE, "{corpus}", "--out", "{locked}/new"), 2,
         "cannot write", unwritable=True),
    Case("mine input missing", (*MINE, "{missing}", "--out", "{root}/m"), 2, "matches no file"),
    Case("mine --workers 0", ("mine", "{corpus}", "--out", "{root}/m", "--workers", "0"), 2,
         "workers"),
    Case("mine a truncated .gz keeps what was read", (*MINE, "{trunc}", "--out", "{root}/m"), 0,
         '"truncated": 1'),
    Case("mine skips a symlink out of its input", (*MINE, "{corpus}", "--out", "{root}/m"), 0,
         '"symlink_out_of_input": 1'),
    # dpc graph
    Case("graph build --out exists", ("graph", "build", "{bank}", "--out", "{existing_out}"), 2,
         "--overwrite"),
    Case("graph build --out is a folder", ("graph", "build", "{bank}", "--out", "{foreign}"), 2,
         "is a folder"),
    Case("graph build --out in a missing folder", ("graph", "build", "{bank}", "--out",
                                                   "{missing}/g.ceg"), 2, "does not exist"),
    Case("graph build --tsv exists", ("graph", "build", "{bank}", "--out", "{root}/g.ceg",
                                      "--tsv", "{existing_out}"), 2, "--overwrite"),
    Case("graph build --work holds other files", ("graph", "build", "{bank}", "--out",
                                                  "{root}/g.ceg", "--work", "{foreign}"), 2,
         "did not write"),
    Case("graph build --out unwritable", ("graph", "build", "{bank}", "--out", "{locked}/g.ceg"),
         2, "cannot write", unwritable=True),
    Case("graph show --out exists", ("graph", "show", "cry", "--out", "{existing_out}", *G), 2,
         "--overwrite"),
    Case("graph show --out in a missing folder", ("graph", "show", "cry", "--out",
                                                  "{missing}/cry.png", *G), 2, "does not exist"),
    Case("graph show --out binary", ("graph", "show", "cry", "--out", "{binary_out}", *G), 2,
         "already exists"),
    Case("graph show unknown lemma", ("graph", "show", "zebra", "--out", "{root}/z.png", *G), 2,
         "not in the graph"),
    Case("graph query negative edge index", ("graph", "query", "it rained", "--graph",
                                             "{neg_ceg}"), 2, "index -1"),
    Case("graph stats edge index out of range", ("graph", "stats", "--graph", "{big_ceg}"), 2,
         "index 7"),
    Case("graph stats missing graph", ("graph", "stats", "--graph", "{missing}/g.ceg"), 2,
         "does not exist"),
    Case("graph stats not a graph", ("graph", "stats", "--graph", "{garbage_ceg}"), 2,
         "not a Cause Effect Graph"),
    Case("graph export --out exists", ("graph", "export", "--out", "{existing_out}", *G), 2,
         "--overwrite"),
    Case("graph export --overwrite replaces", ("graph", "export", "--out", "{existing_out}",
                                               "--overwrite", *G), 0, "4 edges",
         changes=("existing_out",)),
    Case("graph export --out unwritable", ("graph", "export", "--out", "{locked}/e.tsv", *G), 2,
         "cannot write", unwritable=True),
    Case("graph cooccur --out exists", ("graph", "cooccur", "{corpus}", "--vocab",
                                        "{vocab_txt}", "--out", "{existing_out}"), 2,
         "--overwrite"),
    # dpc eval
    Case("eval copa --predictions in a missing folder",
         ("eval", "copa", "{copa_xml}", "--scorer", "graph", "--predictions",
          "{missing}/p.jsonl"), 2, "does not exist"),
    Case("eval copa --predictions exists", ("eval", "copa", "{copa_xml}", "--scorer", "graph",
                                            "--predictions", "{existing_out}"), 2, "--overwrite"),
    Case("eval copa --predictions is a folder", ("eval", "copa", "{copa_xml}", "--scorer",
                                                 "graph", "--predictions", "{foreign}"), 2,
         "is a folder"),
    Case("eval copa missing file", ("eval", "copa", "{missing}/c.xml", "--scorer", "graph"), 2,
         "does not exist"),
    Case("eval copa not XML", ("eval", "copa", "{binary_out}", "--scorer", "graph"), 2,
         "not valid XML"),
    Case("eval copa unknown scorer", ("eval", "copa", "{copa_xml}", "--scorer", "oracle"), 2,
         "oracle"),
    Case("eval generation --out holds other files", ("eval", "generation", "{copa_xml}",
                                                     "--out", "{foreign}"), 2, "did not write"),
    Case("eval generation --limit 0", ("eval", "generation", "{copa_xml}", "--methods", "guided",
                                       "--limit", "0"), 2,
         "--limit"),
    # dpc train
    Case("train tokenizer --out holds other files", ("train", "tokenizer", "--bank", "{bank}",
                                                     "--out", "{foreign}"), 2, "did not write"),
    Case("train generator --out holds other files",
         ("train", "generator", "--bank", "{bank}", "--tokenizer", "{missing}", "--out",
          "{foreign}", "--no-progress"), 2, "did not write"),
    Case("train generator --out is a file",
         ("train", "generator", "--bank", "{bank}", "--tokenizer", "{missing}", "--out",
          "{afile_txt}", "--no-progress"), 2, "is a file"),
    Case("train generator --batch-size 0",
         ("train", "generator", "--bank", "{bank}", "--tokenizer", "{missing}", "--out",
          "{root}/run", "--batch-size", "0"), 2, "batch_size"),
    Case("train trim-vocab --out holds other files",
         ("train", "trim-vocab", "--bank", "{bank}", "--out", "{foreign}", "--no-progress"), 2,
         "did not write"),
    Case("train export --out holds other files",
         ("train", "export", "--model", "{missing}", "--out", "{foreign}"), 2, "did not write"),
    Case("train causal-bert --out holds other files",
         ("train", "causal-bert", "--bank", "{bank}", "--out", "{foreign}", "--no-progress"), 2,
         "did not write"),
    Case("train causal-bert --pairs", ("train", "causal-bert", "--bank", "{bank}", "--out",
                                       "{root}/cb", "--pairs", "many"), 2, "--pairs"),
    Case("train lm-generator pairs not JSON", ("train", "lm-generator", "--pairs",
                                               "{not_json_jsonl}", "--out", "{root}/lm",
                                               "--device", "cpu"), 2, "not_json.jsonl:1"),
    Case("train lm-generator --r 0", ("train", "lm-generator", "--pairs", "{missing}/e.jsonl",
                                      "--out", "{root}/lm", "--r", "0"), 2, "`r` (=0)"),
    # the task pipelines and the web page (all refused before any model is read)
    Case("aflite a line that is not an object", ("aflite", "{not_json_jsonl}", "--format",
                                                  "winogrande", "--out", "{root}/af"), 2,
         "not_json.jsonl:1: a WinoGrande line must be a JSON object"),
    Case("aflite --out holds other files", ("aflite", "{wg_jsonl}", "--format", "winogrande",
                                            "--out", "{foreign}"), 2, "did not write"),
    Case("aflite m larger than the data", ("aflite", "{wg_jsonl}", "--format", "winogrande",
                                           "--out", "{root}/af"), 2,
         "must be smaller than the number of instances (1)"),
    Case("inli eval a CSV without the columns", ("inli", "eval", "{bad_csv}"), 2,
         "missing column(s) dataset, implied_entailment"),
    Case("inli variants unknown label", ("inli", "variants", "--premise", "P", "--implied", "H",
                                         "--labels", "bogus"), 2, "unknown INLI label 'bogus'"),
    Case("swag oversample a line that is not an object",
         ("swag", "oversample", "{not_json_jsonl}", "--out", "{root}/pool"), 2,
         "not_json.jsonl:1: a multiple-choice line must be a JSON object"),
    Case("swag filter without a pool", ("swag", "filter", "{missing}", "--out", "{root}/f.jsonl"),
         2, "run `dpc swag oversample` first"),
    Case("serve --port out of range", ("serve", "--port", "99999"), 2, "--port (=99999)"),
    # one reader for every input (issue 60): each class, through several commands' readers
    Case("generate --input-file nested 100,000 deep", ("generate", "--input-file",
                                                      "{deep_jsonl}"), 2,
         "deep.jsonl line 1 nests arrays and objects deeper than 100 levels"),
    Case("generate --input-file blank", ("generate", "--input-file", "{blank_jsonl}"), 2,
         "blank.jsonl' is empty"),
    Case("aflite nested 100,000 deep", ("aflite", "{deep_jsonl}", "--format", "winogrande",
                                        "--out", "{root}/af"), 2, "deep.jsonl:1 nests arrays"),
    Case("aflite a directory", ("aflite", "{foreign}", "--format", "winogrande", "--out",
                                "{root}/af"), 2, "is a directory"),
    Case("aflite blank", ("aflite", "{blank_jsonl}", "--format", "winogrande", "--out",
                          "{root}/af"), 2, "blank.jsonl' is empty"),
    Case("swag oversample nested 100,000 deep",
         ("swag", "oversample", "{deep_jsonl}", "--out", "{root}/pool"), 2,
         "deep.jsonl:1 nests arrays"),
    Case("swag oversample not UTF-8", ("swag", "oversample", "{bad_utf8_jsonl}", "--out",
                                       "{root}/pool"), 2, "is not UTF-8 text (line 2, byte 0xe9)"),
    Case("inli eval not UTF-8", ("inli", "eval", "{latin1_csv}"), 2,
         "latin1.csv' is not UTF-8 text (line 2, byte 0xe9)"),
    Case("inli predict not UTF-8", ("inli", "predict", "--input", "{bad_utf8_jsonl}"), 2,
         "is not UTF-8 text (line 2, byte 0xe9)"),
    Case("inli predict nested 100,000 deep", ("inli", "predict", "--input", "{deep_jsonl}"), 2,
         "deep.jsonl:1 nests arrays"),
    Case("graph cooccur --vocab not UTF-8", ("graph", "cooccur", "{corpus}", "--vocab",
                                             "{latin1_txt}", "--out", "{root}/c.json.gz"), 2,
         "latin1.txt' is not UTF-8 text (line 2, byte 0xe9)"),
    Case("graph cooccur --vocab a directory", ("graph", "cooccur", "{corpus}", "--vocab",
                                               "{foreign}", "--out", "{root}/c.json.gz"), 2,
         "is a directory"),
    Case("commongen generate nested 100,000 deep", ("commongen", "generate", "{deep_jsonl}",
                                                     "--out", "{root}/cg.jsonl"), 2,
         "deep.jsonl:1 nests arrays"),
    Case("commongen eval nested 100,000 deep", ("commongen", "eval", "{deep_jsonl}", "--refs",
                                                "{vocab_txt}", "--sets", "{vocab_txt}"), 2,
         "not a results file"),
    # folders of files bearing the names dpc writes, but not dpc's: refused, never merged into
    # (train export used to replace such a folder whole)
    *(Case(f"{' '.join(argv[:2])} --out a folder of lookalike files", (*argv, "{lookalike}"), 2,
           "did not write") for argv in (
        ("mine", "{corpus}", "--workers", "1", "--no-progress", "--out"),
        ("graph", "build", "{bank}", "--out", "{root}/g.ceg", "--work"),
        ("eval", "generation", "{copa_xml}", "--methods", "guided", "--out"),
        ("train", "tokenizer", "--bank", "{bank}", "--out"),
        ("train", "generator", "--bank", "{bank}", "--tokenizer", "{missing}", "--out"),
        ("train", "trim-vocab", "--bank", "{bank}", "--no-progress", "--out"),
        ("train", "export", "--model", "{missing}", "--out"),
        ("train", "causal-bert", "--bank", "{bank}", "--no-progress", "--out"),
        ("aflite", "{wg_jsonl}", "--format", "winogrande", "--out"),
        ("swag", "oversample", "{wg_jsonl}", "--out"),
        ("inli", "train", "--train", "{bad_csv}", "--out"),
    )),
    Case("train export --out the folder of another command", ("train", "export", "--model",
                                                              "{missing}", "--out", "{mined}"),
         2, "holds the output of dpc mine, not of dpc train export"),
    Case("train tokenizer --out the folder of another command",
         ("train", "tokenizer", "--bank", "{bank}", "--out", "{mined}"), 2,
         "holds the output of dpc mine, not of dpc train tokenizer"),
    # every value checked before any model loads or any folder is made (issue 60, items 2
    # and 4); `_run_case` checks that a refused run leaves no file or folder behind.
    # -- seeds: what every generator dpc seeds takes (torch's overflowed: a traceback)
    *(Case(f"{' '.join(argv[:2])} --seed beyond the seeds", (*argv, "--seed", HUGE), 2,
           word) for argv, word in (
        (("generate", "--input", "x"), f"--seed (={HUGE}) must be an integer from 0 to "
                                       "4294967295"),
        (("eval", "copa", "{copa_xml}", "--scorer", "graph", *G), f"--seed (={HUGE})"),
        (("eval", "generation", "{copa_xml}", "--methods", "gold"), f"--seed (={HUGE})"),
        (("train", "tokenizer", "--bank", "{bank}", "--out", "{root}/tok"), f"`seed` (={HUGE})"),
        (("train", "generator", "--bank", "{bank}", "--tokenizer", "{missing}", "--out",
          "{root}/run"), f"`seed` (={HUGE})"),
        (("train", "causal-bert", "--bank", "{bank}", "--out", "{root}/cb", "--no-progress"),
         f"`seed` (={HUGE})"),
        (("train", "lm-generator", "--pairs", "{missing}/e.jsonl", "--out", "{root}/lm"),
         f"`seed` (={HUGE})"),
        (("aflite", "{wg_jsonl}", "--format", "winogrande", "--out", "{root}/af"),
         f"`seed` (={HUGE})"),
        (("inli", "train", "--train", "{inli_csv}", "--out", "{root}/inli"), f"`seed` (={HUGE})"),
        (("inli", "variants", "--premise", "P", "--implied", "H"), f"--seed (={HUGE})"),
        (("swag", "oversample", "{mc_jsonl}", "--out", "{root}/pool"), f"`seed` (={HUGE})"),
        (("swag", "filter", "{missing}", "--out", "{root}/f.jsonl"), f"`seed` (={HUGE})"),
        (("commongen", "train", "--src", "{missing}/s.txt", "--tgt", "{missing}/t.txt", "--out",
          "{root}/cgt"), f"`seed` (={HUGE})"),
        (("graph", "parts-of-speech", "--data", "{missing}", "--out", "{root}/pos.tsv.gz"),
         f"`--seed` (={HUGE})"),
    )),
    Case("inli train --split-seed -1", ("inli", "train", "--train", "{inli_csv}", "--out",
                                        "{root}/inli", "--split-seed", "-1"), 2,
         "--split-seed (=-1)"),
    # -- counts where 0 or a negative number means nothing (a slice's -1 dropped the last item)
    Case("train generator --threads -1", ("train", "generator", "--bank", "{bank}",
                                          "--tokenizer", "{missing}", "--out", "{root}/run",
                                          "--threads", "-1"), 2, "`threads` (=-1)"),
    Case("train generator --threads 0", ("train", "generator", "--bank", "{bank}",
                                         "--tokenizer", "{missing}", "--out", "{root}/run",
                                         "--threads", "0"), 2, "`threads` (=0)"),
    Case("train generator --warmup-steps -1", ("train", "generator", "--bank", "{bank}",
                                               "--tokenizer", "{missing}", "--out", "{root}/run",
                                               "--warmup-steps", "-1"), 2,
         "`warmup_steps` (=-1)"),
    Case("inli eval --limit -1", ("inli", "eval", "{inli_csv}", "--limit", "-1"), 2,
         "--limit (=-1) must be an integer >= 1"),
    Case("inli train --limit 0", ("inli", "train", "--train", "{inli_csv}", "--out",
                                  "{root}/inli", "--limit", "0"), 2, "--limit (=0)"),
    Case("inli variants --limit -1", ("inli", "variants", "--file", "{inli_csv}", "--out",
                                      "{root}/v.jsonl", "--limit", "-1"), 2, "--limit (=-1)"),
    Case("swag oversample --limit -1", ("swag", "oversample", "{mc_jsonl}", "--out",
                                        "{root}/pool", "--limit", "-1"), 2, "`limit` (=-1)"),
    Case("eval generation --limit -1", ("eval", "generation", "{copa_xml}", "--methods", "gold",
                                        "--limit", "-1"), 2, "--limit (=-1)"),
    Case("train evaluate --max-examples 0", ("train", "evaluate", "--model", "bundled", "--bank",
                                             "{bank}", "--max-examples", "0"), 2,
         "--max-examples (=0)"),
    Case("graph stats --top 0", ("graph", "stats", "--top", "0", *G), 2, "--top (=0)"),
    Case("graph cooccur --workers -1", ("graph", "cooccur", "{corpus}", "--vocab", "{vocab_txt}",
                                        "--out", "{root}/c.json.gz", "--workers", "-1"), 2,
         "--workers (=-1)"),
    Case("mine --batch-chars beyond int64", ("mine", "{corpus}", "--out", "{root}/m",
                                             "--batch-chars", HUGE), 2,
         f"`batch_chars` (={HUGE}) must be an integer from 1000 to 9223372036854775807"),
    Case("train tokenizer --vocab-size beyond SentencePiece's", (
        "train", "tokenizer", "--bank", "{bank}", "--out", "{root}/tok", "--vocab-size", HUGE), 2,
         f"`vocab_size` (={HUGE})"),
    # -- numbers that must be finite (and in their range)
    Case("inli variants --edit-penalty inf", ("inli", "variants", "--premise", "P", "--implied",
                                              "H", "--edit-penalty", "inf"), 2,
         "edit_penalty (=inf) has to be a finite number >= 0"),
    Case("inli train --epochs inf", ("inli", "train", "--train", "{inli_csv}", "--out",
                                     "{root}/inli", "--epochs", "inf"), 2, "`epochs` (=inf)"),
    Case("inli train --dev-fraction 1", ("inli", "train", "--train", "{inli_csv}", "--out",
                                         "{root}/inli", "--dev-fraction", "1"), 2,
         "--dev-fraction (=1.0) has to be a finite number in (0, 1)"),
    Case("aflite --epochs nan", ("aflite", "{wg_jsonl}", "--format", "winogrande", "--out",
                                 "{root}/af", "--epochs", "nan"), 2, "`epochs` (=nan)"),
    Case("swag train-endings --minutes inf", ("swag", "train-endings", "{mc_jsonl}", "--out",
                                              "{root}/te", "--minutes", "inf"), 2,
         "`max_minutes` (=inf)"),
    Case("swag train-endings --base bundled --minutes -1",
         ("swag", "train-endings", "{mc_jsonl}", "--out", "{root}/te", "--base", "bundled",
          "--minutes", "-1"), 2, "`max_minutes` (=-1.0)"),
    Case("train causal-bert --lr inf", ("train", "causal-bert", "--bank", "{bank}", "--out",
                                        "{root}/cb", "--lr", "inf"), 2, "`lr` (=inf)"),
    # -- choices: an empty or unknown list is refused, naming it
    Case("eval generation --methods ''", ("eval", "generation", "{copa_xml}", "--methods", ""),
         2, "--methods (='') names no method"),
    Case("eval generation --methods ','", ("eval", "generation", "{copa_xml}", "--methods",
                                           ","), 2, "--methods (=',') names no method"),
    Case("inli variants --labels ''", ("inli", "variants", "--premise", "P", "--implied", "H",
                                       "--labels", ""), 2, "label"),
    # -- over-long text: refused up front, with its length and where it is
    Case("commongen generate a 20,000-character concept",
         ("commongen", "generate", "{long_concept_txt}", "--out", "{root}/cg.jsonl"), 2,
         "long_concept.txt:1: the concept 'xxxxxxxxxxxxxxxxxxxx'... has 20000 characters: at "
         "most 100"),
    Case("generate --input of 20,000 characters", ("generate", "--input", "x" * 20_000), 2,
         "input 0 ('xxxxxxxxxxxxxxxxxxxx'...) has 20000 characters: at most 5000"),
    Case("generate --constraint of 20,000 characters", ("generate", "--input", "babies cry",
                                                        "--constraint", "x" * 20_000), 2,
         "--constraint ('xxxxxxxxxxxxxxxxxxxx'...) has 20000 characters: at most 200"),
    Case("generate --banned of 20,000 characters", ("generate", "--input", "babies cry",
                                                    "--banned", "x" * 20_000), 2,
         "--banned ('xxxxxxxxxxxxxxxxxxxx'...) has 20000 characters"),
    Case("inli variants --implied of 20,000 characters",
         ("inli", "variants", "--premise", "P", "--implied", "x" * 20_000), 2,
         "--implied ('xxxxxxxxxxxxxxxxxxxx'...) has 20000 characters: at most 2000"),
    # -- a size refused only once the work starts (memory): the new --out file is removed
    Case("generate --m too big for memory leaves no --out file",
         ("generate", "--input", "babies cry", "--fast", "--m", "200000", "--k", "1",
          "--constraint", "rain", "--constraint-mode", "replace", "--out", "{root}/o.jsonl"), 2,
         "GB"),
    # -- a model folder's config.json with a value of the wrong type: one line naming it
    Case("generate --model whose config.json has a string for an integer",
         ("generate", "--input", "babies cry", "--model", "{str_config_model}"), 2,
         "config.json': `n_embd` (='16') must be an integer"),
]


def _run_case(case: Case, paths: dict[str, str], capsys: pytest.CaptureFixture) -> None:
    root = Path(paths["root"])
    before, names = snapshot(root), tree(root)
    argv = [arg.format(**paths) for arg in case.argv]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    assert code == case.code, f"{argv}: exit {code}\n{out}\n{err}"
    if case.code == 0:
        assert case.word in out, out
    else:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and case.word in lines[0], err
        left = sorted(tree(root) - names)  # a refused run leaves nothing behind (issue 60)
        assert not left, f"{argv} was refused but left {left} behind"
    after = snapshot(root)
    allowed = {str(Path(paths[name]).relative_to(root)) for name in case.changes}
    for name, data in before.items():
        if name not in allowed:
            assert after.get(name) == data, f"{name} was changed by {argv}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, env: dict[str, str], request: pytest.FixtureRequest,
                   capsys: pytest.CaptureFixture) -> None:
    if case.unwritable:
        env = {**env, "locked": request.getfixturevalue("unwritable")}
    _run_case(case, env, capsys)


def test_mine_resume_with_other_options_is_refused(env: dict[str, str], capsys):
    # an earlier run of ours: it must stay as it was
    assert cli.main([*MINE, env["corpus"], "--out", f"{env['root']}/run"]) == 0
    capsys.readouterr()
    _run_case(Case("mine resume other options", (*MINE, "{corpus}", "--out", "{root}/run",
                                                 "--batch-chars", "5000"), 2, "other options"),
              env, capsys)


#: ``dpc generate`` options small enough for a quick real run (the bundled seq2seq generator).
QUICK = ("--model", "bundled", "--n", "2", "--m", "2", "--k", "2", "--max-new-tokens", "5")


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``dpc generate --out`` file of a finished run of ``babies cry`` and ``it rained``."""
    out = tmp_path_factory.mktemp("earlier") / "run.jsonl"
    assert cli.main(["generate", "--input", "babies cry", "--input", "it rained", *QUICK,
                     "--graph", str(_earlier_graph(out.parent)), "--out", str(out)]) == 0
    return out


def _earlier_graph(folder: Path) -> Path:
    save_graph(small_graph(), folder / "graph.ceg")
    return folder / "graph.ceg"


#: Runs that differ from :func:`earlier_run` in one option: each is refused, naming it.
OTHER_RUNS = [
    (("--direction", "effect"), "--direction is 'effect' here and 'cause' in the file"),
    (("--n", "3"), "--n is 3 here and 2 in the file"),
    (("--k", "1"), "--k is 1 here and 2 in the file"),
    (("--max-new-tokens", "6"), "--max-new-tokens is 6 here and 5 in the file"),
    (("--length-penalty", "0.5"), "--length-penalty is 0.5 here and 1.0 in the file"),
    (("--rerank", "nll"), "--rerank is 'nll' here and 'verifier' in the file"),
    (("--no-plain-row",), "--plain-row is False here and True in the file"),
    (("--constraint", "rain"), "--constraint differs"),
    (("--banned", "hungry"), "--banned differs"),
    (("--seed", "1"), "--seed is 1 here and 0 in the file"),
    (("--dtype", "bfloat16"), "--dtype is 'bfloat16' here and None in the file"),
    (("--input", "the man fell"), "the inputs differ (3 here, 2 in the file)"),
    (("--graph", "{neg_ceg}"), "--graph differs ("),
    (("--model", "smollm2-135m"), "--model differs ('smollm2-135m' here, 'bundled' in the "
                                  "file, other files)"),
]


@pytest.mark.parametrize("extra,word", OTHER_RUNS, ids=[" ".join(e) for e, _ in OTHER_RUNS])
def test_generate_resumes_only_the_same_run(extra: tuple[str, ...], word: str,
                                            earlier_run: Path, env: dict[str, str],
                                            capsys: pytest.CaptureFixture) -> None:
    out = Path(env["root"]) / "run.jsonl"
    shutil.copyfile(earlier_run, out)
    # the same graph under another name: the same run (a graph is known by its bytes)
    same = _earlier_graph(Path(env["root"]) / "foreign")
    quick = [a for a in QUICK if a not in ("--model", "bundled") or "--model" not in extra]
    argv = ["generate", "--input", "babies cry", "--input", "it rained", *quick, "--out",
            str(out), *(a.format(**env) for a in extra)]
    if "--graph" not in extra:
        argv += ["--graph", str(same)]
    _run_case(Case(f"generate resume {extra}", tuple(argv), 2, word), env, capsys)


def test_generate_the_same_run_under_another_graph_path_is_the_same_run(
        earlier_run: Path, env: dict[str, str], capsys: pytest.CaptureFixture) -> None:
    # the table's control: the same options, the same graph's bytes under another path
    out = Path(env["root"]) / "run.jsonl"
    shutil.copyfile(earlier_run, out)
    same = _earlier_graph(Path(env["root"]) / "foreign")
    assert cli.main(["generate", "--input", "babies cry", "--input", "it rained", *QUICK,
                     "--graph", str(same), "--out", str(out)]) == 0
    assert "already holds all 2 results" in capsys.readouterr().err  # the model is not loaded
    assert out.read_bytes() == earlier_run.read_bytes()


def test_generate_resume_refuses_a_graph_changed_in_place(earlier_run: Path,
                                                          env: dict[str, str], capsys) -> None:
    root = Path(env["root"])
    out = root / "run.jsonl"
    shutil.copyfile(earlier_run, out)
    graph = _earlier_graph(root / "foreign")
    G = small_graph()
    G.add_weighted_edges_from([("storm", "wet", 3)])
    save_graph(G, graph)  # the same path, other bytes
    header, *rows = out.read_text(encoding="utf-8").splitlines()
    run = json.loads(header)
    run["run"]["graph"]["name"] = str(graph)  # as if the file's run had read this path
    out.write_text("\n".join([json.dumps(run), *rows]) + "\n", encoding="utf-8")
    _run_case(Case("generate resume, graph changed", (
        "generate", "--input", "babies cry", "--input", "it rained", *QUICK, "--graph",
        str(graph), "--out", str(out)), 2, "is not the same files as when the file was written"),
        env, capsys)


def test_generate_resume_drops_only_a_torn_line_of_its_own(earlier_run: Path, tmp_path: Path,
                                                           capsys) -> None:
    header, first, second = earlier_run.read_text(encoding="utf-8").splitlines()
    graph = json.loads(header)["run"]["graph"]["name"]
    argv = ["generate", "--input", "babies cry", "--input", "it rained", *QUICK, "--graph",
            graph]
    out = tmp_path / "torn.jsonl"
    out.write_text(f"{header}\n{first}\n{second[:25]}", encoding="utf-8")
    assert cli.main([*argv, "--out", str(out)]) == 0
    assert "already holds 1 of 2 results: resuming" in capsys.readouterr().err
    got = out.read_text(encoding="utf-8").splitlines()
    assert got[:2] == [header, first] and len(got) == 3
    assert json.loads(got[2])["index"] == 1
    # rows of ours but out of order (an edited file): refused, the file left as it is
    out.write_text(f"{header}\n{second}\n", encoding="utf-8")
    assert cli.main([*argv, "--out", str(out)]) == 2
    assert "line 2 is not the result of input 0" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == f"{header}\n{second}\n"
    out.write_text(f"{header}\nmy own note\n", encoding="utf-8")
    assert cli.main([*argv, "--out", str(out)]) == 2
    assert "line 2 is not a result of dpc generate" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the Python API


def _api_generate_memory(paths: dict[str, str]) -> object:
    from guided_generation import GuidedOptions
    from guided_generation.pipeline import GuidedGenerator
    from train.models import placeholder_model

    m = placeholder_model()
    generator = GuidedGenerator(m.model, m.tokenizer, small_graph(),
                                lemmatizer=lambda text: ["cry"], verifier=None)
    return generator.generate("babies cry", "cause", GuidedOptions(n=2, m=10**6, k=1))


def _api_mine(out: str) -> Callable[[dict[str, str]], object]:
    def run(paths: dict[str, str]) -> object:
        from causal_mining import MineOptions, mine

        return mine(MineOptions(inputs=(paths["corpus"],), out=out.format(**paths), workers=1))
    return run


def _api_eval_generation(paths: dict[str, str]) -> object:
    from tasks.copa.dataset import read_copa
    from tasks.copa.generation import evaluate_generation

    return evaluate_generation(read_copa(paths["copa_xml"]), None, ["gold"],  # type: ignore
                               lemmatize=str.split, out=paths["foreign"], progress=False)


def _api(name: str, call: Callable[[dict[str, str]], object], word: str
         ) -> tuple[str, Callable[[dict[str, str]], object], str]:
    return name, call, word


def _engine_ids(**ids: object) -> Callable[[dict[str, str]], object]:
    """``dpc_decode.generate`` on a tiny GPT-2 of 50 tokens, given these token ids."""
    def run(paths: dict[str, str]) -> object:
        import torch
        from transformers import GPT2Config, GPT2LMHeadModel

        from dpc_decode import generate

        torch.manual_seed(0)
        model = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_embd=16, n_layer=1, n_head=2,
                                           bos_token_id=0, eos_token_id=0)).eval()
        return generate(model, None, [[1, 2, 3]], None, max_new_tokens=4, **ids)
    return run


API_CASES = [
    _api("load_graph negative index",
         lambda p: __import__("cause_effect_graph.store").store.load_graph(p["neg_ceg"]),
         "index -1"),
    _api("load_graph index out of range",
         lambda p: __import__("cause_effect_graph.store").store.load_graph(p["big_ceg"]),
         "index 7"),
    _api("mine into a folder of other files", _api_mine("{foreign}"), "did not write"),
    _api("mine into a file", _api_mine("{afile_txt}"), "is a file"),
    _api("GuidedGenerator.generate m=10**6 does not fit", _api_generate_memory, "GB"),
    _api("evaluate_generation into a folder of other files", _api_eval_generation,
         "did not write"),
    _api("train_tokenizer into a folder of other files",
         lambda p: __import__("train.tokenizer").tokenizer.train_tokenizer(["a b"], p["foreign"]),
         "did not write"),
    _api("export_generator into a folder of other files",
         lambda p: __import__("train.export").export.export_generator(p["missing"],
                                                                      p["foreign"]),
         "did not write"),
    _api("TrainOptions batch_size 0",
         lambda p: __import__("train.options").options.TrainOptions("b", "t", "o", batch_size=0),
         "batch_size"),
    _api("generate eos_token_id=-7", _engine_ids(eos_token_id=-7),
         "`eos_token_id` (=-7) must be an integer from 0 to 49"),
    _api("generate an eos_token_id list with one beyond the vocabulary",
         _engine_ids(eos_token_id=[3, 50]), "`eos_token_id` (=50)"),
    _api("generate pad_token_id=99", _engine_ids(pad_token_id=99), "`pad_token_id` (=99)"),
    _api("generate pad_token_id=True", _engine_ids(pad_token_id=True), "`pad_token_id` (=True)"),
    _api("generate a banned id beyond the vocabulary", _engine_ids(banned=[[70]]),
         "token id 70 in banned phrase 0"),
    _api("load_model a config.json with a string for an integer",
         lambda p: __import__("train.models").models.load_model(p["str_config_model"]),
         "config.json': `n_embd` (='16') must be an integer"),
    _api("method_names of no method",
         lambda p: __import__("guided_generation.options").options.method_names([]),
         "no method named"),
    _api("read_items invalid UTF-8",
         lambda p: list(__import__("guided_generation.cli").cli.read_items(
             io.BytesIO(Path(p["bad_utf8_jsonl"]).read_bytes()), "cause", "x.jsonl")),
         "line 2"),
]


def _run_api_case(call: Callable[[dict[str, str]], object], word: str,
                  paths: dict[str, str]) -> None:
    """``call(paths)`` raises a :class:`DpcError` of one line holding ``word``, and every file
    under the env's root is byte-identical afterwards."""
    root = Path(paths["root"])
    before = snapshot(root)
    with pytest.raises(DpcError) as raised:
        call(paths)
    assert word in str(raised.value), str(raised.value)
    assert "\n" not in str(raised.value)
    assert snapshot(root) == before


@pytest.mark.parametrize("name,call,word", API_CASES, ids=[c[0] for c in API_CASES])
def test_bad_input_python_api(name: str, call: Callable[[dict[str, str]], object], word: str,
                              env: dict[str, str]) -> None:
    _run_api_case(call, word, env)


def test_the_table_is_large_and_covers_every_command() -> None:
    # with its siblings: numbers and graph headers (test_bad_input_values), and the HTTP API's
    # table (tests/serve/test_bad_requests.py)
    from tests import test_bad_input_values as values

    assert len(CASES) + len(API_CASES) + len(OTHER_RUNS) >= 100
    assert len(values.CASES) + len(values.API_CASES) >= 60
    groups = ("graph", "eval", "train", "inli", "swag")  # commands with subcommands
    firsts = {" ".join(c.argv[:2]) if c.argv[0] in groups else c.argv[0] for c in CASES}
    assert {"generate", "mine", "graph build", "graph show", "graph query", "graph stats",
            "graph export", "graph cooccur", "eval copa", "eval generation", "train tokenizer",
            "train generator", "train trim-vocab", "train export",
            "train causal-bert", "train lm-generator", "aflite", "inli eval", "inli variants", "swag oversample",
            "swag filter", "serve"} <= firsts


# ----------------------------------------------------------------------------- --help


def test_help_imports_neither_torch_nor_transformers() -> None:
    # every `dpc SUB --help` (and `dpc --help`) parsed in one fresh interpreter
    script = """
import sys, time
started = time.perf_counter()
import cli
parser = cli.build_parser()
for argv in (["--help"], ["generate", "--help"], ["mine", "--help"], ["graph", "build", "--help"],
             ["eval", "copa", "--help"], ["eval", "generation", "--help"],
             ["train", "generator", "--help"], ["train", "causal-bert", "--help"],
             ["train", "lm-generator", "--help"],
             ["aflite", "--help"], ["inli", "train", "--help"], ["inli", "variants", "--help"],
             ["swag", "oversample", "--help"], ["swag", "filter", "--help"], ["serve", "--help"]):
    try:
        parser.parse_args(argv)
    except SystemExit:
        pass
heavy = sorted(m for m in ("torch", "transformers", "spacy", "gradio", "sklearn") if m in sys.modules)
print("HEAVY", heavy, "SECONDS", round(time.perf_counter() - started, 2), file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    report = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 0 and report.startswith("HEAVY [] SECONDS"), done.stderr


# ----------------------------------------------------------------------------- interrupts


def _dpc(*argv: str) -> list[str]:
    return [sys.executable, "-m", "cli", *argv]


#: The subprocesses' environment: transformers' deprecation warnings about the engine's cache
#: argument (``past_key_values``) are not dpc's messages, and would be counted as lines.
QUIET = {**os.environ, "PYTHONWARNINGS": "ignore::FutureWarning",
         "TRANSFORMERS_VERBOSITY": "error"}


def interrupt_when(argv: list[str], ready: Callable[[], bool], timeout: float = 600,
                   how: int = signal.SIGINT) -> tuple[int, str, str]:
    """Run ``argv`` in its own process group, send SIGINT to the whole group (as Ctrl-C in a
    terminal does; or ``how``) once ``ready()``; return the exit status, stdout and stderr.
    The time limits only guard against a hang: generous, so that a machine busy with other jobs
    (beside a training job, one resumed run of a CI run took over 300 s) does not fail them."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=QUIET,
                            preexec_fn=_default_interrupt)
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            if proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"{argv} ended (exit {proc.returncode}) before it was interrupted:"
                            f"\n{out}\n{err}")
            if time.monotonic() > deadline:
                pytest.fail(f"{argv} never got ready")
            time.sleep(0.05)
        os.killpg(proc.pid, how)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return proc.returncode, out, err


def _default_interrupt() -> None:
    """In the child: SIGINT as a terminal's Ctrl-C finds it. A shell starts a background job
    (``pytest ... &``) with SIGINT ignored, children inherit that, and Python then installs no
    KeyboardInterrupt handler: the run would finish instead of stopping."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run_dpc(*argv: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run ``dpc ARGV`` to the end in a fresh interpreter (a resumed or straight run)."""
    return subprocess.run(_dpc(*argv), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=QUIET, check=False)


def _one_interrupt_line(err: str, kept: str) -> None:
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("note:")]
    assert "Traceback" not in err, err
    assert len(lines) == 1 and "interrupted" in lines[0] and kept in lines[0], err
    assert "again" in lines[0], err


def _without_timings(line: str) -> dict:
    row = json.loads(line)
    row["stats"] = {k: v for k, v in row["stats"].items() if not k.endswith("_seconds")}
    return row


def _generate_args(tmp_path: Path) -> tuple[list[str], int]:
    inputs = tmp_path / "in.jsonl"
    texts = ["babies cry", "it rained", "the man fell", "she was tired", "the dog barked",
             "the glass broke"]
    inputs.write_text("".join(json.dumps(t) + "\n" for t in texts), encoding="utf-8")
    return ["generate", "--input-file", str(inputs), "--n", "8", "--m", "2", "--k", "3",
            "--max-new-tokens", "8"], len(texts)


def _results(path: Path) -> int:
    """Complete results in a ``dpc generate --out`` file (its lines after the header)."""
    return max(path.read_bytes().count(b"\n") - 1, 0) if path.exists() else 0


def test_interrupted_generate_out_resumes_to_the_same_results(tmp_path: Path) -> None:
    how = signal.SIGINT
    args, total = _generate_args(tmp_path)
    straight = tmp_path / "straight.jsonl"
    assert cli.main([*args, "--out", str(straight)]) == 0
    out = tmp_path / "out.jsonl"
    code, _, err = interrupt_when(_dpc(*args, "--out", str(out)), lambda: _results(out) >= 1,
                                  how=how)
    assert code == 128 + how, err
    _one_interrupt_line(err, f"kept in {out}")
    assert "run the same command again to resume" in err
    kept = _results(out)
    assert 1 <= kept < total
    resumed = _run_dpc(*args, "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert f"already holds {kept} of {total} results: resuming" in resumed.stderr
    got = [_without_timings(x) for x in out.read_text(encoding="utf-8").splitlines()[1:]]
    want = [_without_timings(x) for x in straight.read_text(encoding="utf-8").splitlines()[1:]]
    assert got == want
    assert out.read_text(encoding="utf-8").splitlines()[0] == \
        straight.read_text(encoding="utf-8").splitlines()[0]  # the same run's header


def test_terminated_overwrite_leaves_the_old_file_whole(tmp_path: Path) -> None:
    # SIGTERM (what `kill` and service managers send) gives the line SIGINT gives, exit 143
    how = signal.SIGTERM
    args, total = _generate_args(tmp_path)
    args += ["--model", "bundled"]
    out = tmp_path / "out.jsonl"
    out.write_text("a user's file, replaced only when the run ends\n", encoding="utf-8")
    old = out.read_bytes()

    def results_beside() -> bool:  # the new file, written beside the old one
        return any(_results(p) >= 1 for p in tmp_path.glob(".out.jsonl.*.tmp"))

    code, _, err = interrupt_when(_dpc(*args, "--out", str(out), "--overwrite"), results_beside,
                                  how=how)
    assert code == 128 + how, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("note:")]
    assert "Traceback" not in err and len(lines) == 1, err
    assert f"--overwrite: {out} is as it was" in lines[0] and "resume" not in lines[0], err
    assert out.read_bytes() == old
    assert not list(tmp_path.glob(".out.jsonl.*")), "the new file was left beside the old"
    # run to its end, --overwrite replaces the file whole (what a straight run writes)
    done = _run_dpc(*args, "--out", str(out), "--overwrite")
    assert done.returncode == 0, done.stderr
    assert _results(out) == total and out.read_bytes() != old


def _mining_corpus(folder: Path) -> Path:
    folder.mkdir()
    causes = ["it was raining", "the road was icy", "he was tired", "the bus was late",
              "the baby was hungry", "the wind blew hard", "she lost her keys"]
    effects = ["we stayed in", "the car slid", "he slept early", "she walked", "the baby cried",
               "the tree fell", "she could not get in"]
    for k in range(3):
        with open(folder / f"part{k}.txt", "w", encoding="utf-8") as handle:
            for i in range(12_000):
                c, e = causes[(i + k) % 7], effects[(i * 3 + k) % 7]
                handle.write(f"On day {i} of year {k}, {e} because {c} in town {i % 97}.\n\n")
    return folder


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_mine_resumes_to_the_same_bank(tmp_path: Path, how: int) -> None:
    # worker processes and the progress queue's manager are in the process group too
    corpus = _mining_corpus(tmp_path / "corpus")
    args = ["mine", str(corpus), "--workers", "2", "--no-tags", "--no-progress",
            "--batch-chars", "50000"]
    assert cli.main([*args, "--out", str(tmp_path / "straight")]) == 0
    out = tmp_path / "out"

    def some_parts() -> bool:
        return len(list(out.glob("parts/*/*.json"))) >= 2

    code, _, err = interrupt_when(_dpc(*args, "--out", str(out)), some_parts, how=how)
    assert code == 128 + how, err
    _one_interrupt_line(err, f"kept in {out}/parts")
    resumed = _run_dpc(*args, "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["resumed_batches"] >= 2

    def bank(run: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted((run / "causalbank").glob("*.tsv"))}

    assert bank(out) == bank(tmp_path / "straight") != {}


def test_interrupted_training_resumes_to_the_same_weights(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file

    from tests.train.conftest import tiny_pairs as train_pairs
    from train.tokenizer import train_tokenizer

    bank = tmp_path / "bank"
    write_pairs(bank / "causalbank-00000.tsv", train_pairs())
    tokenizer = tmp_path / "tok"
    train_tokenizer([t for p in train_pairs() for t in (p.cause, p.effect)] + ["cause: effect:"]
                    * 20, tokenizer, vocab_size=120)
    args = ["train", "generator", "--bank", str(bank), "--tokenizer", str(tokenizer),
            "--d-model", "32", "--d-ff", "64", "--num-layers", "1", "--num-heads", "2",
            "--batch-size", "16", "--warmup-steps", "5", "--eval-every", "20",
            "--checkpoint-every", "10", "--dev-examples", "32", "--max-steps", "300",
            "--threads", "1", "--seed", "3", "--no-progress"]
    straight = _run_dpc(*args, "--out", str(tmp_path / "straight"))
    assert straight.returncode == 0, straight.stderr
    out = tmp_path / "run"

    def checkpointed() -> bool:
        return (out / "checkpoint" / "trainer_state.safetensors").exists()

    code, _, err = interrupt_when(_dpc(*args, "--out", str(out)), checkpointed)
    assert code == 130, err
    _one_interrupt_line(err, f"kept in {out}/checkpoint/")
    resumed = _run_dpc(*args, "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["steps"] == json.loads(straight.stdout)["steps"] == 300
    a = load_file(str(tmp_path / "straight" / "checkpoint" / "model.safetensors"))
    b = load_file(str(out / "checkpoint" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    shutil.rmtree(tmp_path / "straight")
