"""FileSystem offload: the per-run workspace, path confinement, cleanup and the tools."""

from __future__ import annotations

import json
import os
import re
from datetime import date
from pathlib import Path

import pytest

from deepagent.core.schema import ToolResult
from deepagent.core.settings import Settings
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from deepagent.tools.offload.workspace import Workspace, WorkspaceError, cleanup, should_offload
from deepagent.tools.registry import load_module

DATA = {
    "query": "品类趋势",
    "items": [{"month": f"2025-{m:02d}", "gmv": m * 1000.5, "品牌": "甲"} for m in range(1, 13)],
}


def big_result() -> ToolResult:
    return ToolResult.success(DATA, "12 months of GMV for 品类趋势", "trend / gmv", total=12)


def pretty(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path, "r1")


def offloaded_path(result: ToolResult) -> str:
    return str(result.data["offloaded"]["path"])


# --- offload ------------------------------------------------------------------------------


def test_should_offload_only_large_ok_results() -> None:
    assert should_offload(big_result(), 100)
    assert not should_offload(big_result(), 10_000)
    assert not should_offload(ToolResult.failure("failed", "x" * 500), 10)
    assert not should_offload(ToolResult.empty("nothing", data={"rows": ["x" * 500]}), 10)


def test_offload_writes_exact_json_and_returns_a_preview(ws: Workspace, tmp_path: Path) -> None:
    assert not (tmp_path / "r1").exists()  # created lazily
    out = ws.offload("a1", big_result(), preview_chars=50)
    text = pretty(DATA)
    file = tmp_path / "r1" / "results" / "a1.json"
    assert file.read_text(encoding="utf-8") == text
    assert json.loads(file.read_text(encoding="utf-8")) == DATA
    assert out.data == {
        "offloaded": {
            "path": "results/a1.json",
            "bytes": len(text.encode("utf-8")),
            "chars": len(text),
            "items": 12,
        },
        "preview": text[:50],
    }
    assert out.ok and out.truncated and out.total == 12 and out.source == "trend / gmv"
    size = len(text.encode("utf-8"))
    assert out.plain_text == (
        f"[full result in results/a1.json ({size} bytes): read_result] "
        "12 months of GMV for 品类趋势"
    )
    cut = ws.offload("a2", big_result(), preview_chars=5)
    assert cut.plain_text == f"[full result in results/a2.json ({size} bytes): read_result] 12 mo"
    assert not [p for p in (tmp_path / "r1" / "results").iterdir() if p.name.startswith(".")]


def test_offload_of_list_data_counts_items(ws: Workspace) -> None:
    out = ws.offload("rows", ToolResult.success([1, 2, 3], "three", "s"), preview_chars=10)
    assert out.data["offloaded"]["items"] == 3
    out = ws.offload("obj", ToolResult.success({"x": "y"}, "one", "s"), preview_chars=10)
    assert out.data["offloaded"]["items"] is None


def test_same_action_id_gets_distinct_files(ws: Workspace, tmp_path: Path) -> None:
    first = ws.offload("a1", big_result(), preview_chars=10)
    second = ws.offload("a1", ToolResult.success({"n": 2}, "two", "s"), preview_chars=10)
    third = ws.offload("a1", ToolResult.success({"n": 3}, "three", "s"), preview_chars=10)
    paths = [offloaded_path(r) for r in (first, second, third)]
    assert paths == ["results/a1.json", "results/a1-2.json", "results/a1-3.json"]
    results = tmp_path / "r1" / "results"
    assert json.loads((results / "a1.json").read_text(encoding="utf-8")) == DATA
    assert json.loads((results / "a1-2.json").read_text(encoding="utf-8")) == {"n": 2}


def test_action_ids_are_sanitised(ws: Workspace) -> None:
    out = ws.offload("../../etc/pass wd", big_result(), preview_chars=10)
    assert offloaded_path(out) == "results/_.._etc_pass_wd.json"
    assert offloaded_path(ws.offload("...", big_result(), preview_chars=10)) == (
        "results/result.json"
    )


def test_bad_run_ids_are_refused(tmp_path: Path) -> None:
    for run_id in ["", "..", "a/b", "../x", "a\\b"]:
        with pytest.raises(WorkspaceError, match="invalid run id"):
            Workspace(tmp_path, run_id)


# --- list and read ------------------------------------------------------------------------


