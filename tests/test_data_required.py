"""Required categories, the default (demo) merchant and its flows in the generated
sample-business database (business.data.generator).

``sample_db`` (small profile) and ``full_db`` (full profile) are session fixtures from
conftest.py generated with the default seed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from tests.data_helpers import MONTHS, connect, count, one

REQUIRED: dict[tuple[int, str, str], dict[tuple[str, str], list[tuple[str, str]]]] = {
    (1801, "美容护肤/美体/精油", "Beauty, Body Care & Essential Oils"): {
        ("面部护理", "Face care"): [
            ("面霜", "Face cream"),
            ("精华液", "Serum"),
            ("面膜", "Face mask"),
            ("洁面", "Cleanser"),
            ("化妆水", "Toner"),
            ("眼霜", "Eye cream"),
            ("防晒霜", "Sunscreen"),
            ("卸妆", "Makeup remover"),
        ],
        ("身体护理", "Body care"): [
            ("身体乳", "Body lotion"),
            ("沐浴露", "Body wash"),
            ("身体磨砂", "Body scrub"),
            ("护手霜", "Hand cream"),
            ("脱毛膏", "Hair removal cream"),
        ],
        ("精油芳疗", "Aromatherapy"): [
            ("单方精油", "Single essential oil"),
            ("复方精油", "Blended essential oil"),
            ("按摩油", "Massage oil"),
            ("香薰蜡烛", "Scented candle"),
        ],
    },
    (16, "女装/女士精品", "Womenswear"): {
        ("裙装", "Dresses & skirts"): [("连衣裙", "Dresses"), ("半身裙", "Skirts")],
        ("上装", "Tops"): [
            ("T恤", "T-shirts"),
            ("衬衫", "Shirts"),
            ("针织衫", "Knitwear"),
            ("卫衣", "Sweatshirts"),
        ],
        ("外套", "Outerwear"): [
            ("羽绒服", "Down jackets"),
            ("风衣", "Trench coats"),
            ("西装", "Blazers"),
        ],
        ("裤装", "Bottoms"): [
            ("牛仔裤", "Jeans"),
            ("休闲裤", "Casual pants"),
            ("打底裤", "Leggings"),
        ],
    },
    (50002766, "零食/坚果/特产", "Snacks, Nuts & Specialties"): {
        ("坚果炒货", "Nuts"): [
            ("每日坚果", "Mixed daily nuts"),
            ("腰果", "Cashews"),
            ("巴旦木", "Almonds"),
        ],
        ("饼干膨化", "Biscuits & puffs"): [("饼干", "Biscuits"), ("薯片", "Chips")],
        ("肉类零食", "Meat snacks"): [("牛肉干", "Beef jerky"), ("鸭脖", "Duck neck")],
    },
}
KITCHEN_LEAVES = [
    ("空气炸锅", "Air fryer"),
    ("电饭煲", "Rice cooker"),
    ("破壁机", "Blender"),
    ("电热水壶", "Electric kettle"),
]


@pytest.fixture(scope="module", params=["small", "full"])
def conn(request: pytest.FixtureRequest) -> Iterator[sqlite3.Connection]:
    fixture = "sample_db" if request.param == "small" else "full_db"
    yield from connect(request.getfixturevalue(fixture))


def test_required_categories(conn: sqlite3.Connection) -> None:
    rows = conn.execute("SELECT id, parent_id, name_zh, name_en, level, is_leaf FROM categories")
    by_name = {r[3]: r for r in rows}
    for (top_id, top_zh, top_en), groups in REQUIRED.items():
        assert by_name[top_en][:6] == (top_id, None, top_zh, top_en, 1, 0)
        for (g_zh, g_en), leaves in groups.items():
            group = by_name[g_en]
            assert (group[1], group[2], group[4], group[5]) == (top_id, g_zh, 2, 0)
            for zh, en in leaves:
                assert by_name[en][1:] == (group[0], zh, en, 3, 1)
    for zh, en in KITCHEN_LEAVES:
        assert by_name[en][1:] == (50012082, zh, en, 2, 1)
    assert by_name["Kitchen Appliances"][:4] == (50012082, None, "厨房电器", "Kitchen Appliances")
    assert by_name["Lip care"][1] == 1801


def test_merchants_and_demo_user(conn: sqlite3.Connection) -> None:
    assert conn.execute("SELECT * FROM users").fetchall() == [("demo", "M1001", "Demo merchant")]
    main = conn.execute(
        "SELECT c.name_en, c.level, c.parent_id FROM merchants m JOIN categories "
        "c ON c.id = m.main_category_id WHERE m.id = 'M1001'"
    ).fetchone()
    assert main == ("Body care", 2, 1801)
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM merchants m JOIN categories c ON c.id = "
            "m.main_category_id WHERE c.level != 2",
        )
        == 0
    )
    assert one(conn, "SELECT COUNT(*) - COUNT(DISTINCT name_en) FROM merchants") == 0
    new = conn.execute(
        "SELECT p.launch_month, c.name_en, c.path_en FROM products p JOIN categories c ON "
        "c.id = p.category_id WHERE p.merchant_id = 'M1001' AND p.launch_month >= '2025-01'"
    ).fetchall()
    body = [r for r in new if "> Body care >" in r[2]]
    assert len(new) >= 8 and len(body) >= 8
    assert len({r[1] for r in body}) >= 4 and len({r[0] for r in new}) >= 6


def test_flows(conn: sqlite3.Connection) -> None:
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM flows f JOIN products p ON p.id = f.product_id JOIN "
            "products t ON t.id = f.target_product_id WHERE t.category_id != "
            "p.category_id OR t.merchant_id = p.merchant_id OR f.month < p.launch_month "
            "OR f.month < t.launch_month OR p.launch_month < '2025-01'",
        )
        == 0
    )
    bad = conn.execute(
        "SELECT product_id, month FROM flows GROUP BY 1, 2 "
        "HAVING COUNT(*) NOT BETWEEN 4 AND 8 OR SUM(share) > 1"
    ).fetchall()
    assert bad == []
    assert (
        15
        <= count(
            conn,
            "SELECT COUNT(DISTINCT p.merchant_id) FROM flows f JOIN products p "
            "ON p.id = f.product_id WHERE p.merchant_id != 'M1001'",
        )
        <= 25
    )
    demo = conn.execute(
        "SELECT id, launch_month FROM products WHERE merchant_id = 'M1001' "
        "AND launch_month >= '2025-01'"
    ).fetchall()
    for pid, launch in demo:
        months = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT month FROM flows WHERE product_id = ? ORDER BY 1", (pid,)
            )
        ]
        assert months == [m for m in MONTHS if m >= launch]
        top = conn.execute(
            "SELECT target_product_id FROM flows WHERE product_id = ? GROUP BY 1 "
            "ORDER BY SUM(lost_buyers) DESC LIMIT 3",
            (pid,),
        ).fetchall()
        for (target,) in top:  # a stable set: the top targets appear every month
            assert one(
                conn,
                "SELECT COUNT(*) FROM flows WHERE product_id = ? AND target_product_id = ?",
                pid,
                target,
            ) == len(months)
