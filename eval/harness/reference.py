"""Read-only access to the dataset for reference queries, and the symbols they use.

Symbols name things whose ids differ between databases, resolved at eval time:
``{"$category": "连衣裙"}`` (a name or path, zh or en; ``"@main"`` = the user's main
category; ``{"top_child_of": <category>, "metric": "gmv"}`` = the sub-category leading on
a metric), ``{"$product": "newest"}`` (the user's most recent new product, or an id),
``{"$month": "latest"}``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from deepagent.core.schema import JSON, Strict

Unit = Literal["money", "ratio", "count", "plain"]
Row = dict[str, Any]
METRICS = (
    "gmv units buyers sellers avg_price new_product_share competition_index "
    "gmv_growth_mom gmv_growth_yoy"
).split()


class FactValue(Strict):
    """One value an answer must show: a number (with its unit) or a name (any form)."""

    number: float | None = None
    unit: Unit = "plain"
    names: list[str] = Field(default_factory=list)

    def label(self) -> str:
        return self.names[0] if self.names else f"{self.number:g} ({self.unit})"


class ReferenceError_(ValueError):
    """A reference query cannot be evaluated (unknown query, category or product)."""


def unit_of(key: str) -> Unit:
    """The unit of a metric field, by name (as the tools and the analyst read it)."""
    if any(w in key for w in ("share", "rate", "growth", "uplift", "discount", "yoy", "mom")):
        return "ratio"
    if key.endswith("gmv") or key.endswith("price"):
        return "money"
    if key in ("units", "buyers", "sellers", "search_volume", "mentions", "lost_buyers"):
        return "count"
    return "plain"


def metric_name(p: dict[str, Any], key: str = "metric") -> str:
    metric = str(p.get(key, "gmv"))
    if metric not in METRICS:
        raise ReferenceError_(f"unknown metric {metric!r}")
    return metric


class Reference:
    """The dataset, opened read-only, as reference queries and symbols see it."""

    def __init__(self, path: Path, user_id: str = "demo") -> None:
        if not path.exists():
            raise ReferenceError_(f"no database at {path}")
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.user_id = user_id

    def close(self) -> None:
        self.conn.close()

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        return [dict(r) for r in self.conn.execute(sql, params).fetchall()]

    def category(self, name: JSON) -> Row:
        if isinstance(name, dict) and "top_child_of" in name:
            return self.top_child(name)
        if name == "@main":
            return self.rows(
                "SELECT c.* FROM categories c JOIN merchants m ON m.main_category_id = c.id "
                "JOIN users u ON u.merchant_id = m.id WHERE u.id = ?",
                (self.user_id,),
            )[0]
        key = str(name).strip().lower()
        found = self.rows(
            "SELECT * FROM categories WHERE lower(name_zh) = ? OR lower(name_en) = ? "
            "OR lower(path_zh) = ? OR lower(path_en) = ?",
            (key, key, key, key),
        )
        if len(found) != 1:
            raise ReferenceError_(f"category {name!r}: {len(found)} matches in this database")
        return found[0]

    def top_child(self, spec: dict[str, Any]) -> Row:
        """The direct sub-category of ``top_child_of`` that leads on ``metric``."""
        parent, month = self.category(spec["top_child_of"]), self.month(spec.get("month"))
        metric = metric_name(spec)
        rows = self.rows(
            "SELECT c.* FROM categories c JOIN category_metrics m ON m.category_id = c.id "
            f"AND m.month = ? WHERE c.parent_id = ? ORDER BY m.{metric} DESC, m.gmv DESC, c.id",
            (month, parent["id"]),
        )
        if not rows:
            raise ReferenceError_(f"{parent['name_en']} has no sub-categories")
        return rows[0]

    def month(self, value: JSON = None) -> str:
        if value in (None, "latest", "@latest"):
            return str(self.rows("SELECT value FROM meta WHERE key = 'last_month'")[0]["value"])
        return str(value)

    def merchant_id(self) -> str:
        found = self.rows("SELECT merchant_id FROM users WHERE id = ?", (self.user_id,))
        if not found:
            raise ReferenceError_(f"no user {self.user_id!r}")
        return str(found[0]["merchant_id"])

    def new_products(self) -> list[Row]:
        """The merchant's products launched since 2025-01, most recent first (the order
        of list_my_new_products and the recent_new_products parameter)."""
        return self.rows(
            "SELECT * FROM products WHERE merchant_id = ? AND launch_month >= '2025-01' "
            "ORDER BY launch_month DESC, id",
            (self.merchant_id(),),
        )

    def product(self, which: JSON) -> Row:
        if which == "newest":
            products = self.new_products()
            if not products:
                raise ReferenceError_("the merchant has no new products")
            return products[0]
        found = self.rows("SELECT * FROM products WHERE id = ?", (int(str(which)),))
        if not found:
            raise ReferenceError_(f"no product {which!r}")
        return found[0]

    def resolve(self, value: JSON) -> JSON:
        """A symbol as the value it stands for (inside lists too); other values as given."""
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict) or len(value) != 1:
            return value
        ((key, arg),) = value.items()
        if key == "$category":
            return int(self.category(arg)["id"])
        if key == "$product":
            return int(self.product(arg)["id"])
        if key == "$month":
            return self.month(arg)
        return value


Query = Callable[[Reference, dict[str, JSON]], list[FactValue]]
"""A named reference query: the dataset and the case's parameters -> the fact's values."""


def names(*values: Any) -> FactValue:
    return FactValue(names=[str(v) for v in values if v])


def number(key: str, value: Any) -> FactValue:
    return FactValue(number=float(value), unit=unit_of(key))


def subtree(ref: Reference, cat: Row, leaves_only: bool) -> list[Row]:
    """A category and everything below it (leaves only if asked), by path prefix."""
    leaf = " AND is_leaf = 1" if leaves_only else ""
    return ref.rows(
        f"SELECT * FROM categories WHERE (path_zh LIKE ? OR id = ?){leaf} ORDER BY id",
        (cat["path_zh"] + " > %", cat["id"]),
    )


def leaf_ids(ref: Reference, category: JSON) -> list[int]:
    return [int(r["id"]) for r in subtree(ref, ref.category(category), True)]
