"""The requirements eval: P/R scoring, set loading, symbols, the committed sets, the CLI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from context_loader.models import ContextRequest, LoadedContext
from deepagent.cli.app import build_app
from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    MeasureReq,
    OutOfScopeReq,
    PeriodReq,
    Requirement,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from eval.harness.reference import Reference
from eval.harness.requirements_eval import (
    compare,
    evaluate,
    expected_keys,
    extracted_keys,
    field_score,
)
from eval.harness.requirements_set import (
    RequirementsCase,
    SetError,
    SymbolResolver,
    read_set,
    resolve_on,
    resolve_subjects,
)


def case(expected: dict[str, Any], question: str = "q", cid: str = "t-1") -> RequirementsCase:
    return RequirementsCase.model_validate(
        {"id": cid, "question": question, "language": "en", "expected": expected}
    )


AIR_FRYER_CASE = {
    "subjects": [{"type": "category", "ref": {"$category": "空气炸锅"}, "text": "air fryers"}],
    "periods": [{"start_month": "2025-11", "end_month": "2025-11", "comparison": "yoy"}],
    "measures": ["gmv", "growth"],
    "selection": [{"rule": "top", "k": 5, "measure": "gmv", "target": "product"}],
    "aspects": ["selling_points"],
    "comparison": False,
    "out_of_scope": ["platform"],
}


def items(*reqs: Requirement) -> Requirements:
    return Requirements(items=list(reqs))


def perfect(category_id: int) -> Requirements:
    return items(
        SubjectReq(id="s1", text="air fryers", subject_type="category", ref=category_id),
        PeriodReq(
            id="p1", text="Nov", start_month="2025-11", end_month="2025-11", comparison="yoy"
        ),
        MeasureReq(id="m1", text="GMV", measure="gmv"),
        MeasureReq(id="m2", text="growth", measure="growth"),
        SelectionReq(id="k1", text="top 5", rule="top", k=5, measure="gmv", target="product"),
        AspectReq(id="a1", text="selling points", aspect="selling_points"),
        OutOfScopeReq(id="o1", text="JD", scope="platform"),
    )


@pytest.fixture(scope="module")
def small_ref(sample_db: Path) -> Iterator[Reference]:
    ref = Reference(sample_db)
    yield ref
    ref.close()


def air_fryer_id(ref: Reference) -> int:
    return int(ref.category("空气炸锅")["id"])


# --- scoring -------------------------------------------------------------------------


def test_a_perfect_extraction_scores_one_everywhere(small_ref: Reference) -> None:
    c = case(AIR_FRYER_CASE)
    (refs,) = resolve_subjects([c], SymbolResolver(small_ref))
    assert refs == [air_fryer_id(small_ref)]
    pair = (expected_keys(c.expected, refs), extracted_keys(perfect(air_fryer_id(small_ref))))
    for name in ("subjects", "periods", "measures", "selection", "aspects", "out_of_scope"):
        score = field_score(name, [pair])
        assert (score.precision, score.recall) == (1.0, 1.0), name
    comparison = field_score("comparison", [pair])
    assert (comparison.precision, comparison.recall, comparison.support) == (None, None, 0)
    assert compare(c, *pair).exact


def test_an_extra_item_lowers_precision_only(small_ref: Reference) -> None:
    c = case(AIR_FRYER_CASE)
    found = perfect(air_fryer_id(small_ref))
    found.items.append(MeasureReq(id="m3", text="buyers", measure="buyers"))
    pair = (expected_keys(c.expected, [air_fryer_id(small_ref)]), extracted_keys(found))
    score = field_score("measures", [pair])
    assert (score.precision, score.recall, score.support) == (round(2 / 3, 4), 1.0, 2)
    result = compare(c, *pair)
    assert result.extra == ["measures: buyers"] and result.missed == []


def test_a_missed_item_lowers_recall_only(small_ref: Reference) -> None:
    c = case(AIR_FRYER_CASE)
    found = perfect(air_fryer_id(small_ref))
    found.items = [i for i in found.items if i.kind != "aspect"]
    pair = (expected_keys(c.expected, [air_fryer_id(small_ref)]), extracted_keys(found))
    score = field_score("aspects", [pair])
    assert (score.precision, score.recall, score.support) == (None, 0.0, 1)
    assert compare(c, *pair).missed == ["aspects: selling_points"]
    overall = field_score("all", [pair])
    assert overall.fn == 1 and overall.fp == 0 and overall.precision == 1.0


def test_a_wrong_ref_period_or_k_is_both_a_miss_and_an_extra(small_ref: Reference) -> None:
    c = case(AIR_FRYER_CASE)
    wrong = items(
        SubjectReq(id="s1", text="x", subject_type="category", ref=air_fryer_id(small_ref) + 1),
        PeriodReq(id="p1", text="Nov", start_month="2025-11", end_month="2025-11"),
        SelectionReq(id="k1", text="top", rule="top", k=None, measure="gmv"),
    )
    pair = (expected_keys(c.expected, [air_fryer_id(small_ref)]), extracted_keys(wrong))
    for name in ("subjects", "periods", "selection"):
        score = field_score(name, [pair])
        assert (score.tp, score.fp, score.fn) == (0, 1, 1), name


def test_scores_are_micro_averaged_over_questions() -> None:
    one = case({"measures": ["gmv"]}, cid="a")
    two = case({"measures": ["units", "buyers", "sellers"]}, cid="b")
    pairs = [
        (expected_keys(one.expected, []), extracted_keys(items())),
        (
            expected_keys(two.expected, []),
            extracted_keys(
                items(
                    *(
                        MeasureReq(id=f"m{n}", text=m, measure=m)
                        for n, m in enumerate(["units", "buyers", "sellers"])
                    )
                )
            ),
        ),
    ]
    score = field_score("measures", pairs)
    assert score.recall == 0.75  # 3 of 4 items, not the mean of 0.0 and 1.0
    assert score.precision == 1.0


def test_comparison_counts_once_and_type_only_subjects_ignore_the_ref() -> None:
    c = case(
        {
            "subjects": [{"type": "own_shop"}, {"type": "new_product"}],
            "comparison": True,
        }
    )
    found = items(
        SubjectReq(id="s1", text="my shop", subject_type="own_shop", ref="M1001"),
        SubjectReq(id="s2", text="my new", subject_type="new_product"),
        ComparisonReq(id="c1", text="vs", subjects=["s1", "s2"]),
        ComparisonReq(id="c2", text="vs", subjects=["s2", "s1"]),
    )
    pair = (expected_keys(c.expected, [None, None]), extracted_keys(found))
    assert field_score("comparison", [pair]).model_dump(include={"tp", "fp", "fn"}) == {
        "tp": 1,
        "fp": 0,
        "fn": 0,
    }
    assert field_score("subjects", [pair]).recall == 1.0


def test_brand_and_string_refs_match_case_insensitively() -> None:
    c = case({"subjects": [{"type": "brand", "ref": "Lumière"}, {"type": "product", "ref": 7}]})
    found = items(
        SubjectReq(id="s1", text="x", subject_type="brand", ref="lumière "),
        SubjectReq(id="s2", text="y", subject_type="product", ref="7"),
    )
    pair = (expected_keys(c.expected, ["Lumière", 7]), extracted_keys(found))
    assert field_score("subjects", [pair]).precision == 1.0


# --- symbols --------------------------------------------------------------------------


def test_symbols_resolve_against_the_database(small_ref: Reference) -> None:
    c = case(
        {
            "subjects": [
                {"type": "category", "ref": {"$category": "Air fryer"}},
                {"type": "category", "ref": {"$category": "@main"}},
                {"type": "product", "ref": {"$product": "newest"}},
                {"type": "campaign", "ref": {"$campaign": "double11 2024"}},
                {"type": "campaign", "ref": {"$campaign": "双11"}},
                {"type": "own_shop"},
            ]
        }
    )
    (refs,) = resolve_subjects([c], SymbolResolver(small_ref))
    newest = small_ref.new_products()[0]["id"]
    main = small_ref.category("@main")["id"]
    double11 = {
        r["year"]: r["id"]
        for r in small_ref.rows("SELECT id, year FROM campaigns WHERE code = 'double11'")
    }
    assert refs == [air_fryer_id(small_ref), main, newest, double11[2024], double11[2025], None]


@pytest.mark.parametrize(
    "ref",
    [{"$category": "量子袜子"}, {"$product": 99999999}, {"$campaign": "双11 2019"}, {"$nope": 1}],
)
def test_a_symbol_that_does_not_resolve_names_the_case(small_ref: Reference, ref: Any) -> None:
    c = case({"subjects": [{"type": "category", "ref": ref}]}, cid="bad-7")
    with pytest.raises(SetError, match=r"^bad-7: "):
        resolve_subjects([c], SymbolResolver(small_ref))


def test_resolve_on_a_missing_database_is_a_set_error(tmp_path: Path) -> None:
    with pytest.raises(SetError, match="no database"):
        resolve_on([case({})], tmp_path / "none.db")


# --- set loading ----------------------------------------------------------------------


def line(cid: str, **over: Any) -> str:
    row = {"id": cid, "question": "q", "language": "zh", "expected": {}, **over}
    return json.dumps(row, ensure_ascii=False)


def test_bad_lines_are_reported_as_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    rows = [
        line("a"),
        "",
        "{not json",
        line("b", extra_field=1),
        line("c", expected={"measures": ["gmv"], "subjects": [{"type": "planet"}]}),
        line("a"),
        line("d", language="fr"),
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(SetError) as err:
        read_set(path)
    message = str(err.value)
    assert "\n" not in message
    for n in (3, 4, 5, 6, 7):
        assert f"{path}:{n}: " in message
    assert f"{path}:1:" not in message and f"{path}:2:" not in message
    assert "extra_field" in message and "duplicate id 'a' (first at line 1)" in message


def test_an_empty_set_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(SetError, match="no questions"):
        read_set(path)


# --- evaluate and the CLI ---------------------------------------------------------------


class ScriptedLoader:
    """Answers each question with the requirements scripted for it."""

    def __init__(self, script: dict[str, Requirements]) -> None:
        self.script = script
        self.requests: list[ContextRequest] = []

    async def load(self, request: ContextRequest) -> LoadedContext:
        self.requests.append(request)
        return LoadedContext(
            question=request.question,
            language="en",
            modules=["common"],
            module_scores=[],
            classifier="scripted",
            tools=[],
            tool_count_total=0,
            skills=[],
            cases=[],
            params={},
            param_status=[],
            requirements=self.script.get(request.question, Requirements()),
            timings_ms={},
        )


def test_evaluate_scores_what_the_loader_extracted(small_ref: Reference) -> None:
    cases = [
        case(AIR_FRYER_CASE, question="air fryers", cid="a"),
        case({"measures": ["units"]}, question="units please", cid="b"),
    ]
    loader = ScriptedLoader({"air fryers": perfect(air_fryer_id(small_ref))})
    refs = resolve_subjects(cases, SymbolResolver(small_ref))
    report = asyncio.run(evaluate(loader, cases, refs, "t.jsonl"))
    assert [r.question for r in loader.requests] == ["air fryers", "units please"]
    assert all(r.source == "eval" for r in loader.requests)
    assert report.questions == 2 and report.exact == 1
    assert [e.id for e in report.errors] == ["b"] and report.errors[0].missed == ["measures: units"]
    measures = next(f for f in report.fields if f.field == "measures")
    assert (measures.tp, measures.fn, measures.recall) == (2, 1, round(2 / 3, 4))
    assert report.extractors == ["offline"]


def run_cli(*args: str, data: Path) -> Any:
    env = {"DEEPAGENT_DATA_PATH": str(data)}
    return CliRunner().invoke(build_app(), ["eval", "requirements", *args], env=env)


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path, sample_db: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(line("a") + "\n{oops\n", encoding="utf-8")
    unresolved = tmp_path / "unresolved.jsonl"
    subjects = [{"type": "category", "ref": {"$category": "量子袜子"}}]
    unresolved.write_text(line("u-1", expected={"subjects": subjects}) + "\n", encoding="utf-8")
    for path, expected in (
        (tmp_path / "missing.jsonl", "no labelled set"),
        (bad, f"{bad}:2:"),
        (unresolved, "u-1: category"),
    ):
        result = run_cli("--set", str(path), data=sample_db)
        assert result.exit_code == 2, result.stdout
        assert expected in result.stderr and len(result.stderr.strip().splitlines()) == 1
    result = run_cli("--set", str(bad), data=tmp_path / "none.db")
    assert result.exit_code == 2 and "no sample database" in result.stderr
