"""extract_categories: category names mentioned inside a question, checked against SQL."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from deepagent.core.schema import ToolResult
from deepagent.tools import ToolExecutor
from tests.tool_helpers import cat_id, kind, module_executor

CATEGORY_KEYS = {"id", "name_zh", "name_en", "path_zh", "path_en", "is_leaf", "level"}

DRESSES_Q = "2025年12月女装连衣裙类目下销售额为多少？"
BEAUTY_Q = (
    "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
    "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？"
)
GENERIC_QS = [
    "我的新品流失到哪些产品上",
    "新品 产品 类目 品类 商品",
    "Which category has the most new products?",
    "Top 20 products by GMV in the category",
    "Rank the leaf categories by competition",
]


@pytest.fixture
def ex(sample_db: Path) -> ToolExecutor:
    return module_executor(sample_db, "common")


@pytest.fixture
def full_ex(full_db: Path) -> ToolExecutor:
    return module_executor(full_db, "common")


async def extract(ex: ToolExecutor, text: str, **extra: Any) -> ToolResult:
    return await ex.call("extract_categories", {"text": text, **extra})


def ids(res: ToolResult) -> list[int]:
    return [m["category"]["id"] for m in res.data["categories"]]


def check_mentions(res: ToolResult, text: str, db: sqlite3.Connection) -> None:
    """Spans point at the matched text; category fields equal the categories table."""
    assert res.ok, res.plain_text
    assert res.data["best_id"] == res.data["categories"][0]["category"]["id"]
    for m in res.data["categories"]:
        start, end = m["span"]
        assert text[start:end] == m["text"] and m["text"]
        cat = m["category"]
        assert set(cat) == CATEGORY_KEYS
        row = db.execute(
            "SELECT id, name_zh, name_en, path_zh, path_en, is_leaf, level FROM categories "
            "WHERE id = ?",
            (cat["id"],),
        ).fetchone()
        assert row is not None
        assert {**dict(row), "is_leaf": bool(row["is_leaf"])} == cat


# ------------------------------------------------------------------ brief examples, full DB


async def test_dresses_with_parent(full_ex: ToolExecutor, full: sqlite3.Connection) -> None:
    res = await extract(full_ex, DRESSES_Q)
    check_mentions(res, DRESSES_Q, full)
    dresses = cat_id(full, "name_zh = '连衣裙' AND path_zh LIKE '女装%'")
    womenswear = cat_id(full, "name_zh LIKE '女装%' AND parent_id IS NULL")
    assert res.data["best_id"] == dresses
    assert ids(res) == [dresses, womenswear]  # the parent is listed after its child
    first, second = res.data["categories"]
    assert first["text"] == "连衣裙" and first["category"]["name_en"] == "Dresses"
    assert first["category"]["is_leaf"] is True
    assert second["text"] == "女装" and second["parent_of"] == dresses
    assert res.total == 2


async def test_top_level_part_beauty(full_ex: ToolExecutor, full: sqlite3.Connection) -> None:
    res = await extract(full_ex, BEAUTY_Q)
    check_mentions(res, BEAUTY_Q, full)
    assert ids(res) == [1801]
    assert res.data["categories"][0]["text"] == "美容护肤"
    assert res.data["categories"][0]["category"]["path_zh"] == "美容护肤/美体/精油"


@pytest.mark.parametrize(
    "text",
    ["skin care new products", "Which beauty leaves have the lowest competition?", "护肤品"],
)
async def test_top_level_aliases(
    full_ex: ToolExecutor, full: sqlite3.Connection, text: str
) -> None:
    res = await extract(full_ex, text)
    check_mentions(res, text, full)
    assert res.data["best_id"] == cat_id(full, "name_zh = '美容护肤/美体/精油'") == 1801


@pytest.mark.parametrize(
    ("text", "said", "name_zh"),
    [
        ("吹风机近半年的上新节奏", "吹风机", "电吹风"),
        ("尿不湿哪个价位卖得最好", "尿不湿", "纸尿裤"),
        ("行李箱和电饭锅比一比", "行李箱", "拉杆箱"),
    ],
)
async def test_everyday_names_of_leaves(
    full_ex: ToolExecutor, full: sqlite3.Connection, text: str, said: str, name_zh: str
) -> None:
    """What people call a product ("吹风机") names the category ("电吹风")."""
    res = await extract(full_ex, text)
    check_mentions(res, text, full)
    first = res.data["categories"][0]
    assert (first["text"], first["category"]["name_zh"]) == (said, name_zh)


async def test_english_plural(full_ex: ToolExecutor, full: sqlite3.Connection) -> None:
    text = "How did air fryers sell in 2025?"
    res = await extract(full_ex, text)
    check_mentions(res, text, full)
    assert ids(res) == [cat_id(full, "name_zh = '空气炸锅'")]
    assert res.data["categories"][0]["text"] == "air fryers"
    assert res.data["categories"][0]["category"]["name_en"] == "Air fryer"


@pytest.mark.parametrize("words", ["men's wear", "mens wear", "men’s wear"])
async def test_a_one_word_name_written_as_two_words(
    full_ex: ToolExecutor, full: sqlite3.Connection, words: str
) -> None:
    """Users write "men's wear" for Menswear (and "women's wear" for Womenswear)."""
    res = await extract(full_ex, f"Which sub-categories of {words} grew fastest?")
    assert ids(res) == [cat_id(full, "name_en = 'Menswear'")]
    res = await extract(full_ex, "women's wear trends")
    assert ids(res) == [cat_id(full, "name_en = 'Womenswear'")]


async def test_two_english_mentions(full_ex: ToolExecutor, full: sqlite3.Connection) -> None:
    text = "Which face creams and serums grew fastest?"
    res = await extract(full_ex, text)
    check_mentions(res, text, full)
    face_cream = cat_id(full, "name_en = 'Face cream'")
    serum = cat_id(full, "name_en = 'Serum'")
    assert ids(res) == [face_cream, serum]  # longer first, both listed
    assert [m["text"] for m in res.data["categories"]] == ["face creams", "serums"]


@pytest.mark.parametrize(
    ("text", "typo", "name_en"),
    [
        ("best sellers among robot vaccums?", "robot vaccums", "Robot vacuums"),
        ("how big is the dehumidifer market", "dehumidifer", "Dehumidifiers"),
        ("body lotoin prices last month", "body lotoin", "Body lotion"),
    ],
)
async def test_a_one_letter_typo_still_names_the_category(
    full_ex: ToolExecutor, text: str, typo: str, name_en: str
) -> None:
    """A word one letter off a category's own (dropped, added, changed or swapped), long
    enough to be a name and the only such word: the category is still found."""
    res = await extract(full_ex, text)
    assert [(m["text"], m["category"]["name_en"]) for m in res.data["categories"]] == [
        (typo, name_en)
    ]


def test_typos_are_corrected_only_to_one_close_long_word() -> None:
    from business.modules._typos import TypoIndex

    typos = TypoIndex(["vacuum", "jacket", "lotion", "blender", "blazer"])
    assert typos.corrected("vaccum") == "vacuum" and typos.corrected("lotoin") == "lotion"
    assert typos.corrected("packet") is None  # another first letter: another word
    assert typos.corrected("blende") == "blender"
    assert typos.corrected("blend") is None  # too short a stem to guess from
    assert typos.corrected("jacket") is None  # known


@pytest.mark.parametrize("text", GENERIC_QS)
async def test_generic_words_never_match(full_ex: ToolExecutor, text: str) -> None:
    res = await extract(full_ex, text)
    assert kind(res) == "empty", res.plain_text
    assert res.data == {"text": text, "best_id": None, "categories": []}


# ------------------------------------------------------------------------ matching rules


async def test_longest_match_wins(full_ex: ToolExecutor, full: sqlite3.Connection) -> None:
    text = "手机数码下手机壳的价格带"
    res = await extract(full_ex, text)
    check_mentions(res, text, full)
    case = cat_id(full, "name_zh = '手机壳'")
    digital = cat_id(full, "name_zh = '手机数码'")
    phones = cat_id(full, "name_zh = '手机'")
    assert ids(res) == [case, digital] and phones not in ids(res)
    oil = await extract(full_ex, "单方精油")
    assert ids(oil) == [cat_id(full, "name_zh = '单方精油'")]


async def test_full_name_beats_name_part(full_ex: ToolExecutor, full: sqlite3.Connection) -> None:
    # 'Dresses' is the leaf's name and only a part of 'Dresses & skirts'; same for 'Nuts'
    res = await extract(full_ex, "dresses and nuts")
    assert ids(res) == [
        cat_id(full, "name_en = 'Dresses'"),
        cat_id(full, "name_en = 'Nuts'"),
    ]
    whole = await extract(full_ex, "Snacks, Nuts & Specialties sales")
    assert ids(whole) == [cat_id(full, "name_zh = '零食/坚果/特产'")]


async def test_common_english_words(full_ex: ToolExecutor, full: sqlite3.Connection) -> None:
    assert kind(await extract(full_ex, "top 10 sellers, in short")) == "empty"
    res = await extract(full_ex, "tops and shorts")
    assert set(ids(res)) == {cat_id(full, "name_en = 'Tops'"), cat_id(full, "name_en = 'Shorts'")}


async def test_every_name_finds_itself(full_ex: ToolExecutor, full: sqlite3.Connection) -> None:
    rows = full.execute("SELECT id, name_zh, name_en FROM categories").fetchall()
    for row in rows:
        zh = f"请分析{row['name_zh']}的趋势"
        res = await extract(full_ex, zh)
        assert res.ok and ids(res)[0] == row["id"], (zh, res.plain_text)
        en = f"How is {row['name_en']} doing?"
        res = await extract(full_ex, en)
        assert res.ok and ids(res)[0] == row["id"], (en, res.plain_text)


async def test_limit_and_total(full_ex: ToolExecutor) -> None:
    text = "连衣裙、半身裙、牛仔裤、卫衣和衬衫哪个增长快"
    res = await extract(full_ex, text, limit=2)
    assert res.ok and len(res.data["categories"]) == 2 and res.total == 5
    every = await extract(full_ex, text)
    assert [m["text"] for m in every.data["categories"]] == [
        "连衣裙",
        "半身裙",
        "牛仔裤",
        "卫衣",
        "衬衫",
    ]


@pytest.mark.parametrize("args", [{"text": ""}, {}, {"text": "连衣裙", "limit": 0}, {"q": "x"}])
async def test_invalid_args(ex: ToolExecutor, args: dict[str, Any]) -> None:
    assert kind(await ex.call("extract_categories", args)) == "invalid_args"


async def test_fast_after_cache(full_ex: ToolExecutor) -> None:
    texts = [DRESSES_Q, BEAUTY_Q, "How did air fryers sell in 2025?", GENERIC_QS[0]]
    for text in texts:  # warm the per-database index
        await extract(full_ex, text)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(10):
            for text in texts:
                await extract(full_ex, text)
        best = min(best, (time.perf_counter() - started) / (10 * len(texts)))
    assert best < 0.005, f"{best * 1000:.2f} ms per call"


# ------------------------------------------------------------------------------ small DB


async def test_small_db(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await extract(ex, DRESSES_Q)
    check_mentions(res, DRESSES_Q, db)
    dresses = cat_id(db, "name_zh = '连衣裙' AND path_zh LIKE '女装%'")
    womenswear = cat_id(db, "name_zh LIKE '女装%' AND parent_id IS NULL")
    assert ids(res) == [dresses, womenswear]
    beauty = await extract(ex, BEAUTY_Q)
    check_mentions(beauty, BEAUTY_Q, db)
    assert ids(beauty) == [cat_id(db, "name_zh = '美容护肤/美体/精油'")]
    fryer = await extract(ex, "How did air fryers sell in 2025?")
    assert ids(fryer) == [cat_id(db, "name_en = 'Air fryer'")]
    creams = await extract(ex, "Which face creams and serums grew fastest?")
    assert ids(creams) == [cat_id(db, "name_en = 'Face cream'"), cat_id(db, "name_en = 'Serum'")]
    assert kind(await extract(ex, GENERIC_QS[0])) == "empty"
