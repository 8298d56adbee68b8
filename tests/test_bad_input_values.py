"""Bad numbers, bad graph headers and pickle-only model folders (issue 38, parts 5, 6 and 7).

:data:`CASES` extends the table of :mod:`tests.test_bad_input` (same :class:`Case`, same checks
by :func:`~tests.test_bad_input._run_case`: the exit status, one line on stderr holding the word,
no traceback, and every file under the env byte-identical afterwards) with:

- numbers the options refuse: ``--length-penalty nan``, ``inf``, ``-inf``, ``--mmr-lambda nan``,
  and a ``--num-beams`` that cannot fit in memory (refused with the estimate, as ``--m`` is);
- ``.ceg`` files whose payload and digest are right but whose header has a field of the wrong
  JSON type or range (a float, string, null, bool or negative count, a list for the ``graph``
  object, a field missing, ...): one line naming the file, the field and the value;
- release and edge-list files with a count beyond int64 (40 digits), for every command that
  reads them;
- a model folder holding only ``pytorch_model.bin`` (a pickle, never loaded).

:data:`API_CASES` does the same through the Python API: a :class:`~dpc_errors.DpcError` whose
message holds the word.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import math
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest

from cause_effect_graph.store import MAGIC
from dpc_errors import DpcError, check_float, check_int, check_seed
from tests.test_bad_input import (  # noqa: F401 - env: a fixture
    Case,
    _run_api_case,
    _run_case,
    env,
    snapshot,
)

NAN, INF = float("nan"), float("inf")
FORTY_DIGITS = "1234567890123456789012345678901234567890"


# ----------------------------------------------------------------------------- the inputs


def ceg_with_header(path: Path, **fields: Any) -> None:
    """A ``.ceg`` file of two nodes and one edge whose payload, sizes and digest are right,
    with the header ``fields`` replaced (``...`` as a value: the field left out)."""
    vocab = b"rain\nwet"
    raw = b"".join([vocab, *(np.zeros(2, "<i8").tobytes() for _ in range(4)),
                    np.asarray([0], "<i4").tobytes(), np.asarray([1], "<i4").tobytes(),
                    np.asarray([3], "<i8").tobytes()])
    payload = lzma.compress(raw)
    header: dict[str, Any] = {
        "format": "dpc-cause-effect-graph", "nodes": 2, "edges": 1, "vocab_bytes": len(vocab),
        "raw_bytes": len(raw), "payload_bytes": len(payload), "compression": "xz",
        "blake2b": hashlib.blake2b(payload, digest_size=16).hexdigest(),
        "graph": {"total": 3, "source": "test"}}
    for name, value in fields.items():
        if value is ...:
            del header[name]
        else:
            header[name] = value
    data = json.dumps(header).encode()
    path.write_bytes(MAGIC + struct.pack("<II", 1, len(data)) + data + payload)


#: Headers, each with one field wrong (the file name, the fields, a word of the message).
BAD_HEADERS: list[tuple[str, dict[str, Any], str]] = [
    ("float_count", {"nodes": 2.0}, "`nodes` (=2.0)"),
    ("string_count", {"edges": "1"}, "`edges` (='1')"),
    ("null_count", {"vocab_bytes": None}, "`vocab_bytes` (=None)"),
    ("bool_count", {"nodes": True}, "`nodes` (=True)"),
    ("negative_count", {"payload_bytes": -1}, "`payload_bytes` (=-1)"),
    ("huge_count", {"edges": int(FORTY_DIGITS)}, f"`edges` (={FORTY_DIGITS})"),
    ("list_graph", {"graph": [1, 2]}, "`graph` (=[1, 2]) is not a JSON object"),
    ("null_graph", {"graph": None}, "`graph` (=None) is not a JSON object"),
    ("string_total", {"graph": {"total": "many"}}, "`graph.total` (='many')"),
    ("nested_graph_value", {"graph": {"source": {"a": 1}}}, "`graph.source`"),
    ("missing_field", {"raw_bytes": ...}, "no `raw_bytes` field"),
    ("list_header", {}, "not an object"),  # the whole header a list: written below
    ("wrong_compression", {"compression": "bz2"}, "`compression` (='bz2')"),
    ("number_digest", {"blake2b": 7}, "`blake2b` (=7)"),
    ("sizes_do_not_add_up", {"raw_bytes": 10}, "`raw_bytes` (=10)"),
]


def _bad_header_files(root: Path) -> dict[str, str]:
    paths = {}
    for name, fields, _ in BAD_HEADERS:
        path = root / f"hdr_{name}.ceg"
        if name == "list_header":
            data = b"[1, 2]"
            path.write_bytes(MAGIC + struct.pack("<II", 1, len(data)) + data)
        else:
            ceg_with_header(path, **fields)
        paths[f"hdr_{name}"] = str(path)
    return paths


def _bin_model(folder: Path) -> None:
    """A tiny GPT-2 folder whose weights are only ``pytorch_model.bin`` (a pickle that
    transformers would load: refused all the same)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    folder.mkdir()
    model = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=0, eos_token_id=0))
    model.config.save_pretrained(folder)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")


