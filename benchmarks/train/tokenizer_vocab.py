"""Tokenizer vocabulary size: tokens per word on the dev split for 8k / 12k / 16k pieces.

Usage: python benchmarks/train/tokenizer_vocab.py BANK OUT_DIR [SIZES...]
Trains one SentencePiece unigram tokenizer per size on the bank's training split and prints a
Markdown table: pieces per word on the dev split's causes and effects, share of <unk>, and the
output-layer parameters (vocab x 256) each size costs a d_model=256 model.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from train.data import read_pairs_checked, split_of, texts_for_tokenizer
from train.tokenizer import tokens_per_word, train_tokenizer


def main() -> None:
    bank, out = sys.argv[1], Path(sys.argv[2])
    sizes = [int(s) for s in sys.argv[3:]] or [8000, 12000, 16000]
    dev = [t for p in read_pairs_checked(bank) if split_of(p.sentence) == "dev"
           for t in (p.cause, p.effect)]
    print("| vocab | train s | pieces/word (dev) | unk share | embedding params (x256) |")
    print("|---:|---:|---:|---:|---:|")
    for size in sizes:
        t = time.perf_counter()
        tok = train_tokenizer(texts_for_tokenizer(bank), out / f"spm{size}", vocab_size=size)
        secs = time.perf_counter() - t
        ids = [i for text in dev for i in tok(text, add_special_tokens=False).input_ids]
        unk = sum(i == tok.unk_token_id for i in ids) / len(ids)
        print(f"| {size} | {secs:.0f} | {tokens_per_word(tok, dev):.3f} | {unk:.5f} | "
              f"{size * 256 / 1e6:.2f}M |", flush=True)


if __name__ == "__main__":
    main()
