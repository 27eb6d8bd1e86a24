"""consumer_insight tools checked against independent SQL on the small sample database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from deepagent.tools import ToolExecutor
from tests.tool_helpers import kind, leaves_under, module_executor


@pytest.fixture
def ex(sample_db: Path) -> ToolExecutor:
    return module_executor(sample_db, "consumer_insight", max_result_chars=None)


def busiest_product(db: sqlite3.Connection) -> int:
    row = db.execute(
        "SELECT subject_id FROM review_keywords WHERE subject_type = 'product' "
        "GROUP BY subject_id ORDER BY COUNT(*) DESC, subject_id LIMIT 1"
    ).fetchone()
    return int(row[0])


def parent_with_reviews(db: sqlite3.Connection) -> int:
    """A non-leaf category with at least two leaves that have category review keywords."""
    for (cid,) in db.execute("SELECT id FROM categories WHERE is_leaf = 0 ORDER BY level DESC, id"):
        leaves = leaves_under(db, cid)
        marks = ",".join("?" * len(leaves))
        n = db.execute(
            "SELECT COUNT(DISTINCT subject_id) FROM review_keywords WHERE subject_type = "
            f"'category' AND subject_id IN ({marks})",
            leaves,
        ).fetchone()[0]
        if n >= 2:
            return int(cid)
    raise AssertionError("no parent category with reviewed leaves")


async def test_review_keywords_of_a_product_match_sql(
    ex: ToolExecutor, db: sqlite3.Connection
) -> None:
    pid = busiest_product(db)
    res = await ex.call("get_review_keywords", {"product_id": pid, "limit": 5})
    assert res.ok, res.plain_text
    expected = db.execute(
        "SELECT keyword_en, keyword_zh, sentiment, mentions FROM review_keywords "
        "WHERE subject_type = 'product' AND subject_id = ? ORDER BY mentions DESC, keyword_en",
        (pid,),
    ).fetchall()
    total = sum(r["mentions"] for r in expected)
    got = res.data["keywords"]
    assert [(k["keyword_en"], k["keyword_zh"], k["sentiment"], k["mentions"]) for k in got] == [
        tuple(r) for r in expected[:5]
    ]
    assert [k["share"] for k in got] == [round(r["mentions"] / total, 4) for r in expected[:5]]
    assert res.total == len(expected)
    assert res.data["total_mentions"] == total
    for s, n in db.execute(
        "SELECT sentiment, SUM(mentions) FROM review_keywords WHERE subject_type = 'product' "
        "AND subject_id = ? GROUP BY sentiment",
        (pid,),
    ):
        assert res.data["sentiment_counts"][s]["mentions"] == n
    assert res.data["subject"]["type"] == "product" and res.data["subject"]["id"] == pid
    assert expected[0]["keyword_en"] in res.plain_text


async def test_review_keywords_sentiment_filter(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid = busiest_product(db)
    res = await ex.call("get_review_keywords", {"product_id": pid, "sentiment": "negative"})
    expected = db.execute(
        "SELECT keyword_en, mentions FROM review_keywords WHERE subject_type = 'product' "
        "AND subject_id = ? AND sentiment = 'negative' ORDER BY mentions DESC, keyword_en",
        (pid,),
    ).fetchall()
    if not expected:
        assert not res.ok and res.error is not None and res.error.kind == "empty"
        return
    assert res.ok
    assert [(k["keyword_en"], k["mentions"]) for k in res.data["keywords"]] == [
        tuple(r) for r in expected[:20]
    ]
    assert {k["sentiment"] for k in res.data["keywords"]} == {"negative"}


async def test_review_keywords_of_a_parent_sum_its_leaves(
    ex: ToolExecutor, db: sqlite3.Connection
) -> None:
    cid = parent_with_reviews(db)
    leaves = leaves_under(db, cid)
    marks = ",".join("?" * len(leaves))
    expected = db.execute(
        "SELECT keyword_en, SUM(mentions) AS m FROM review_keywords WHERE subject_type = "
        f"'category' AND subject_id IN ({marks}) GROUP BY keyword_en ORDER BY m DESC, keyword_en",
        leaves,
    ).fetchall()
    res = await ex.call("get_review_keywords", {"category_id": cid, "limit": 100})
    assert res.ok, res.plain_text
    got = [(k["keyword_en"], k["mentions"]) for k in res.data["keywords"]]
    assert got == [tuple(r) for r in expected[: len(got)]]
    assert res.total == len(expected)
    assert res.data["subject"]["is_leaf"] is False
    assert res.data["subject"]["leaf_count"] == len(leaves)
    total = db.execute(
        f"SELECT SUM(mentions) FROM review_keywords WHERE subject_type = 'category' "
        f"AND subject_id IN ({marks})",
        leaves,
    ).fetchone()[0]
    assert res.data["total_mentions"] == total


async def test_review_keywords_of_a_leaf_category(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    cid = db.execute(
        "SELECT subject_id FROM review_keywords WHERE subject_type = 'category' "
        "ORDER BY subject_id LIMIT 1"
    ).fetchone()[0]
    top = db.execute(
        "SELECT keyword_en, mentions FROM review_keywords WHERE subject_type = 'category' "
        "AND subject_id = ? ORDER BY mentions DESC, keyword_en LIMIT 3",
        (cid,),
    ).fetchall()
    res = await ex.call("get_review_keywords", {"category_id": cid, "limit": 3})
    assert res.ok
    got = [(k["keyword_en"], k["mentions"]) for k in res.data["keywords"]]
    assert got == [tuple(r) for r in top]


@pytest.mark.parametrize(
    "args", [{}, {"product_id": 1, "category_id": 1}, {"limit": 5}, {"product_id": 1, "x": 1}]
)
async def test_review_keywords_needs_exactly_one_subject(
    ex: ToolExecutor, args: dict[str, int]
) -> None:
    res = await ex.call("get_review_keywords", args)
    assert not res.ok and res.error is not None
    assert res.error.kind == "invalid_args"
    if "x" not in args:
        assert "exactly one of product_id or category_id" in res.error.message


async def test_review_keywords_unknown_ids_are_empty(ex: ToolExecutor) -> None:
    for args in ({"product_id": 987654321}, {"category_id": 987654321}):
        res = await ex.call("get_review_keywords", args)
        assert not res.ok and res.error is not None and res.error.kind == "empty"
        assert "987654321" in res.plain_text


async def test_review_summary(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid = busiest_product(db)
    prod = db.execute("SELECT * FROM products WHERE id = ?", (pid,)).fetchone()
    avg = db.execute(
        "SELECT AVG(rating), COUNT(*) FROM products WHERE category_id = ?", (prod["category_id"],)
    ).fetchone()
    neg = db.execute(
        "SELECT keyword_en FROM review_keywords WHERE subject_type = 'product' AND subject_id = ? "
        "AND sentiment = 'negative' ORDER BY mentions DESC, keyword_en LIMIT 3",
        (pid,),
    ).fetchall()
    pos = db.execute(
        "SELECT keyword_en FROM review_keywords WHERE subject_type = 'product' AND subject_id = ? "
        "AND sentiment = 'positive' ORDER BY mentions DESC, keyword_en LIMIT 3",
        (pid,),
    ).fetchall()
    res = await ex.call("get_review_summary", {"product_id": pid, "top_n": 3})
    assert res.ok, res.plain_text
    d = res.data
    assert d["rating"] == prod["rating"] and d["review_count"] == prod["review_count"]
    assert [k["keyword_en"] for k in d["top_negative"]] == [r[0] for r in neg]
    assert [k["keyword_en"] for k in d["top_positive"]] == [r[0] for r in pos]
    assert d["leaf_category"]["id"] == prod["category_id"]
    assert d["leaf_category"]["avg_rating"] == pytest.approx(avg[0], abs=0.005)
    assert d["leaf_category"]["product_count"] == avg[1]
    assert d["rating_vs_leaf_avg"] == pytest.approx(prod["rating"] - avg[0], abs=0.006)
    better = db.execute(
        "SELECT COUNT(*) FROM products WHERE category_id = ? AND rating > ?",
        (prod["category_id"], prod["rating"]),
    ).fetchone()[0]
    assert d["leaf_category"]["rating_rank"] == better + 1
    missing = await ex.call("get_review_summary", {"product_id": 987654321})
    assert missing.error is not None and missing.error.kind == "empty"


async def test_rating_distribution_matches_sql(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    month = "2025-06"
    cid = db.execute(
        "SELECT p.category_id FROM products p JOIN product_metrics m ON m.product_id = p.id "
        "WHERE m.month = ? GROUP BY p.category_id ORDER BY COUNT(*) DESC, p.category_id LIMIT 1",
        (month,),
    ).fetchone()[0]
    rows = db.execute(
        "SELECT CASE WHEN p.rating < 3.0 THEN '<3.0' WHEN p.rating < 3.5 THEN '3.0-3.5' "
        "WHEN p.rating < 4.0 THEN '3.5-4.0' WHEN p.rating < 4.5 THEN '4.0-4.5' ELSE '4.5-5.0' "
        "END AS band, COUNT(*) AS n, SUM(m.gmv) AS gmv FROM products p "
        "JOIN product_metrics m ON m.product_id = p.id WHERE p.category_id = ? AND m.month = ? "
        "GROUP BY band",
        (cid, month),
    ).fetchall()
    expected = {r["band"]: (r["n"], r["gmv"]) for r in rows}
    n_total = sum(n for n, _ in expected.values())
    gmv_total = sum(g for _, g in expected.values())
    res = await ex.call("get_rating_distribution", {"category_id": cid, "month": month})
    assert res.ok, res.plain_text
    assert res.data["products"] == n_total
    assert res.data["gmv"] == pytest.approx(gmv_total, abs=0.01)
    for band in res.data["bands"]:
        n, gmv = expected.get(band["label"], (0, 0.0))
        assert band["products"] == n
        assert band["gmv"] == pytest.approx(gmv, abs=0.01)
        assert band["gmv_share"] == pytest.approx(gmv / gmv_total, abs=1e-4)
    assert sum(b["product_share"] for b in res.data["bands"]) == pytest.approx(1, abs=1e-3)
    avg = db.execute(
        "SELECT AVG(p.rating), SUM(p.rating * m.gmv) / SUM(m.gmv) FROM products p "
        "JOIN product_metrics m ON m.product_id = p.id WHERE p.category_id = ? AND m.month = ?",
        (cid, month),
    ).fetchone()
    assert res.data["avg_rating"] == pytest.approx(avg[0], abs=0.005)
    assert res.data["gmv_weighted_rating"] == pytest.approx(avg[1], abs=0.005)


async def test_rating_distribution_errors(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    first, last = db.execute("SELECT MIN(month), MAX(month) FROM category_metrics").fetchone()
    leaf = db.execute("SELECT id FROM categories WHERE is_leaf = 1 LIMIT 1").fetchone()[0]
    res = await ex.call("get_rating_distribution", {"category_id": leaf, "month": "2019-03"})
    assert res.error is not None and res.error.kind == "empty"
    assert first in res.plain_text and last in res.plain_text
    res = await ex.call("get_rating_distribution", {"category_id": 987654321})
    assert res.error is not None and res.error.kind == "empty"
    res = await ex.call("get_rating_distribution", {"category_id": leaf, "month": "2025-13"})
    assert res.error is not None and res.error.kind == "invalid_args"


async def test_audience_profile_matches_table(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    cid = db.execute("SELECT MIN(category_id) FROM audience_profiles").fetchone()[0]
    res = await ex.call("get_audience_profile", {"category_id": cid})
    assert res.ok, res.plain_text
    dims = {d["dimension"]: d for d in res.data["dimensions"]}
    assert set(dims) == {"gender", "age", "city_tier", "spending_power"}
    for dim, d in dims.items():
        table = {
            r["segment"]: (r["share"], r["tgi"])
            for r in db.execute(
                "SELECT segment, share, tgi FROM audience_profiles "
                "WHERE category_id = ? AND dimension = ?",
                (cid, dim),
            )
        }
        got = {s["segment"]: (s["share"], s["tgi"]) for s in d["segments"]}
        assert set(got) == set(table)
        for seg, (share, tgi) in table.items():
            assert got[seg][0] == pytest.approx(share, abs=1e-4)
            assert got[seg][1] == pytest.approx(tgi, abs=0.05)
        assert sum(s["share"] for s in d["segments"]) == pytest.approx(1, abs=1e-3)
        top = max(table, key=lambda seg: table[seg][0])
        assert d["dominant"]["segment"] == top


async def test_audience_profile_unknown_category(ex: ToolExecutor) -> None:
    res = await ex.call("get_audience_profile", {"category_id": 987654321})
    assert res.error is not None and res.error.kind == "empty"
    assert "recognize_category" in res.plain_text


async def test_compare_audiences(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    ids = [
        r[0]
        for r in db.execute(
            "SELECT DISTINCT category_id FROM audience_profiles ORDER BY category_id LIMIT 3"
        )
    ]
    res = await ex.call("compare_audiences", {"category_ids": ids, "top_n": 3})
    assert res.ok, res.plain_text
    assert [c["id"] for c in res.data["categories"]] == ids
    biggest = db.execute(
        "SELECT dimension, segment, MAX(share) - MIN(share) AS spread FROM audience_profiles "
        f"WHERE category_id IN ({','.join('?' * len(ids))}) GROUP BY dimension, segment "
        "HAVING COUNT(*) = ? ORDER BY spread DESC LIMIT 1",
        [*ids, len(ids)],
    ).fetchone()
    top = res.data["biggest_differences"][0]
    assert top["spread"] == pytest.approx(biggest["spread"], abs=2e-4)
    assert len(res.data["biggest_differences"]) == 3
    gender = next(d for d in res.data["dimensions"] if d["dimension"] == "gender")
    for seg in gender["segments"]:
        for cid, share in zip(ids, seg["shares"], strict=True):
            expected = db.execute(
                "SELECT share FROM audience_profiles WHERE category_id = ? AND dimension = "
                "'gender' AND segment = ?",
                (cid, seg["segment"]),
            ).fetchone()[0]
            assert share == pytest.approx(expected, abs=1e-4)


async def test_compare_audiences_bad_input(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    cid = db.execute("SELECT MIN(category_id) FROM audience_profiles").fetchone()[0]
    for ids in ([cid], [cid, cid], list(range(1, 13))):
        res = await ex.call("compare_audiences", {"category_ids": ids})
        assert res.error is not None and res.error.kind == "invalid_args", ids
    res = await ex.call("compare_audiences", {"category_ids": [cid, 987654321]})
    assert res.error is not None and res.error.kind == "empty"
    assert "987654321" in res.plain_text


async def test_keywords_with_no_mentions_are_empty_not_a_crash(
    ex: ToolExecutor, db: sqlite3.Connection
) -> None:
    row = db.execute(
        "SELECT subject_id FROM review_keywords WHERE subject_type = 'product' "
        "GROUP BY subject_id HAVING SUM(mentions) = 0 LIMIT 1"
    ).fetchone()
    assert row is not None, "the small database has products whose keywords have no mentions"
    res = await ex.call("get_review_keywords", {"product_id": row[0]})
    assert kind(res) == "empty" and "no review keywords" in res.plain_text
