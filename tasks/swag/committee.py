"""The AF committee: four stylistic classifiers of endings, as in SWAG (Zellers et al. 2018, §3).

* ``mlp`` - a multilayer perceptron (scikit-learn) on the ending model's likelihood features:
  total and per-token log-probability, token and word counts of the ending, words of the context.
* ``bow`` - logistic regression (scikit-learn) on binary unigram and bigram counts of the ending.
* ``cnn`` - one convolutional layer (widths 2, 3, 4) over trained word embeddings, max-pooled (torch).
* ``lstm`` - a BiLSTM over the ending's words, the frequent ones as themselves and every other word
  as its spaCy part-of-speech tag (torch).

Every model scores one ending at a time (a logit: high = looks like the real ending) and is trained
on questions of a gold ending and its negatives: the scikit-learn models as binary gold/other
classifiers, the torch models with a softmax over each question's endings (cross-entropy,
:class:`torch.optim.Adam`). A question's answer is the ending with the highest score.

**Ensemble rules** (``Committee(ensemble=...)``):

* ``"joint"`` (the default, SWAG's): one more torch model over the members' *features*, trained
  jointly with a softmax over each question's endings: the standardised LM features through a
  32-unit layer, the n-grams through a 32-dimensional bag of embeddings (``EmbeddingBag``, the
  bag-of-words model's input), the CNN's and the BiLSTM's max-pooled features, concatenated and
  scored by an MLP (64 hidden units). It can learn what the members' features say *together*
  (a likely ending that is also short, say), which no sum of separate scores can.
* ``"sum"``: the sum of the members' logits. Within one question that is the product of the
  members' softmax distributions (a product of experts), with no weights to fit on held-out data.

The members are trained either way, so the AF curve still shows each one's accuracy.

The features of every ending are computed once (:class:`EndingTable`); a model is then a function
of row indices, so AF retrains on new negatives without re-tokenising anything.

The torch members train and score on ``device`` with their forward passes under
:func:`dpc_device.autocast` in ``dtype`` (the training rules of :mod:`dpc_device`: weights
float32, default bfloat16 on CUDA; ``None``, ``None``: the CPU in float32), the BiLSTM's
recurrence always in float32 (cuDNN's bfloat16 LSTM is recent). The scikit-learn members always
run on the CPU.

>>> words("He pulls the shingles off, quickly.")
['he', 'pulls', 'the', 'shingles', 'off', ',', 'quickly', '.']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from cause_effect_graph.lemmas import SPACY_MODEL
from dpc_device import autocast, resolve_training
from tasks.errors import TaskError

if TYPE_CHECKING:
    import torch

__all__ = ["CHEAP_MODELS", "ENSEMBLES", "MODELS", "Committee", "EndingTable", "EndingVocabulary", "pos_tags",
           "words"]

#: Committee members, cheapest first.
MODELS = ("mlp", "bow", "cnn", "lstm")
#: The members of AF's cheap first phase: the MLP on LM features alone, as in SWAG.
CHEAP_MODELS = ("mlp",)
#: How the committee answers as one (:class:`Committee`).
ENSEMBLES = ("joint", "sum")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]")
MAX_WORDS = 40


def words(text: str) -> list[str]:
    """Lower-case words and punctuation marks of ``text``."""
    return _WORD.findall(text.lower())


def pos_tags(texts: Sequence[str], batch_size: int = 512) -> list[list[tuple[str, str]]]:
    """``(lower-case word, POS)`` of every token of every text, by spaCy's small English model
    (:data:`cause_effect_graph.lemmas.SPACY_MODEL`; parser, lemmatiser and NER off)."""
    import spacy

    nlp = spacy.load(SPACY_MODEL, disable=["parser", "ner", "lemmatizer"])
    return [[(t.lower_, t.pos_) for t in doc] for doc in nlp.pipe(texts, batch_size=batch_size)]


@dataclass(frozen=True)
class EndingVocabulary:
    """What :meth:`EndingTable.build` read off its texts: the fitted n-gram vectorizer, the word
    ids, the frequent words the BiLSTM reads as themselves and its word-or-POS ids. With it,
    :meth:`EndingTable.featurise` gives new endings the features a committee trained on the
    table reads (``dpc serve`` scores endings sampled after the committee was fitted)."""

    bow: Any  # sklearn CountVectorizer, fitted
    words: dict[str, int]
    frequent: frozenset[str]
    pos: dict[str, int]


def _lm_features(log_probs: Sequence[float], tokens: Sequence[int], texts: Sequence[str],
                 context_words: Sequence[int]) -> np.ndarray:
    """``(rows, 5)``: total and per-token log-probability, tokens, words, context words."""
    lp = np.asarray(log_probs, dtype=np.float64)
    tok = np.maximum(np.asarray(tokens, dtype=np.float64), 1.0)
    n_words = np.array([len(t.split()) for t in texts], dtype=np.float64)
    return np.stack([lp, lp / tok, tok, n_words, np.asarray(context_words, np.float64)], 1)


@dataclass
class EndingTable:
    """Every candidate ending of every context, with the features each committee member reads.

    Rows are endings; ``lm`` holds the likelihood features, ``bow`` a sparse matrix of binary
    n-gram counts, ``word_ids``/``pos_ids`` padded id sequences for the CNN and the BiLSTM;
    ``vocabulary`` what :meth:`build` read off the texts (:meth:`featurise`).
    """

    lm: np.ndarray  # (rows, 5) float
    bow: Any  # (rows, features) scipy.sparse
    word_ids: np.ndarray  # (rows, MAX_WORDS) int64, 0 = padding
    pos_ids: np.ndarray  # (rows, MAX_WORDS) int64, 0 = padding
    word_vocab: int
    pos_vocab: int
    vocabulary: EndingVocabulary | None = None

    @classmethod
    def build(cls, texts: Sequence[str], log_probs: Sequence[float], tokens: Sequence[int],
              context_words: Sequence[int], tags: Sequence[Sequence[tuple[str, str]]],
              frequent: int = 300, min_count: int = 2) -> EndingTable:
        """Features of ``texts`` (the endings), given their log-probabilities under the ending
        model, token counts (EOS included), the word count of each one's context and spaCy's
        ``(word, POS)`` tokens (:func:`pos_tags`). Vocabularies are read from ``texts`` alone
        (unsupervised)."""
        from sklearn.feature_extraction.text import CountVectorizer

        lm = _lm_features(log_probs, tokens, texts, context_words)
        vectorizer = CountVectorizer(tokenizer=words, token_pattern=None, lowercase=False,
                                     ngram_range=(1, 2), binary=True, min_df=2)
        bow = vectorizer.fit_transform(texts)
        split = [words(t) for t in texts]
        counts = Counter(w for ws in split for w in ws)
        vocab = {w: i + 2 for i, (w, c) in enumerate(counts.most_common()) if c >= min_count}
        word_ids = _pad([[vocab.get(w, 1) for w in ws] for ws in split])
        tag_counts = Counter(w for ts in tags for w, _ in ts)
        keep = {w for w, _ in tag_counts.most_common(frequent)}
        pos_vocab: dict[str, int] = {}
        seqs = [[pos_vocab.setdefault(w if w in keep else f"<{p}>", len(pos_vocab) + 1)
                 for w, p in ts] for ts in tags]
        return cls(lm, bow.tocsr(), word_ids, _pad(seqs), len(vocab) + 2, len(pos_vocab) + 1,
                   EndingVocabulary(vectorizer, vocab, frozenset(keep), dict(pos_vocab)))

    def featurise(self, texts: Sequence[str], log_probs: Sequence[float],
                  tokens: Sequence[int], context_words: Sequence[int],
                  tags: Sequence[Sequence[tuple[str, str]]]) -> EndingTable:
        """A table of new endings (the arguments as for :meth:`build`) read with this table's
        :attr:`vocabulary`, so that a :class:`Committee` fitted on this table scores them: an
        n-gram it never saw adds nothing, an unknown word is the CNN's out-of-vocabulary id,
        and a token whose word-or-POS form the BiLSTM never saw is left out.

        >>> texts = ["he opens the door .", "she opens the box .", "he sits down ."]
        >>> table = EndingTable.build(texts, [-5.0, -6.0, -4.0], [5, 5, 4], [6, 6, 6],
        ...                           pos_tags(texts))
        >>> new = table.featurise(["he opens a window ."], [-7.0], [5], [6],
        ...                       pos_tags(["he opens a window ."]))
        >>> new.bow.shape[1] == table.bow.shape[1], new.word_ids[0, :5].tolist()
        (True, [3, 4, 1, 1, 2])
        """
        vocabulary = self.vocabulary
        if vocabulary is None:
            raise TaskError("this ending table has no vocabulary (it was not made by "
                            "EndingTable.build): new endings cannot be read like its own")
        word_ids = _pad([[vocabulary.words.get(w, 1) for w in words(t)] for t in texts])
        seqs = [[i for i in (vocabulary.pos.get(w if w in vocabulary.frequent else f"<{p}>")
                             for w, p in ts) if i is not None] for ts in tags]
        return EndingTable(_lm_features(log_probs, tokens, texts, context_words),
                           vocabulary.bow.transform(texts).tocsr(), word_ids, _pad(seqs),
                           self.word_vocab, self.pos_vocab, vocabulary)


def _trim(ids: np.ndarray) -> np.ndarray:
    """``ids`` without the padding columns every row has (at least one column kept).

    >>> _trim(np.array([[3, 4, 0, 0], [5, 0, 0, 0]])).tolist()
    [[3, 4], [5, 0]]
    """
    used = np.flatnonzero((ids != 0).any(axis=0))
    return ids[:, : (used[-1] + 1 if len(used) else 1)]


def _pad(seqs: Sequence[Sequence[int]]) -> np.ndarray:
    out = np.zeros((len(seqs), MAX_WORDS), dtype=np.int64)
    for i, s in enumerate(seqs):
        s = list(s)[:MAX_WORDS] or [1]
        out[i, : len(s)] = s
    return out


class _SklearnMember:
    """A binary gold/other classifier of scikit-learn over one feature block."""

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.seed = seed
        self.model: Any = None
        self.scale: Any = None

    def _x(self, table: EndingTable, rows: np.ndarray) -> Any:
        if self.name == "mlp":
            return self.scale.transform(table.lm[rows])
        return table.bow[rows]

    def fit(self, table: EndingTable, questions: np.ndarray) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.neural_network import MLPClassifier
        from sklearn.preprocessing import StandardScaler

        rows = questions.reshape(-1)
        y = np.zeros(questions.shape, dtype=np.int64)
        y[:, 0] = 1  # column 0 holds the gold ending
        if self.name == "mlp":
            self.scale = StandardScaler().fit(table.lm[rows])
            self.model = MLPClassifier(hidden_layer_sizes=(32, 16), max_iter=300,
                                       early_stopping=True, random_state=self.seed)
        else:
            self.model = LogisticRegression(C=0.5, max_iter=2000)
        self.model.fit(self._x(table, rows), y.reshape(-1))

    def scores(self, table: EndingTable, rows: np.ndarray) -> np.ndarray:
        if self.name == "mlp":
            p = np.clip(self.model.predict_proba(self._x(table, rows))[:, 1], 1e-7, 1 - 1e-7)
            return np.log(p) - np.log1p(-p)
        return self.model.decision_function(self._x(table, rows))


class _TorchMember:
    """A neural scorer of one ending, trained with a softmax over each question's endings: the
    CNN, the BiLSTM, or (``name="joint"``) the jointly trained ensemble over the features of the
    members named in ``parts`` (module notes)."""

    def __init__(self, name: str, seed: int, epochs: int = 4, dim: int = 64, *,
                 parts: Sequence[str] = (), device: str | torch.device | None = None,
                 dtype: str | torch.dtype | None = None) -> None:
        self.name = name
        self.seed = seed
        self.epochs = epochs
        self.dim = dim
        self.parts = tuple(parts) if name == "joint" else (name,)
        self.device = device
        self.dtype = dtype
        self.net: Any = None
        self.lm_mean = np.zeros(5)
        self.lm_scale = np.ones(5)

    def _precision(self) -> tuple[torch.device, torch.dtype]:
        """Where the net runs and its autocast dtype (:mod:`dpc_device`, training rules)."""
        return resolve_training(self.device, self.dtype)

    def _build(self, table: EndingTable) -> Any:
        import torch
        from torch import nn

        dim = self.dim

        class CnnFeatures(nn.Module):
            def __init__(self, vocab: int) -> None:
                super().__init__()
                self.embed = nn.Embedding(vocab, dim, padding_idx=0)
                self.convs = nn.ModuleList(nn.Conv1d(dim, dim, w, padding=w - 1)
                                           for w in (2, 3, 4))

            def forward(self, ids: torch.Tensor) -> torch.Tensor:  # ids: (n, L)
                x = self.embed(ids).transpose(1, 2)  # (n, dim, L)
                pooled = [torch.relu(c(x)).amax(-1) for c in self.convs]  # 3 x (n, dim)
                return torch.cat(pooled, -1)  # (n, 3 dim)

        class LstmFeatures(nn.Module):
            def __init__(self, vocab: int) -> None:
                super().__init__()
                self.embed = nn.Embedding(vocab, dim, padding_idx=0)
                self.lstm = nn.LSTM(dim, dim, batch_first=True, bidirectional=True)

            def forward(self, ids: torch.Tensor) -> torch.Tensor:  # ids: (n, L)
                x = self.embed(ids)  # (n, L, dim)
                # the recurrence stays float32 under autocast: cuDNN has a bfloat16 LSTM only
                # since 9.13, and torch's own CUDA LSTM cell none
                with torch.autocast(device_type=ids.device.type, enabled=False):
                    h, _ = self.lstm(x.float())  # (n, L, 2 dim)
                h = h.masked_fill((ids == 0).unsqueeze(-1), -1e4)
                return h.amax(1)  # (n, 2 dim)

        class Single(nn.Module):
            """The CNN or the BiLSTM: its features and a linear score."""

            def __init__(self, features: nn.Module, width: int, key: str) -> None:
                super().__init__()
                self.features = features
                self.out = nn.Linear(width, 1)
                self.key = key

            def forward(self, x: dict[str, Any]) -> torch.Tensor:
                return self.out(self.features(x[self.key])).squeeze(-1)  # (n,)

        class Joint(nn.Module):
            """Every part's features concatenated, one MLP over them."""

            def __init__(self, parts: tuple[str, ...]) -> None:
                super().__init__()
                self.parts = parts
                width = 0
                if "mlp" in parts:
                    self.lm = nn.Sequential(nn.Linear(5, 32), nn.ReLU())
                    width += 32
                if "bow" in parts:
                    self.bow = nn.EmbeddingBag(max(table.bow.shape[1], 1), 32, mode="sum")
                    width += 32
                if "cnn" in parts:
                    self.cnn = CnnFeatures(table.word_vocab)
                    width += 3 * dim
                if "lstm" in parts:
                    self.lstm = LstmFeatures(table.pos_vocab)
                    width += 2 * dim
                self.out = nn.Sequential(nn.Dropout(0.1), nn.Linear(width, 64), nn.ReLU(),
                                         nn.Linear(64, 1))

            def forward(self, x: dict[str, Any]) -> torch.Tensor:
                feats = []
                if "mlp" in self.parts:
                    feats.append(self.lm(x["lm"]))
                if "bow" in self.parts:
                    feats.append(self.bow(*x["bow"]))
                if "cnn" in self.parts:
                    feats.append(self.cnn(x["words"]))
                if "lstm" in self.parts:
                    feats.append(self.lstm(x["pos"]))
                return self.out(torch.cat(feats, -1)).squeeze(-1)  # (n,)

        if self.name == "cnn":
            return Single(CnnFeatures(table.word_vocab), 3 * dim, "words")
        if self.name == "lstm":
            return Single(LstmFeatures(table.pos_vocab), 2 * dim, "pos")
        return Joint(self.parts)

    def _inputs(self, table: EndingTable, rows: np.ndarray,
                where: torch.device) -> dict[str, Any]:
        """The tensors of ``rows`` that this net's parts read."""
        import torch

        x: dict[str, Any] = {}
        if "cnn" in self.parts:
            x["words"] = torch.from_numpy(_trim(table.word_ids[rows])).to(where)  # (n, L)
        if "lstm" in self.parts:
            x["pos"] = torch.from_numpy(_trim(table.pos_ids[rows])).to(where)  # (n, L)
        if "mlp" in self.parts:
            lm = (table.lm[rows] - self.lm_mean) / self.lm_scale
            x["lm"] = torch.from_numpy(lm.astype(np.float32)).to(where)  # (n, 5)
        if "bow" in self.parts:
            m = table.bow[rows]  # CSR: each row's n-gram ids, all counts 1 (binary)
            x["bow"] = (torch.from_numpy(m.indices.astype(np.int64)).to(where),
                        torch.from_numpy(m.indptr[:-1].astype(np.int64)).to(where))
        return x

    def fit(self, table: EndingTable, questions: np.ndarray, batch: int = 32) -> None:
        import torch

        from train.loop import LoopOptions, run_loop

        where, precision = self._precision()
        if "mlp" in self.parts:  # the joint model standardises the LM features
            lm = table.lm[questions.reshape(-1)]  # (rows, 5)
            self.lm_mean, std = lm.mean(0), lm.std(0)
            self.lm_scale = np.where(std > 0, std, 1.0)
        torch.manual_seed(self.seed)
        self.net = self._build(table).to(where)
        optimizer = torch.optim.Adam(self.net.parameters(), lr=2e-3)
        rng = np.random.default_rng(self.seed)
        n, k = questions.shape
        # column 0 holds the gold ending
        target = torch.zeros(batch, dtype=torch.long, device=where)
        per_epoch = -(-n // batch)
        order = np.arange(0)

        def forward(step: int, micro: int) -> torch.Tensor:
            nonlocal order
            at = step % per_epoch * batch
            if at == 0:  # a new epoch: a new order
                order = rng.permutation(n)
            q = questions[order[at : at + batch]]  # (b, k)
            x = self._inputs(table, q.reshape(-1), where)  # b k rows
            with autocast(where, precision):
                logits = self.net(x).view(len(q), k)  # (b, k)
                return torch.nn.functional.cross_entropy(logits, target[: len(q)])

        self.net.train()
        run_loop(forward, optimizer, LoopOptions(total_steps=self.epochs * per_epoch,
                                                 progress=False))
        self.net.eval()

    def scores(self, table: EndingTable, rows: np.ndarray) -> np.ndarray:
        import torch

        where, precision = self._precision()
        out = []
        with torch.no_grad(), autocast(where, precision):
            for at in range(0, len(rows), 1024):
                x = self._inputs(table, rows[at : at + 1024], where)
                out.append(self.net(x).float().cpu().numpy())  # (n,)
        return np.concatenate(out) if out else np.zeros(0)


class Committee:
    """The members named in ``members`` (of :data:`MODELS`), trained on questions whose first
    column is the gold ending's row of an :class:`EndingTable`; the torch members on ``device``
    under autocast in ``dtype`` (module notes; default the CPU in float32).

    ``ensemble`` (of :data:`ENSEMBLES`) is how the committee answers as one: ``"joint"``, one
    model trained over the concatenated features of the members (SWAG's rule; trained beside the
    members, which still score on their own), or ``"sum"``, the sum of the members' logits."""

    def __init__(self, members: Sequence[str] = MODELS, seed: int = 0, *,
                 ensemble: str = "joint", device: str | torch.device | None = None,
                 dtype: str | torch.dtype | None = None) -> None:
        unknown = [m for m in members if m not in MODELS]
        if unknown or not members:
            raise TaskError(f"committee members {list(members)!r}: each must be one of "
                            f"{', '.join(MODELS)}")
        if ensemble not in ENSEMBLES:
            raise TaskError(f"ensemble {ensemble!r} is not one of {', '.join(ENSEMBLES)}")
        self.ensemble = ensemble
        self.members: dict[str, Any] = {
            m: _SklearnMember(m, seed) if m in ("mlp", "bow")
            else _TorchMember(m, seed, device=device, dtype=dtype)
            for m in members}
        self.joint = (_TorchMember("joint", seed, parts=list(members), device=device,
                                   dtype=dtype) if ensemble == "joint" else None)

    def fit(self, table: EndingTable, questions: np.ndarray) -> Committee:
        """Train every member (and the joint ensemble) on ``questions`` ((n, k) rows, gold
        first)."""
        for member in self.members.values():
            member.fit(table, questions)
        if self.joint is not None:
            self.joint.fit(table, questions)
        return self

    def scores(self, table: EndingTable, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Each member's logit of each row, and the ensemble's under ``"ensemble"``."""
        out = {name: m.scores(table, rows) for name, m in self.members.items()}
        out["ensemble"] = (self.joint.scores(table, rows) if self.joint is not None
                           else np.sum(list(out.values()), axis=0))
        return out

    def accuracy(self, table: EndingTable, questions: np.ndarray) -> dict[str, float]:
        """Accuracy of choosing among each question's endings (gold in column 0 scored
        highest; ties count as wrong) per member and for the ensemble."""
        scores = self.scores(table, questions.reshape(-1))
        return {name: float(_correct(s.reshape(questions.shape)).mean())
                for name, s in scores.items()}


def _correct(scores: np.ndarray) -> np.ndarray:
    """Per question (row), whether column 0 is strictly above every other column.

    >>> _correct(np.array([[2.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 3.0, 1.0]])).tolist()
    [True, False, False]
    """
    return scores[:, 0] > scores[:, 1:].max(axis=1)
