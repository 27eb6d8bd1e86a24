"""The run console in real headless Chromium (Debian's, driven by playwright; no browser is
downloaded): /console served by a real API process, and the page `deepagent view` writes.

Screenshots: set ``DEEPAGENT_DOC_SCREENSHOTS=1`` to write them to docs/console/ (the ones
docs/console.md shows); otherwise they go to each test's tmp dir, as artifacts.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page, async_playwright

from deepagent.distributed.cluster import ROOT
from deepagent.testing.browser import chromium_path
from tests.questions import LOOKUP, SKINCARE
from tests.service_helpers import CLI, Api, api_fixtures

VAGUE = "帮我分析一下"
MARKUP = '<img src="x" onerror="console.error(1)">'
SHOTS = "DEEPAGENT_DOC_SCREENSHOTS"
pytestmark = pytest.mark.asyncio(loop_scope="session")

api, client = api_fixtures(
    {"full": ("*", 1000, 50), "acme": ("*", 1000, 50, "--tenant", "acme")},
    # slow enough to watch: each tool call 300 ms, the planner 300 ms, the analyst streams
    DEEPAGENT_TOOL_LATENCY_MS='{"*": 300}',
    DEEPAGENT_OFFLINE_LATENCY_MS='{"planner": 300}',
    DEEPAGENT_OFFLINE_TOKENS_PER_S='{"analyst": 400}',
)

ROUND_ONE = 'section.round[data-round="1"] g.node'
NODES = f"""() => [...document.querySelectorAll('{ROUND_ONE}')].map(n => ({{
  id: n.dataset.nodeId, status: n.dataset.status, copies: Number(n.dataset.copies),
  fanOut: n.classList.contains('fan-out')}}))"""
ALL_DONE = """() => { const n = [...document.querySelectorAll('section.round g.node')];
  return n.length > 0 && n.every(x => x.dataset.status === 'done'); }"""


@dataclass
class Tab:
    """A browser page and what it logged: console errors, uncaught errors, requests."""

    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    binary = chromium_path()
    if binary is None:
        pytest.fail(
            "no chromium on PATH: the console tests drive Debian's chromium"
            " (`make browser`, or apt-get install -y chromium)"
        )
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(
            executable_path=binary, args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        await launched.close()


@pytest.fixture
async def tab(browser: Browser) -> AsyncIterator[Tab]:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(30_000)
    seen = Tab(page)
    page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.errors.append(f"uncaught: {e}"))
    page.on("request", lambda r: seen.requests.append(r.url))
    yield seen
    await context.close()


def shot(tmp_path: Path, name: str) -> Path:
    if os.environ.get(SHOTS) == "1":
        (ROOT / "docs" / "console").mkdir(exist_ok=True)
        return ROOT / "docs" / "console" / name
    return tmp_path / name


async def sign_in(tab: Tab, api: Api, key: str = "full") -> None:
    await tab.page.goto(f"{api.server.url}/console")
    await tab.page.fill("#api-key", api.keys[key])
    await tab.page.click("#sign-in button[type=submit]")
    await tab.page.wait_for_selector("#run-list tr.run-row, #run-list td.muted")


async def nodes(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await page.evaluate(NODES)
    return found


async def count(page: Page, selector: str) -> int:
    return len(await page.query_selector_all(selector))


async def test_a_run_started_in_the_console_is_drawn_live(
    tab: Tab, api: Api, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Sign in, start the skin-care question from the form, watch its Action Tree fill in
    over SSE, reload mid-run (same tree), then the finished run: 5 actions, fan-outs of
    >= 60 copies, all done, a timeline with its critical path, the analysis."""
    page = tab.page
    served = await client.get("/console")
    assert "script-src 'self'" in served.headers["content-security-policy"]
    await sign_in(tab, api)
    await page.fill("#start-form textarea[name=question]", SKINCARE)
    await page.select_option("#start-form select[name=mode]", "tree")
    await page.click("#start-form button[type=submit]")
    await page.wait_for_url(re.compile(r"#/runs/[0-9a-f]+$"))
    run_id = page.url.rsplit("/", 1)[1]
    await page.wait_for_function(  # drawn while the run is still going
        f"""() => document.querySelector('section.run')?.dataset.status === 'running'
        && document.querySelectorAll('{ROUND_ONE}').length === 5
        && [...document.querySelectorAll('{ROUND_ONE}')].some(n => n.dataset.status !== 'done')"""
    )
    live = await nodes(page)
    assert {n["status"] for n in live} - {"done"} <= {"planned", "running"}, live
    await page.reload()  # mid-run: the same tree again, from the service
    await page.wait_for_function(f"() => document.querySelectorAll('{ROUND_ONE}').length === 5")
    assert [n["id"] for n in await nodes(page)] == [n["id"] for n in live]
    assert await page.text_content("h2.question") == SKINCARE
    await page.wait_for_selector('section.run[data-status="completed"]', timeout=60_000)
    await page.wait_for_function(ALL_DONE)
    done = await nodes(page)
    assert len(done) == 5 and all(n["status"] == "done" for n in done), done
    assert sum(n["copies"] for n in done if n["fanOut"]) >= 60, done
    assert await count(page, "svg.gantt rect.bar") >= 60
    assert await count(page, "svg.gantt rect.bar.critical") >= 2
    assert await count(page, "svg.dag g.node.critical") >= 1
    assert "coverage complete" in (await page.text_content(".facts") or "")
    assert (await page.text_content(".analysis") or "").strip()
    widest = max((n for n in done if n["fanOut"]), key=lambda n: n["copies"])
    await page.click(f'g.node[data-node-id="{widest["id"]}"]')
    await page.wait_for_selector("#node-panel:not([hidden]) table.copies", state="attached")
    assert await count(page, "#node-panel tr.copy") == widest["copies"]
    await page.click("#node-panel details.copy-list summary")  # the copy list unfolds
    await page.wait_for_selector("#node-panel tr.copy.st-done")
    await page.screenshot(path=shot(tmp_path, "run.png"))
    await page.click("#node-panel button.close")
    timeline = await page.query_selector(".timeline")
    assert timeline is not None
    await timeline.screenshot(path=shot(tmp_path, "timeline.png"))
    await page.click("a.back")
    row = f'tr.run-row[data-run-id="{run_id}"]'
    await page.wait_for_function(
        f"""() => document.querySelector('{row} td.cov')?.textContent.includes('complete')"""
    )
    await page.screenshot(path=shot(tmp_path, "runs.png"))
    assert all(u.startswith(api.server.url) for u in tab.requests), tab.requests  # no CDN
    assert tab.errors == []


