"""Removing entity names (categories) from a text before intent similarity.

Two questions about the same category look alike to an embedding model whatever they
ask. Each name is replaced by a neutral placeholder ("面霜这个细分现在盘子有多大？" is compared
as "某类目这个细分现在盘子有多大？"): which category is asked about says nothing about the
module, but that a category is asked about does (deleting the names outright sent
"连衣裙上个月的销售额是多少" to the promotion module). In English the placeholder is "it":
names stand where a noun phrase goes, and "some category" turned "Top 10 best-selling
sunscreens" into a category ranking. Names come from the business modules'
``entity_names`` hooks; names that are also a module keyword are kept, since they carry
intent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MIN_LEFT = 4  # a text shorter than this once masked is compared unmasked
PLACEHOLDER = ("某类目", "it")


class Masker:
    def __init__(
        self,
        names: Iterable[str],
        keep: Iterable[str] = (),
        placeholder: tuple[str, str] = PLACEHOLDER,
    ) -> None:
        self.zh_placeholder, self.en_placeholder = placeholder
        kept = {k.lower() for k in keep}
        terms = sorted({n.strip().lower() for n in names} - kept - {""}, key=len, reverse=True)
        zh = [t for t in terms if not t.isascii()]
        en = [t for t in terms if t.isascii()]
        self.size = len(terms)
        self._zh = re.compile("|".join(map(re.escape, zh))) if zh else None
        self._en = (
            re.compile(
                r"(?<![a-z0-9])(?:" + "|".join(re.escape(t) + "(?:s|es)?" for t in en) + r")"
                r"(?![a-z0-9])",
                re.I,
            )
            if en
            else None
        )

    def mask(self, text: str) -> str:
        """Each entity name replaced by the placeholder; the text itself if little more
        than names is left."""
        if len(self.left(text)) < MIN_LEFT:
            return text
        return self._sub(text, self.zh_placeholder, f" {self.en_placeholder} ")

    def left(self, text: str) -> str:
        """What the text says besides entity names (possibly empty)."""
        return self._sub(text, "", " ")

    def _sub(self, text: str, zh: str, en: str) -> str:
        out = self._zh.sub(zh, text) if self._zh else text
        out = self._en.sub(en, out) if self._en else out
        return re.sub(r"\s+", " ", out).strip()


NO_MASK = Masker(())
