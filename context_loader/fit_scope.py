"""Whom a candidate plan's actions answer for, as the case fit reads it.

A plan can carry every tool a question needs and still answer another question: the price
bands of each of ten leaves it ranked, for a question asking the bands of the category;
a promotion's results, for "how are sales?" (no campaign named); the merchant's new
products, for "what sells best?" (nobody said "my"). This module reads, once per plan:
- ``wanted``: the aspects and listings the question asks for (``aspect:x``, ``list:y``);
- ``away``: the actions a fan-out runs over a listing of other subjects of an asked kind
  that nobody asked for (their aspects and rankings are not the asked subject's);
- ``per_item``: the actions a fan-out runs over any listing nobody asked for (a ranking
  of each price band's products is not the category's ranking);
- ``unnamed_kinds``: argument patterns of subjects the question neither names nor
  defaults to (each action taking one is idle).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from context_loader.plan_shape import tools_of
from deepagent.core.schema import ActionSpec
from deepagent.requirements.evidence import SUBJECT_KEYS
from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    PeriodReq,
    Requirement,
    SelectionReq,
    SubjectReq,
)
from deepagent.requirements.vocabulary import Vocabulary

MERCHANT = re.compile(r"^merchant_id$")  # the merchant's own things
SHOP_WORDS = re.compile(  # a shop, or the one asking, in the question's words
    r"我|咱|本店|店|商家|卖家|\b(?:i|my|me|we|our|us|shop|store|merchant|seller)\b|\bM\d{3,}", re.I
)


def roles_of(vocabulary: Vocabulary) -> dict[str, set[str]]:
    """tool -> the aspects it answers and the targets it lists (``aspect:x``, ``list:y``)."""
    roles: dict[str, set[str]] = {}
    for term in vocabulary.aspects:
        for tool in term.tools:
            roles.setdefault(tool, set()).add(f"aspect:{term.name}")
    for target, tools in vocabulary.listings.items():
        for tool in tools:
            roles.setdefault(tool, set()).add(f"list:{target}")
    return roles


def wanted(
    items: Sequence[Requirement], vocabulary: Vocabulary, nouns: set[str], compared: bool = True
) -> set[str]:
    """The aspects and listings the question asks for; ``nouns``: the listings of the
    targets it names outside its subjects ("哪些商品卖得好" lists products). A comparison
    may be answered by any listing (``compared`` false: not counted, for ``away``: a
    comparison of two categories does not ask for the children of either)."""
    out = {f"aspect:{r.aspect}" for r in items if isinstance(r, AspectReq)}
    targets: set[str | None] = {_target(r) for r in items if isinstance(r, SelectionReq)}
    comparison = compared and any(isinstance(r, ComparisonReq) for r in items)
    if None in targets or comparison:
        targets = set(vocabulary.listings)  # any listing may answer it
    out |= {f"list:{t}" for t in targets if t}
    if not targets:  # no ranking: the things the question names are what it lists
        out |= nouns
    if any(isinstance(r, PeriodReq) and r.start_month != r.end_month for r in items):
        out.add("aspect:trend")
    return out


def away(
    plan: Sequence[ActionSpec],
    items: Iterable[Requirement],
    roles: Mapping[str, set[str]],
    asked: set[str],
) -> set[str]:
    """The actions that answer for other subjects than the asked ones: those a fan-out
    runs over a listing of subjects of an asked kind (the main category's when none is
    named) that the question does not ask for (``asked``: what ``wanted`` returned)."""
    kinds = {f"list:{r.subject_type}" for r in items if isinstance(r, SubjectReq)}
    return per_item(plan, roles, asked, kinds or {"list:category"})


def per_item(
    plan: Sequence[ActionSpec],
    roles: Mapping[str, set[str]],
    asked: set[str],
    kinds: set[str] | None = None,
) -> set[str]:
    """The actions a fan-out runs once per item of a listing the question does not ask
    for (of one of ``kinds`` only, when given), and those run over their items: each
    answers for one item (the top 10 of each price band are not "its top 10"). Without
    ``kinds``, a listing that is itself run for each asked item (each leaf's price bands)
    refines inside those items: its fan-out still answers for them."""
    by_id = {a.id: a for a in plan}
    out: set[str] = set()
    for action in plan:
        ref = action.for_each.ref if action.for_each is not None else None
        feeder = by_id.get(ref) if ref is not None else None
        if feeder is None:
            continue
        listed = set().union(*(roles.get(t, set()) for t in tools_of(feeder)))
        of_kind = kinds is None or bool(listed & kinds)
        nested = kinds is None and feeder.for_each is not None  # parts of each asked item
        if ref in out or (listed and of_kind and not nested and not listed & asked):
            out.add(action.id)
    return out


CAMPAIGN_WORDS = re.compile(  # a promotion in the question's words, found or not
    r"大促|活动|促销|双\s*1[12]|双十[一二]|(?<!\d)6\.?18(?!\d)|年货节|女王节|99划算|划算节|年中"
    r"|\bcampaigns?\b|\bpromotions?\b|\bpromo\b|\bdouble\s*(?:11|12|eleven|twelve)\b"
    r"|\bsingles'? ?day\b|\bqueen'?s day\b|\bmid-year sale\b|\bsale events?\b",
    re.I,
)


def unnamed_kinds(
    items: Iterable[Requirement], promotion: bool, shop: bool
) -> list[re.Pattern[str]]:
    """Argument patterns of subjects the question neither names nor defaults to: a
    campaign (no promotion in its words, ``promotion``: "how are sales?"), the merchant's
    own things (neither the shop, its new products, nor the one asking named: "what sells
    best?"; ``shop``: the question's words name a shop or the one asking)."""
    kinds = {r.subject_type for r in items if isinstance(r, SubjectReq)}
    out = []
    if "campaign" not in kinds and not promotion:
        out.append(SUBJECT_KEYS["campaign"])
    if not kinds & {"own_shop", "new_product"} and not shop:
        out.append(MERCHANT)
    return out


def _target(req: SelectionReq) -> str | None:
    """What a selection lists: its target; the main price band is one of the bands."""
    return req.target or ("band" if req.rule == "main_band" else None)
