"""Shared by the batch tests: the questions, reading and writing batch files, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from context_loader.loader import ContextLoader
from deepagent.batch.items import read_items
from deepagent.batch.output import BatchLine
from deepagent.cli.app import build_app
from tests.questions import LOOKUP

QUESTIONS: list[dict[str, object]] = [
    {"id": "q1", "question": LOOKUP},
    {"id": "q2", "question": "What was the GMV of Dresses in December 2025?", "mode": "react"},
    {"id": "q3", "question": "厨房电器里竞争强度最低的5个叶子类目是哪些？", "mode": "parallel"},
    {
        "id": "q4",
        "question": "Which search terms for sunscreen grew fastest last month?",
        "review_plan": "first_round",  # a plan preview: the line is the plan, not run
    },
    {"question": "我的新品最近卖得怎么样？", "now": "2026-01-10"},  # id derived
    {
        "id": "q6",
        "question": "这个商品的买家评价怎么样？",
        "page": {"type": "product_detail", "product_id": 1},
    },
]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def read_lines(source: Path | bytes) -> list[BatchLine]:
    data = source.read_bytes() if isinstance(source, Path) else source
    return [BatchLine.model_validate_json(line) for line in data.splitlines()]


def input_ids(path: Path) -> list[str]:
    return [item.id for item in read_items(path)]


def env_for(sample_db: Path, loader: ContextLoader, **extra: str) -> dict[str, str]:
    return {
        "DEEPAGENT_DATA_PATH": str(sample_db),
        "DEEPAGENT_CACHE_DIR": str(loader.settings.cache_dir),
        **extra,
    }


def cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), ["batch", *args], env=env)
    return result.exit_code, result.stderr
