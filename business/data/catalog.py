"""The bilingual category catalog and its seed vocabularies.

``build_categories(profile)`` turns the catalog data (``catalog_tree_*.py``) into a flat
list of :class:`Category` in pre-order (parents before children). Top-level ids of the
required categories are fixed; every other id is derived from the English path, so ids
are stable across profiles, seeds and edits elsewhere in the tree (9-digit, 5xxxxxxxx).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from business.data.catalog_spec import Spec
from business.data.catalog_tree_core import CORE_TOPS
from business.data.catalog_tree_extra import EXTRA_TOPS
from business.data.catalog_tree_more import MORE_TOPS
from business.data.catalog_vocab import BENEFITS, BRANDS, VARIANTS
from business.data.catalog_words import AUDIENCES, GENERIC_REVIEW, REVIEW

__all__ = [
    "ALL_TOPS",
    "BENEFITS",
    "BRANDS",
    "GENERIC_REVIEW",
    "REVIEW",
    "VARIANTS",
    "Category",
    "Profile",
    "build_categories",
    "category_id_for",
    "validate_vocabularies",
]

Profile = Literal["full", "small"]

ALL_TOPS: tuple[Spec, ...] = CORE_TOPS + MORE_TOPS + EXTRA_TOPS

PATH_SEPARATOR = " > "
_INHERITED_FLAGS = frozenset({"male", "female"})
_GENERATED_ID_BASE = 500_000_000
_GENERATED_ID_SPAN = 100_000_000


@dataclass(frozen=True)
class Category:
    """One category of the built tree, with the attributes the generator needs."""

    id: int
    parent_id: int | None
    name_zh: str
    name_en: str
    level: int
    is_leaf: bool
    path_zh: str
    path_en: str
    top_id: int
    group_id: int  # the level-2 ancestor (itself for level-2 nodes, own id for tops)
    domain: str
    audience: str
    season: str
    price: float
    flags: frozenset[str]


def category_id_for(path_en: str) -> int:
    """Deterministic id of a generated category from its English path."""
    digest = hashlib.sha256(path_en.encode("utf-8")).hexdigest()
    return _GENERATED_ID_BASE + int(digest[:15], 16) % _GENERATED_ID_SPAN


def _in_small(spec: Spec, inherited: bool) -> bool:
    if inherited or "small" in spec.flags:
        return True
    return any(_in_small(child, False) for child in spec.children)


def _merge_flags(parent: frozenset[str], own: frozenset[str]) -> frozenset[str]:
    inherited = parent & _INHERITED_FLAGS
    if "male" in own:
        inherited -= {"female"}
    if "female" in own:
        inherited -= {"male"}
    return (inherited | own) - {"small"}


def _walk(
    spec: Spec,
    parent: Category | None,
    profile: Profile,
    small_inherited: bool,
) -> Iterator[Category]:
    top_spec_domain = spec.domain if parent is None else parent.domain
    audience = spec.audience if parent is None else parent.audience
    path_zh = spec.zh if parent is None else parent.path_zh + PATH_SEPARATOR + spec.zh
    path_en = spec.en if parent is None else parent.path_en + PATH_SEPARATOR + spec.en
    cid = spec.fixed_id if spec.fixed_id is not None else category_id_for(path_en)
    level = 1 if parent is None else parent.level + 1
    node = Category(
        id=cid,
        parent_id=None if parent is None else parent.id,
        name_zh=spec.zh,
        name_en=spec.en,
        level=level,
        is_leaf=spec.is_leaf,
        path_zh=path_zh,
        path_en=path_en,
        top_id=cid if parent is None else parent.top_id,
        group_id=cid if level <= 2 else (parent.group_id if parent is not None else cid),
        domain=top_spec_domain,
        audience=audience,
        season=spec.season or (parent.season if parent is not None else "flat"),
        price=spec.price,
        flags=_merge_flags(parent.flags if parent is not None else frozenset(), spec.flags),
    )
    yield node
    small_here = small_inherited or "small" in spec.flags
    for child in spec.children:
        if profile == "small" and not _in_small(child, small_here):
            continue
        yield from _walk(child, node, profile, small_here)


def build_categories(profile: Profile = "full") -> list[Category]:
    """The category tree for a profile, in pre-order; validates ids and name uniqueness."""
    if profile not in ("full", "small"):
        raise ValueError(f"unknown profile {profile!r}")
    nodes: list[Category] = []
    for spec in ALL_TOPS:
        if profile == "small" and not _in_small(spec, False):
            continue
        nodes.extend(_walk(spec, None, profile, False))
    _check_unique(nodes)
    return nodes


def _check_unique(nodes: list[Category]) -> None:
    columns: dict[str, list[object]] = {
        "id": [n.id for n in nodes],
        "name_zh": [n.name_zh for n in nodes],
        "name_en": [n.name_en.casefold() for n in nodes],
    }
    for what, values in columns.items():
        dupes = sorted(str(v) for v, c in Counter(values).items() if c > 1)
        if dupes:
            raise ValueError(f"duplicate category {what}: {', '.join(dupes)}")
    for node in nodes:
        if not node.is_leaf and node.price:
            raise ValueError(f"inner category with a price: {node.path_en}")
        if node.is_leaf and node.price <= 0:
            raise ValueError(f"leaf without a typical price: {node.path_en}")
        if node.is_leaf and not 2 <= node.level <= 4:
            raise ValueError(f"leaf at level {node.level}: {node.path_en}")


def validate_vocabularies() -> None:
    """Raise ValueError if a vocabulary is missing for a domain or has duplicate keys."""
    domains = {spec.domain for spec in ALL_TOPS}
    for domain in sorted(domains):
        for table_name, table in (
            ("BRANDS", BRANDS),
            ("BENEFITS", BENEFITS),
            ("VARIANTS", VARIANTS),
            ("REVIEW", REVIEW),
        ):
            if domain not in table:
                raise ValueError(f"{table_name} has no entry for domain {domain!r}")
        words = [w[1] for w in REVIEW[domain]] + [w[1] for w in GENERIC_REVIEW]
        if len(set(words)) != len(words):
            raise ValueError(f"duplicate review keyword in domain {domain!r}")
        benefits = [b[1] for b in BENEFITS[domain]]
        if len(set(benefits)) != len(benefits):
            raise ValueError(f"duplicate benefit in domain {domain!r}")
    for spec in ALL_TOPS:
        if spec.audience not in AUDIENCES:
            raise ValueError(f"unknown audience {spec.audience!r} for {spec.en}")