async def test_a_question_of_the_run_is_answered_in_place(
    tab: Tab, api: Api, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """A run waiting on call_human shows its question (the same after a reload), takes
    the answer from the page and then completes there; another is cancelled from it."""
    waiting = [
        await client.post("/v1/runs?wait=true", json={"question": VAGUE}, headers=api.headers())
        for _ in range(2)
    ]
    assert [w.json()["status"] for w in waiting] == ["needs_input"] * 2, waiting[0].text[:300]
    page = tab.page
    await sign_in(tab, api)
    await page.goto(f"{api.server.url}/console#/runs/{waiting[1].json()['run_id']}")
    await page.click("#cancel-run")
    await page.wait_for_selector('section.run[data-status="cancelled"]')
    assert await count(page, "#ask-form, #cancel-run") == 0
    started = waiting[0]
    run_id = started.json()["run_id"]
    await page.goto(f"{api.server.url}/console#/runs/{run_id}")
    await page.wait_for_selector("#ask-form .pending-question")
    asked = await page.text_content(".pending-question")
    assert asked and asked == started.json()["record"]["pending_question"]
    await page.reload()
    await page.wait_for_selector("#ask-form .pending-question")
    assert await page.text_content(".pending-question") == asked
    await page.screenshot(path=shot(tmp_path, "ask.png"))
    await page.fill("#answer", LOOKUP)
    await page.click("#ask-form button[type=submit]")
    await page.wait_for_selector('section.run[data-status="completed"]', timeout=60_000)
    await page.wait_for_function(ALL_DONE)
    assert await count(page, "#ask-form") == 0
    record = (await client.get(f"/v1/runs/{run_id}", headers=api.headers())).json()["record"]
    assert record["status"] == "completed" and record["rounds"][0]["decision"] == "call_human"
    assert tab.errors == []


async def test_another_tenants_key_sees_none_of_the_runs(
    tab: Tab, api: Api, client: httpx.AsyncClient
) -> None:
    """The list of a key of tenant acme holds its own run only (its question, markup
    included, shown as text), and a run of the default tenant is not found."""
    body = {"question": LOOKUP, "user_id": "tenant-check"}
    ours = await client.post("/v1/runs?wait=true", json=body, headers=api.headers())
    hostile = {"question": f"{MARKUP} {LOOKUP}", "user_id": "tenant-check"}
    theirs = await client.post("/v1/runs?wait=true", json=hostile, headers=api.headers("acme"))
    default_ids = {
        r["run_id"]
        for r in (await client.get("/v1/runs?limit=100", headers=api.headers())).json()["data"]
    }
    assert ours.json()["run_id"] in default_ids
    await sign_in(tab, api, "acme")
    listed = await tab.page.eval_on_selector_all(
        "tr.run-row", "rows => rows.map(r => r.dataset.runId)"
    )
    assert listed == [theirs.json()["run_id"]]
    assert not set(listed) & default_ids
    shown = await tab.page.text_content("tr.run-row td.q a")
    assert shown == hostile["question"] and await count(tab.page, "main img") == 0  # text only
    await tab.page.goto(f"{api.server.url}/console#/runs/{ours.json()['run_id']}")
    await tab.page.wait_for_selector("section.run.missing")  # another tenant's run: 404
    assert await count(tab.page, "svg.dag") == 0
    assert tab.errors and all("404" in e for e in tab.errors), tab.errors


def failed_variant(record: dict[str, Any]) -> dict[str, Any]:
    """The record with one price-band copy failed and the top-product lookups that
    depend on it skipped (as the executor records a dependency's failure)."""
    broken = copy.deepcopy(record)
    actions = broken["rounds"][0]["actions"]
    bands = [a for a in actions if a["tool"] == "get_price_bands"]
    bands[3] |= {"status": "failed", "error": "price_band_metrics: timed out", "output_preview": ""}
    top = next(a for a in actions if a["tool"] == "get_top_products")
    reason = f"skipped: {bands[3]['id']} failed"
    skipped = top | {"item_index": None, "status": "skipped", "duration_ms": 0.0, "args": {},
                     "error": reason, "output_preview": ""}  # fmt: skip
    rest = [a for a in actions if a["tool"] != "get_top_products"]
    broken["rounds"][0]["actions"] = [*rest, skipped]
    return broken


def view_page(record: dict[str, Any], path: Path, env: dict[str, str]) -> Path:
    """``deepagent view`` of ``record`` (written to ``path``): the page it printed."""
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(
        [*CLI, "view", str(path)], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    page = Path(done.stdout.strip())
    assert page == path.with_suffix(".html").resolve() and page.is_file(), done.stdout
    return page


async def test_deepagent_view_writes_a_page_that_draws_the_run(
    tab: Tab, api: Api, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """One self-contained HTML file per RunRecord (no server, no request off the file):
    the tree of the finished run, and of a run with a failed action and what it skipped."""
    body = {"question": SKINCARE}
    ran = await client.post("/v1/runs?wait=true", json=body, headers=api.headers())
    record = ran.json()["record"]
    page_file = view_page(record, tmp_path / "run.json", api.env)
    html = page_file.read_text(encoding="utf-8")
    assert not re.search(r'(?:src|href)="(?!#|data:)', html)  # everything inline
    page = tab.page
    await page.goto(page_file.as_uri())
    await page.wait_for_function(ALL_DONE)
    assert len(await nodes(page)) == 5 and await count(page, "svg.gantt rect.bar.critical") >= 2
    broken_file = view_page(failed_variant(record), tmp_path / "failed.json", api.env)
    await page.goto(broken_file.as_uri())
    await page.wait_for_selector(f"{ROUND_ONE}[data-status=failed]")
    drawn = {n["id"]: n for n in await nodes(page)}
    statuses = {drawn[i]["status"] for i in drawn}
    assert statuses == {"done", "failed", "skipped"}, drawn
    failed = next(n for n in drawn.values() if n["status"] == "failed")
    assert await count(page, "svg.dag path.edge-broken") >= 1
    await page.click(f'g.node[data-node-id="{failed["id"]}"]')
    await page.wait_for_selector("#node-panel tr.copy.st-failed")
    assert "timed out" in (await page.text_content("#node-panel tr.copy.st-failed") or "")
    await page.screenshot(path=shot(tmp_path, "failed.png"))
    assert all(u.startswith("file://") for u in tab.requests), tab.requests
    assert tab.errors == []
