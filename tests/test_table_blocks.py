"""Tables of collected data are rendered by the service: the analyst writes a marker, the
stream puts the table in its place, and the analyst is charged for what it wrote."""

from __future__ import annotations

from collections.abc import AsyncIterator

from deepagent.analysis import AnalysisInput, CollectedResult, offline_analysis
from deepagent.analysis.offline import marked_report
from deepagent.analysis.prompt import analyst_messages
from deepagent.analysis.stream import AnalysisStream
from deepagent.analysis.table_blocks import TableBlock, expand, expand_text, table_blocks
from deepagent.core.settings import Settings
from deepagent.llm.pacing import approx_tokens

BLOCKS = {"T1": TableBlock("T1", "get_price_bands (b)", ("| a |", "|:---|", "| 1 |", "", "src"))}


def _bands() -> AnalysisInput:
    bands = [
        {"id": i, "label": f"¥{i * 100}-{i * 100 + 100}", "gmv": 1000.0 * i, "gmv_share": 0.1 * i}
        for i in range(1, 5)
    ]
    res = CollectedResult(action_id="bands", tool="get_price_bands", status="ok",
                          data={"category": "连衣裙", "bands": bands},
                          source="New products / price_band_metrics / 2025-12")  # fmt: skip
    return AnalysisInput(question="连衣裙各价格带的GMV分布如何？", question_type="analysis",
                         collected=[res])  # fmt: skip


async def _chunks(*parts: str) -> AsyncIterator[str]:
    for part in parts:
        yield part


async def _expanded(*parts: str) -> list[str]:
    return [c async for c in expand(_chunks(*parts), BLOCKS)]


async def test_a_marker_split_across_chunks_becomes_its_table() -> None:
    out = await _expanded("intro\n[[tab", "le T1]]\n", "after\n")
    assert "".join(out) == "intro\n| a |\n|:---|\n| 1 |\n\nsrc\nafter\n"


async def test_text_streams_on_and_only_whole_marker_lines_are_replaced() -> None:
    out = await _expanded("Hello", " world [[table T1]]\n", "[x] item\n", "[[table T9]]\n", "end")
    assert out[0] == "Hello"  # not held back for the rest of its line
    assert "".join(out) == "Hello world [[table T1]]\n[x] item\nend"  # unknown marker dropped


def test_the_templated_analyst_writes_markers_and_the_reader_gets_the_tables() -> None:
    inp = _bands()
    written, blocks = marked_report(inp)
    assert blocks == table_blocks(inp)  # what the service lists for a model
    assert list(blocks) == ["T1"] and "[[table T1]]" in written and "|:---" not in written
    reader = expand_text(written, blocks)
    assert reader == offline_analysis(inp) and "| ¥100-200 |" in reader
    assert "来源：" in blocks["T1"].text  # the source line comes with the table


def test_the_analyst_prompt_lists_the_tables_and_the_marker_rule() -> None:
    inp = _bands()
    system, user = analyst_messages(inp, table_blocks(inp))
    assert "[[table T1]] get_price_bands (bands)" in user and "[[table T1]]" in system
    system, user = analyst_messages(inp)  # the analyst writes its tables itself
    assert "<tables>\n(none)\n</tables>" in user and "left-aligned columns" in system


async def test_the_analyst_is_charged_for_what_it_wrote_not_for_the_tables() -> None:
    inp, charged = _bands(), {}
    for mode in ("service", "model"):
        stream = AnalysisStream(inp, None, Settings(analyst_tables=mode))
        text = "".join([c async for c in stream.chunks()])
        assert text == offline_analysis(inp)  # the reader gets the same answer either way
        charged[mode] = stream.output_tokens
    assert charged["model"] == approx_tokens(offline_analysis(inp))
    assert charged["service"] < charged["model"] - 40


async def test_the_offline_analyst_reads_a_repeated_prompt_prefix_from_the_cache() -> None:
    """Like every other model call of the latency model: the skills lead the analyst's
    user part, so runs of the same modules share a cached prefix."""
    from deepagent.llm.pacing import PrefixCache

    inp = _bands().model_copy(update={"skills": ["# Price bands\n" + "Read the bands. " * 400]})
    other = inp.model_copy(update={"question": "连衣裙哪个价格带卖得最好？"})
    settings = Settings(offline_prefill_tokens_per_s={"analyst": 1e9})
    cache = PrefixCache()
    for each in (inp, other):
        stream = AnalysisStream(each, None, settings, cache)
        assert "".join([c async for c in stream.chunks()]) == offline_analysis(each)
    assert cache.hit_tokens > 1000  # the second prompt shares system and skills


async def test_a_listed_answer_s_items_are_rendered_by_the_service_too() -> None:
    """A lookup asking for a list: the analyst writes the head line and a marker, the
    reader gets the numbered items (the same answer as before), the analyst is charged
    for the head line only."""
    top = [{"id": i, "name_zh": f"面霜{i}", "name_en": f"Cream {i}", "price": 99.0 + i,
            "gmv": 10000.0 - i} for i in range(1, 11)]  # fmt: skip
    res = CollectedResult(action_id="top", tool="get_top_products", status="ok",
                          data={"category": "面霜", "month": "2025-12", "products": top},
                          source="New products / product_metrics / 2025-12")  # fmt: skip
    inp = AnalysisInput(question="面霜卖得最好的10个商品分别是什么？", question_type="lookup",
                        collected=[res])  # fmt: skip
    written, blocks = marked_report(inp)
    assert "[[table T2]]" in written and "1. 面霜1" not in written  # after the table T1
    reader = expand_text(written, blocks)
    assert reader == offline_analysis(inp)
    assert "1. 面霜1" in reader and "10. 面霜10" in reader
    stream = AnalysisStream(inp, None, Settings())
    assert "".join([c async for c in stream.chunks()]) == reader
    assert stream.output_tokens < approx_tokens(reader) / 3
