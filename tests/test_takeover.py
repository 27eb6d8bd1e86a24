"""A run taken over mid-analysis: the analysis stream a client assembles equals the
record (the splice continues it exactly, or restarts it once when the new text differs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from context_loader.loader import ContextLoader
from deepagent import events as ev
from deepagent.service.splice import AnalysisSplice, sent_analysis
from tests.service_helpers import ApiServer, create_key, env_for_api, sse, taken_over

SLOW = (
    "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
    "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？"
)


def assembled(seen: list[dict[str, Any]]) -> str:
    text: list[str] = []
    for e in seen:
        if e["event"] == "analysis_restarted":
            text = []
        elif e["event"] == "analysis_delta":
            text.append(e["data"]["text"])
    return "".join(text)


@pytest.mark.asyncio(loop_scope="session")
async def test_a_takeover_mid_analysis_continues_the_stream_exactly(
    sample_db: Path, loader: ContextLoader, tmp_path: Path
) -> None:
    settings = {"DEEPAGENT_OFFLINE_TOKENS_PER_S": '{"analyst": 60}', "DEEPAGENT_RUN_LEASE_S": "2"}
    env = env_for_api(sample_db, loader.settings.cache_dir, tmp_path, **settings)
    headers = {"Authorization": f"Bearer {create_key(env, 'k', '*', 100, 10)}"}
    first = ApiServer.start(env)
    before: list[dict[str, Any]] = []
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=60) as c:
            run_id = (await c.post("/v1/runs", json={"question": SLOW}, headers=headers)).json()[
                "run_id"
            ]
            async with c.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as r:
                async for item in sse(r):
                    before.append(item)
                    if sum(e["event"] == "analysis_delta" for e in before) >= 3:
                        break
    finally:
        first.kill()  # mid-analysis: three deltas are out
    seen, view = await taken_over(env, run_id, headers)
    assert view["status"] == "completed"
    assert [e["data"] for e in seen[: len(before)]] == [e["data"] for e in before]
    assert [int(e["id"]) for e in seen] == list(range(1, len(seen) + 1))
    assert assembled(seen) == view["record"]["analysis"]
    assert not any(e["event"] == "analysis_restarted" for e in seen)  # continued exactly


def delta(text: str) -> ev.AnalysisDelta:
    return ev.AnalysisDelta(text=text)


def test_the_splice_continues_a_prefix_and_restarts_a_different_text() -> None:
    same = AnalysisSplice("## 结论\n第一")
    out = [e for d in ("## ", "结论\n", "第一段", "。") for e in same.feed(delta(d))]
    assert [e.model_dump()["text"] for e in out] == ["段", "。"]
    other = AnalysisSplice("## 结论\n第一")
    out = [e for d in ("## ", "Summary", "...") for e in other.feed(delta(d))]
    assert [e.type for e in out] == ["analysis_restarted", "analysis_delta", "analysis_delta"]
    assert out[1].model_dump()["text"] == "## Summary"
    assert AnalysisSplice("").feed(delta("x")) == [delta("x")]
    stored = [
        (1, "analysis_delta", '{"text": "a"}'),
        (2, "analysis_restarted", "{}"),
        (3, "analysis_delta", '{"text": "b"}'),
        (4, "analysis_delta", '{"text": "c"}'),
    ]
    assert sent_analysis(stored) == "bc"
