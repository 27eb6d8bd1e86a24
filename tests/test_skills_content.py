"""The bundled SKILL.md files: front matter, modules, business rules and tool names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from deepagent.tools import ToolRegistry

SKILLS_DIR = Path(__file__).resolve().parents[1] / "skills"
MODULES = ["category_trend", "new_product", "competitor_flow", "consumer_insight", "search_insight",
           "promotion"]  # fmt: skip

# Each business rule and the modules whose skill must state it.
RULES: dict[str, set[str]] = {
    "new-product-default": {"new_product", "competitor_flow"},
    "main-price-band": {"new_product"},
    "category-fallback": {
        "category_trend",
        "new_product",
        "consumer_insight",
        "search_insight",
        "promotion",
    },
    "potential-means-low-competition": {"category_trend"},
    "competitor-growth-path": {"competitor_flow"},
}
# What each rule must say, in words the planner can act on.
RULE_WORDS: dict[str, list[str]] = {
    "new-product-default": ["recent_new_products", "page_product", "first"],
    "main-price-band": ["highest GMV share", "main_band"],
    "category-fallback": ["main_category"],
    "potential-means-low-competition": ["lowest competition index"],
    "competitor-growth-path": ["get_growth_path", "since launch"],
}
# Backticked names that are not tools: context parameters (docs/context-params.md) and a
# few fields of tool results.
CONTEXT_PARAMS = {
    "question", "user_id", "merchant_id", "source", "page", "question_time", "main_category",
    "category", "categories", "page_category", "page_product", "time", "month", "latest_month",
    "data_coverage", "top_n", "count", "recent_new_products",
}  # fmt: skip
RESULT_FIELDS = {"main_band", "compare_ids", "gmv_growth_yoy", "total"}

_RULE_LINE = re.compile(r"^- RULE ([a-z0-9-]+):", re.MULTILINE)
_BACKTICKS = re.compile(r"`([^`\n]+)`")
_IDENT = re.compile(r"[a-z_][a-z0-9_]*")


def read_skill(module: str) -> tuple[dict[str, Any], str]:
    text = (SKILLS_DIR / module / "SKILL.md").read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{module}: SKILL.md must start with YAML front matter"
    _, front, body = text.split("---", 2)
    meta = yaml.safe_load(front)
    assert isinstance(meta, dict)
    return meta, body


def rules_of(body: str) -> dict[str, str]:
    """Rule tag -> the rule's text (its list item, continuation lines included)."""
    found: dict[str, str] = {}
    matches = list(_RULE_LINE.finditer(body))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        item = body[m.start() : end].split("\n- ", 1)[0].split("\n\n", 1)[0]
        assert m.group(1) not in found, f"rule {m.group(1)} stated twice"
        found[m.group(1)] = " ".join(item.split())
    return found


def test_every_module_has_a_skill(registry: ToolRegistry) -> None:
    assert sorted(MODULES) == sorted(registry.business_modules())
    found = sorted(p.parent.name for p in SKILLS_DIR.glob("*/SKILL.md"))
    assert found == sorted(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_front_matter(module: str, registry: ToolRegistry) -> None:
    meta, body = read_skill(module)
    assert set(meta) >= {"name", "description", "modules"}
    assert meta["name"] == module
    assert isinstance(meta["description"], str) and meta["description"].strip()
    assert "\n" not in meta["description"].strip()
    assert meta["modules"] == [module]
    assert all(m in registry.modules for m in meta["modules"])
    lines = (SKILLS_DIR / module / "SKILL.md").read_text(encoding="utf-8").splitlines()
    assert 60 <= len(lines) <= 150, f"{module}: {len(lines)} lines"
    for section in ("## Product language", "## Analysis guidance", "## Pitfalls", "## Rules"):
        assert section in body, f"{module}: missing {section!r}"


@pytest.mark.parametrize("module", MODULES)
def test_rules(module: str) -> None:
    _, body = read_skill(module)
    rules = rules_of(body)
    assert set(rules) <= set(RULES), f"unknown rule tags: {set(rules) - set(RULES)}"
    wanted = {tag for tag, modules in RULES.items() if module in modules}
    assert set(rules) == wanted
    rules_section = body.split("## Rules", 1)[1]
    for tag in wanted:
        assert f"- RULE {tag}:" in rules_section
        for words in RULE_WORDS[tag]:
            assert words in rules[tag], f"{module} {tag}: {words!r} missing in {rules[tag]!r}"


@pytest.mark.parametrize("module", MODULES)
def test_backticked_names_exist(module: str, registry: ToolRegistry) -> None:
    _, body = read_skill(module)
    names = set()
    for snippet in _BACKTICKS.findall(body):
        match = _IDENT.match(snippet)
        assert match is not None, f"{module}: unexpected backticked text {snippet!r}"
        names.add(match.group())
    unknown = names - set(registry.tools) - CONTEXT_PARAMS - RESULT_FIELDS
    assert not unknown, f"{module}: not a tool, context parameter or known field: {unknown}"
    # every tool of the module is explained in its skill
    own = {t.name for t in registry.tools.values() if t.module == module}
    assert own <= names, f"{module}: tools not covered: {own - names}"


def test_rules_are_consistent_across_modules() -> None:
    """A rule stated in several skills names the same parameters everywhere."""
    texts: dict[str, list[str]] = {}
    for module in MODULES:
        for tag, text in rules_of(read_skill(module)[1]).items():
            texts.setdefault(tag, []).append(text)
    for tag, modules in RULES.items():
        assert len(texts.get(tag, [])) == len(modules)
        params = [set(re.findall(r"`([a-z_]+)`", t)) & CONTEXT_PARAMS for t in texts[tag]]
        assert all(p == params[0] for p in params), (tag, params)
