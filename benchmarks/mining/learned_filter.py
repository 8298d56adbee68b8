"""Can the judged pairs teach a filter? Cross-validated precision of learned and per-pattern filters.

Data: every judged pair (``sample_200*.tsv``) that the current miner still extracts unchanged
(re-extracted as in ``recheck_sample.py``), with its yes/no verdict. Two filters are scored by
the precision of what they keep when they drop their lowest-scored 5–30% of the pairs, the scores
coming from 5 repetitions of stratified 5-fold cross-validation (never scored by a model that
saw the pair):

* logistic regression on TF-IDF word 1–2-grams of the sentence plus the pattern, its class and
  the six words before it;
* logistic regression on all-MiniLM-L6-v2 mean-pooled embeddings of the sentence and of the
  (cause, effect) pair.

Then a per-pattern filter: drop the patterns whose (smoothed) precision on four samples is under
a threshold, measured on the fifth (leave one sample out)::

    python benchmarks/mining/learned_filter.py
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import torch
from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from causal_mining.extract import ExtractOptions, Extractor

HERE = Path(__file__).resolve().parent
DROP = (0.05, 0.1, 0.2, 0.3)


def judged_and_kept() -> list[dict[str, str]]:
    extractor = Extractor(ExtractOptions())
    rows = []
    for path in sorted(HERE.glob("sample_200*.tsv")):
        with path.open(encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                pairs = extractor.extract([("sample", row["sentence"])])
                if pairs and (pairs[0].cause, pairs[0].effect) == (row["cause"], row["effect"]):
                    rows.append({**row, "sample": path.name})
    return rows


def context(row: dict[str, str]) -> str:
    sentence, first = row["sentence"], row["pattern"].strip(", ").split()[0]
    at = sentence.lower().find(first)
    before = sentence[:at].split()[-6:] if at >= 0 else []
    return " ".join([f"PAT_{row['pattern'].replace(' ', '_')}", f"CLS_{row['class']}"]
                    + [f"B_{w.lower().strip(',.;:')}" for w in before])


def embed(first: list[str], second: list[str] | None = None) -> np.ndarray:
    from transformers import AutoModel, AutoTokenizer

    from train.models import minilm_tokenizer_path

    path = str(minilm_tokenizer_path())
    tok, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(first), 64):
            enc = tok(first[i:i + 64], second[i:i + 64] if second else None, padding=True,
                      truncation=True, max_length=128, return_tensors="pt")
            hidden, mask = model(**enc).last_hidden_state, enc["attention_mask"].unsqueeze(-1)
            out.append(((hidden * mask).sum(1) / mask.sum(1)).numpy())
    return np.vstack(out)


def cross_validated(y: np.ndarray, fit_score) -> None:
    table = {f: [] for f in DROP}
    for rep in range(5):
        scores = np.zeros(len(y))
        for train, test in StratifiedKFold(5, shuffle=True, random_state=rep).split(y, y):
            scores[test] = fit_score(train, test)
        order = np.argsort(scores)
        for f in DROP:
            k = int(round(f * len(y)))
            drop, keep = order[:k], order[k:]
            table[f].append((y[keep].mean(), (y[drop] == 0).sum(), (y[drop] == 1).sum()))
    for f, values in table.items():
        v = np.array(values).mean(0)
        print(f"  drop {100 * f:.0f}%: precision kept {v[0]:.3f}, errors dropped {v[1]:.1f}, "
              f"correct dropped {v[2]:.1f}")


def main() -> None:
    rows = judged_and_kept()
    y = np.array([r["verdict"] == "yes" for r in rows], dtype=int)
    print(f"{len(rows)} judged pairs kept by the current miner: {y.sum()} yes, "
          f"{len(y) - y.sum()} no (precision {y.mean():.3f}; a random drop keeps it)")
    sentences, contexts = [r["sentence"] for r in rows], [context(r) for r in rows]

    def tfidf(train, test):
        words = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
        marks = TfidfVectorizer(token_pattern=r"\S+")
        a = hstack([words.fit_transform([sentences[i] for i in train]),
                    marks.fit_transform([contexts[i] for i in train])]).tocsr()
        b = hstack([words.transform([sentences[i] for i in test]),
                    marks.transform([contexts[i] for i in test])]).tocsr()
        clf = LogisticRegression(C=3, class_weight="balanced", max_iter=2000).fit(a, y[train])
        return clf.predict_proba(b)[:, 1]

    print("TF-IDF + pattern context, logistic regression:")
    cross_validated(y, tfidf)
    vectors = np.hstack([embed(sentences), embed([r["cause"] for r in rows],
                                                 [r["effect"] for r in rows])])

    def minilm(train, test):
        clf = LogisticRegression(C=1, class_weight="balanced", max_iter=3000)
        return clf.fit(vectors[train], y[train]).predict_proba(vectors[test])[:, 1]

    print("all-MiniLM-L6-v2 embeddings, logistic regression:")
    cross_validated(y, minilm)

    print("per-pattern filter, leave one sample out:")
    samples = sorted({r["sample"] for r in rows})
    for threshold in (0.7, 0.8, 0.85):
        kept = correct = 0
        for held in samples:
            counts: dict[str, Counter[str]] = defaultdict(Counter)
            for r in rows:
                if r["sample"] != held:
                    counts[r["pattern"]][r["verdict"]] += 1
            bad = {p for p, c in counts.items()
                   if sum(c.values()) >= 5 and (c["yes"] + 1) / (sum(c.values()) + 2) < threshold}
            test = [r for r in rows if r["sample"] == held and r["pattern"] not in bad]
            kept += len(test)
            correct += sum(r["verdict"] == "yes" for r in test)
        print(f"  drop patterns under {threshold:.2f}: kept {kept}/{len(rows)}, "
              f"precision {correct / kept:.3f}")


if __name__ == "__main__":
    main()
