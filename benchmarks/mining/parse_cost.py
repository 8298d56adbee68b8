"""What a dependency parse of every candidate sentence would cost the miner, measured.

The miner tags (spaCy without parser, NER, lemmatiser) only the 0.75% of sentences its lexical
rules cannot decide. A parser-based argument finder would parse every sentence with a pattern
match (358,880 in the shared Gutenberg corpus). This script collects the first ``--n`` such
sentences of a corpus (the miner's own reader, sentence splitter and pattern matcher), then
times, on one process, the miner's tagger pipeline and the full pipeline with the parser::

    python benchmarks/mining/parse_cost.py ../shared/data/gutenberg --n 5000 --threads 1

and prints sentences per second for both and the CPU minutes the parser would add for
``--candidates`` sentences (default: the 358,880 of the Gutenberg run).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import spacy

from causal_mining.patterns import find_matches
from causal_mining.readers import ReadStats, expand_inputs, read_documents
from causal_mining.sentences import normalise_space, split_sentences
from causal_mining.tagging import SPACY_MODEL


def candidates(inputs: list[str], n: int) -> list[str]:
    found: list[str] = []
    for path in expand_inputs(inputs):
        for doc in read_documents(Path(path), ReadStats()):
            for sentence in split_sentences(normalise_space(doc.text)):
                if find_matches(sentence):
                    found.append(sentence)
                    if len(found) == n:
                        return found
    return found


def rate(nlp: spacy.language.Language, sentences: list[str]) -> float:
    start = time.perf_counter()
    for _ in nlp.pipe(sentences, batch_size=256):
        pass
    return len(sentences) / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("inputs", nargs="+")
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--candidates", type=int, default=358_880)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    import torch  # spaCy's thinc may use torch's threads

    torch.set_num_threads(args.threads)
    sentences = candidates(args.inputs, args.n)
    tagger = spacy.load(SPACY_MODEL, exclude=["parser", "ner", "lemmatizer", "senter"])
    parser = spacy.load(SPACY_MODEL, exclude=["ner", "lemmatizer"])
    rate(parser, sentences[:200])  # warm both
    rate(tagger, sentences[:200])
    tag_rate, parse_rate = rate(tagger, sentences), rate(parser, sentences)
    print(json.dumps({
        "sentences": len(sentences),
        "tagger_sentences_per_s": round(tag_rate, 1),
        "tagger_and_parser_sentences_per_s": round(parse_rate, 1),
        "parse_all_candidates_cpu_minutes": round(args.candidates / parse_rate / 60, 1),
    }, indent=1))


if __name__ == "__main__":
    main()