@pytest.fixture
def values_env(env: dict[str, str]) -> dict[str, str]:  # noqa: F811 - the fixture
    """The env of :mod:`tests.test_bad_input`, with this table's files added."""
    root = Path(env["root"])
    (root / "huge_release.txt").write_text(f"rain->wet\t{FORTY_DIGITS}\nsun->dry\t3\n",
                                           encoding="utf-8")
    (root / "huge_edges.tsv").write_text(f"cause\teffect\tcount\nrain\twet\t{FORTY_DIGITS}\n",
                                         encoding="utf-8")
    (root / "sum_release.txt").write_text(f"rain->wet\t{2**63 - 1}\nsun->dry\t1\n",
                                          encoding="utf-8")
    _bin_model(root / "bin_model")
    return {**env, **_bad_header_files(root), "huge_release": str(root / "huge_release.txt"),
            "huge_edges": str(root / "huge_edges.tsv"),
            "sum_release": str(root / "sum_release.txt"), "bin_model": str(root / "bin_model")}


# ----------------------------------------------------------------------------- the table

GEN = ("generate", "--input", "babies cry", "--n", "3", "--m", "2", "--k", "2",
       "--max-new-tokens", "6")

CASES: list[Case] = [
    # part 5: numbers (refused before the model is read, but for the memory estimate)
    Case("generate --length-penalty nan", (*GEN, "--length-penalty", "nan"), 2,
         "`length_penalty` (=nan) has to be a finite number"),
    Case("generate --length-penalty inf", (*GEN, "--length-penalty", "inf"), 2,
         "`length_penalty` (=inf)"),
    Case("generate --length-penalty -inf", (*GEN, "--length-penalty=-inf"), 2,
         "`length_penalty` (=-inf)"),
    Case("generate --mmr-lambda nan", (*GEN, "--mmr-lambda", "nan"), 2, "`mmr_lambda` (=nan)"),
    Case("generate --length-penalty 1e400 (a float overflows to inf)",
         (*GEN, "--length-penalty", "1e400"), 2, "`length_penalty` (=inf)"),
    Case("generate --num-beams 10**9 does not fit in memory",
         ("generate", "--input", "babies cry", "--fast", "--num-beams", "1000000000"), 2,
         "`num_beams` (=1000000000, --m/--num-beams) needs about"),
    # part 7: weights are safetensors, never a pickle
    Case("generate --model a folder with only pytorch_model.bin",
         ("generate", "--input", "babies cry", "--model", "{bin_model}"), 2,
         "pytorch_model.bin, a pickle, which dpc does not load"),
    # part 6: counts beyond int64 in the text formats, for every command that reads them
    Case("graph export a release file with a 40-digit count",
         ("graph", "export", "--out", "{root}/e.tsv", "--graph", "{huge_release}"), 2,
         f"count '{FORTY_DIGITS}' is larger than a graph holds"),
    Case("graph export --format ceg a release file with a 40-digit count",
         ("graph", "export", "--out", "{root}/e.ceg", "--format", "ceg", "--graph",
          "{huge_release}"), 2, f"count '{FORTY_DIGITS}'"),
    Case("graph stats a release file with a 40-digit count",
         ("graph", "stats", "--graph", "{huge_release}"), 2, f"count '{FORTY_DIGITS}'"),
    Case("graph query a release file with a 40-digit count",
         ("graph", "query", "rain", "--direction", "effect", "--graph", "{huge_release}"), 2,
         f"count '{FORTY_DIGITS}'"),
    Case("graph export an edge list with a 40-digit count",
         ("graph", "export", "--out", "{root}/e.txt", "--format", "release", "--graph",
          "{huge_edges}"), 2, f"count '{FORTY_DIGITS}'"),
    Case("graph export --format ceg counts that add up beyond int64",
         ("graph", "export", "--out", "{root}/e.ceg", "--format", "ceg", "--graph",
          "{sum_release}"), 2, f"add up to {2**63}"),
    Case("generate --graph a release file with a 40-digit count",
         (*GEN, "--graph", "{huge_release}"), 2, f"count '{FORTY_DIGITS}'"),
    # part 6: .ceg headers with a field of the wrong type or range (payload and digest right)
    *[Case(f"graph stats header {name.replace('_', ' ')}",
           ("graph", "stats", "--graph", f"{{hdr_{name}}}"), 2, word)
      for name, _, word in BAD_HEADERS],
    Case("graph export header with a float count",
         ("graph", "export", "--out", "{root}/e.tsv", "--graph", "{hdr_float_count}"), 2,
         "has a corrupted header: `nodes` (=2.0)"),
    Case("graph query header with a list for the graph object",
         ("graph", "query", "rain", "--graph", "{hdr_list_graph}"), 2, "`graph` (=[1, 2])"),
    Case("generate --graph header with a null count",
         (*GEN, "--graph", "{hdr_null_count}"), 2, "`vocab_bytes` (=None)"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_values(case: Case, values_env: dict[str, str],
                    capsys: pytest.CaptureFixture) -> None:
    _run_case(case, values_env, capsys)


@pytest.mark.parametrize("name,fields,word", BAD_HEADERS, ids=[b[0] for b in BAD_HEADERS])
def test_load_graph_refuses_each_bad_header(name: str, fields: dict[str, Any], word: str,
                                            tmp_path: Path) -> None:
    from cause_effect_graph.errors import GraphFormatError
    from cause_effect_graph.store import graph_info, load_graph

    path = Path(_bad_header_files(tmp_path)[f"hdr_{name}"])
    for read in (load_graph, graph_info):
        with pytest.raises(GraphFormatError) as raised:
            read(path)
        message = str(raised.value)
        assert repr(str(path)) in message and "corrupted header" in message, message
        assert word in message and "\n" not in message, message


def test_the_header_helper_writes_a_good_file(tmp_path: Path) -> None:
    # the bad headers differ from a good one only in the fields named: that one loads
    from cause_effect_graph.store import load_graph

    ceg_with_header(tmp_path / "good.ceg")
    G = load_graph(tmp_path / "good.ceg")
    assert list(G.edges(data="weight")) == [("rain", "wet", 3)]
    assert G.graph == {"total": 3, "source": "test"}


# ----------------------------------------------------------------------------- the Python API


def _tiny_lm() -> Any:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(vocab_size=50, n_embd=16, n_layer=1, n_head=2,
                                      bos_token_id=0, eos_token_id=0)).eval()


def _engine(**options: Any) -> Callable[[dict[str, str]], object]:
    def run(paths: dict[str, str]) -> object:
        from dpc_decode import generate

        return generate(_tiny_lm(), None, [[1, 2, 3]], [[[7]]], max_new_tokens=4, **options)
    return run


def _sampler(**options: Any) -> Callable[[dict[str, str]], object]:
    def run(paths: dict[str, str]) -> object:
        from dpc_decode import sample

        return sample(_tiny_lm(), None, [[1, 2, 3]], None, max_new_tokens=4, **options)
    return run


def _guided(**options: Any) -> Callable[[dict[str, str]], object]:
    def run(paths: dict[str, str]) -> object:
        from guided_generation import GuidedOptions

        return GuidedOptions(**options)
    return run


def _pipeline_plain_row(paths: dict[str, str]) -> object:
    # the plain row decodes max(num_beams, plain_m) beams: the engine's own check refuses it
    from guided_generation import GuidedOptions
    from guided_generation.pipeline import GuidedGenerator
    from tests.test_bad_input import small_graph
    from train.models import placeholder_model

    m = placeholder_model()
    generator = GuidedGenerator(m.model, m.tokenizer, small_graph(),
                                lemmatizer=lambda text: ["cry"], verifier=None)
    return generator.generate("babies cry", "cause",
                              GuidedOptions(n=2, m=2, k=1, plain_m=10**9, max_new_tokens=4))


def _new(module: str, name: str, **values: Any) -> Callable[[dict[str, str]], object]:
    def run(paths: dict[str, str]) -> object:
        import importlib

        return getattr(importlib.import_module(module), name)(**values)
    return run


def _load_graph(key: str) -> Callable[[dict[str, str]], object]:
    def run(paths: dict[str, str]) -> object:
        from cause_effect_graph.store import load_graph

        return load_graph(paths[key])
    return run


def _save_huge_weight(paths: dict[str, str]) -> object:
    from cause_effect_graph.store import save_graph

    G = nx.DiGraph()
    G.add_edge("rain", "wet", weight=int(FORTY_DIGITS))
    return save_graph(G, Path(paths["root"]) / "huge.ceg")


def _save_nan_total(paths: dict[str, str]) -> object:
    # a G.graph that load_graph would refuse is not written
    from cause_effect_graph.store import save_graph

    G = nx.DiGraph([("rain", "wet")])
    G.graph["total"] = NAN
    return save_graph(G, Path(paths["root"]) / "nan.ceg")


def _load_bin_model(paths: dict[str, str]) -> object:
    from train.models import load_model

    return load_model(paths["bin_model"])


def _generation_config(**settings: Any) -> Callable[[dict[str, str]], object]:
    def run(paths: dict[str, str]) -> object:
        from transformers import GenerationConfig

        from dpc_decode import generate

        return generate(_tiny_lm(), None, [[1, 2, 3]], None, max_new_tokens=4,
                        generation_config=GenerationConfig(**settings))
    return run


API_CASES: list[tuple[str, Callable[[dict[str, str]], object], str]] = [
    ("GuidedOptions length_penalty nan", _guided(length_penalty=NAN), "`length_penalty` (=nan)"),
    ("GuidedOptions length_penalty inf", _guided(length_penalty=INF), "`length_penalty` (=inf)"),
    ("GuidedOptions mmr_lambda nan", _guided(mmr_lambda=NAN), "`mmr_lambda` (=nan)"),
    ("GuidedOptions mmr_lambda True (a bool is not a number)", _guided(mmr_lambda=True),
     "`mmr_lambda` (=True)"),
    ("GuidedOptions length_penalty True", _guided(length_penalty=True),
     "`length_penalty` (=True)"),
    ("BeamSearchOptions length_penalty nan",
     _new("dpc_decode.options", "BeamSearchOptions", length_penalty=NAN),
     "`length_penalty` (=nan) has to be a finite number"),
    ("SamplingOptions temperature inf",
     _new("dpc_decode.options", "SamplingOptions", temperature=INF), "`temperature` (=inf)"),
    ("SamplingOptions top_p True", _new("dpc_decode.options", "SamplingOptions", top_p=True),
     "`top_p` (=True)"),
    ("SamplingOptions seed True", _new("dpc_decode.options", "SamplingOptions", seed=True),
     "`seed` (=True)"),
    ("generate length_penalty nan", _engine(length_penalty=NAN), "`length_penalty` (=nan)"),
    ("generate length_penalty -inf", _engine(length_penalty=-INF), "`length_penalty` (=-inf)"),
    ("generate num_beams 10**9 does not fit", _engine(num_beams=10**9),
     "`num_beams` (=1000000000) needs about"),
    ("sample num_samples 10**9 does not fit", _sampler(num_samples=10**9),
     "`num_samples` (=1000000000) needs about"),
    ("generate repetition_penalty nan in the generation config",
     _generation_config(repetition_penalty=NAN), "`repetition_penalty` (=nan)"),
    ("GuidedGenerator plain_m 10**9 does not fit", _pipeline_plain_row, "GB"),
    ("OversampleOptions temperature inf",
     _new("tasks.swag.oversample", "OversampleOptions", temperature=INF),
     "`temperature` (=inf)"),
    ("TrainOptions lr nan", _new("train.options", "TrainOptions", bank="b", tokenizer="t",
                                 out="o", lr=INF), "`lr` (=inf)"),
    ("CausalBertOptions lr nan", _new("train.options", "CausalBertOptions", bank="b", out="o",
                                      lr=NAN), "`lr` (=nan)"),
    *[(f"load_graph header {name.replace('_', ' ')}", _load_graph(f"hdr_{name}"), word)
      for name, _, word in BAD_HEADERS],
    ("load_graph release 40-digit count", _load_graph("huge_release"), f"'{FORTY_DIGITS}'"),
    ("save_graph a 40-digit edge weight", _save_huge_weight, f"edge weight (={FORTY_DIGITS})"),
    ("save_graph a nan total", _save_nan_total, "`graph.total` (=nan)"),
    ("load_model a folder with only pytorch_model.bin", _load_bin_model,
     "has no safetensors weights"),
]


@pytest.mark.parametrize("name,call,word", API_CASES, ids=[c[0] for c in API_CASES])
def test_bad_values_python_api(name: str, call: Callable[[dict[str, str]], object], word: str,
                               values_env: dict[str, str]) -> None:
    _run_api_case(call, word, values_env)


# ----------------------------------------------------------------------------- the helpers


@pytest.mark.parametrize(
    ("value", "minimum", "maximum", "ok"),
    [
        (3, 1, None, True),
        (1, 1, None, True),  # the bound itself
        (0, 1, None, False),
        (True, 0, None, False),  # a bool is not an integer option
        (2.0, 0, None, False),  # nor is a whole float
        ("3", 0, None, False),
        (None, 0, None, False),
        (np.int64(4), 0, 10, True),
        (11, 0, 10, False),
        (10**40, 0, 2**63 - 1, False),
        (2**63 - 1, 1, None, True),  # no bound named: int64's (issue 60)
        (2**63, 1, None, False),  # beyond it: torch and numpy would overflow
        (-(2**63) - 1, None, None, False),
    ],
)
def test_check_int(value: Any, minimum: int | None, maximum: int | None, ok: bool) -> None:
    if ok:
        assert check_int("x", value, minimum, maximum) == value
    else:
        with pytest.raises(DpcError, match=r"^`x` \(=.*\) must be an integer"):
            check_int("x", value, minimum, maximum)


@pytest.mark.parametrize(("value", "ok"), [
    (0, True), (2**32 - 1, True),  # numpy's legacy seeds and scikit-learn's random_state
    (2**32, False), (-1, False), (10**20, False), (True, False), (1.0, False), ("7", False),
])
def test_check_seed(value: Any, ok: bool) -> None:
    import torch

    if ok:
        assert check_seed("--seed", value, quote=False) == value
        torch.Generator().manual_seed(value * 1_000_003 + 99)  # a seed derived from it fits too
    else:
        with pytest.raises(DpcError, match=r"^--seed \(=.*\) must be an integer from 0 to "
                                           r"4294967295$"):
            check_seed("--seed", value, quote=False)


@pytest.mark.parametrize(
    ("value", "bounds", "ok"),
    [
        (0.5, {}, True),
        (-3, {}, True),  # an int is a number
        (np.float32(0.25), {"minimum": 0, "maximum": 1}, True),
        (NAN, {}, False),
        (INF, {}, False),
        (-INF, {}, False),
        (10**400, {}, False),  # beyond the floats: not finite
        (True, {}, False),
        ("1.0", {}, False),
        (None, {}, False),
        (0.0, {"minimum": 0, "open_min": True}, False),
        (0.0, {"minimum": 0}, True),
        (1.0, {"minimum": 0, "maximum": 1, "open_max": True}, False),
        (1.0, {"minimum": 0, "maximum": 1}, True),
        (-0.1, {"minimum": 0, "maximum": 1}, False),
    ],
)
def test_check_float(value: Any, bounds: dict[str, Any], ok: bool) -> None:
    if ok:
        got = check_float("x", value, **bounds)
        assert isinstance(got, float) and math.isfinite(got) and got == float(value)
    else:
        with pytest.raises(DpcError, match=r"^`x` \(=.*\) has to be a finite number"):
            check_float("x", value, **bounds)


def test_the_tables_are_large() -> None:
    assert len(CASES) >= 15 and len(API_CASES) >= 15
