"""The CLI and settings: `--version`; a bad setting is one line and exit code 2; a
misspelt DEEPAGENT_* variable is warned about, with the setting it probably meant."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from deepagent.cli.app import build_app
from deepagent.core.settings import Settings, SettingsError, load_settings, unknown_variables

MAIN = "from deepagent.cli.app import main; main()"


def test_version() -> None:
    result = CliRunner().invoke(build_app(), ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("deepagent ")


def test_a_bad_setting_is_one_line_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPAGENT_MODE", "bogus")
    with pytest.raises(SettingsError, match=r"DEEPAGENT_MODE \(mode\) = 'bogus'"):
        load_settings()


def test_the_cli_exits_2_with_one_line_and_warns_about_a_misspelt_variable() -> None:
    env = {**os.environ, "DEEPAGENT_MODE": "bogus", "DEEPAGENT_MODDE": "tree"}
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "tools", "list"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout == ""
    lines = [ln for ln in done.stderr.splitlines() if "DEEPAGENT_MODDE" in ln or "error" in ln]
    assert lines == [
        "warning: DEEPAGENT_MODDE is not a setting and is ignored; did you mean DEEPAGENT_MODE?",
        "error: bad setting: DEEPAGENT_MODE (mode) = 'bogus': Input should be 'react', "
        "'parallel' or 'tree'",
    ]


def test_only_unknown_variables_are_warned_about() -> None:
    env = {"DEEPAGENT_MODE": "tree", "DEEPAGENT_REDIS_URL": "redis://x", "HOME": "/root",
           "DEEPAGENT_FOLOW_CASE": "false", "DEEPAGENT_ZZZ": "1"}  # fmt: skip
    assert unknown_variables(env) == [
        "warning: DEEPAGENT_FOLOW_CASE is not a setting and is ignored; did you mean"
        " DEEPAGENT_FOLLOW_CASE?",
        "warning: DEEPAGENT_ZZZ is not a setting and is ignored",
    ]


def test_config_show_prints_every_setting_with_secrets_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEEPAGENT_SERVICE_DB_URL", "postgresql://app:hunter2@db:5432/runs")
    monkeypatch.setenv("DEEPAGENT_MODE", "react")
    result = CliRunner().invoke(build_app(), ["config", "show"])
    assert result.exit_code == 0 and "hunter2" not in result.stdout
    lines = result.stdout.splitlines()
    assert 'DEEPAGENT_SERVICE_DB_URL = "postgresql://app:***@db:5432/runs"' in lines
    assert 'DEEPAGENT_MODE = "react"' in lines
    shown = json.loads(CliRunner().invoke(build_app(), ["config", "show", "--json"]).stdout)
    assert set(shown) == set(Settings.model_fields) and shown["mode"] == "react"
