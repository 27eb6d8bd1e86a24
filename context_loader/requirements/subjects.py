"""Subjects of a question: categories, products, campaigns, the merchant's shop and new
products, from the context parameters and a few possessive patterns."""

from __future__ import annotations

import re
from typing import Any

from context_loader.models import PageContext
from context_loader.requirements.names import NameMatcher
from context_loader.requirements.spans import Spans
from deepagent.core.schema import JSON
from deepagent.requirements.model import SubjectReq

_PRODUCT_ID = re.compile(
    r"(?:商品|产品|单品|宝贝)\s*(?:id|ID|编号)?\s*[:：#]?\s*(\d{2,6})(?![\d个款件名强])"
    r"|\b(?:product|item|sku)\s*(?:id|no\.?|number|#)?\s*[:#]?\s*(\d{2,6})\b"
    r"|#\s*(\d{2,6})\b|\bid\s*[:：]?\s*(\d{2,6})\b"
    # a bare id after a pointer at one product: "我的1450", "那款1431护手霜"
    r"|(?:我的|我们的|我家的?|我(?:那|这)款|那款|这款)\s*(\d{3,6})(?![\d.个款件名强年月日号元块%])"
    r"|(?<![\d.\-/])(\d{3,6})\s*(?=(?:这|那)(?:款|件|个商品|个产品|个单品))",  # "23514这款冲牙器"
    re.I | re.A,
)
_ID_LIST = re.compile(  # "products 30290, 30260 and 30287", "商品1450、1431和1402"
    r"(?:products?|items?|skus?|商品|产品|单品)\s*(?:ids?)?\s*[:：#]?\s*"
    r"(\d{3,6}(?:\s*(?:,|，|、|\band\b|\bor\b|\bvs\.?|和|与|跟|及|或)\s*#?\d{3,6})+)(?![\d.])",
    re.I | re.A,
)
_OWN_SHOP = re.compile(
    r"我的店铺?|我家店铺?|我家(?:的)?(?!新)|我们的?店铺?|本店|我店|店铺整体|\b(?:my|our)\s+(?:own\s+)?(?:shop|store)\b",
    re.I | re.A,
)
_MY_NEW = re.compile(
    r"(?:我的|我们的|我家的?|本店的?|我(?:那|这)(?:款|个)的?|\bmy\b|\bour\b)\s*(?:最新的?|最近的?|刚上的?)?\s*"
    r"(?:新品|新款|新产品|\bnew(?:est)?\s+(?:products?|launch(?:es)?|items?|releases?))"
    r"|我们?[^，,。？?；;]{0,8}?(?:上架|上新|上(?![个月周年半季次一])|推出|发布)了?"
    r"[^，,。？?；;]{0,6}?(?:新品|新款|新产品)",
    re.I | re.A,
)  # the second form: "我今年都上了哪些新品", "我最近上的那几个新品"
_MY_NEWEST = re.compile(
    r"(?:我|我们)的?(?:最新|刚)(?:上的?|上架的?)?(?:的)?(?:那款|那个|一款)?(?:新品|商品|产品)|"
    r"\b(?:my|our) (?:newest|latest|most recent) (?:product|launch|item|new product)\b",
    re.I | re.A,
)
_MAIN_CATEGORY = re.compile(r"主营类目|主类目|\bmain category\b|\bmy category\b", re.I | re.A)
_POINTER = re.compile(r"^\s*(?:这|那)(?:款|件|个|一款)")  # "23514这款冲牙器": the product's kind
_THIS = re.compile(r"这个|这款|该|本|\bthis\b|\bthe page\b", re.I | re.A)


