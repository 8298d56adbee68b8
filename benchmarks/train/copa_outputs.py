"""Beam-search outputs of a generator for COPA-dev premises, without and with gold-word constraints.

Usage: python benchmarks/train/copa_outputs.py [--model PATH] [--n 20] [--copa FILE] > OUT.md

For each of the first N COPA-dev items it decodes, in both directions:
* the asked direction (premise → cause/effect): unconstrained, then constrained to 3 content words
  of the correct alternative (each word one constraint set: the word or its -s/-ed/-ing forms);
* the reverse direction (correct alternative → effect/cause, whose gold is the premise):
  unconstrained, then constrained to 3 content words of the premise.
Beam 8, top 3 per decode, max 24 new tokens. Prints Markdown.
"""

from __future__ import annotations

import argparse
import re
import time

from dpc_decode import generate
from tasks.copa import read_copa
from tasks.copa.dataset import as_clause
from train.data import format_input
from train.models import default_model, load_generator

STOP = set("""a an the and or but of to in on at by for with from into onto up down out over under
his her its their my your our he she it they we i you him them me us was were is are be been
being had has have did do does this that these those there then than so as not no very too
some any all one own off away""".split())


def content_words(sentence: str, k: int = 3) -> list[str]:
    words = [w for w in re.findall(r"[a-z']+", sentence.lower()) if w not in STOP and len(w) > 2]
    return list(dict.fromkeys(words))[:k]


def variants(word: str) -> list[str]:
    return list(dict.fromkeys([word, word + "s", word + "ed", word + "ing"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--copa", default="../shared/data/copa/copa-dev.xml")
    args = ap.parse_args()
    loaded = load_generator(args.model) if args.model else default_model()
    items = read_copa(args.copa)[: args.n]
    other = {"cause": "effect", "effect": "cause"}
    print(f"# Generator outputs on the first {args.n} COPA-dev items\n")
    print(f"Model: `{loaded.name}`. Beam 8, top 3, max 24 new tokens; input format "
          "`{direction}: {clause}` (COPA sentences lower-cased at the start, final period "
          "dropped). Constraints: one set per gold word, each set = the word and its "
          "-s/-ed/-ing forms. `[unmet]` marks an output that misses a constraint.\n")
    start = time.perf_counter()
    for it in items:
        gold = it.alternatives[it.answer - 1]
        print(f"## {it.id}: {it.premise} (asks for the {it.asks_for}; gold: {gold})\n")
        for direction, source, target in ((it.asks_for, it.premise, gold),
                                          (other[it.asks_for], gold, it.premise)):
            words = content_words(target)
            prompt = format_input(as_clause(source), direction)
            plain = generate(loaded.model, loaded.tokenizer, [prompt], num_beams=8,
                             num_return_sequences=3, max_new_tokens=24)[0]
            constrained = generate(loaded.model, loaded.tokenizer, [prompt],
                                   [variants(w) for w in words], num_beams=8,
                                   num_return_sequences=3, max_new_tokens=24)[0] if words else []
            print(f"**{direction} of** \"{as_clause(source)}\" (gold: \"{as_clause(target)}\")\n")
            print("- unconstrained: " + " / ".join(f"\"{o.text}\"" for o in plain))
            if words:
                print(f"- with {', '.join(words)}: " + " / ".join(
                    f"\"{o.text}\"" + ("" if o.satisfied else " [unmet]") for o in constrained))
            print()
    print(f"_decoding time: {time.perf_counter() - start:.0f} s on CPU_")


if __name__ == "__main__":
    main()
