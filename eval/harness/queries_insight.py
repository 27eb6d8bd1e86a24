"""Reference queries on the insight side: reviews, audiences, search terms, campaigns
and lost-buyer flows (see eval/harness/facts.py).

Written against business/data/schema.sql independently of the tools; orderings and
tie-breaks follow what the matching tool documents, so "the top 3" means the same rows.
"""

from __future__ import annotations

from deepagent.core.schema import JSON
from eval.harness.reference import (
    FactValue,
    Query,
    Reference,
    ReferenceError_,
    Row,
    leaf_ids,
    names,
    number,
    subtree,
)


def q_review_keywords(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """Most mentioned review keywords of a category (its leaves summed) or a product."""
    if "product" in p:
        subject, ids = "product", [int(ref.product(p["product"])["id"])]
    else:
        subject, ids = (
            "category",
            [r["id"] for r in subtree(ref, ref.category(p["category"]), True)],
        )
    rows = ref.rows(
        "SELECT keyword_zh, keyword_en, sentiment, mentions FROM review_keywords "
        f"WHERE subject_type = ? AND subject_id IN ({','.join('?' * len(ids))})",
        (subject, *ids),
    )
    per: dict[str, dict[str, int]] = {}
    zh: dict[str, str] = {}
    for r in rows:
        per.setdefault(r["keyword_en"], {}).setdefault(r["sentiment"], 0)
        per[r["keyword_en"]][r["sentiment"]] += int(r["mentions"])
        zh.setdefault(r["keyword_en"], r["keyword_zh"])
    wanted = p.get("sentiment")
    ranked = sorted(
        ((sum(v.get(s, 0) for s in v if wanted in (None, s)), k) for k, v in per.items()),
        key=lambda t: (-t[0], t[1]),
    )
    top = [k for total, k in ranked if total > 0][: int(str(p.get("n", 5)))]
    return [names(zh[k], k) for k in top]


def q_review_sentiment_share(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    ids = leaf_ids(ref, p["category"])
    rows = ref.rows(
        "SELECT sentiment, SUM(mentions) AS n FROM review_keywords WHERE subject_type = "
        f"'category' AND subject_id IN ({','.join('?' * len(ids))}) GROUP BY sentiment",
        tuple(ids),
    )
    total = sum(int(r["n"]) for r in rows)
    part = sum(int(r["n"]) for r in rows if r["sentiment"] == p["sentiment"])
    if not total:
        raise ReferenceError_("no review keywords")
    return [number("share", part / total)]


def q_audience_share(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    cat = ref.category(p["category"])
    rows = ref.rows(
        "SELECT share, tgi FROM audience_profiles WHERE category_id = ? AND dimension = ? "
        "AND segment = ?",
        (cat["id"], p["dimension"], p["segment"]),
    )
    if not rows:
        raise ReferenceError_(f"no audience share {p['dimension']}={p['segment']}")
    field = "tgi" if p.get("field") == "tgi" else "share"
    return [number(field, rows[0][field])]


def q_audience_dominant(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """The share of the largest segment of one audience dimension."""
    cat = ref.category(p["category"])
    rows = ref.rows(
        "SELECT MAX(share) AS share FROM audience_profiles WHERE category_id = ? AND dimension = ?",
        (cat["id"], p["dimension"]),
    )
    if rows[0]["share"] is None:
        raise ReferenceError_(f"no audience dimension {p['dimension']!r}")
    return [number("share", rows[0]["share"])]


def q_search_terms(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    ids, month = leaf_ids(ref, p["category"]), ref.month(p.get("month"))
    rows = ref.rows(
        "SELECT k.keyword_zh, k.keyword_en FROM search_keywords k JOIN search_metrics m "
        f"ON m.keyword_id = k.id WHERE k.category_id IN ({','.join('?' * len(ids))}) "
        "AND m.month = ? ORDER BY m.search_volume DESC, k.id LIMIT ?",
        (*ids, month, int(str(p.get("n", 5)))),
    )
    return [names(r["keyword_zh"], r["keyword_en"]) for r in rows]


def q_search_volume(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    ids, month = leaf_ids(ref, p["category"]), ref.month(p.get("month"))
    rows = ref.rows(
        "SELECT SUM(m.search_volume) AS v FROM search_metrics m JOIN search_keywords k "
        f"ON k.id = m.keyword_id WHERE k.category_id IN ({','.join('?' * len(ids))}) "
        "AND m.month = ?",
        (*ids, month),
    )
    if rows[0]["v"] is None:
        raise ReferenceError_(f"no search volume in {month}")
    return [number("search_volume", rows[0]["v"])]


def q_keyword_volume(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    key, month = str(p["keyword"]).lower(), ref.month(p.get("month"))
    rows = ref.rows(
        "SELECT SUM(m.search_volume) AS v FROM search_keywords k JOIN search_metrics m "
        "ON m.keyword_id = k.id WHERE (lower(k.keyword_zh) = ? OR lower(k.keyword_en) = ?) "
        "AND m.month = ?",
        (key, key, month),
    )
    if rows[0]["v"] is None:
        raise ReferenceError_(f"no search term {p['keyword']!r} in {month}")
    return [number("search_volume", rows[0]["v"])]


def q_search_rate(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """A category's volume-weighted click or conversion rate in a month."""
    field = str(p.get("field", "conversion_rate"))
    if field not in ("click_rate", "conversion_rate"):
        raise ReferenceError_(f"unknown search rate {field!r}")
    ids, month = leaf_ids(ref, p["category"]), ref.month(p.get("month"))
    rows = ref.rows(
        f"SELECT SUM(m.search_volume * m.{field}) / SUM(m.search_volume) AS v FROM "
        "search_metrics m JOIN search_keywords k ON k.id = m.keyword_id WHERE k.category_id "
        f"IN ({','.join('?' * len(ids))}) AND m.month = ?",
        (*ids, month),
    )
    if rows[0]["v"] is None:
        raise ReferenceError_(f"no search data in {month}")
    return [number(field, round(float(rows[0]["v"]), 4))]


def _campaign(ref: Reference, p: dict[str, JSON]) -> Row:
    found = ref.rows(
        "SELECT * FROM campaigns WHERE code = ? AND year = ?", (p["campaign"], p["year"])
    )
    if not found:
        raise ReferenceError_(f"no campaign {p['campaign']} {p['year']}")
    return found[0]


def q_campaign_metric(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    camp, cat = _campaign(ref, p), ref.category(p["category"])
    metric = str(p.get("metric", "gmv"))
    if metric not in ("gmv", "baseline_gmv", "uplift", "avg_discount", "units"):
        raise ReferenceError_(f"unknown campaign metric {metric!r}")
    rows = ref.rows(
        f"SELECT {metric} AS v FROM campaign_category_metrics WHERE campaign_id = ? "
        "AND category_id = ?",
        (camp["id"], cat["id"]),
    )
    return [number(metric, rows[0]["v"])]


def q_campaign_growth(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """A category's campaign GMV against the same campaign a year before, as a ratio - 1."""
    this = q_campaign_metric(ref, {**p, "metric": "gmv"})[0].number or 0.0
    last = q_campaign_metric(ref, {**p, "year": int(str(p["year"])) - 1, "metric": "gmv"})
    base = last[0].number or 0.0
    if not base:
        raise ReferenceError_("no GMV in the previous year's campaign")
    return [number("gmv_growth", this / base - 1)]


def q_campaigns(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    rows = ref.rows("SELECT * FROM campaigns WHERE year = ? ORDER BY id", (p["year"],))
    return [names(r["name_zh"], r["name_en"]) for r in rows]


def q_campaign_top_products(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    camp, ids = _campaign(ref, p), leaf_ids(ref, p["category"])
    rows = ref.rows(
        "SELECT p.title_zh, p.title_en FROM campaign_product_metrics c JOIN products p "
        f"ON p.id = c.product_id WHERE c.campaign_id = ? AND p.category_id IN "
        f"({','.join('?' * len(ids))}) ORDER BY c.gmv DESC, p.id LIMIT ?",
        (camp["id"], *ids, int(str(p.get("n", 5)))),
    )
    return [names(r["title_zh"], r["title_en"]) for r in rows]


def q_flow_targets(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """Where the product's lost buyers went, most first, in ``month`` (default: the
    product's latest month with flow data)."""
    product = ref.product(p.get("product", "newest"))
    month = (
        p.get("month")
        or ref.rows("SELECT MAX(month) AS m FROM flows WHERE product_id = ?", (product["id"],))[0][
            "m"
        ]
    )
    rows = ref.rows(
        "SELECT p.title_zh, p.title_en FROM flows f JOIN products p ON p.id = "
        "f.target_product_id WHERE f.product_id = ? AND f.month = ? "
        "ORDER BY f.lost_buyers DESC, f.share DESC, p.id LIMIT ?",
        (product["id"], month, int(str(p.get("n", 3)))),
    )
    if not rows:
        raise ReferenceError_(f"no flows for product {product['id']} in {month}")
    return [names(r["title_zh"], r["title_en"]) for r in rows]


INSIGHT_QUERIES: dict[str, Query] = {
    "review_keywords": q_review_keywords,
    "review_sentiment_share": q_review_sentiment_share,
    "audience_share": q_audience_share,
    "audience_dominant": q_audience_dominant,
    "search_terms": q_search_terms,
    "search_volume": q_search_volume,
    "keyword_volume": q_keyword_volume,
    "search_rate": q_search_rate,
    "campaign_metric": q_campaign_metric,
    "campaign_growth": q_campaign_growth,
    "campaigns": q_campaigns,
    "campaign_top_products": q_campaign_top_products,
    "flow_targets": q_flow_targets,
}
