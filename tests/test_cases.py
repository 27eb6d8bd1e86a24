"""The case library: coverage, consistency with the tool registry, file errors and a dry
run of every plan on the small sample database."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from deepagent.core.schema import JSON
from deepagent.core.settings import Settings
from deepagent.core.templates import BindingError, fill_template, param_names
from deepagent.execution.refs import for_each_items, resolve_refs
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from rag_cases.schema import Case
from rag_cases.store import CASES_DIR, CaseFileError, load_cases, parse_case_file

DOC = Path(__file__).resolve().parents[1] / "docs" / "context-params.md"
ABBREV = {
    "category_trend": "ct",
    "new_product": "np",
    "competitor_flow": "cf",
    "consumer_insight": "ci",
    "search_insight": "si",
    "promotion": "pr",
}
BUSINESS = list(ABBREV)
CANONICAL = [
    "2025年12月女装连衣裙类目下销售额为多少？",
    "2025年12月女装连衣裙类目的不同价格带表现如何？",
    "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
    "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？",
    "我的新品核心流失到哪些产品上，这些产品对比我们的优势在哪？",
]
Call = tuple[str, str]


def _library() -> list[Case]:
    """The bundled cases, or none when they do not load (test_library_loads reports why)."""
    try:
        return list(load_cases())
    except CaseFileError:
        return []


CASES = _library()
BY_ID = {c.id: c for c in CASES}


def documented_params() -> set[str]:
    """Parameter names of the table in docs/context-params.md (first column)."""
    names = set(re.findall(r"^\|\s*`([a-z_]+)`\s*\|", DOC.read_text(encoding="utf-8"), re.M))
    assert {"category", "main_category", "month", "recent_new_products"} <= names
    return names


# --------------------------------------------------------------------------- coverage


def test_library_loads_with_enough_cases_and_languages() -> None:
    library = load_cases()  # raises CaseFileError with file:line when a case is broken
    assert len(library) >= 84  # 4 canonical + at least 80 constructed
    assert sum(c.source == "constructed" for c in library) >= 80
    ids = [c.id for c in library]
    assert len(ids) == len(set(ids))
    languages = Counter(c.language for c in library)
    assert languages["zh"] >= 35 and languages["en"] >= 35, languages


def test_language_field_matches_the_question() -> None:
    for case in CASES:
        has_han = re.search(r"[\u4e00-\u9fff]", case.question) is not None
        assert has_han == (case.language == "zh"), case.id
        steps_han = [re.search(r"[\u4e00-\u9fff]", s) is not None for s in case.approach]
        assert all(steps_han) if case.language == "zh" else not any(steps_han), case.id


def test_module_coverage_and_multi_module_cases() -> None:
    per_module = Counter(m for c in CASES for m in c.modules)
    for module in BUSINESS:
        assert per_module[module] >= 12, (module, per_module)
    assert sum(len(c.modules) >= 2 for c in CASES) >= 15
    questions = {c.question for c in CASES}
    for question in CANONICAL:
        assert question in questions


def test_case_files_hold_their_module() -> None:
    """<module>.yaml holds cases led by that module (a case about "my new products" also
    lists new_product, which owns the merchant's new-product list); multi_module.yaml holds
    cases that combine modules from the start."""
    for module in BUSINESS:
        path = CASES_DIR / f"{module}.yaml"
        cases = list(parse_case_file(path, path.read_text(encoding="utf-8")))
        assert len(cases) >= 10, path
        for case in cases:
            assert case.modules[0] == module, (path.name, case.id)
            assert set(case.modules[1:]) <= {"new_product"}, (path.name, case.id)
            assert case.id.startswith(ABBREV[module] + "-"), case.id
    path = CASES_DIR / "multi_module.yaml"
    multi = list(parse_case_file(path, path.read_text(encoding="utf-8")))
    assert len(multi) >= 15
    for case in multi:
        assert len(set(case.modules)) == len(case.modules) >= 2, case.id
        assert case.id.startswith("mm-") and case.source == "constructed", case.id


def test_case_shape() -> None:
    for case in CASES:
        assert 3 <= len(case.approach) <= 6 or case.source == "canonical", case.id
        assert case.tags or case.source == "canonical", case.id
        assert len(case.plan) <= 6, case.id
        if case.question_type == "lookup":
            assert len(case.plan) <= 3, case.id


# --------------------------------------------------------------------------- registry


def test_plan_tools_belong_to_the_case_modules(registry: ToolRegistry) -> None:
    manifests = registry.modules
    for case in CASES:
        assert set(case.modules) <= set(registry.business_modules()), case.id
        allowed_fm = {
            fm for m in [*case.modules, "common"] for fm in manifests[m].manifest.function_modules
        }
        assert set(case.function_modules) <= allowed_fm, (case.id, case.function_modules)
        for action in case.plan:
            if action.kind == "subagent":
                assert action.subagent is not None
                tools = action.subagent.tools
            else:
                assert action.tool is not None
                tools = [action.tool]
            for name in tools:
                spec = registry.get(name)
                assert spec is not None, (case.id, name)
                assert spec.module in [*case.modules, "common"], (case.id, name, spec.module)
                if spec.module != "common":
                    assert spec.function_module in case.function_modules, (case.id, name)


def test_plans_use_documented_params_only() -> None:
    documented = documented_params()
    for case in CASES:
        for action in case.plan:
            used = param_names(action.args)
            if action.subagent is not None:
                used |= param_names(action.subagent.description)
            assert used <= documented, (case.id, action.id, used - documented)


# --------------------------------------------------------------------------- file errors

GOOD = """\
- id: ok-case
  question: 2025年12月连衣裙的销售额是多少？
  language: zh
  modules: [category_trend]
  function_modules: [category_metrics]
  question_type: lookup
  fields: [gmv]
  approach: [识别类目, 查询概览]
  plan:
    - {id: o, tool: get_category_overview, args: {category_id: 1}}
"""
SECOND = """\
- id: second
  question: What was the GMV of air fryers in Oct 2025?
  language: en
  modules: [category_trend]
  function_modules: [category_metrics]
  question_type: lookup
  fields: [gmv]
  approach: [look it up]
"""
PLAN = "  plan: [{id: o, tool: get_category_overview, args: {category_id: 1}}]\n"


def load_error(tmp_path: Path, name: str, text: str) -> tuple[Path, str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseFileError) as exc:
        load_cases(tmp_path)
    return path, str(exc.value)


def test_missing_plan_is_reported_with_file_and_line(tmp_path: Path) -> None:
    path, message = load_error(tmp_path, "missing.yaml", GOOD + "\n" + SECOND)
    assert f"{path}:12:" in message and "plan" in message and "second" in message


def test_unknown_field_is_reported_with_file_and_line(tmp_path: Path) -> None:
    path, message = load_error(tmp_path, "unknown.yaml", GOOD + SECOND + PLAN + "  owner: me\n")
    assert f"{path}:11:" in message and "owner" in message


def test_invalid_yaml_is_reported_with_file_and_line(tmp_path: Path) -> None:
    broken = SECOND.replace("fields: [gmv]", "fields: [gmv") + PLAN
    path, message = load_error(tmp_path, "broken.yaml", GOOD + broken)
    # the parser stops on the line after the unclosed list (the case starts at line 11)
    assert message.startswith(f"{path}:18: invalid YAML") and "fields: [gmv" in message


# --------------------------------------------------------------------------- dry run


@pytest.fixture(scope="module")
def demo_params(sample_db: Path) -> dict[str, JSON]:
    """Context parameters of the demo user, built by SQL (category: the 连衣裙 leaf)."""
    conn = sqlite3.connect(sample_db)
    conn.row_factory = sqlite3.Row
    try:
        cols = "id, name_zh, name_en, path_zh, path_en"
        cat = conn.execute(
            f"SELECT {cols}, is_leaf, level FROM categories WHERE name_zh = '连衣裙'"
        ).fetchone()
        category = {**dict(cat), "is_leaf": bool(cat["is_leaf"])}
        main = conn.execute(
            f"SELECT {cols} FROM categories WHERE id = "
            "(SELECT main_category_id FROM merchants WHERE id = 'M1001')"
        ).fetchone()
        campaigns = [r[0] for r in conn.execute("SELECT id FROM campaigns ORDER BY id LIMIT 2")]
        rows = conn.execute(
            "SELECT id, title_zh, title_en, category_id, launch_month FROM products "
            "WHERE merchant_id = 'M1001' AND launch_month >= '2025-01' "
            "ORDER BY launch_month DESC, id"
        ).fetchall()
    finally:
        conn.close()
    assert dict(main)["name_zh"] == "身体护理" and len(rows) > 5
    months = [f"2025-{m:02d}" for m in range(7, 13)]
    return {
        "user_id": "demo",
        "merchant_id": "M1001",
        "source": "eval",
        "page": None,
        "question_time": "2026-01-15",
        "main_category": dict(main),
        "category": category,
        "categories": [category],
        "page_category": None,
        "page_product": None,
        "time": {"start_month": "2025-07", "end_month": "2025-12", "months": months},
        "month": "2025-12",
        "latest_month": "2025-12",
        "data_coverage": {"first": "2024-01", "last": "2025-12"},
        "top_n": None,
        "count": None,
        "recent_new_products": {
            "items": [dict(r) for r in rows[:5]],
            "total": len(rows),
            "truncated": True,
        },
        "question_products": [rows[0]["id"], rows[1]["id"]],  # "compare 1450 with 1431"
        "campaign_ids": campaigns,  # "2025年618和2025年双11"
    }


@pytest.fixture(scope="module")
def parent_params(sample_db: Path, demo_params: dict[str, JSON]) -> dict[str, JSON]:
    """The same context with a top-level category named instead (女装/女士精品, id 16)."""
    conn = sqlite3.connect(sample_db)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute(
            "SELECT id, name_zh, name_en, path_zh, path_en, is_leaf, level FROM categories "
            "WHERE id = 16"
        ).fetchone()
    finally:
        conn.close()
    category = {**dict(row), "is_leaf": bool(row["is_leaf"])}
    assert category["is_leaf"] is False
    return {**demo_params, "category": category, "categories": [category]}


def test_demo_params_are_documented(demo_params: dict[str, JSON]) -> None:
    assert set(demo_params) <= documented_params()


async def dry_run(case: Case, executor: ToolExecutor, params: dict[str, JSON]) -> list[Call]:
    """Run the plan in dependency order; one (action id, error kind or 'ok') per call."""
    results: dict[str, JSON] = {}
    skipped: set[str] = set()
    calls: list[Call] = []
    pending = list(case.plan)
    while pending:
        ready = [a for a in pending if all(d in results or d in skipped for d in a.depends_on)]
        assert ready, f"{case.id}: dependency cycle"
        for action in ready:
            pending.remove(action)
            if action.kind == "subagent" or skipped & set(action.depends_on):
                skipped.add(action.id)
                continue
            assert action.tool is not None
            args = fill_template(action.args, params, case.question)
            if action.for_each is None:
                copies = [resolve_refs(args, results)]
            else:
                items = for_each_items(action, results)
                assert items, f"{case.id}: {action.id} fans out over nothing"
                copies = [resolve_refs(args, results, item) for item in items]
            data: list[JSON] = []
            for bound in copies:
                result = await executor.call(action.tool, bound)
                calls.append((action.id, "ok" if result.error is None else result.error.kind))
                data.append(result.data if result.ok else None)
            if action.for_each is not None:
                results[action.id] = data
            elif data[0] is not None:
                results[action.id] = data[0]
            else:
                skipped.add(action.id)  # empty: its dependants have nothing to read
    return calls


def needs_subagent(case: Case) -> set[str]:
    """Actions that are subagents or depend (transitively) on one: the dry run skips them."""
    out = {a.id for a in case.plan if a.kind == "subagent"}
    changed = True
    while changed:
        more = {a.id for a in case.plan if set(a.depends_on) & out} - out
        out |= more
        changed = bool(more)
    return out


@pytest.mark.parametrize("case_id", sorted(BY_ID))
async def test_plan_dry_run(
    case_id: str,
    registry: ToolRegistry,
    settings: Settings,
    demo_params: dict[str, JSON],
    parent_params: dict[str, JSON],
) -> None:
    """Both with a leaf (连衣裙) and a top-level category named; every tool action runs in
    at least one of them and no call is refused or fails."""
    case = BY_ID[case_id]
    called: set[str] = set()
    for params in (demo_params, parent_params):
        executor = ToolExecutor(registry, ToolContext(settings=settings, now=date(2026, 1, 15)))
        try:
            calls = await dry_run(case, executor, params)
        except BindingError as exc:
            pytest.fail(f"{case_id} ({params['category']}): {exc}")
        bad = [(a, kind) for a, kind in calls if kind not in ("ok", "empty")]
        assert not bad, (case_id, params["category"], bad)
        called |= {a for a, kind in calls if kind == "ok"}
    expected = {a.id for a in case.plan} - needs_subagent(case)
    assert expected <= called, (case_id, "never ran ok:", expected - called)
