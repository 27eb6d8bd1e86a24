"""Category mentions inside a free-text question (pure helpers, no database access).

``recognize_category`` scores a whole phrase against every category; this module does the
opposite job: it scans a question and finds the category names *mentioned* in it.

Aliases of a category:
- its full Chinese and English names ('连衣裙', 'Air fryer');
- the parts of its names: Chinese split on '/' and '、' ('美容护肤/美体/精油' -> '美容护肤',
  '美体', '精油'), English split on ',' '&' '/' and 'and' ('Beauty, Body Care & Essential
  Oils' -> 'Beauty', 'Body Care', 'Essential Oils');
- a few everyday synonyms of names or parts ('护肤', 'skin care' -> '美容护肤').

Chinese aliases are found as substrings; English ones as runs of stemmed words, so plurals
match ('air fryers' -> 'Air fryer'). Overlapping matches keep the longest. Words that name
no category (新品, 产品, 类目, category, product...) never become aliases, and a few English
words that are also common words ('top', 'set', 'short') only match their exact surface
form as in the category name ('tops', 'sets', 'shorts').
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from business.modules._recognize import stem
from business.modules._typos import TypoIndex

NAME, PART, SYNONYM = 3, 2, 1
_QUALITY = {NAME: "name", PART: "part", SYNONYM: "synonym"}

_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9]+")
_ZH_PARTS = re.compile(r"[/、,，]+")
_EN_PARTS = re.compile(r"\s*(?:[,&/]|\band\b)\s*")
# Text allowed between the words of one English mention ("women's", "wide-leg", "a, b & c").
_NOT_WORD = re.compile(r"[^a-z0-9]+")
_JOINER = re.compile(r"^[\s\-'’&/,]*$")
_STOP = frozenset({"and", "of", "for", "the", "with", "a", "an", "in", "on", "s", "amp"})

# Words that must never be read as a category.
GENERIC_ZH = frozenset(
    "新品 产品 商品 类目 品类 类别 宝贝 单品 用品 其他 其它 品牌 店铺 竞品 爆品 爆款".split()
)
GENERIC_EN = frozenset(
    stem(w)
    for w in (
        "category categories product products item items goods new brand brands shop store "
        "market sale sales competitor competitors buyer buyers leaf leaves other others"
    ).split()
)
# English words that are also everyday words: they match only their exact surface form
# as written in the category name ('tops' yes, 'top 20' no).
STRICT_EN = frozenset(
    {"top", "bottom", "set", "short", "case", "tool", "wall", "watch", "digital", "cooking"}
)

# Everyday words for a category name or name part: target alias -> extra aliases. A
# target that names no category in the database is ignored.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "美容护肤": ("护肤", "护肤品", "美容", "skin care", "skincare"),
    "彩妆": ("美妆", "化妆品", "cosmetics"),
    "精华液": ("精华", "essence"),
    "防晒霜": ("防晒", "sunblock"),
    "洁面": ("洗面奶", "face wash"),
    "化妆水": ("爽肤水",),
    "电吹风": ("吹风机", "吹风筒"),
    "电饭煲": ("电饭锅",),
    "电热水壶": ("烧水壶", "热水壶"),
    "纸尿裤": ("尿不湿",),
    "剃须刀": ("刮胡刀",),
    "拉杆箱": ("行李箱",),
    "榨汁机": ("果汁机",),
    "手机数码": ("数码",),
    "宠物用品": ("宠物",),
    "女装": ("women clothing", "womens clothing"),
    "男装": ("men clothing", "mens clothing"),
}


def normalize(text: str) -> str:
    """NFKC + lower case, character by character so that offsets stay those of ``text``."""
    out = []
    for ch in text:
        norm = unicodedata.normalize("NFKC", ch).lower()
        out.append(norm if len(norm) == 1 else ch.lower() if len(ch.lower()) == 1 else ch)
    return "".join(out)


def _has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(normalize(text)) if w not in _STOP]


@dataclass(frozen=True)
class Candidate:
    category_id: int
    quality: int


@dataclass
class ExtractIndex:
    """Aliases of every category, ready for scanning."""

    categories: dict[int, dict[str, Any]]
    parents: dict[int, int | None]
    zh: dict[str, dict[int, int]] = field(default_factory=dict)  # alias -> {id: quality}
    zh_lengths: dict[str, tuple[int, ...]] = field(default_factory=dict)  # first char -> lens
    en: dict[tuple[str, ...], dict[int, int]] = field(default_factory=dict)  # stems -> ...
    en_exact: dict[str, dict[int, int]] = field(default_factory=dict)  # surface word -> ...
    en_max: int = 1
    typos: TypoIndex | None = None  # one-letter typos of English alias words

    def ancestors(self, category_id: int) -> set[int]:
        found: set[int] = set()
        parent = self.parents.get(category_id)
        while parent is not None and parent not in found:
            found.add(parent)
            parent = self.parents.get(parent)
        return found

    # ------------------------------------------------------------------- building

    def _put(self, table: dict[Any, dict[int, int]], key: Any, cid: int, quality: int) -> None:
        slot = table.setdefault(key, {})
        slot[cid] = max(slot.get(cid, 0), quality)

    def add_zh(self, alias: str, cid: int, quality: int) -> None:
        key = normalize(alias).strip()
        if key and key not in GENERIC_ZH:
            self._put(self.zh, key, cid, quality)

    def add_en(self, alias: str, cid: int, quality: int) -> None:
        raw = _words(alias)
        stems = tuple(stem(w) for w in raw)
        if not stems:
            return
        if len(stems) == 1:
            if stems[0] in GENERIC_EN or len(stems[0]) < 3:
                return
            if stems[0] in STRICT_EN:
                self._put(self.en_exact, raw[0], cid, quality)
                return
        self._put(self.en, stems, cid, quality)
        if len(stems) > 1:  # 't-shirts' also as 'tshirts', 'skin care' as 'skincare'
            self._put(self.en, (stem("".join(raw)),), cid, quality)
        self.en_max = max(self.en_max, len(stems))

    def add(self, alias: str, cid: int, quality: int) -> None:
        if _has_cjk(alias):
            self.add_zh(alias, cid, quality)
        else:
            self.add_en(alias, cid, quality)

    def lookup(self, alias: str) -> dict[int, int]:
        """The categories an alias already names (used to attach synonyms)."""
        if _has_cjk(alias):
            return self.zh.get(normalize(alias).strip(), {})
        return self.en.get(tuple(stem(w) for w in _words(alias)), {})

    def finish(self) -> None:
        lengths: dict[str, set[int]] = {}
        for alias in self.zh:
            lengths.setdefault(alias[0], set()).add(len(alias))
        self.zh_lengths = {ch: tuple(sorted(ls, reverse=True)) for ch, ls in lengths.items()}
        self.typos = TypoIndex({w for key in self.en for w in key} | set(self.en_exact))


def build_index(rows: Iterable[dict[str, Any]]) -> ExtractIndex:
    """Build the alias index from category rows (id, parent_id, names, paths, level...)."""
    rows = list(rows)
    index = ExtractIndex(
        categories={int(r["id"]): r for r in rows},
        parents={int(r["id"]): r.get("parent_id") for r in rows},
    )
    for r in rows:
        cid = int(r["id"])
        zh, en = str(r["name_zh"]).strip(), str(r["name_en"]).strip()
        index.add(zh, cid, NAME)
        index.add(en, cid, NAME)
        zh_parts = [p for p in _ZH_PARTS.split(zh) if len(p.strip()) >= 2]
        en_parts = [p for p in _EN_PARTS.split(en) if p.strip()]
        for part in (zh_parts if len(zh_parts) > 1 else []) + (
            en_parts if len(en_parts) > 1 else []
        ):
            index.add(part, cid, PART)
    for target, extras in SYNONYMS.items():
        named = dict(index.lookup(target))
        for cid in named:
            for extra in extras:
                index.add(extra, cid, SYNONYM)
    index.finish()
    return index


_CACHE: dict[str, tuple[Sequence[Any], ExtractIndex]] = {}


def index_for(key: str, entries: Sequence[Any]) -> ExtractIndex:
    """The index of a database, rebuilt when its prepared category entries change.

    ``entries`` are the recognition entries of ``_recognize`` (each with a ``row``), cached
    per database file by the common module; the same list object means the same data.
    """
    cached = _CACHE.get(key)
    if cached is None or cached[0] is not entries:
        cached = (entries, build_index(e.row for e in entries))
        _CACHE[key] = cached
    return cached[1]


# ----------------------------------------------------------------------------- scanning


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    candidates: dict[int, int]  # category id -> alias quality


def _latin(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _scan_zh(index: ExtractIndex, norm: str) -> list[Match]:
    found: list[Match] = []
    n = len(norm)
    for i, ch in enumerate(norm):
        for length in index.zh_lengths.get(ch, ()):
            if i + length > n:
                continue
            alias = norm[i : i + length]
            hit = index.zh.get(alias)
            if hit is None:
                continue
            # an alias such as 'polo衫' must not start inside a Latin word ('xpolo衫')
            if i and _latin(alias[0]) and _latin(norm[i - 1]):
                continue
            if i + length < n and _latin(alias[-1]) and _latin(norm[i + length]):
                continue
            found.append(Match(i, i + length, hit))
    return found


def _scan_en(index: ExtractIndex, norm: str) -> list[Match]:
    found: list[Match] = []
    segment: list[tuple[str, str, int, int]] = []  # (surface, stem, start, end), no stops
    last_end = -1

    def flush() -> None:
        for i, (surface, _, start, end) in enumerate(segment):
            exact = index.en_exact.get(surface)
            if exact is not None:
                found.append(Match(start, end, exact))
            for size in range(min(index.en_max, len(segment) - i), 0, -1):
                key = tuple(s for _, s, _, _ in segment[i : i + size])
                hit = index.en.get(key)
                if hit is not None:
                    found.append(Match(start, segment[i + size - 1][3], hit))
            for size in (2, 3)[: max(0, len(segment) - i - 1)]:  # "men's wear": menswear
                end = segment[i + size - 1][3]
                hit = index.en.get((stem(_NOT_WORD.sub("", norm[start:end])),))
                if hit is not None:
                    found.append(Match(start, end, hit))
        segment.clear()

    for m in _WORD.finditer(norm):
        if last_end >= 0 and not _JOINER.match(norm[last_end : m.start()]):
            flush()
        last_end = m.end()
        word = m.group()
        if word not in _STOP:
            root = stem(word)
            fixed = index.typos.corrected(root) if index.typos else None
            segment.append((word, fixed or root, m.start(), m.end()))
    flush()
    return found


def _longest(matches: list[Match]) -> list[Match]:
    """Keep the longest of overlapping matches (earlier first on ties)."""
    kept: list[Match] = []
    for m in sorted(matches, key=lambda m: (-(m.end - m.start), m.start)):
        if all(m.end <= k.start or m.start >= k.end for k in kept):
            kept.append(m)
    return sorted(kept, key=lambda m: m.start)


def _units(text: str) -> int:
    """Length of a mention where a Chinese character weighs like two letters."""
    return sum(2 if _CJK_CHAR.match(ch) else 1 for ch in text if not ch.isspace())


@dataclass
class Mention:
    text: str
    start: int
    end: int
    category_id: int
    quality: int
    parent_of: int | None = None
    ambiguous: list[int] = field(default_factory=list)


def category_ref(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name_zh": row["name_zh"],
        "name_en": row["name_en"],
        "path_zh": row["path_zh"],
        "path_en": row["path_en"],
        "is_leaf": bool(row["is_leaf"]),
        "level": row["level"],
    }


def extract(index: ExtractIndex, text: str) -> list[Mention]:
    """Every category mentioned in ``text``, best first.

    Best first = a category mentioned together with one of its descendants ('女装连衣裙')
    goes after it; then longer matches first; then order of appearance.
    """
    norm = normalize(text)
    matches = _longest(_scan_zh(index, norm) + _scan_en(index, norm))
    if not matches:
        return []
    every = {cid for m in matches for cid in m.candidates}
    lineage = {cid: index.ancestors(cid) for cid in every}

    def related(cid: int, own: dict[int, int]) -> bool:
        others = every - set(own)
        return bool(lineage[cid] & others) or any(cid in lineage[o] for o in others)

    mentions: dict[int, Mention] = {}
    for m in matches:
        ranked = sorted(
            m.candidates.items(),
            key=lambda kv: (
                -kv[1],
                not related(kv[0], m.candidates),
                -float(index.categories[kv[0]].get("gmv") or 0.0),
                kv[0],
            ),
        )
        cid, quality = ranked[0]
        if cid in mentions:
            continue
        mention = Mention(text[m.start : m.end], m.start, m.end, cid, quality)
        mention.ambiguous = [c for c, q in ranked[1:] if q == quality]
        mentions[cid] = mention
    chosen = list(mentions.values())
    for mention in chosen:
        for other in chosen:
            if mention.category_id in lineage.get(other.category_id, set()):
                mention.parent_of = other.category_id
                break
    chosen.sort(key=lambda mt: (mt.parent_of is not None, -_units(mt.text), mt.start))
    return chosen


def mention_data(index: ExtractIndex, mention: Mention) -> dict[str, Any]:
    data: dict[str, Any] = {
        "text": mention.text,
        "span": [mention.start, mention.end],
        "match": _QUALITY[mention.quality],
        "category": category_ref(index.categories[mention.category_id]),
    }
    if mention.parent_of is not None:
        data["parent_of"] = mention.parent_of
    if mention.ambiguous:
        data["also_named"] = mention.ambiguous
    return data


def describe(items: list[dict[str, Any]]) -> str:
    """One line per mention for ``plain_text``."""
    parts = []
    for item in items:
        c = item["category"]
        kind = "leaf" if c["is_leaf"] else f"level {c['level']}"
        line = (
            f"{item['text']!r} at {item['span'][0]}-{item['span'][1]} -> {c['name_zh']} "
            f"{c['name_en']} (id {c['id']}, {c['path_en']}, {kind}, by {item['match']})"
        )
        if "parent_of" in item:
            line += f", parent of {item['parent_of']} also mentioned"
        parts.append(line)
    return "; ".join(parts)
