"""`deepagent batch` in-process: one valid RunRecord line per question, resume after an
interruption (a truncated last line), bad input before anything runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from context_loader.loader import ContextLoader
from deepagent.batch.local import LocalBatch
from deepagent.batch.output import BadOutputFile, OutputFile
from deepagent.batch.progress import BatchProgress
from deepagent.batch.runner import Batch, run_batch
from tests.batch_helpers import QUESTIONS, cli, env_for, input_ids, read_lines, write_jsonl
from tests.questions import LOOKUP

# --- local mode --------------------------------------------------------------------------


def test_local_batch_writes_one_valid_run_record_per_question(
    tmp_path: Path, sample_db: Path, loader: ContextLoader
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", QUESTIONS)
    out = tmp_path / "out.jsonl"
    code, err = cli(
        [str(src), "--out", str(out), "--workers", "2", "-q"], env_for(sample_db, loader)
    )
    assert code == 0, err
    lines = read_lines(out)
    assert sorted(line.id for line in lines) == sorted(input_ids(src))
    assert len(input_ids(src)[4]) > 1 and input_ids(src)[4].startswith("l")  # derived id
    for line in lines:
        assert line.record.status in ("completed", "needs_input"), line.record.error
        assert line.worker is None and line.attempts == 1
    by_id = {line.id: line.record for line in lines}
    assert by_id["q1"].question == LOOKUP and by_id["q1"].language == "zh"
    assert by_id["q2"].mode == "react" and by_id["q2"].language == "en"
    assert by_id["q3"].mode == "parallel" and by_id["q1"].mode == "tree"
    preview = by_id["q4"]
    assert preview.status == "needs_input" and preview.pending_review is not None
    assert preview.tool_calls == 0 and by_id["q1"].pending_review is None
    assert len({r.run_id for r in by_id.values()}) == len(lines)
    assert "batch done: 6 lines, 0 already in" in err and "6 written" in err
    # a second invocation finds everything done and runs nothing
    code, err = cli([str(src), "--out", str(out), "-q"], env_for(sample_db, loader))
    assert code == 0 and "6 already in" in err and "0 written" in err, err
    assert len(read_lines(out)) == 6


async def test_an_interrupted_local_batch_resumes_with_the_rest(
    tmp_path: Path, loader: ContextLoader
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", QUESTIONS)
    out = tmp_path / "out.jsonl"
    batch = Batch.open(src, out)
    backend = LocalBatch(loader.settings, batch.key, concurrency=1, loader=loader)
    task = asyncio.create_task(run_batch(batch, backend, BatchProgress(batch.tally(), quiet=True)))
    for _ in range(3000):
        if len(batch.output.done) >= 2:
            break
        await asyncio.sleep(0.01)
    task.cancel()  # what Ctrl-C does: the run in flight is dropped
    with pytest.raises(asyncio.CancelledError):
        await task
    batch.output.close()
    first = out.read_bytes()
    done = [line.id for line in read_lines(out)]
    assert 2 <= len(done) < len(QUESTIONS)
    partial = b'{"id": "q6", "record": {"run_'  # a crash in the middle of a write
    out.write_bytes(first + partial)

    again = Batch.open(src, out)
    assert again.output.dropped_bytes == len(partial)
    assert [i.id for i in again.todo] == [i for i in input_ids(src) if i not in done]
    backend = LocalBatch(loader.settings, again.key, concurrency=2, loader=loader)
    await run_batch(again, backend, BatchProgress(again.tally(), quiet=True))
    again.output.close()
    assert out.read_bytes().startswith(first)  # earlier complete lines are never touched
    ids = [line.id for line in read_lines(out)]
    assert sorted(ids) == sorted(input_ids(src)) and len(ids) == len(set(ids))


def test_one_batch_at_a_time_per_output_file(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    first = OutputFile.open(out)
    try:
        with pytest.raises(BadOutputFile, match="another batch is writing"):
            OutputFile.open(out)
    finally:
        first.close()
    OutputFile.open(out).close()  # free again


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "where", "reason"),
    [
        (['{"id": "a", "question": "x"}', '{"id": "b", "question": "y"'], 2, "invalid JSON"),
        (['{"id": "a", "question": "x", "colour": 1}'], 1, "colour: Extra inputs"),
        (['{"id": "a", "question": "x"}', "", '{"id": "a", "question": "y"}'], 3, "duplicate"),
        (['{"question": "x"}', '{"question": "x"}'], 2, "duplicate id"),  # derived ids
        (['{"id": "a", "question": "x", "mode": "fast"}'], 1, "mode:"),
        (['{"id": "a", "question": "   "}'], 1, "question: Value error, the question is"),
        (['{"id": "a", "question": "x", "now": "2026-13-01"}'], 1, "now:"),
        (['["a", "question"]'], 1, "expected a JSON object"),
    ],
)
def test_a_bad_line_exits_2_with_file_and_line_before_anything_runs(
    tmp_path: Path, sample_db: Path, lines: list[str], where: int, reason: str
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    code, err = cli([str(src), "--out", str(out)], {"DEEPAGENT_DATA_PATH": str(sample_db)})
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"error: {src}:{where}: "), err
    assert reason in err
    assert not out.exists()


def test_a_corrupt_output_line_or_bad_option_exits_2(tmp_path: Path, sample_db: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", QUESTIONS[:1])
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "q0", "record": {"status": "completed"}}\nnot json\n{"id": 1}\n')
    env = {"DEEPAGENT_DATA_PATH": str(sample_db)}
    code, err = cli([str(src), "--out", str(out)], env)
    assert code == 2 and err.startswith(f"error: {out}:2: not a batch output line"), err
    code, err = cli([str(src), "--out", str(tmp_path / "o.jsonl"), "--workers", "0"], env)
    assert code == 2 and "--workers must be at least 1" in err
    code, err = cli([str(src), "--out", str(tmp_path / "o.jsonl"), "--no-spawn"], env)
    assert code == 2 and "--no-spawn needs Redis" in err
