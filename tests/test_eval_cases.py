"""The core eval set (eval/sets/core.jsonl) stays valid and reproducible: 200 cases, every
business module, question type, source and both languages; tools and arguments exist;
the seeds rebuild the file exactly; every reference query runs on the small database."""

from __future__ import annotations

import re
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from deepagent.core.question import detect_language
from deepagent.core.settings import Settings
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from eval.harness.build_set import build
from eval.harness.cases import QUESTION_TYPES, EvalCase, SetError, dump_case, load_set
from eval.harness.facts import Reference, evaluate, resolve_params
from rag_cases.store import load_cases

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "eval" / "sets" / "core.jsonl"
CASES = load_set(CORE)
MISSING_CATEGORY = re.compile(r"category .*: 0 matches in this database")


def test_the_set_has_200_unique_cases() -> None:
    assert len(CASES) == 200
    assert len({c.id for c in CASES}) == 200
    assert len({c.question for c in CASES}) == 200


def test_the_mix_of_types_sources_languages_and_complexity() -> None:
    types = Counter(c.question_type for c in CASES)
    assert set(types) == set(QUESTION_TYPES)
    assert min(types.values()) >= 8, types
    sources = Counter(c.source for c in CASES)
    assert set(sources) == {"realistic", "constructed", "case_library", "variant"}
    assert min(sources.values()) >= 25, sources
    languages = Counter(c.language for c in CASES)
    assert min(languages.values()) >= 50, languages
    assert set(Counter(c.complexity for c in CASES)) == {1, 2, 3}
    assert sum(c.page is not None for c in CASES) >= 2


def test_every_business_module_is_covered(registry: ToolRegistry) -> None:
    covered: set[str] = set()
    for c in CASES:
        covered |= set(c.expected_modules or [])
        if c.expected_trajectory:
            covered |= {
                registry.tools[t].module for t in c.expected_trajectory.tools if t in registry.tools
            }
    assert covered >= set(registry.modules), set(registry.modules) - covered


def test_tools_arguments_and_modules_exist(registry: ToolRegistry) -> None:
    modules = set(registry.modules) - {"common"}
    for c in CASES:
        assert set(c.expected_modules or []) <= modules, c.id
        steps = c.expected_trajectory.tools if c.expected_trajectory else []
        unknown = [
            t for t in steps if t not in registry.tools and t not in ("call_human", "subagent")
        ]
        assert not unknown, (c.id, unknown)
        for exp in c.expected_params:
            assert exp.tool in registry.tools, (c.id, exp.tool)
            fields = set(registry.tools[exp.tool].input_model.model_fields)
            assert set(exp.args) <= fields, (c.id, exp.tool, set(exp.args) - fields)
        for spec in c.facts:
            if spec.query.startswith("tool:"):
                assert spec.query[5:] in registry.tools, (c.id, spec.query)


def test_language_labels_variants_and_library_links() -> None:
    ids = {c.id for c in CASES}
    library = {c.id for c in load_cases(ROOT / "rag_cases" / "cases").cases}
    for c in CASES:
        if "mixed" not in c.tags:
            assert detect_language(c.question) == c.language, c.id
        if c.source == "variant":
            assert c.variant_of in ids and c.id.startswith(f"{c.variant_of}-v"), c.id
        if c.library_case is not None:
            assert c.library_case in library, c.id
        if c.question_type == "clarification":
            assert c.expected_trajectory and c.expected_trajectory.tools == ["call_human"]
            assert c.max_tool_calls == 0 and c.max_rounds == 1
        if c.question_type not in ("clarification", "no_data", "adversarial"):
            assert c.facts and c.answer_type, f"{c.id}: answers need facts and a structure"


async def test_the_seeds_rebuild_the_committed_set() -> None:
    built = "".join(dump_case(c) + "\n" for c in await build())
    assert built == CORE.read_text(encoding="utf-8"), (
        "eval/sets/core.jsonl is out of date: python -m eval.harness.build_set"
    )


def test_a_bad_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    lines = [dump_case(CASES[0]), dump_case(CASES[1]), '{"id": "x-1", "question": "q"}']
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SetError, match=rf"^{re.escape(str(path))}:3: "):
        load_set(path)
    path.write_text("\n".join([lines[0], "", lines[0]]) + "\n", encoding="utf-8")
    with pytest.raises(SetError, match=r":3: duplicate id .*first at line 1"):
        load_set(path)
    orphan = CASES[0].model_copy(update={"id": "x-v1", "source": "variant", "variant_of": "x-0"})
    path.write_text(dump_case(orphan) + "\n", encoding="utf-8")
    with pytest.raises(SetError, match=r":1: variant_of 'x-0' is not in the set"):
        load_set(path)


def test_case_rules_are_enforced() -> None:
    data = CASES[0].model_dump()
    with pytest.raises(ValueError, match="common"):
        EvalCase.model_validate(data | {"expected_modules": ["common"]})
    with pytest.raises(ValueError, match="needs_input"):
        EvalCase.model_validate(data | {"question_type": "clarification"})
    with pytest.raises(ValueError, match="extra"):
        EvalCase.model_validate(data | {"unexpected": 1})


@pytest.fixture(scope="module")
def reference(sample_db: Path) -> Reference:
    return Reference(sample_db)


@pytest.mark.parametrize(
    "c", [c for c in CASES if c.facts or c.expected_params], ids=lambda c: c.id
)
async def test_reference_queries_run_on_the_small_database(
    c: EvalCase, reference: Reference, registry: ToolRegistry, settings: Settings
) -> None:
    if c.page is not None and c.page.product_id is not None:
        pytest.skip("page product ids are rows of the full database (see eval/sets/README.md)")
    tools = ToolExecutor(registry, ToolContext(settings=settings, now=date(2026, 1, 15)))
    missing: list[str] = []
    for spec in c.facts:
        fact = await evaluate(spec, reference, tools)
        if fact.error is not None and MISSING_CATEGORY.search(fact.error):
            missing.append(fact.error)
            continue
        assert fact.error is None, (spec.id, fact.error)
        assert fact.values and fact.need >= 1, spec.id
        for value in fact.values:
            assert (value.number is not None) == (spec.kind == "number"), (spec.id, value)
    _params, errors = resolve_params(c, reference)
    assert not [e for e in errors if not MISSING_CATEGORY.search(e)], errors
    missing += errors
    if missing:
        pytest.skip(f"not in the small profile: {missing[0]}")
