"""Building blocks for the category catalog data (``catalog_tree_*.py``).

The tree is written with three constructors:

* ``top(fixed_id, zh, en, domain, audience, *children)`` - a level-1 category;
* ``group(zh, en, *children)`` - an inner category;
* ``leaf(zh, en, price)`` - a leaf with its typical price in CNY.

``season`` names a seasonality profile (see ``business.data.gen_common.SEASONS``);
empty means "inherit from the parent". ``flags`` is a space separated list of:
``small`` (part of the small profile, applies to the whole subtree), ``low`` (very low
competition), ``hot`` (fast growing), ``decl`` (declining), ``male`` / ``female``
(audience gender skew, inherited by descendants).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    """One node of the catalog as written in the data modules."""

    zh: str
    en: str
    price: float = 0.0
    children: tuple[Spec, ...] = ()
    season: str = ""
    flags: frozenset[str] = frozenset()
    fixed_id: int | None = None
    domain: str = ""
    audience: str = ""

    @property
    def is_leaf(self) -> bool:
        return not self.children


def _flags(text: str) -> frozenset[str]:
    return frozenset(text.split())


def leaf(zh: str, en: str, price: float, season: str = "", flags: str = "") -> Spec:
    """A leaf category with its typical price."""
    return Spec(zh=zh, en=en, price=float(price), season=season, flags=_flags(flags))


def group(zh: str, en: str, *children: Spec, season: str = "", flags: str = "") -> Spec:
    """An inner (non-leaf) category."""
    if not children:
        raise ValueError(f"group {en!r} needs children")
    return Spec(zh=zh, en=en, children=tuple(children), season=season, flags=_flags(flags))


def top(
    fixed_id: int | None,
    zh: str,
    en: str,
    domain: str,
    audience: str,
    *children: Spec,
    season: str = "flat",
    flags: str = "",
) -> Spec:
    """A top-level category; ``domain`` selects vocabularies, ``audience`` the base profile."""
    return Spec(
        zh=zh,
        en=en,
        children=tuple(children),
        season=season,
        flags=_flags(flags),
        fixed_id=fixed_id,
        domain=domain,
        audience=audience,
    )
