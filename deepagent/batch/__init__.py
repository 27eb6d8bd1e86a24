"""`deepagent batch`: many questions from a JSONL file, one RunRecord line each, resumable.

- ``items``: the input lines (validated as a whole before anything runs) and the ids
  derived from them (line id, RQ job id / run id).
- ``output``: the output file (lock, truncated-tail repair, ids already done, appends).
- ``local``: runs in this process, N at once over one shared RunDeps.
- ``queued``: runs as RQ jobs on ``batch_queue``, watched like SubAgent jobs.
- ``workers``: the `deepagent worker` subprocesses a batch starts for itself.
- ``progress``: the progress bar and the final summary.
- ``runner``: ties them together.
"""
