"""`deepagent models check`: every endpoint role asked once, a fix per failure, exit 2 when
a configured role cannot be used.

The simulator (``deepagent.simllm``) on a free loopback port stands for a live endpoint, a
free port with nothing listening for a dead one; servers that report their window or
honour ``response_format`` are played by an ``httpx.MockTransport``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from deepagent.cli.app import build_app
from deepagent.cli.models_cmd import check_models
from deepagent.distributed.cluster import free_port
from deepagent.llm import ModelConfig
from deepagent.simllm import SimConfig
from deepagent.simllm.server import Running, serve_in_thread

SIM_ROLES = {
    "planner": "offline-planner",
    "subagent_planner": "offline-subagent-planner",
    "summarizer": "offline-summarizer",
    "analyst": "offline-analyst",
    "binder": "offline-binder",
    "module_classifier": "offline-module-classifier",
}


@pytest.fixture(scope="module")
def sim() -> Iterator[Running]:
    with serve_in_thread(SimConfig(seed=3)) as server:
        yield server


def run_check(models: dict[str, Any], *args: str) -> tuple[int, str]:
    env = {"DEEPAGENT_MODELS": json.dumps(models)}
    result = CliRunner().invoke(build_app(), ["models", "check", *args], env=env)
    return result.exit_code, result.stdout


def test_the_simulators_roles_are_usable_and_the_rest_offline(sim: Running) -> None:
    models = {
        role: {"kind": "openai", "model": name, "base_url": sim.base_url}
        for role, name in SIM_ROLES.items()
    }
    code, out = run_check(models, "--json", "--timeout", "10")
    assert code == 0, out
    report = json.loads(out)
    assert report["usable"] is True
    by_role = {r["role"]: r for r in report["roles"]}
    for role in SIM_ROLES:
        assert by_role[role]["usable"] and by_role[role]["reachable"], by_role[role]
        assert by_role[role]["fix"] is None
    assert by_role["requirements"]["kind"] == by_role["judge"]["kind"] == "offline"


def test_a_dead_endpoint_is_one_line_and_exit_2(sim: Running) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: connection refused
    models = {
        "planner": {"kind": "openai", "model": "m", "base_url": dead},
        "analyst": {"kind": "openai", "model": "offline-analyst", "base_url": sim.base_url},
    }
    code, out = run_check(models)
    assert code == 2
    planner = [line for line in out.splitlines() if line.startswith("planner")]
    assert planner == [
        f"planner: connection refused at {dead} — is the server running?"
        " set base_url in DEEPAGENT_MODELS"
    ]
    assert any(line.startswith("analyst: ok") for line in out.splitlines())
    assert "binder: offline" in out.splitlines()


def test_an_unknown_model_names_the_served_ones(sim: Running) -> None:
    code, out = run_check(
        {"binder": {"kind": "openai", "model": "gpt-x", "base_url": sim.base_url}}
    )
    assert code == 2
    (line,) = [x for x in out.splitlines() if x.startswith("binder")]
    assert "model 'gpt-x' is not served" in line and "offline-binder" in line


def test_a_role_without_a_model_is_unusable_without_a_request() -> None:
    code, out = run_check({"planner": {"kind": "openai", "base_url": "http://127.0.0.1:1/v1"}})
    assert code == 2
    assert "planner: an openai role needs 'model'" in out


# --- servers played by a mock transport -------------------------------------------------

Handler = Callable[[httpx.Request], httpx.Response]
SSE = (
    'data: {"choices": [{"delta": {"role": "assistant", "content": ""}}]}\n\n'
    'data: {"choices": [{"delta": {"content": "ok"}}]}\n\n'
    "data: [DONE]\n\n"
)


def server(
    schema: str, props: dict[str, Any] | None = None, cards: list[dict[str, Any]] | None = None
) -> Handler:
    """An OpenAI-compatible server: ``schema`` is how it treats response_format
    (honour / ignore / refuse / crash); ``props`` its /props, ``cards`` its /v1/models."""

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/props":
            return httpx.Response(200, json=props) if props else httpx.Response(404)
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"object": "list", "data": cards or []})
        body = json.loads(request.content)
        if body.get("stream"):
            return httpx.Response(200, text=SSE, headers={"content-type": "text/event-stream"})
        if schema == "refuse":
            return httpx.Response(400, json={"error": {"message": "response_format unsupported"}})
        form = body.get("response_format") or {}
        if schema == "crash" and form.get("type") == "json_object" and "schema" in form:
            return httpx.Response(200, json={"choices": [{"message": {"content": '{"ok": true}'}}]})
        if schema in ("crash", "crash_plain"):  # llama_cpp.server 0.3.36: a 500 for json_schema
            message = "'loc': ('body', 'response_format', 'type'), 'input': 'json_schema'"
            return httpx.Response(500, json={"error": {"message": message}})
        content = '{"ok": true}' if schema == "honour" else "Sure! ok"
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    return handle


async def one_check(handler: Handler, **config: Any) -> Any:
    model = ModelConfig(kind="openai", model="m", base_url="http://llm.test/v1", **config)
    checks = await check_models({"planner": model}, 5.0, httpx.MockTransport(handler))
    return next(c for c in checks if c.role == "planner")


async def test_llama_cpp_reports_its_window_and_honours_the_schema() -> None:
    found = await one_check(
        server("honour", props={"default_generation_settings": {"n_ctx": 8192}}),
        context_window=32768,
    )
    assert found.usable and found.ttft_ms is not None
    assert found.structured_output == "yes"
    assert (found.context_window, found.context_source) == (8192, "server /props n_ctx")
    assert any("set context_window: 8192" in note for note in found.notes)


async def test_vllm_reports_max_model_len_and_a_refused_schema() -> None:
    cards = [{"id": "m", "object": "model", "max_model_len": 4096}]
    found = await one_check(server("refuse", cards=cards))
    assert found.usable and found.structured_output == "refused"
    assert (found.context_window, found.context_source) == (4096, "server /v1/models max_model_len")


async def test_a_500_naming_response_format_is_a_refusal() -> None:
    found = await one_check(server("crash_plain"))
    assert found.usable and found.structured_output == "refused"
    assert any("HTTP 500" in note for note in found.notes)


async def test_llama_cpp_refuses_json_schema_but_holds_its_own_schema_form() -> None:
    """llama_cpp.server refuses ``json_schema`` and constrains ``json_object`` + ``schema``
    with a grammar: the check says which output to set."""
    found = await one_check(server("crash"))
    assert found.usable and found.structured_output == "json_object_schema"
    assert any("set output: json_object_schema" in note for note in found.notes)


async def test_an_ignored_schema_and_an_unreported_window() -> None:
    found = await one_check(server("ignore"), context_window=16384)
    assert found.usable and found.structured_output == "no"
    assert (found.context_window, found.context_source) == (16384, "configured")


async def test_a_refused_key_says_which_variable() -> None:
    found = await one_check(lambda _: httpx.Response(401, json={"error": {"message": "bad key"}}))
    assert not found.usable and found.reachable
    assert "refused the key (HTTP 401: bad key)" in found.fix and "$OPENAI_API_KEY" in found.fix
