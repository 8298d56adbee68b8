"""Decode COPA-dev premises once, every source of candidates kept apart, for issue 39's protocol.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/guided/protocol_pool.py --start 0 --limit 250 \\
        --out runs/protocol/pool_1_250.jsonl

``--search neurologic`` (and the engine's other search flags) decodes the keyword rows with
NeuroLogic selection (issue 57); the plain N-best and the samples do not depend on it.

One JSON line per item (index, premise as :func:`tasks.copa.dataset.as_clause` gives it,
direction, CPU seconds of each part):

* ``nbest``: the generator's own plain N-best, ``--beams`` beams, that many outputs in beam
  order (the baseline every row is compared with);
* ``samples``: ``--samples`` sampled answers (a fixed seed) and the keywords their content
  lemmas give (:func:`guided_generation.sampled_keywords.sampled_keywords`, ``--own`` at most);
* ``graph``: the graph's top ``--graph`` keywords (the default rank);
* ``rows``: every keyword row decoded (graph and sampled keywords, duplicates once, each
  inflected only in its parts of speech when the profile knows it), ``--m`` outputs each, with
  its source, keyword, text, mean NLL and log-probability.

:mod:`benchmarks.guided.protocol_study` then scores keywords and outputs with the verifier and
reranks every way without decoding again. Interrupted runs resume: items already in ``--out``
are skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dpc_decode.options import add_search_arguments, search_options_from  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="generator (default: dpc's default)")
    ap.add_argument("--graph", type=int, default=24, help="graph keywords decoded")
    ap.add_argument("--own", type=int, default=8, help="sampled-answer keywords decoded")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--beams", type=int, default=10, help="beams of the plain N-best")
    ap.add_argument("--m", type=int, default=2)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--limit", type=int, default=250)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-pos", action="store_true", help="inflect keywords in every part of speech")
    ap.add_argument("--copa", default=str(ROOT.parent / "shared/data/copa/copa-dev.xml"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--length-penalty", type=float, default=None,
                    help="of every decode (default: the generator's)")
    add_search_arguments(ap)
    args = ap.parse_args()

    import torch
    from tqdm import tqdm

    torch.set_num_threads(args.threads)
    from cause_effect_graph.lemmas import default_lemmatizer
    from guided_generation import GuidedGenerator, GuidedOptions
    from guided_generation.agreement import pronoun_bans
    from guided_generation.keywords import keyword_rows
    from guided_generation.pipeline import _gather
    from guided_generation.sampled_keywords import sampled_keywords
    from tasks.copa.dataset import as_clause, read_copa

    pos_of = None
    if not args.no_pos:
        from cause_effect_graph.parts_of_speech import default_parts_of_speech

        profile = default_parts_of_speech()
        pos_of = profile.of
    items = read_copa(args.copa)[args.start: args.start + args.limit]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {json.loads(line)["index"] for line in out.read_text(encoding="utf-8").splitlines()
                if line.strip()}
    generator = GuidedGenerator.load(args.model)
    G = generator.graph
    frequency = {v: d.get("cause_freq", 0) + d.get("effect_freq", 0) for v, d in G.nodes(data=True)}
    lemmatize = default_lemmatizer()
    options = GuidedOptions(n=args.graph, m=args.m, **asdict(search_options_from(args)))
    if args.length_penalty is not None:
        options = replace(options, length_penalty=args.length_penalty)
    with out.open("a", encoding="utf-8") as sink:
        for offset, item in enumerate(tqdm(items, desc="decoding", unit="item")):
            index = args.start + offset
            if index in done:
                continue
            text = as_clause(item.premise)
            direction = item.asks_for
            prompt = generator.prompt(text, direction)
            bans = pronoun_bans(text)
            banned = tuple(generator._word_ids(bans)) if bans else ()
            seconds = {}
            started = time.process_time()
            nbest = generator.unconstrained(prompt, args.beams, replace(options, num_beams=args.beams),
                                            banned)
            seconds["nbest"] = time.process_time() - started
            started = time.process_time()
            samples = generator.sample_answers(prompt, args.samples, options, banned=banned)
            own = sampled_keywords(samples, lemmatize(text), lemmatize, args.own, frequency)
            seconds["samples"] = time.process_time() - started
            started = time.process_time()
            graph, _ = generator.graph_keywords(text, direction, options)
            seconds["graph"] = time.process_time() - started
            rows = keyword_rows(graph, [], "combine", n=args.graph, pos_of=pos_of)
            graph_set = {r.keyword for r in rows}
            own_rows = [r for r in keyword_rows(own, [], "combine", n=args.own, pos_of=pos_of)
                        if r.keyword not in graph_set]
            own_rows = [replace(r, source="sampled") for r in own_rows]
            started = time.process_time()
            found = generator.decode_rows(prompt, rows + own_rows, options, banned=banned)
            gathered, missed = _gather(rows + own_rows, found)
            seconds["rows"] = time.process_time() - started
            record = {
                "index": index, "input": text, "direction": direction,
                "cpu_seconds": {k: round(v, 3) for k, v in seconds.items()},
                "nbest": [{"text": o.text, "nll": o.nll, "log_prob": o.log_prob} for o in nbest],
                "samples": samples, "own": own, "graph": graph,
                "sets": {r.keyword: r.sets[0] for r in rows + own_rows},
                "missed": missed,
                "rows": [{"text": o.text, "keyword": o.keyword, "source": o.source,
                          "nll": o.nll, "log_prob": o.log_prob} for o in gathered],
            }
            sink.write(json.dumps(record) + "\n")
            sink.flush()


if __name__ == "__main__":
    main()