class SubjectFinder:
    def __init__(
        self,
        spans: Spans,
        params: dict[str, JSON],
        page: PageContext | None,
        names: NameMatcher | None = None,
    ) -> None:
        self.spans = spans
        self.names = names
        self.params = params
        self.page = page
        self.items: list[SubjectReq] = []

    def find(self) -> list[SubjectReq]:
        self._categories()
        self._main_category()
        self._products()
        self._campaign()
        self._named()
        self._newest()
        self._own()
        if not self.items:
            self._page()
        self._described()
        return self.items

    def _described(self) -> None:
        """A category right after a product id describes that product ("那款1431护手霜"):
        the product is the subject, not every 护手霜."""
        text = self.spans.text
        ends = [text.find(s.text) + len(s.text) for s in self.items if s.subject_type == "product"]

        def describes(item: SubjectReq) -> bool:
            return item.subject_type == "category" and any(
                _POINTER.sub("", text[e:], count=1).lstrip().startswith(item.text) for e in ends
            )

        self.items = [s for s in self.items if not describes(s)]

    def _add(self, subject_type: str, ref: int | str | None, name: str, text: str) -> None:
        if any(s.subject_type == subject_type and s.ref == ref for s in self.items):
            return
        sid = f"s{len(self.items) + 1}"
        self.items.append(
            SubjectReq(id=sid, text=text, subject_type=subject_type, ref=ref, name=name)
        )

    def _claim(self, words: str) -> str | None:
        at = self.spans.find(words)
        if at is None:
            return None
        self.spans.take(*at)
        return self.spans.text[at[0] : at[1]]

    def _categories(self) -> None:
        mentions: list[dict[str, Any]] = self.params.get("category_mentions") or []
        for m in mentions:
            if m.get("parent_of") is not None:
                continue  # a parent named with its child ("女装连衣裙"): the child is the subject
            text = self._claim(str(m.get("text") or "")) or str(m.get("text") or "")
            self._add("category", m["id"], str(m.get("name_zh") or ""), text)

    def _main_category(self) -> None:
        main = self.params.get("main_category")
        found = _MAIN_CATEGORY.search(self.spans.text)
        if found and isinstance(main, dict) and self.spans.free(found.start(), found.end()):
            self.spans.take(found.start(), found.end())
            self._add("category", main["id"], str(main.get("name_zh", "")), found.group(0))

    def _products(self) -> None:
        for m in _ID_LIST.finditer(self.spans.text):
            if self.spans.free(m.start(), m.end()):
                self.spans.take(m.start(), m.end())
                for pid in re.findall(r"\d{3,6}", m.group(1)):
                    self._add("product", int(pid), "", pid)
        for m in _PRODUCT_ID.finditer(self.spans.text):
            if self.spans.free(m.start(), m.end()):
                self.spans.take(m.start(), m.end())
                pid = int(next(g for g in m.groups() if g))
                self._add("product", pid, "", m.group(0).strip())

    def _campaign(self) -> None:
        """Every campaign the question names (find_campaign lists them all)."""
        many = self.params.get("campaigns")
        one = self.params.get("campaign")
        listed = many if isinstance(many, list) and many else [one] if isinstance(one, dict) else []
        for camp in listed:
            names = [str(camp.get("name_zh", ""))]
            names += [
                p.strip() for p in re.split(r"[()]", str(camp.get("name_en", ""))) if p.strip()
            ]
            text = next((t for n in names if n and (t := self._claim(n))), None)
            if text is not None:
                self._add("campaign", camp.get("id"), str(camp.get("name_zh", "")), text)

    def _named(self) -> None:
        for kind, name, words in self.names.find(self.spans) if self.names else []:
            self._add(kind, name, name, words)

    def _newest(self) -> None:
        """ "我最新那款新品": the merchant's newest product, by id."""
        recent = self.params.get("recent_new_products")
        items = recent.get("items") if isinstance(recent, dict) else None
        m = _MY_NEWEST.search(self.spans.text)
        if m and items and self.spans.free(m.start(), m.end()):
            self.spans.take(m.start(), m.end())
            first = items[0]
            self._add("product", first.get("id"), str(first.get("title_zh", "")), m.group(0))

    def _own(self) -> None:
        for pattern, kind in ((_MY_NEW, "new_product"), (_OWN_SHOP, "own_shop")):
            m = pattern.search(self.spans.text)
            if m and self.spans.free(m.start(), m.end()):
                self.spans.take(m.start(), m.end())
                self._add(kind, None, "", m.group(0).strip())

    def _page(self) -> None:
        """No subject in the words: the page's product or category is the subject."""
        found = _THIS.search(self.spans.text)
        words = found.group(0) if found else (self.page.type if self.page else "")
        product = self.params.get("page_product")
        if isinstance(product, dict) and product.get("id") is not None:
            self._add("product", product["id"], str(product.get("title_zh", "")), words)
            return
        category = self.params.get("page_category")
        if isinstance(category, dict) and category.get("id") is not None:
            self._add("category", category["id"], str(category.get("name_zh", "")), words)
