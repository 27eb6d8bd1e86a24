"""Templates, $ref/$item resolution and for_each expansion."""

from __future__ import annotations

import pytest

from deepagent.core.schema import ActionSpec
from deepagent.core.templates import BindingError, fill_template, param_names
from deepagent.execution.refs import find_asks, for_each_items, resolve_refs

PARAMS = {
    "category": {"id": 50010001, "name_zh": "连衣裙"},
    "month": "2025-12",
    "recent_new_products": {"items": [{"id": 7}, {"id": 8}], "total": 12},
    "count": None,
}


def test_whole_placeholder_keeps_type_and_partial_is_text() -> None:
    assert fill_template("{{params.category.id}}", PARAMS) == 50010001
    assert fill_template("cat {{ params.category.name_zh }} in {{params.month}}", PARAMS) == (
        "cat 连衣裙 in 2025-12"
    )
    assert fill_template({"a": ["{{params.recent_new_products.items.1.id}}"]}, PARAMS) == {"a": [8]}
    assert fill_template("{{question}}", PARAMS, "q?") == "q?"


def test_fallbacks_take_the_first_present_term() -> None:
    assert fill_template("{{params.page_product.id ?? params.category.id}}", PARAMS) == 50010001
    assert fill_template("{{params.count ?? 10}}", PARAMS) == 10  # None counts as missing
    assert fill_template('{{params.nope ?? "x"}}', PARAMS) == "x"
    with pytest.raises(BindingError, match="parameter missing"):
        fill_template("{{params.nope.id ?? params.other}}", PARAMS)


def test_param_names() -> None:
    args = {"a": "{{params.x.id ?? params.y}}", "b": ["{{params.z}}", 3]}
    assert param_names(args) == {"x", "y", "z"}


def test_refs_items_and_asks() -> None:
    results = {"bands": {"bands": [{"id": 1, "share": 0.2}, {"id": 2, "share": 0.8}]}}
    args = {
        "ids": {"$ref": "bands", "path": "bands[].id"},
        "best": {"$ref": "bands", "path": "max_by(bands, &share).id"},
        "item": {"$item": "c"},
        "why": {"$ask": "pick one", "from": ["bands"]},
    }
    bound = resolve_refs(args, results, item={"c": 5})
    assert bound["ids"] == [1, 2] and bound["best"] == 2 and bound["item"] == 5
    assert find_asks(bound) == [{"$ask": "pick one", "from": ["bands"]}]
    with pytest.raises(BindingError, match="has no result"):
        resolve_refs({"$ref": "other"}, results)
    with pytest.raises(BindingError, match="found nothing"):
        resolve_refs({"$ref": "bands", "path": "missing"}, results)
    with pytest.raises(BindingError, match="bad JMESPath"):
        resolve_refs({"$ref": "bands", "path": "[[["}, results)


def test_for_each_items() -> None:
    action = ActionSpec.model_validate(
        {"id": "t", "tool": "x", "for_each": {"$ref": "b", "path": "[].bands[].id"}}
    )
    assert action.depends_on == ["b"]
    results = {"b": [{"bands": [{"id": 1}, {"id": 2}]}, {"bands": [{"id": 3}]}]}
    assert for_each_items(action, results) == [1, 2, 3]
    assert for_each_items(action, {"b": []}) == []
    bad = ActionSpec.model_validate({"id": "t", "tool": "x", "for_each": {"$ref": "b"}})
    with pytest.raises(BindingError, match="not a list"):
        for_each_items(bad, {"b": {"x": 1}})
