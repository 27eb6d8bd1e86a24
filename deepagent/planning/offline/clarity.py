"""When the offline planner asks instead of acting: the question points at something the
context does not hold, or asks for nothing in particular.

A model planner reads "这个商品" or "compare them" and sees that nothing in the context
says which; the case-guided planner needs the same judgement spelled out, or it fills a
case from default parameters (the merchant's main category, their newest product) and
answers a question nobody asked. A reference counts as resolved when the user is on a
page, the conversation has earlier turns, the question names a category or a product id,
or it says "my"/"我的" (the merchant's own things) or names a new product (the skill rule
picks the first of the merchant's new products). Unresolved, it also asks when the question
carries on from an earlier answer that is not there ("换成销量看看", "do the same for last
year") or when nothing at all was read from a short one ("哪个更好", "which one should I
pick?"): no subject, period, figure, ranking or aspect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepagent.core.schema import JSON

_NOUNS_ZH = "商品|产品|单品|品|宝贝|类目|品类|竞品|对手|活动|店铺|店|品牌|牌子|款|爆款|爆品"
_DANGLING_ZH = re.compile(
    rf"(?:这|那|该)(?:个|款|件|两个|几个|些|两款|几款)?(?:{_NOUNS_ZH})|(?:这|那)(?:两|几)个|(?:这|那)俩"
    r"|(?:刚才|刚刚|之前|上面|前面)(?:的|说的|那|这)?(?:个|款|家|一个)"
    r"|(?:^|那|这)第[二三四五六七八九十2-9](?:个|款|家)(?![月季周年天小])"  # "那第二个呢"
    r"|(?:这|那)个(?=\s*[，,。？?！!、]|\s*$)"  # "帮我分析下这个，…": a thing, unnamed
)
_NOUNS_EN = (
    r"products?|items?|categor(?:y|ies)|campaigns?|rivals?|competitors?|brands?|shops?"
    r"|skus?|ones?"
)
_DANGLING_EN = re.compile(
    rf"\b(?:this|that|these|those|the other)\s+(?:{_NOUNS_EN})\b"
    r"|\bthe (?:previous|last|earlier) one\b|\bthe one (?:before|from before)\b",
    re.I,
)
# Words that carry on from an earlier answer ("换成销量看看", "do the same for last year"):
# with no earlier turn and nothing named, there is nothing to carry on from.
_FOLLOW_UP = re.compile(
    r"换成|改成|换个|再细|细一点|细一些|还有呢|还有吗|还有别的|同样的|一样的|照这个|按这个|再来一[个次遍]"
    r"|重新(?:算|做|来|跑|看)|接着|继续"
    r"|\bdo the same\b|\bsame (?:for|thing|again)\b|\bredo\b|\bagain\b|\bshow me more\b"
    r"|\bmore detail|\binstead\b|\bwhat else\b|\bgo on\b|\bcontinue\b|\bkeep going\b",
    re.I,
)
# A bare pronoun only dangles in a short question; a longer one names its own antecedent
# ("which leaves compete least, and what do they have in common?").
_PRONOUN = re.compile(r"(?<!其)它们?|\b(?:it|its|them|they|their)\b", re.I)
SHORT_WORDS, SHORT_CHARS = 6, 12
# The merchant's own things, and new products (the skill rule: with no product named, the
# first of the merchant's new-product list) resolve a reference.
_OWN = re.compile(
    r"我的|我们的|我们?这|我家|我店|本店|新品|\bmy\b|\bour\b|\bnew(?:est)? (?:product|launch)",
    re.I,
)
_PRODUCT_ID = re.compile(r"(?:product|item|sku|id|#|商品|产品|单品)\s*#?\s*\d{3,}", re.I)
# Words that ask for something without saying what: requests, politeness, filler.
_FILLER_ZH = re.compile(
    r"帮我|给我|麻烦|请|想|了解|分析|看看|看一下|瞧瞧|一下|出个|做个|报告|总结|情况|数据|"
    r"我|你|吧|呢|吗|啊|呀|的|个|：|:|，|,|。|？|\?|！|!|\s"
)
_FILLER_EN = re.compile(
    r"\b(?:please|help|me|us|analy[sz]e|analysis|look|at|give|show|tell|make|a|an|the|"
    r"report|summary|for|quick|question|hi|hello|can|could|you|i|want|to|know|about|"
    r"something|it|them|check|numbers?|figures?|data|stats|statistics|metrics)\b"
    r"|[\s.,:;!?]",
    re.I,
)


# Requests about the assistant itself (its prompt, instructions, files), not the market.
_REPEATED = re.compile(r"^(.{2,}?)\1{2,}$")  # one term over and over: keyword spam


@dataclass(frozen=True)
class Unclear:
    reason_zh: str
    reason_en: str


def unclear(
    question: str, params: dict[str, JSON], has_conversation: bool, asked: bool = True
) -> Unclear | None:
    """Why the question cannot be acted on as it stands, or None when it can. ``asked``:
    the requirements hold anything at all (a subject, period, measure, ranking, aspect)."""
    content = _FILLER_ZH.sub("", _FILLER_EN.sub("", question))
    if not content or _REPEATED.match(re.sub(r"\s+", "", question)):
        return Unclear("问题没有说明要分析什么", "the question does not say what to analyse")
    if _resolved(question, params, has_conversation):
        return None
    found = _DANGLING_ZH.search(question) or _DANGLING_EN.search(question)
    if found is None and _short(question):
        found = _PRONOUN.search(question)
    if found is not None:
        ref = found.group(0)
        return Unclear(f"不清楚“{ref}”指的是哪一个", f'it is not clear what "{ref}" refers to')
    if (step := _FOLLOW_UP.search(question)) is not None:
        ref = step.group(0)
        return Unclear(
            f"“{ref}”像是接着之前的分析，但这里没有之前的分析",
            f'"{ref}" carries on from an earlier answer, and there is none here',
        )
    if not asked and _short(question):  # "哪个更好", "which one should I pick?": nothing
        # named, nothing to default to (a longer question the extractor cannot read is left
        # to the case it fits: "你们的数据最新到哪个月？")
        return Unclear(
            "问题没有说明要分析哪个类目、商品或指标",
            "the question names no category, product or figure to look at",
        )
    return None


_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_NOT_A_WORD = re.compile(r"^[^aeiouy]+$|[^aeiouy]{5,}", re.I)  # no vowel, or 5 consonants


def mashed(question: str) -> bool:
    """Latin letters only, and most of its words unpronounceable ("asdfghjkl zxcvbnm",
    "sdfkj lkjh qwe"): keys hit at random, not a question in any language."""
    if re.search(r"[\u4e00-\u9fff]", question):
        return False
    words = _LATIN_WORD.findall(question)
    return bool(words) and 2 * sum(bool(_NOT_A_WORD.search(w)) for w in words) > len(words)


def _short(question: str) -> bool:
    if question.isascii():
        return len(question.split()) <= SHORT_WORDS
    return len(question.strip()) <= SHORT_CHARS


def _resolved(question: str, params: dict[str, JSON], has_conversation: bool) -> bool:
    return (
        has_conversation
        or params.get("page") is not None
        or params.get("category") is not None
        or bool(_OWN.search(question))
        or bool(_PRODUCT_ID.search(question))
    )
