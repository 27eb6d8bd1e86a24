"""The labelled set for evaluating context loading (eval/sets/context.jsonl) stays valid:
every line parses, labels use registered modules, pages and cases, and the mix holds."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from deepagent.tools import ToolRegistry
from rag_cases.store import load_cases

SET_PATH = Path(__file__).resolve().parents[1] / "eval" / "sets" / "context.jsonl"
FIELDS = set("id question language user_id page expected_modules expected_cases tags".split())
CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(SET_PATH.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"line {n} is empty"
        row = json.loads(line)
        assert isinstance(row, dict), f"line {n} is not an object"
        out.append(row)
    return out


def keyword_hits(question: str, keywords: set[str]) -> list[str]:
    """Manifest keywords in a question: substrings for Chinese, whole words for English."""
    text = question.lower()
    hits = []
    for kw in keywords:
        k = kw.lower()
        if CJK.search(k):
            found = k in text
        else:
            found = re.search(rf"(?<![a-z0-9]){re.escape(k)}(?![a-z0-9])", text) is not None
        if found:
            hits.append(kw)
    return hits


def test_fields_ids_and_languages(rows: list[dict[str, Any]]) -> None:
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "ids must be unique"
    for r in rows:
        assert set(r) == FIELDS, f"{r.get('id')}: fields {sorted(set(r) ^ FIELDS)}"
        assert re.fullmatch(r"ctx-\d{3}", r["id"]), r["id"]
        assert isinstance(r["question"], str) and r["question"].strip(), r["id"]
        assert r["user_id"] == "demo", r["id"]
        assert all(isinstance(t, str) for t in r["tags"]), r["id"]
        assert r["language"] in ("zh", "en"), r["id"]
        has_cjk = CJK.search(r["question"]) is not None
        if "mixed" not in r["tags"]:
            assert has_cjk == (r["language"] == "zh"), f"{r['id']}: language {r['language']}"
    mixed = sum("mixed" in r["tags"] for r in rows)
    assert 3 <= mixed <= 12
    share_zh = sum(r["language"] == "zh" for r in rows) / len(rows)
    assert 0.5 <= share_zh <= 0.65, share_zh


def test_modules_are_registered_business_modules(
    rows: list[dict[str, Any]], registry: ToolRegistry
) -> None:
    business = set(registry.business_modules())
    for r in rows:
        mods = r["expected_modules"]
        assert len(mods) in (1, 2, 3), r["id"]
        assert mods == sorted(set(mods)), f"{r['id']}: modules must be sorted and unique"
        assert set(mods) <= business, f"{r['id']}: unknown modules {set(mods) - business}"
        assert ("multi-module" in r["tags"]) == (len(mods) > 1), r["id"]


def test_pages_come_from_manifests_and_point_at_real_rows(
    rows: list[dict[str, Any]], registry: ToolRegistry, full_db: Path
) -> None:
    page_types = {p for m in registry.modules.values() for p in m.manifest.pages}
    conn = sqlite3.connect(full_db)
    try:
        for r in rows:
            page = r["page"]
            if page is None:
                continue
            assert set(page) <= {"type", "category_id", "product_id"}, r["id"]
            assert page["type"] in page_types, f"{r['id']}: unknown page {page['type']}"
            for key, table in (("category_id", "categories"), ("product_id", "products")):
                if key in page:
                    assert isinstance(page[key], int), r["id"]
                    found = conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (page[key],))
                    assert found.fetchone(), f"{r['id']}: no {key} {page[key]}"
    finally:
        conn.close()


def test_expected_cases_exist(rows: list[dict[str, Any]]) -> None:
    library = load_cases()
    for r in rows:
        cases = r["expected_cases"]
        assert len(cases) == len(set(cases)), r["id"]
        for case_id in cases:
            case = library.get(case_id)
            assert case is not None, f"{r['id']}: unknown case {case_id}"
            extra = set(case.modules) - set(r["expected_modules"])
            assert not extra, f"{r['id']}: case {case_id} needs modules {extra} not labelled"
    assert sum(bool(r["expected_cases"]) for r in rows) >= 60


def test_the_mix(rows: list[dict[str, Any]], registry: ToolRegistry) -> None:
    assert len(rows) >= 130
    per_module = Counter(m for r in rows for m in r["expected_modules"])
    for module in registry.business_modules():
        assert per_module[module] >= 20, f"{module}: {per_module[module]} questions"
    multi = [r for r in rows if len(r["expected_modules"]) > 1]
    assert len(multi) >= 30
    page_evidence = [r for r in rows if "page-evidence" in r["tags"]]
    assert len(page_evidence) >= 15
    assert all(r["page"] is not None for r in page_evidence)


def test_no_keyword_paraphrases_avoid_every_manifest_keyword(
    rows: list[dict[str, Any]], registry: ToolRegistry
) -> None:
    keywords = {k for m in registry.modules.values() for k in m.manifest.keywords}
    paraphrases = [r for r in rows if "no-keyword" in r["tags"]]
    assert len(paraphrases) >= 25
    for r in paraphrases:
        hits = keyword_hits(r["question"], keywords)
        assert not hits, f"{r['id']} is tagged no-keyword but contains {hits}"
