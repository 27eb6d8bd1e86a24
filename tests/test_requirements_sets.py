"""The committed requirements sets (tuning, reporting, blind): they load, every symbol
resolves on the full database, labels use the canonical names, quote the question and
follow the conventions of eval/sets/README.md, and no question is in two sets."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from eval.harness.requirements_set import (
    DEFAULT_SET,
    DEV_SET,
    RequirementsCase,
    read_set,
    resolve_on,
)

BLIND_SET = DEFAULT_SET.with_name("requirements_blind.jsonl")
BLIND2_SET = DEFAULT_SET.with_name("requirements_blind2.jsonl")
BLIND3_SET = DEFAULT_SET.with_name("requirements_blind3.jsonl")
BLIND4_SET = DEFAULT_SET.with_name("requirements_blind4.jsonl")
BLIND5_SET = DEFAULT_SET.with_name("requirements_blind5.jsonl")
BLIND6_SET = DEFAULT_SET.with_name("requirements_blind6.jsonl")
BLIND7_SET = DEFAULT_SET.with_name("requirements_blind7.jsonl")
BLIND8_SET = DEFAULT_SET.with_name("requirements_blind8.jsonl")
TUNING_SETS = [DEFAULT_SET.with_name(f"requirements_blind{n}.jsonl") for n in (9, 10, 11, 12)]
"""Written blind in session 9, their errors read: tuning sets."""
MEASURES = set(
    "gmv units buyers sellers avg_price price new_product_share competition_index growth "
    "share rating review_count conversion search_volume uplift discount".split()
)
ASPECTS = set(
    "selling_points complaints reviews audience competitor_flow competitors search_terms "
    "seasonality launch_timing price_bands trend subcategories".split()
)
FIRST_MONTH, LAST_MONTH = "2024-01", "2025-12"


@pytest.fixture(
    scope="module",
    params=[
        DEFAULT_SET,
        DEV_SET,
        BLIND_SET,
        BLIND2_SET,
        BLIND3_SET,
        BLIND4_SET,
        BLIND5_SET,
        BLIND6_SET,
        BLIND7_SET,
        BLIND8_SET,
        *TUNING_SETS,
    ],
    ids=[
        "reporting",
        "dev",
        "blind",
        "blind2",
        "blind3",
        "blind4",
        "blind5",
        "blind6",
        "blind7",
        "blind8",
        "blind9",
        "blind10",
        "blind11",
        "blind12",
    ],
)
def committed(request: pytest.FixtureRequest) -> list[RequirementsCase]:
    return read_set(request.param)


def test_committed_sets_resolve_every_symbol_on_the_full_database(
    committed: list[RequirementsCase], full_db: Path
) -> None:
    refs = resolve_on(committed, full_db)
    for c, resolved in zip(committed, refs, strict=True):
        for subject, ref in zip(c.expected.subjects, resolved, strict=True):
            typed_only = subject.type in ("own_shop", "new_product")
            assert (ref is None) == typed_only, f"{c.id}: {subject}"
            if subject.type in ("category", "product", "campaign"):
                assert isinstance(ref, int), f"{c.id}: {subject} -> {ref!r}"


def test_committed_sets_use_canonical_names_and_quote_the_question(
    committed: list[RequirementsCase],
) -> None:
    for c in committed:
        e = c.expected
        where = f"{c.id}: "
        assert set(e.measures) <= MEASURES, where + str(e.measures)
        assert set(e.aspects) <= ASPECTS, where + str(e.aspects)
        assert len(set(e.measures)) == len(e.measures) and len(set(e.aspects)) == len(e.aspects)
        assert all(s.measure is None or s.measure in MEASURES for s in e.selection), where
        sources = [c.question, *c.conversation]
        texts = [x.text for x in e.subjects] + [x.text for x in e.periods]
        for text in texts + [x.text for x in e.selection]:
            assert text and any(text in source for source in sources), where + text
        has_cjk = bool(re.search(r"[\u4e00-\u9fff]", c.question))
        assert c.language == ("zh" if has_cjk else "en"), where


def test_committed_labels_follow_the_conventions(committed: list[RequirementsCase]) -> None:
    for c in committed:
        e, where = c.expected, f"{c.id}: "
        for p in e.periods:
            assert FIRST_MONTH <= p.start_month <= p.end_month <= LAST_MONTH, where
        if e.comparison:
            assert len(e.subjects) >= 2, where + "a comparison needs two subjects"
        for s in e.subjects:
            assert (s.ref is None) == (s.type in ("own_shop", "new_product")), where
        for chosen in e.selection:
            assert chosen.k is None or chosen.k >= 1, where
            if chosen.rule in ("main_band", "threshold"):
                assert chosen.k is None, where
        if c.page is not None:
            assert any(s.ref == {"$product": c.page.product_id} for s in e.subjects), where


def test_the_sets_are_disjoint_and_sized() -> None:
    reporting, dev = read_set(DEFAULT_SET), read_set(DEV_SET)
    blind, blind2 = read_set(BLIND_SET), read_set(BLIND2_SET)
    blind3, blind4, blind5 = read_set(BLIND3_SET), read_set(BLIND4_SET), read_set(BLIND5_SET)
    blind6, blind7, blind8 = read_set(BLIND6_SET), read_set(BLIND7_SET), read_set(BLIND8_SET)
    later = tuple(read_set(path) for path in TUNING_SETS)
    sets = (reporting, dev, blind, blind2, blind3, blind4, blind5, blind6, blind7, blind8, *later)
    for i, one in enumerate(sets):
        for other in sets[i + 1 :]:
            assert not {c.question for c in one} & {c.question for c in other}
            assert not {c.id for c in one} & {c.id for c in other}
    assert min(len(s) for s in (reporting, blind, blind2, blind3, blind4, *sets[6:])) >= 90
    assert len(dev) >= 40
    for cases in sets:
        languages = Counter(c.language for c in cases)
        assert min(languages["zh"], languages["en"]) >= 0.4 * len(cases)
    kinds = Counter(k for c in reporting for k in c.expected.out_of_scope)
    assert set(kinds) == {"platform", "period", "forecast", "unknown_name"}
    types = {s.type for c in reporting for s in c.expected.subjects}
    assert types == {"category", "product", "campaign", "brand", "own_shop", "new_product"}