def test_list_results(ws: Workspace) -> None:
    assert ws.list_results() == []
    ws.offload("b", big_result(), preview_chars=10)
    ws.offload("a", ToolResult.success({"n": 1}, "one", "s"), preview_chars=10)
    listed = ws.list_results()
    assert [f["path"] for f in listed] == ["results/a.json", "results/b.json"]
    assert listed[1]["bytes"] == len(pretty(DATA).encode("utf-8"))
    assert str(listed[0]["modified"]).endswith("+00:00")


def test_paging_concatenates_to_the_whole_file(ws: Workspace) -> None:
    path = offloaded_path(ws.offload("a1", big_result(), preview_chars=10))
    text = pretty(DATA)
    pages, offset = [], 0
    while True:
        page = ws.read_result(path, offset=offset, limit=97)
        assert page["total_chars"] == len(text) and page["path"] == path
        pages.append(page["text"])
        if page["next_offset"] is None:
            break
        offset = page["next_offset"]
    assert "".join(pages) == text
    assert len(pages) == -(-len(text) // 97)
    last = ws.read_result(path, offset=len(text) - 3, limit=10)
    assert last["text"] == text[-3:] and last["next_offset"] is None
    whole = ws.read_result(path, limit=20_000)
    assert whole["text"] == text and whole["next_offset"] is None


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../x", "contains '..'"),
        ("results/../../x", "contains '..'"),
        ("/etc/passwd", "absolute path"),
        ("results\\a1.json", "backslash"),
        ("results/a1.json\x00", "NUL"),
        ("", "empty path"),
        ("results/missing.json", "no such result file"),
        ("results", "only files under results/"),
        ("results/sub", "not a regular file"),
        ("notes.txt", "only files under results/"),
        ("results/escape.json", "outside the workspace"),
        ("results/inside.json", "only files under results/"),
    ],
)
def test_paths_are_confined(ws: Workspace, tmp_path: Path, path: str, reason: str) -> None:
    ws.offload("a1", big_result(), preview_chars=10)
    run = tmp_path / "r1"
    (run / "results" / "sub").mkdir()
    (run / "notes.txt").write_text("private", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret", encoding="utf-8")
    (run / "results" / "escape.json").symlink_to(secret)
    (run / "results" / "inside.json").symlink_to(run / "notes.txt")
    with pytest.raises(WorkspaceError, match=re.escape(reason)):
        ws.read_result(path)


def test_reading_before_anything_was_written(ws: Workspace) -> None:
    with pytest.raises(WorkspaceError, match="no results have been written"):
        ws.read_result("results/a1.json")


def test_offset_and_limit_bounds(ws: Workspace) -> None:
    path = offloaded_path(ws.offload("a1", big_result(), preview_chars=10))
    total = len(pretty(DATA))
    with pytest.raises(WorkspaceError, match="offset must be >= 0"):
        ws.read_result(path, offset=-1)
    with pytest.raises(WorkspaceError, match="limit must be between 1 and 20000"):
        ws.read_result(path, limit=0)
    with pytest.raises(WorkspaceError, match="limit must be between 1 and 20000"):
        ws.read_result(path, limit=20_001)
    with pytest.raises(WorkspaceError, match="past the end"):
        ws.read_result(path, offset=total + 1)
    end = ws.read_result(path, offset=total)
    assert end["text"] == "" and end["next_offset"] is None


# --- cleanup ------------------------------------------------------------------------------


def make_run(root: Path, name: str, mtime: float) -> Path:
    run = root / name
    (run / "results").mkdir(parents=True)
    (run / "results" / "a.json").write_text("{}", encoding="utf-8")
    os.utime(run, (mtime, mtime))
    return run


def test_cleanup_deletes_old_workspaces_and_keeps_newest_and_recent(tmp_path: Path) -> None:
    now = 1_000_000.0
    old = [make_run(tmp_path, f"old{i}", now - 1000 - i) for i in range(3)]
    recent = make_run(tmp_path, "recent", now - 10)
    deleted = cleanup(tmp_path, max_age_s=100, keep_latest=2, now=now)
    assert deleted == sorted(old[1:])  # old0 is the second newest, kept by keep_latest
    assert recent.exists() and old[0].exists()
    assert not old[1].exists() and not old[2].exists()
    assert cleanup(tmp_path, max_age_s=100, now=now) == [old[0]]
    assert recent.exists()
    assert cleanup(tmp_path / "missing", max_age_s=0) == []


def test_cleanup_skips_symlinks_and_files(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    victim = make_run(outside, "victim", 1.0)
    (root / "link").symlink_to(victim, target_is_directory=True)
    (root / "stray.txt").write_text("x", encoding="utf-8")
    os.utime(root / "stray.txt", (1.0, 1.0))
    inner = make_run(root, "run", 1.0)
    (inner / "results" / "out").symlink_to(outside, target_is_directory=True)
    assert cleanup(root, max_age_s=10, now=1_000.0) == [inner]
    assert (victim / "results" / "a.json").exists()
    assert (root / "link").is_symlink() and (root / "stray.txt").exists()


def test_cleanup_argument_bounds(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="max_age_s"):
        cleanup(tmp_path, max_age_s=-1)
    with pytest.raises(WorkspaceError, match="keep_latest"):
        cleanup(tmp_path, max_age_s=1, keep_latest=-1)


# --- the tools ----------------------------------------------------------------------------


def make_executor(params: dict[str, object], **settings: object) -> ToolExecutor:
    registry = ToolRegistry([load_module("deepagent.tools.offload.plugin")])
    ctx = ToolContext(
        settings=Settings(**settings),  # type: ignore[arg-type]
        now=date(2026, 1, 15),
        run_id="r1",
        params=params,
    )
    return ToolExecutor(registry, ctx)


async def test_tools_list_and_page_through_a_result(tmp_path: Path) -> None:
    ex = make_executor({"workspace_root": str(tmp_path)})
    assert sorted(ex.registry.tools) == ["list_results", "read_result"]
    empty = await ex.call("list_results", {})
    assert empty.ok and empty.data == {"files": []}
    path = offloaded_path(Workspace(tmp_path, "r1").offload("a1", big_result(), 10))
    listed = await ex.call("list_results", {})
    assert listed.ok and [f["path"] for f in listed.data["files"]] == [path]
    assert path in listed.plain_text
    text, offset = "", 0
    while offset is not None:
        page = await ex.call("read_result", {"path": path, "offset": offset, "limit": 300})
        assert page.ok and not page.truncated, page.plain_text
        text += page.data["text"]
        offset = page.data["next_offset"]
    assert text == pretty(DATA)
    assert page.plain_text.endswith("end of file")


async def test_read_result_pages_are_fitted_to_the_context_cap(tmp_path: Path) -> None:
    big = {"rows": [{"name": f'"引号" {i}', "v": i} for i in range(400)]}
    path = offloaded_path(
        Workspace(tmp_path, "r1").offload("a1", ToolResult.success(big, "", "s"), 0)
    )
    ex = make_executor({"workspace_root": str(tmp_path)}, max_result_chars=1000)
    text, offset = "", 0
    while offset is not None:
        page = await ex.call("read_result", {"path": path, "offset": offset, "limit": 5000})
        assert page.ok and set(page.data) >= {"text", "next_offset"}, page.data
        assert len(json.dumps(page.data, ensure_ascii=False)) <= 1000
        text += page.data["text"]
        offset = page.data["next_offset"]
    assert text == pretty(big)


async def test_tool_errors_are_values(tmp_path: Path) -> None:
    ex = make_executor({"workspace_root": str(tmp_path)})
    Workspace(tmp_path, "r1").offload("a1", big_result(), 10)
    bad = await ex.call("read_result", {"path": "../x"})
    assert not bad.ok and bad.error is not None and bad.error.kind == "invalid_args"
    assert "contains '..'" in bad.error.message
    missing = await ex.call("read_result", {"path": "results/nope.json"})
    assert missing.error is not None and missing.error.kind == "invalid_args"
    assert "no such result file" in missing.error.message
    bounds = await ex.call("read_result", {"path": "results/a1.json", "limit": 0})
    assert bounds.error is not None and bounds.error.kind == "invalid_args"


async def test_tools_refuse_without_a_workspace_root() -> None:
    ex = make_executor({})
    for name, args in [("list_results", {}), ("read_result", {"path": "results/a1.json"})]:
        result = await ex.call(name, args)
        assert not result.ok and result.error is not None
        assert result.error.kind == "refused"
        assert result.error.message == "the FileSystem is not enabled for this run"


def test_the_previous_plugin_path_loads_the_workspace_tools_once(tmp_path: Path) -> None:
    settings = Settings(modules=["deepagent.workspace_tools"], filesystem=True,
                        workspace_root=tmp_path, entry_points=False)  # fmt: skip
    registry = ToolRegistry.load(settings)
    assert {"list_results", "read_result"} <= set(registry.tools)
