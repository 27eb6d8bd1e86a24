"""Skills written to the Agent Skills format load (the optional standard fields, modules in
``metadata``, hyphen-case names); a misspelt field or a skill serving no module is refused
with the reason; ``deepagent skills check`` reports every skill of a folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepagent.cli.app import build_app
from skills.loader import SKILLS_DIR, SkillError, load_skills, parse_skill

STANDARD = """---
name: {name}
description: How to read campaign uplift.
license: Apache-2.0
compatibility: any OpenAI-compatible model
metadata:
  modules: {modules}
  version: "1.2"
allowed-tools: get_campaign_overview rank_campaign_categories
---
# Campaign notes

- Compare a campaign with its baseline month.
"""


def write(root: Path, folder: str, text: str) -> Path:
    (root / folder).mkdir(parents=True, exist_ok=True)
    path = root / folder / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_skill_in_the_agent_skills_format_loads(tmp_path: Path) -> None:
    write(tmp_path, "campaign-notes", STANDARD.format(name="campaign-notes", modules="promotion"))
    skills = {s.name: s for s in load_skills([tmp_path])}
    notes = skills["campaign-notes"]
    assert notes.meta.modules == ["promotion"] and notes.meta.license == "Apache-2.0"
    assert notes.meta.allowed_tools == "get_campaign_overview rank_campaign_categories"
    assert notes.body.startswith("# Campaign notes")
    several = STANDARD.format(name="both", modules='"promotion, new_product"')
    assert parse_skill(write(tmp_path, "both", several)).meta.modules == [
        "promotion",
        "new_product",
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (STANDARD.format(name="x", modules="promotion").replace("license:", "licence:"),
         "licence"),
        (STANDARD.format(name="Campaign Notes", modules="promotion"), "name"),
        (STANDARD.format(name="x", modules='""'), "serves no module"),
    ],
)  # fmt: skip
def test_a_misspelt_field_a_bad_name_or_no_module_is_refused(
    tmp_path: Path, text: str, reason: str
) -> None:
    with pytest.raises(SkillError, match=reason):
        parse_skill(write(tmp_path, "x", text))


def test_skills_check_reports_every_skill_and_fails_on_any_problem(tmp_path: Path) -> None:
    app, runner = build_app(), CliRunner()
    bundled = runner.invoke(app, ["skills", "check", str(SKILLS_DIR)])
    assert bundled.exit_code == 0 and bundled.stdout.count("ok ") == 6
    write(tmp_path, "campaign-notes", STANDARD.format(name="campaign-notes", modules="promotion"))
    write(tmp_path, "renamed", STANDARD.format(name="other", modules="promotion"))
    write(tmp_path, "unknown", STANDARD.format(name="unknown", modules="weather"))
    found = runner.invoke(app, ["skills", "check", str(tmp_path)])
    assert found.exit_code == 1
    lines = found.stdout.splitlines()
    assert lines[0].startswith("ok ") and "campaign-notes (promotion)" in lines[0]
    assert "differs from its folder" in lines[1] and "unknown module(s) weather" in lines[2]
    missing = runner.invoke(app, ["skills", "check", str(tmp_path / "none")])
    assert missing.exit_code == 2
