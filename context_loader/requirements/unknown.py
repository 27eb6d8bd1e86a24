"""Subjects named in a subject slot that the data does not hold: "火星特产类目", "buyers of
flying cars", "sellers offer quantum socks".

Two shapes, both read only in slots that name a category ("X类目", "X品类", "买X的人",
"buyers of X", "offer X", "X category"):

- **partial**: a known category is the end of the name and a content word the data does
  not know stands before it ("火星" + "特产", "quantum" + "socks"). Matching the known
  part alone would answer about another subject, so the whole name is unknown and the
  partial match is dropped;
- **unmatched**: nothing of the name is a known category ("flying cars").

Benign words before a category (time words, determiners, "热门", "top", a parent
category, a vocabulary word) never make a name unknown.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from rag_cases.text import pos_tags

_ZH_SLOT = re.compile(
    r"([\u4e00-\u9fff]{2,16})(?:类目|品类|类别)|买([\u4e00-\u9fff]{2,12})的(?:人|买家|用户)"
)
_EN_SLOT = re.compile(
    r"\b(?:(?:buyers|sellers|shoppers|customers|reviewers|fans) of|"
    r"(?:offer|offers|offering|sell|sells|stock|stocks))\s+"
    r"([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2})"
    r"|\b([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2})\s+(?:category|categories)\b",
    re.I,
)
_ZH_NOUN = {"n", "nz", "ns", "nr", "nt", "ng"}
_ZH_BENIGN = frozenset(
    # modifiers and generic nouns that name no subject of their own
    "热门 爆款 新款 主流 高端 平价 整个 这个 那个 各个 所有 全部 细分 叶子 一级 二级 三级 相关 "
    "其他 其它 主营 我们 我的 本店 同类 头部 大盘 行业 市场 平台 店铺 商品 产品 品牌 类目 机会 "
    "潜力 目标 对标 竞品 候选 新品 主力 重点 核心 优势 "
    # verbs the tagger reads as nouns
    "汇总 分析 统计 对比 比较 查询 查看 研究 研发 调研 了解 整理 总结 列出 关注 推荐 选择 "
    "筛选 排序 排名 监控 评估 预测 总体 整体".split()
)
_ZH_NOT_A_NAME = re.compile(
    r"(?:子|细分|叶子|[一二三四末]级|小|大|同|各|哪个|哪些|哪类)(?=类目|品类|类别)"
)
_EN_STOP = frozenset(
    "the a an my our your their its this that these those all any some each every which what "
    "top best new newest latest popular cheap cheapest pricey priciest other more most many "
    "much such both same different main leading own local online budget premium good great "
    "bestselling best-selling top-selling hot trending big biggest small smallest fastest "
    "growing rising leaf sub child parent level second third first whole entire overall "
    "and or of in on for to with by from at as about into than vs versus is are was were be "
    "do does did have has had can could should would will how who why when where also just "
    "well fast out least less one two three four five six seven eight nine ten level "
    "top-level first-level second-level third-level leaf-level "
    # generic nouns: they name no subject of their own
    "products product items item skus sku brands brand points shops shop stores store "
    "merchants sellers buyers goods things stuff ones range ranges band bands selling sold "
    "sale sales during".split()
)
_EN_TYPOS = frozenset(w[:i] + w[i + 1 :] for w in _EN_STOP if len(w) > 4 for i in range(len(w)))
"""Stop words with one letter left out ("seling"): a typo is no name."""


@dataclass(frozen=True)
class UnknownName:
    """A name the data does not hold; ``hides``: the known part it ends with (the partial
    match to drop), or None."""

    name: str
    hides: str | None = None


def unknown_names(
    text: str, categories: Collection[str], vocabulary_words: Collection[str]
) -> list[UnknownName]:
    """The unknown subject names of a question (``categories``: the words that named its
    known categories; with any, only a partial match can be unknown)."""
    known = [c.replace("-", " ") for c in categories if c]
    found = [*_zh(text, known), *_en(text, known, {w.lower() for w in vocabulary_words})]
    out: list[UnknownName] = []
    for item in found:
        if all(item.name != o.name for o in out):
            out.append(item)
    return out


def _zh(text: str, known: list[str]) -> list[UnknownName]:
    out = []
    for m in _ZH_SLOT.finditer(_ZH_NOT_A_NAME.sub("，", text)):
        phrase = m.group(1) or m.group(2) or ""
        inner = [k for k in known if k and phrase.endswith(k)]
        if inner:
            part = max(inner, key=len)
            before = _zh_tokens(phrase[: len(phrase) - len(part)])
            if before and _zh_unknown_word(*before[-1], known):
                out.append(UnknownName(before[-1][0] + part, hides=part))
        elif not known:  # a name matched in other words ("厨房小家电") is no unknown one
            nouns = _zh_trailing_nouns(phrase, known)
            if nouns:
                out.append(UnknownName(nouns))
    return out


def _zh_unknown_word(word: str, flag: str, known: list[str]) -> bool:
    return (
        flag in _ZH_NOUN
        and len(word) >= 2
        and word not in _ZH_BENIGN
        and not any(word in k or k in word for k in known)
    )


def _zh_trailing_nouns(phrase: str, known: list[str]) -> str:
    tokens = _zh_tokens(phrase)
    tail: list[str] = []
    for word, flag in reversed(tokens):
        if not _zh_unknown_word(word, flag, known) or len(tail) == 3:
            break
        tail.insert(0, word)
    return "".join(tail)


def _en(text: str, known: list[str], vocabulary: set[str]) -> list[UnknownName]:
    out = []
    low_known = [k.lower() for k in known]
    for m in _EN_SLOT.finditer(text):
        after = m.group(1) is not None  # the name follows the slot word, or precedes it
        named = (m.group(1) or m.group(2) or "").lower().replace("-", " ")
        words = _phrase(named.split(), vocabulary, after)
        if not words:
            continue
        phrase = " ".join(words)
        inner = [k for k in low_known if k and (phrase == k or phrase.endswith(" " + k))]
        if inner:
            part = max(inner, key=len)
            modifier = phrase[: len(phrase) - len(part)].split()
            if modifier and _en_unknown_word(modifier[-1], vocabulary):
                out.append(UnknownName(f"{modifier[-1]} {part}", hides=part))
        elif not low_known and all(_en_unknown_word(w, vocabulary) for w in words):
            out.append(UnknownName(phrase))
    return out


def _phrase(words: list[str], vocabulary: set[str], after: bool) -> list[str]:
    """The name's words: from the slot word on (``after``) or back from it, up to the
    first function or vocabulary word."""
    ordered = words if after else list(reversed(words))
    out: list[str] = []
    for word in ordered:
        if word in _EN_STOP or word in vocabulary:
            break
        out.append(word)
    return out if after else list(reversed(out))


def _en_unknown_word(word: str, vocabulary: set[str]) -> bool:
    return (
        len(word) >= 3
        and not word.endswith("'s")
        and word not in _EN_STOP
        and word not in _EN_TYPOS
        and word not in vocabulary
    )


def _zh_tokens(text: str) -> list[tuple[str, str]]:
    return pos_tags(text) if text else []
