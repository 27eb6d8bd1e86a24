"""Category-name recognition of the common module (stdlib only, no database access):
fuzzy matching of a Chinese and/or English phrase against the category tree (character
bigrams + difflib for Chinese, stemmed token overlap + difflib for English). Time
expressions are read in ``_time_words``."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset({"and", "of", "for", "the", "with", "a", "an", "in", "on", "s", "amp"})
_NAME_PARTS = re.compile(r"[/、&,，·]+")
MIN_SCORE = 0.5


def stem(word: str) -> str:
    """A tiny English plural stemmer: dresses -> dress, accessories -> accessory."""
    if len(word) <= 3 or word.endswith("ss"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("ss", "x", "z", "ch", "sh")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("us", "is")):
        return word[:-1]
    return word


def en_tokens(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


def _bigrams(text: str) -> frozenset[str]:
    if len(text) < 2:
        return frozenset({text}) if text else frozenset()
    return frozenset(text[i : i + 2] for i in range(len(text) - 1))


def _dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


@dataclass(frozen=True)
class Entry:
    """A category prepared for matching."""

    row: dict[str, Any]
    zh: str
    zh_parts: frozenset[str]
    zh_bigrams: frozenset[str]
    en_raw: str
    en: tuple[str, ...]
    path_zh: str
    path_bigrams: frozenset[str]
    path_en: frozenset[str]


def prepare(row: dict[str, Any]) -> Entry:
    zh = str(row["name_zh"]).strip()
    return Entry(
        row=row,
        zh=zh,
        zh_parts=frozenset(p for p in _NAME_PARTS.split(zh) if p),
        zh_bigrams=_bigrams(zh),
        en_raw=" ".join(_WORD.findall(str(row["name_en"]).lower())),
        en=en_tokens(str(row["name_en"])),
        path_zh=str(row["path_zh"]),
        path_bigrams=_bigrams("".join(_CJK.findall(str(row["path_zh"])))),
        path_en=frozenset(en_tokens(str(row["path_en"]))),
    )


@dataclass(frozen=True)
class Query:
    zh_terms: tuple[str, ...]  # separate Chinese terms, e.g. ('护肤', '身体乳')
    zh_units: tuple[str, ...]  # the terms plus all of them joined
    en_raw: str
    en: tuple[str, ...]

    @property
    def is_blank(self) -> bool:
        return not self.zh_terms and not self.en


def parse_query(text: str) -> Query:
    norm = unicodedata.normalize("NFKC", text).lower()
    terms = tuple(dict.fromkeys(_CJK.findall(norm)))
    units = (*terms, "".join(terms)) if len(terms) > 1 else terms
    ascii_part = _CJK.sub(" ", norm)
    return Query(terms, units, " ".join(_WORD.findall(ascii_part)), en_tokens(ascii_part))


class Matcher:
    """Scores every category against one query; token similarities are memoised."""

    def __init__(self, query: Query) -> None:
        self.q = query
        self._tok: dict[tuple[str, str], float] = {}

    def token_sim(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        if min(len(a), len(b)) < 4 or a[0] != b[0]:
            return 0.0
        key = (a, b)
        if key not in self._tok:
            prefix = 0.85 if a.startswith(b) or b.startswith(a) else 0.0
            sm = SequenceMatcher(None, a, b)
            ratio = sm.ratio() if min(len(a), len(b)) >= 5 and sm.quick_ratio() >= 0.8 else 0.0
            self._tok[key] = max(prefix, ratio if ratio >= 0.8 else 0.0)
        return self._tok[key]

    def zh_sim(self, term: str, e: Entry) -> float:
        if term == e.zh:
            return 1.0
        if term in e.zh_parts:
            return 0.95
        sim = _dice(_bigrams(term), e.zh_bigrams)
        sm = SequenceMatcher(None, term, e.zh)
        if sm.quick_ratio() > sim:
            sim = max(sim, sm.ratio())
        if term in e.zh:
            sim = max(sim, 0.55 + 0.35 * len(term) / len(e.zh))
        elif e.zh and e.zh in term:
            sim = max(sim, 0.5 + 0.35 * len(e.zh) / len(term))
        return 0.9 * sim

    def en_sim(self, e: Entry) -> float:
        q = self.q
        if not e.en:
            return 0.0
        if q.en_raw == e.en_raw:
            return 1.0
        if q.en == e.en or "".join(q.en) == "".join(e.en):
            return 0.97
        name_cov = sum(max(self.token_sim(n, t) for t in q.en) for n in e.en) / len(e.en)
        query_cov = sum(max(self.token_sim(t, n) for n in e.en) for t in q.en) / len(q.en)
        tokens = 0.95 * (0.6 * name_cov + 0.4 * query_cov)
        sm = SequenceMatcher(None, " ".join(q.en), " ".join(e.en))
        whole = 0.9 * sm.ratio() if sm.quick_ratio() > tokens / 0.9 else 0.0
        return max(tokens, whole)

    def coverage(self, e: Entry) -> float:
        """Share of the query's terms found in the category's full path."""
        parts: list[float] = []
        for term in self.q.zh_terms:
            if term in e.path_zh:
                parts.append(1.0)
            else:
                grams = _bigrams(term)
                parts.append(len(grams & e.path_bigrams) / len(grams))
        for tok in self.q.en:
            parts.append(max((self.token_sim(tok, p) for p in e.path_en), default=0.0))
        return sum(parts) / len(parts) if parts else 0.0

    def score(self, e: Entry) -> float:
        name = max((self.zh_sim(t, e) for t in self.q.zh_units), default=0.0)
        if self.q.en:
            name = max(name, self.en_sim(e))
        cov = self.coverage(e)
        if name >= 1.0 and cov >= 1.0:
            return 1.0
        return min(0.99, 0.75 * name + 0.25 * cov)


def rank_categories(
    entries: list[Entry], text: str, *, limit: int, leaf_only: bool, min_score: float = MIN_SCORE
) -> tuple[list[tuple[float, Entry]], int]:
    """The best categories for ``text`` (score desc, then larger GMV) and how many passed."""
    query = parse_query(text)
    if query.is_blank:
        return [], 0
    matcher = Matcher(query)
    scored = [
        (round(s, 3), e)
        for e in entries
        if not (leaf_only and not e.row["is_leaf"]) and (s := matcher.score(e)) >= min_score
    ]
    scored.sort(key=lambda se: (-se[0], -float(se[1].row.get("gmv") or 0.0), se[1].row["id"]))
    return scored[:limit], len(scored)
