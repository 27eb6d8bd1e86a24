"""Entity names out of intent similarity, and cross-module keyword resolution.

The offline classifier compares a question with each module's example questions after
removing category names (they name the subject, not the ask), and counts a keyword for
a module only where no other module's longer keyword covers it and no other module
claims the same word.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from business.modules._vocabulary import entity_names
from context_loader.entities import NO_MASK, Masker
from context_loader.identify import Evidence, OfflineClassifier
from context_loader.keywords import module_hits
from context_loader.loader import ContextLoader, entity_masker
from context_loader.module_index import ModuleIndex
from deepagent.core.settings import Settings
from deepagent.tools import ToolRegistry
from deepagent.tools.registry import BusinessModule, ModuleManifest


def test_masker_replaces_names_in_both_languages() -> None:
    masker = Masker(["面霜", "Face cream", "Tent", "Air fryer"])
    assert masker.mask("面霜这个细分现在盘子有多大？") == "某类目这个细分现在盘子有多大？"
    assert masker.mask("How big is the face cream market?") == "How big is the it market?"
    assert masker.left("Search volume of Tents and air fryers") == "Search volume of and"


def test_masker_matches_whole_english_words_and_keeps_keywords() -> None:
    masker = Masker(["Tent", "Serum", "新品"], keep=["新品"])
    assert masker.left("How much attention do serums get?") == "How much attention do get?"
    assert masker.mask("我的新品卖得怎么样") == "我的新品卖得怎么样"  # a keyword carries intent


def test_a_text_that_is_little_more_than_a_name_stays_as_it_is() -> None:
    masker = Masker(["Mascara", "面霜"])
    assert masker.left("Mascara") == ""
    assert masker.mask("Mascara") == "Mascara"
    assert masker.mask("面霜？") == "面霜？"
    assert NO_MASK.mask("面霜这个细分") == "面霜这个细分"


def test_entity_names_come_from_the_store(settings: Settings, tmp_path: Path) -> None:
    names = entity_names(settings)
    assert {"面霜", "Face cream", "美容护肤", "美体", "精油"} <= set(names)
    assert {"Beauty", "Body Care & Essential Oils"} <= set(names)  # split at ',' not '&'
    assert "Mother" not in names and "Home" not in names  # generic words stay unmasked
    assert entity_names(Settings(data_path=tmp_path / "missing.db")) == []


def test_the_registry_collects_the_hooks(registry: ToolRegistry, settings: Settings) -> None:
    assert registry.modules["common"].entity_names is not None
    assert "面霜" in registry.entity_names(settings)


def test_a_failing_hook_means_no_masking_not_a_crash(
    registry: ToolRegistry, settings: Settings
) -> None:
    def broken(_: Settings) -> list[str]:
        raise OSError("disk gone")

    common = registry.modules["common"]
    modules = [BusinessModule(common.manifest, common.tools, broken)]
    assert entity_masker(ToolRegistry(modules), settings, []) is NO_MASK


def _manifest(name: str, keywords: list[str], anchors: list[str] = ()) -> ModuleManifest:  # type: ignore[assignment]
    return ModuleManifest(
        name=name,
        title_zh=name,
        title_en=name,
        description="d",
        keywords=keywords,
        anchors=list(anchors),
    )


TREND = _manifest("category_trend", ["类目", "销售额", "compare"], ["新品占比"])
NEW = _manifest("new_product", ["新品", "销售额", "price band"])
FLOW = _manifest("competitor_flow", ["same price band", "compare"])


def test_a_longer_keyword_of_another_module_wins() -> None:
    hits = module_hits("智能手表的新品占比这两年有什么变化", [TREND, NEW, FLOW])
    assert hits["category_trend"].anchors == ["新品占比"]
    assert hits["new_product"].keywords == []  # '新品' sits inside '新品占比'
    hits = module_hits("我的新品卖得怎么样", [TREND, NEW, FLOW])
    assert hits["new_product"].keywords == ["新品"]
    hits = module_hits("rivals in the same price band", [TREND, NEW, FLOW])
    assert hits["competitor_flow"].keywords == ["same price band"]
    assert hits["new_product"].keywords == []


def test_a_keyword_two_modules_share_is_evidence_for_neither() -> None:
    hits = module_hits("面霜类目的销售额, compare them", [TREND, NEW, FLOW])
    assert hits["category_trend"].keywords == ["类目"]
    assert hits["new_product"].keywords == []
    assert hits["competitor_flow"].keywords == []


def test_masked_examples_pick_the_ask_not_the_subject(loader: ContextLoader) -> None:
    """The same question, compared with names and without them: the name pulled it to the
    module whose examples mention the same products; without it the ask decides."""
    question = "空气炸锅和破壁机哪个市场更大、增长更快？"
    manifests = [loader.registry.modules[n].manifest for n in loader.registry.business_modules()]
    masked = ModuleIndex.build(
        manifests, loader.library.cases, loader.settings.cache_dir, loader_masker(loader)
    )
    plain = ModuleIndex.build(manifests, loader.library.cases, loader.settings.cache_dir)
    assert masked.masker.mask(question) == "某类目和某类目哪个市场更大、增长更快？"
    best_masked = max(masked.scores(question).items(), key=lambda kv: kv[1])[0]
    best_plain = max(plain.scores(question).items(), key=lambda kv: kv[1])[0]
    assert best_masked == "category_trend"
    assert best_plain != "category_trend"


def loader_masker(loader: ContextLoader) -> Masker:
    classifier = loader.classifier
    assert isinstance(classifier, OfflineClassifier) and classifier.index is not None
    return classifier.index.masker


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Compare the buyer demographics of Toner, Cleanser and Eye cream", {"consumer_insight"}),
        ("面霜这个细分现在盘子有多大？", {"category_trend"}),
    ],
)
async def test_names_do_not_add_modules(
    loader: ContextLoader, question: str, expected: set[str]
) -> None:
    hits = await loader.retriever.asearch(question, k=8)
    manifests = [loader.registry.modules[n].manifest for n in loader.registry.business_modules()]
    result = await loader.classifier.identify(Evidence(question, None, manifests, hits))
    assert set(result.selected) == expected
